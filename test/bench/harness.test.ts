import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linearFit } from '../../bench/harness.js';

const close = (a: number, b: number, eps = 1e-9): void => assert.ok(Math.abs(a - b) <= eps, `${a} is not within ${eps} of ${b}`);

test('linearFit recovers an exact line with R² = 1 and no slope error', () => {
  const xs = [1_000, 10_000, 100_000, 50_000];
  const f = linearFit(xs, xs.map((x) => 250 + 0.004 * x));
  close(f.a, 250, 1e-6);
  close(f.b, 0.004, 1e-12);
  close(f.r2, 1);
  close(f.bErr, 0, 1e-12);
  assert.equal(f.n, 4);
});

test('linearFit matches a hand-computed least-squares fit', () => {
  // x̄ = 2, ȳ = 3; Sxx = 2, Sxy = 3 -> b = 1.5, a = 0; residuals -0.5, 1, -0.5 -> SSres = 1.5,
  // SStot = 6 -> R² = 0.75; bErr = sqrt(1.5 / 1 / 2).
  const f = linearFit([1, 2, 3], [1, 4, 4]);
  close(f.b, 1.5);
  close(f.a, 0);
  close(f.r2, 0.75);
  close(f.bErr, Math.sqrt(0.75));
});

test('linearFit of a flat series: slope 0, R² 1 when exact', () => {
  const f = linearFit([1, 2, 3, 4], [7, 7, 7, 7]);
  close(f.b, 0);
  close(f.a, 7);
  close(f.r2, 1);
});

test('linearFit refuses what it cannot fit', () => {
  assert.throws(() => linearFit([1], [1]), /at least two points/);
  assert.throws(() => linearFit([3, 3, 3], [1, 2, 3]), /two distinct x/);
  assert.throws(() => linearFit([1, 2], [1]), /2 x values but 1 y/);
});

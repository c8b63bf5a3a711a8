/** `svc test`: a contract's tests run in the VM without a chain; failures name the test file's line. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, errorOf } from '../../src/cli/run.js';
import { repoRoot } from '../helpers/paths.js';

const tokenSvc = join(repoRoot, 'examples', 'token.svc');

async function runError(args: string[]): Promise<{ code: string; message: string; exit: number }> {
  try {
    await run(args, {});
  } catch (e) {
    return errorOf(e);
  }
  assert.fail(`svc ${args.join(' ')} succeeded`);
}

test('the token example passes its tests (examples/token.tests, found next to the contract)', async () => {
  const r = await run(['test', tokenSvc], {});
  assert.equal(r.exit, 0, r.text.join('\n'));
  assert.equal(r.text.at(-1), '3 tests, 0 failed');
  assert.ok(r.text.includes("ok   transfer to another owner's output, the rest as change (5 calls)"), r.text.join('\n'));
});

test('failures: each with the line, what was expected and what happened; exit 3; tests are independent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const tests = join(dir, 'wrong.tests');
  writeFileSync(tests, [
    'test wrong expectations',
    '  outputs 0 1000',
    '  call init u128:10 u64:1 -> fail revert',
    '  call supply -> 11',
    '  call supply -> u64:10',
    '  call transfer u64:1 u128:5 u64:1 -> fail revert "another message"',
    '  call nosuch',
    '  inputs #9:1',
    '  call supply',
    'test starts from empty storage',
    '  call supply -> 0',
    '  caller 1111111111111111111111111111111111111111111111111111111111111111',
    '  height 7',
    '  call init u128:1 u64:0 -> fail revert "output index out of range"',
  ].join('\n'));
  const r = await run(['test', tokenSvc, tests], {});
  assert.equal(r.exit, 3);
  assert.deepEqual(r.text, [
    'FAIL wrong expectations (6 calls)',
    `  ${tests}:3: call init: expected to fail with revert, but it executed (result nothing)`,
    `  ${tests}:4: call supply: expected u128:11, got u128:10`,
    `  ${tests}:5: call supply: expected value given as u64, supply returns u128`,
    `  ${tests}:6: call transfer: expected to fail with revert: another message, got revert: no tokens on the spent outpoints`,
    `  ${tests}:7: call nosuch: unknown function "nosuch" (the contract has: init, transfer, balance_of, balance_at, supply)`,
    `  ${tests}:9: call supply: inputs name #9, but this is call 6`,
    'ok   starts from empty storage (2 calls)',
    '2 tests, 1 failed',
  ]);
  const j = (await run(['test', tokenSvc, tests, '--json'], {})).json as { failed: number; tests: { failures: { line: number }[] }[] };
  assert.equal(j.failed, 1);
  assert.deepEqual(j.tests[0]!.failures.map((f) => f.line), [3, 4, 5, 6, 7, 9]);
});

test('a malformed test file, a contract that does not compile and a missing file: one clear error each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const bad = join(dir, 'bad.tests');
  writeFileSync(bad, 'call supply\ntest t\n  outputs lots\n  frobnicate\n  call x -> a b\n');
  const e = await runError(['test', tokenSvc, bad]);
  assert.equal(e.code, 'bad_argument');
  assert.equal(e.exit, 2);
  assert.equal(e.message, [
    `${bad}:1: 'call' before the first 'test NAME' line`,
    `${bad}:3: outputs: "lots" is not SATS or SATS@SCRIPTHEX`,
    `${bad}:4: unknown directive 'frobnicate' (test, caller, height, inputs, outputs, call)`,
    `${bad}:5: -> takes one VALUE or fail CODE [MESSAGE]`,
  ].join('; '));
  const broken = join(dir, 'broken.svc');
  writeFileSync(broken, 'contract B { pub fn f() -> u64 { return x; } }');
  copyFileSync(join(repoRoot, 'examples', 'token.tests'), join(dir, 'broken.tests'));
  const c = await runError(['test', broken]);
  assert.equal(c.code, 'compile_error');
  assert.equal(c.message, `${broken}:1:41: unknown name 'x'`);
  const missing = await runError(['test', join(dir, 'none.svc')]);
  assert.match(missing.message, /cannot read contract .*none\.svc: ENOENT/);
});

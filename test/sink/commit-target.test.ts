/**
 * How far one transaction of the sink goes (commitTarget): whole blocks up to what every
 * subscription finished, within TXN_ROWS rows, and at least one block however large.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TXN_ROWS, commitTarget } from '../../src/sink/sink.js';

const rows = (height: number, n: number): { height: number }[] => Array.from({ length: n }, () => ({ height }));

test('a transaction takes whole blocks up to the ready height while they fit in TXN_ROWS rows', () => {
  const quarter = TXN_ROWS / 4;
  const blocks = [10, 11, 12, 13, 14, 15].map((h) => ({ height: h }));
  const events = [10, 11, 12, 13, 14, 15].flatMap((h) => rows(h, quarter - 1));
  // 6 blocks of a quarter each (a block row and quarter - 1 events): 4 fit, the 5th would not.
  assert.equal(commitTarget(9, 15, [blocks, events, []]), 13);
  // Only what every subscription finished: ready bounds it.
  assert.equal(commitTarget(9, 11, [blocks, events, []]), 11);
  // The next transaction starts above the last one.
  assert.equal(commitTarget(13, 15, [blocks, events, []]), 15);
  // Rows at or below the committed height, or above ready, do not count.
  assert.equal(commitTarget(11, 13, [blocks, events, rows(5, TXN_ROWS)]), 13);
});

test('a block larger than TXN_ROWS is committed alone, never split', () => {
  const big = rows(20, TXN_ROWS * 3);
  assert.equal(commitTarget(19, 22, [[{ height: 20 }, { height: 21 }, { height: 22 }], big, []]), 20);
  assert.equal(commitTarget(20, 22, [[{ height: 21 }, { height: 22 }], big, []]), 22);
});

test('heights without rows (blocks already stored, empty buffers) go up to ready at once', () => {
  assert.equal(commitTarget(100, 250, [[], [], []]), 250);
  assert.equal(commitTarget(100, 250, [rows(120, 3), [], rows(130, 1)]), 250);
});

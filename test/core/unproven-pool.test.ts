import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnprovenPool, UNPROVEN_WAIT_BLOCKS, type UnprovenLimits } from '../../src/core/unproven-pool.js';

const txid = (i: number): string => i.toString(16).padStart(64, '0');
const entry = (i: number, from: string, awaits: number, bytes = 100) => ({ txid: txid(i), from, payload: i, bytes, awaits });
const small: UnprovenLimits = { max: 6, maxBytes: 1_000, peerMax: 3, peerMaxBytes: 500, waitBlocks: 3 };

test('a payload is kept until the header tip reaches the block it awaits, then handed out once to be tried again', () => {
  const pool = new UnprovenPool<number>();
  assert.equal(pool.offer(entry(1, 'a', 101), 100), true);
  assert.equal(pool.offer(entry(1, 'b', 101), 100), false, 'one copy per txid');
  assert.deepEqual(pool.due(100), [], 'the tip has not reached it');
  const due = pool.due(101);
  assert.deepEqual(due.map((x) => x.payload), [1]);
  assert.equal(pool.size, 0, 'handed out, not kept');
  assert.deepEqual(pool.due(102), [], 'handed out once');
  assert.deepEqual(pool.status(), { held: 0, bytes: 0, kept: 1, retried: 1, taken: 0, expired: 0, refused: 0, evicted: 0 });
});

test(`a payload waits at most ${UNPROVEN_WAIT_BLOCKS} blocks past the tip it was kept at`, () => {
  const pool = new UnprovenPool<number>();
  assert.equal(pool.offer(entry(1, 'a', 100 + UNPROVEN_WAIT_BLOCKS + 1), 100), false, 'a block beyond the wait is never kept');
  assert.equal(pool.offer(entry(2, 'a', 100 + UNPROVEN_WAIT_BLOCKS), 100), true);
  // Tried at its block and still unproven: offered back with its first expiry, it is not kept.
  const [x] = pool.due(100 + UNPROVEN_WAIT_BLOCKS);
  assert.equal(pool.offer({ ...x!, awaits: 100 + UNPROVEN_WAIT_BLOCKS + 1 }, 100 + UNPROVEN_WAIT_BLOCKS, x!.expiresAt), false);
  // One awaiting the next block, retried, offered back for the block after: kept, as it is still within its wait.
  assert.equal(pool.offer(entry(3, 'a', 101), 100), true);
  const [y] = pool.due(101);
  assert.equal(pool.offer({ ...y!, awaits: 102 }, 101, y!.expiresAt), true, 'a retry still within the wait is kept');
  assert.equal(pool.status().kept, 2, 'offered back is not kept anew');
  assert.equal(pool.due(102).length, 1);
});

test('a node still catching up keeps a payload awaiting a block it knows exists, up to the wait past that block', () => {
  const pool = new UnprovenPool<number>();
  // Header tip 96, the chain endpoint's tip 103: a coin of block 102 is coming, not made up.
  assert.equal(pool.offer(entry(1, 'a', 102), 96), false, 'without the known tip it is beyond the wait');
  assert.equal(pool.offer(entry(1, 'a', 102), 96, undefined, 103), true);
  assert.equal(pool.offer(entry(2, 'a', 103 + UNPROVEN_WAIT_BLOCKS + 1), 96, undefined, 103), false, 'beyond the wait past the known tip');
  assert.deepEqual(pool.due(101), []);
  assert.deepEqual(pool.due(102).map((x) => x.payload), [1]);
});

test('bounds: count, bytes and each peer\'s share; an entry larger than a share is never kept', () => {
  const pool = new UnprovenPool<number>(small);
  for (let i = 0; i < 10; i++) pool.offer(entry(i, 'a', 101), 100);
  assert.equal(pool.size, small.peerMax, 'one peer holds its share at most');
  assert.deepEqual(pool.due(101).map((x) => x.payload), [0, 1, 2], 'the lowest ranked stay');
  for (let i = 0; i < 10; i++) pool.offer(entry(i, `p${i}`, 101), 100);
  assert.equal(pool.size, small.max, 'the count bound');
  const bytes = new UnprovenPool<number>(small);
  for (let i = 0; i < 6; i++) bytes.offer(entry(i, `p${i}`, 101, 300), 100);
  assert.equal(bytes.status().bytes, 900, 'the byte bound: three of 300 bytes fit in 1,000');
  assert.equal(bytes.size, 3);
  assert.equal(bytes.offer(entry(50, 'q', 101, 501), 100), false, 'larger than a peer\'s byte share');
  const mine = new UnprovenPool<number>(small);
  mine.offer(entry(1, 'a', 101, 300), 100);
  mine.offer(entry(2, 'a', 101, 300), 100);
  assert.deepEqual(mine.due(101).map((x) => x.payload), [1], 'a peer\'s byte share');
});

test('what is kept under the bounds does not depend on arrival order', () => {
  const offers = Array.from({ length: 40 }, (_, i) => entry((i * 7919) % 97, `p${i % 5}`, 101 + (i % 3), 80 + ((i * 31) % 200)));
  const kept = (order: typeof offers): string[] => {
    const pool = new UnprovenPool<number>(small);
    for (const o of order) pool.offer(o, 100);
    return pool.due(200).map((x) => x.txid).sort();
  };
  const forward = kept(offers);
  assert.ok(forward.length > 0 && forward.length <= small.max);
  assert.deepEqual(kept([...offers].reverse()), forward);
  // A fixed shuffle (no randomness in tests: the same permutation every run).
  const shuffled = offers.map((o, i) => ({ o, k: (i * 37) % offers.length })).sort((a, b) => a.k - b.k).map((x) => x.o);
  assert.deepEqual(kept(shuffled), forward);
});

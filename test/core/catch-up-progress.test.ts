import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CatchUpProgress, PROGRESS_EVERY_MS } from '../../src/core/catch-up-progress.js';

const OVER = { ceiling: Infinity, payloadsTaken: 0, payloadsListed: 0 };

test('while the first peer sync holds blocks back, the catching-up line names the sync, its payloads and their rate, with no ETA from a block rate', () => {
  const start = 1_000_000;
  const tip = 52_560;
  const p = new CatchUpProgress(start, 0);
  const first = p.line(start, 0, tip, { ceiling: -1, payloadsTaken: 0, payloadsListed: 0 });
  assert.deepEqual(first, {
    processed_height: 0,
    blocks_left: tip,
    waiting_for: 'first peer sync',
    sync_payloads_taken: 0,
    sync_payloads_listed: 0,
    sync_payloads_per_s: null,
    sync_eta_s: null,
    applied_through: null,
  });
  // The header chain takes the first 2 s; the sync's first payloads are seen then.
  assert.equal(p.line(start + 2_000, 0, tip, { ceiling: -1, payloadsTaken: 512, payloadsListed: 100_001 }), null, 'at most one line per PROGRESS_EVERY_MS');
  assert.equal(p.line(start + PROGRESS_EVERY_MS - 1, 5, tip, { ceiling: 5, payloadsTaken: 4_096, payloadsListed: 100_001 }), null, 'at most one line per PROGRESS_EVERY_MS');
  // 30 s into the sync: 146 blocks applied as their payloads came. A rate from blocks
  // (~5 a second) would have said ~3 hours; the sync ended 3 s later. The payloads' rate
  // counts from the first taken (28 s for 89,600), not from the start.
  const mid = p.line(start + 30_000, 146, tip, { ceiling: 146, payloadsTaken: 90_112, payloadsListed: 100_001 });
  assert.deepEqual(mid, {
    processed_height: 146,
    blocks_left: tip - 146,
    waiting_for: 'first peer sync',
    sync_payloads_taken: 90_112,
    sync_payloads_listed: 100_001,
    sync_payloads_per_s: 3_200,
    sync_eta_s: 4,
    applied_through: 146,
  });
  assert.ok(!('eta_s' in mid!));
});

test('a sync that has taken no payload since its first gives no payload rate and no ETA', () => {
  const start = 4_000_000;
  const p = new CatchUpProgress(start, 0);
  p.line(start, 0, 100, { ceiling: -1, payloadsTaken: 7, payloadsListed: 10 });
  const stalled = p.line(start + PROGRESS_EVERY_MS, 0, 100, { ceiling: -1, payloadsTaken: 7, payloadsListed: 10 }) as Record<string, unknown> | null;
  assert.equal(stalled?.['sync_payloads_taken'], 7);
  assert.equal(stalled?.['sync_payloads_per_s'], null);
  assert.equal(stalled?.['sync_eta_s'], null);
});

test('once the hold is over, blocks per second and the ETA count from its end, not from the node start', () => {
  const start = 2_000_000;
  const tip = 52_560;
  const p = new CatchUpProgress(start, 0);
  p.line(start + 30_000, 146, tip, { ceiling: 146, payloadsTaken: 90_000, payloadsListed: 100_001 });
  // The hold ends at +33 s with 150 blocks applied; 1 s later 25,150 are.
  assert.equal(p.line(start + 33_000, 150, tip, OVER), null, 'the last line was under PROGRESS_EVERY_MS ago');
  const after = p.line(start + 35_000, 25_150, tip, OVER);
  assert.deepEqual(after, { processed_height: 25_150, blocks_left: tip - 25_150, blocks_per_s: 12_500, eta_s: 2 }, 'the 30 s of the hold left out of the rate');
});

test('a node that never held (no peers, or reading blocks) reports its block rate from its start, and nothing at the tip', () => {
  const start = 3_000_000;
  const p = new CatchUpProgress(start, 100);
  assert.deepEqual(p.line(start + 10_000, 1_100, 2_100, OVER), { processed_height: 1_100, blocks_left: 1_000, blocks_per_s: 100, eta_s: 10 });
  assert.equal(p.line(start + 20_000, 2_100, 2_100, OVER), null, 'at the tip: no catching-up line');
});

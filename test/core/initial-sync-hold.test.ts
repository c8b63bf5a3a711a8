import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOLD_MAX_MS, InitialSyncHold, SYNC_QUIET_MS } from '../../src/core/initial-sync-hold.js';

test('blocks wait for the first peer sync while it delivers payloads, not a fixed time from start', () => {
  const start = 1_000_000;
  const hold = new InitialSyncHold(start, true);
  assert.equal(hold.mayApply(start), false, 'held at start');
  // A sync that keeps delivering holds past the old fixed 120 s.
  for (let t = start; t <= start + 10 * SYNC_QUIET_MS; t += SYNC_QUIET_MS / 4) {
    hold.notePayloads(t);
    assert.equal(hold.mayApply(t + 1), false, `held at +${t - start} ms while payloads come`);
  }
  // Quiet for SYNC_QUIET_MS: no longer waited for.
  const last = start + 10 * SYNC_QUIET_MS;
  assert.equal(hold.mayApply(last + SYNC_QUIET_MS - 1), false);
  assert.equal(hold.mayApply(last + SYNC_QUIET_MS), true, 'a sync quiet for SYNC_QUIET_MS ends the hold');
});

test('the hold ends when the sync ends, after SYNC_QUIET_MS of nothing from start, or at HOLD_MAX_MS whatever comes; none without peers', () => {
  const start = 5_000;
  const ended = new InitialSyncHold(start, true);
  ended.notePayloads(start + 10);
  ended.done();
  assert.equal(ended.mayApply(start + 11), true, 'the first sync ended');
  assert.equal(new InitialSyncHold(start, true).mayApply(start + SYNC_QUIET_MS), true, 'a sync that never delivered is waited for SYNC_QUIET_MS');
  const busy = new InitialSyncHold(start, true);
  for (let t = start; t < start + HOLD_MAX_MS; t += 1_000) busy.notePayloads(t);
  busy.notePayloads(start + HOLD_MAX_MS);
  assert.equal(busy.mayApply(start + HOLD_MAX_MS - 1), false);
  assert.equal(busy.mayApply(start + HOLD_MAX_MS), true, 'never longer than HOLD_MAX_MS');
  assert.equal(new InitialSyncHold(start, false).mayApply(start), true, 'no peers: nothing to wait for');
});

test('while the first sync delivers, blocks up to the height it has delivered everything through may be applied; never lower, all once the hold ends', () => {
  const start = 1_000;
  const hold = new InitialSyncHold(start, true);
  assert.equal(hold.ceiling(start), -1, 'nothing delivered: no block');
  assert.equal(hold.noteDelivered(120), true);
  assert.equal(hold.ceiling(start + 1), 120);
  assert.equal(hold.noteDelivered(100), false, 'a lower height (another sync) does not take it back');
  assert.equal(hold.ceiling(start + 1), 120);
  assert.equal(hold.mayApply(start + 1), false, 'still held above it');
  const all = new InitialSyncHold(start, true);
  all.noteDelivered(Infinity);
  assert.equal(all.mayApply(start + 1), true, 'every payload the peer listed is taken: every block');
  hold.done();
  assert.equal(hold.ceiling(start + 2), Infinity);
  assert.equal(hold.noteDelivered(500), false, 'after the hold: nothing to note');
  assert.equal(new InitialSyncHold(start, false).ceiling(start), Infinity, 'no peers: no hold');
});

/**
 * Histories for the ledger's rewinds and undo logs (src/writer/ledger/rewind.ts,
 * undo-log.ts) that the mutation run found no case for: what a rewind writes back to the
 * disk (seen after a restart, when memory is loaded from it), a key written twice or
 * deleted, the spends an abandoned branch made, which way a replay rolls back (the
 * undo logs, or a re-derivation that forgets the spends of recent blocks intake reads),
 * and the pruning of old undo logs.
 * Each is a few blocks with no deferred checks: the mutation run tries a ledger mutant
 * against the cheapest histories first (after those that killed its neighbours), and
 * these must be among them.
 */
import type { Value } from '@svc-node/protocol/value';
import type { Area, CaseInput } from './kit.js';
import { CALLER, seeded } from './keys.js';
import { artifact, RESTART, Script, u64 } from './history.js';
import { fixtureArtifact } from './codec.js';

const key = (k: Uint8Array): Value => ({ type: 'key', value: k });

/**
 * What a block's writes and a rewind's leave on the disk, which memory is loaded from at
 * a restart (no deferred checks: each answer is the blocks'). Two calls of one caller in
 * one block write the counter's keys twice: the disk must get the last value, and the
 * block's undo log the first previous one. Two small histories rather than one: the
 * mutation run tries a ledger mutant against the cheapest histories first.
 */
function sameKeyTwice(): CaseInput[] {
  const r = new Script(3);
  const rd = r.deploy(artifact());
  const r1 = r.call(rd.contractId, 'bump', [u64(5n)]);
  const r2 = r.call(rd.contractId, 'bump', [u64(7n)]);
  const s = new Script(4);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const c3 = s.call(d.contractId, 'bump', [u64(11n)]);
  return [
    {
      id: 'restart-same-key-twice',
      pins: 'no deferred checks: a deploy and two calls writing the same keys in one block (5, then 12), a restart: both stay executed (none pending again), and a third call reads 12 (23)',
      input: { anchor: s.anchor, deferred: false, steps: [d.step, c1.step, c2.step, c3.step, s.mine([d, c1, c2]), RESTART, s.mine([c3])] },
    },
    {
      id: 'rewind-same-key-twice-restart',
      pins: 'no deferred checks: a deploy and two calls writing the same keys in one block, a reorganisation 1 deep leaving the calls out (pending, their keys back to none, the deploy mined again), a restart: mined again they give 5 and 12, every root as if the old branch never was',
      input: { anchor: r.anchor, deferred: false, steps: [rd.step, r1.step, r2.step, r.mine([rd, r1, r2]), r.reorg(1, 1, { drop: [r1, r2] }), RESTART, r.mine([r1, r2])] },
    },
  ];
}

/**
 * A storage entry deleted (a write of its type's default value): a bank balance minted in
 * one block and transferred away whole in the next; after a restart the next block's root
 * and the same transfer again (failed: nothing left) show it is gone from the disk.
 */
function deleteThenRestart(): CaseInput {
  const s = new Script(4);
  const d = s.deploy(fixtureArtifact('bank.svc'));
  const other = seeded('conformance bank receiver');
  const mint = s.call(d.contractId, 'mint', [key(CALLER), u64(5n)]);
  const t1 = s.call(d.contractId, 'transfer', [key(other), u64(5n)]);
  const t2 = s.call(d.contractId, 'transfer', [key(other), u64(5n)]);
  const steps = [d.step, mint.step, t1.step, t2.step, s.mine([d, mint]), s.mine([t1]), RESTART, s.mine([t2])];
  return {
    id: 'restart-storage-delete',
    pins: 'no deferred checks: a balance minted, then transferred away whole (0 left: its entry deleted), a restart: the same transfer again fails (insufficient balance), its block\'s root that of a state without the entry',
    input: { anchor: s.anchor, deferred: false, steps },
  };
}

/**
 * A reorganisation forgets the spends of the blocks it removes: the old branch spent a
 * call's named outpoint with another transaction, the new one mines the call's anchor
 * instead; its payload, arriving after, executes at its block (intake must not drop it
 * at the abandoned branch's spend).
 */
function abandonedSpend(): CaseInput {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  const conflict = s.conflict(c);
  const steps = [d.step, s.mine([d]), s.mine([conflict]), s.reorg(1, 1, { drop: [conflict], txs: [c.hex] }), c.step];
  return {
    id: 'reorg-forgets-abandoned-spend',
    pins: 'no deferred checks: a reorganisation 1 deep whose old branch spent a call\'s named outpoint with another transaction and whose new branch mines the call\'s anchor: the payload arriving after it executes at its block, not dropped',
    input: { anchor: s.anchor, deferred: false, steps },
  };
}

/**
 * Without deferred checks, intake drops a call whose named outpoint a processed block
 * spent from its memory of recent blocks' spends, which a replay through the undo logs
 * keeps (a re-derivation reloads memory and forgets them). A reorganisation forking at the
 * block just above the anchor (the lowest undo log the node holds), then a late payload of
 * that block: the undo logs reach it, so the replay rolls back through them, and the call
 * whose outpoint that block spent, sent last, is dropped at once.
 */
function replayAtUndoFloor(): CaseInput {
  const s = new Script(5);
  const d = s.deploy(artifact());
  const late = s.call(d.contractId, 'bump', [u64(5n)]);
  const c1 = s.call(d.contractId, 'bump', [u64(7n)]);
  const spent = s.call(d.contractId, 'bump', [u64(11n)]);
  const steps = [d.step, c1.step, s.mine([d, late, s.conflict(spent)]), s.mine([c1]), s.reorg(1, 1), late.step, spent.step];
  return {
    id: 'replay-at-undo-floor',
    pins: 'no deferred checks: a reorganisation forking at the lowest block with an undo log, then a late payload of that block (replayed through the undo logs), then a call whose outpoint that block spent: dropped there at once',
    input: { anchor: s.anchor, deferred: false, steps },
  };
}

/**
 * A journal anchored above height 1,008: from there each block also prunes the undo log
 * REPLAY_WINDOW (1,008) blocks below it (one the node never held), in the block's batch.
 * The chain before the anchor is only mined, never played: the history is two blocks.
 */
function highAnchor(): CaseInput {
  const s = new Script(2, 1_008);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  return {
    id: 'anchor-above-undo-window',
    pins: 'no deferred checks: a journal anchored above height 1,008 (every block prunes the undo log 1,008 blocks below it): the deploy and the call decided as anywhere, every root',
    input: { anchor: s.anchor, deferred: false, steps: [d.step, c.step, s.mine([d]), s.mine([c])] },
  };
}

export function ledgerRewindKillArea(): Area {
  return { 'history.run': [...sameKeyTwice(), deleteThenRestart(), abandonedSpend(), replayAtUndoFloor(), highAnchor()] };
}

/**
 * A history deeper than the undo logs the node keeps (REPLAY_WINDOW, 1,008 blocks): each
 * block prunes the undo log 1,008 blocks below it, so a late drop there amends the block's
 * journal entry with no undo log to append to (JournalAmendments.ops), and a
 * reorganisation forking there cannot roll back through the logs and re-derives from the
 * journal (rewindTo). One history pins both: the fewest blocks either needs (a history
 * holds every block's bytes, 175 for a coinbase-only one).
 */
import type { Area, CaseInput } from './kit.js';
import { artifact, Script, u64 } from './history.js';

/**
 * The deploy and another spend of a call's named outpoint in the first block, 1,009 empty
 * blocks, then the call's payload (dropped at the first block, whose undo log the 1,009th
 * block above it pruned), then a reorganisation 1,009 deep forking at the first block (the
 * undo log of the lowest block it removes pruned too) to a branch of one block, as in
 * reorg-moves-deploy-above-call a shorter branch the endpoint calls best.
 */
function deepDropThenReorg(): CaseInput {
  const s = new Script(2);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  const steps = [d.step, s.mine([d, s.conflict(c)]), s.empty(1_009), c.step, s.reorg(1_009, 1)];
  return {
    id: 'late-drop-1009-deep-then-reorg-1009',
    pins: 'a call whose named outpoint another transaction spent 1,009 blocks below the tip (below the 1,008 blocks of undo logs kept), its payload arriving then: dropped at that block; then a reorganisation 1,009 deep (past the oldest undo log: re-derived from the journal) to one block: the call still dropped, the deploy active, every root',
    input: { anchor: s.anchor, steps },
  };
}

export function ledgerDeepKillArea(): Area {
  return { 'history.run': [deepDropThenReorg()] };
}

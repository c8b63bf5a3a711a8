/**
 * Replays: the journal applied again. A late payload replays from its stamp's block
 * (rewinding through the undo logs, kept REPLAY_WINDOW blocks for this); a reorganisation
 * deeper than JOURNAL_WINDOW, a late payload deeper than the undo logs, or a halt being
 * cleared, re-derives everything from the anchor and checks each block against its
 * stored state root.
 *
 * Both end at a block boundary once the node stops (Ledger.stopping, set by the writer's
 * stop and close): what they applied is durable, the tip is the last block applied, and
 * they throw `overloaded` (the node is stopping) so nothing builds on the unfinished
 * work. At the next start the block watcher applies the blocks above that tip again from
 * the chain, and a late payload's replay still owed resumes (Writer.open).
 */
import type { BatchOp } from '../db.js';
import { NodeError } from '@svc-node/protocol/errors';
import { Bucket, DERIVED_BUCKETS, bucketRange, calls, contracts, journal, meta, pendingCalls, stateRoots, type BucketName, type StateRootAt, type Tip } from '../store/index.js';
import { journalBlock } from './stored.js';
import type { Ledger } from './index.js';

/** What a replay or re-derivation ended by a stop request throws, once its work is durable. */
function stopped(l: Ledger, what: string, target: number): NodeError {
  const at = l.tip?.height ?? null;
  l.log.info(`${what} ended by the node's stop`, { at, target });
  return new NodeError('overloaded', `the node is stopping: ${what} ended at block ${at} of ${target}`);
}

/**
 * What a re-derivation keeps of a derived bucket; every other entry of every derived
 * bucket (src/writer/store/buckets.ts) is deleted and built again by the replay.
 */
const KEEP_ON_REDERIVE: { readonly [B in BucketName]?: (k: Buffer, anchor: Tip) => boolean } = {
  // The anchor's root: the journal starts after the anchor, so no replay writes it.
  stateRoot: (k, anchor) => stateRoots.heightOf(k) === anchor.height,
};

/**
 * Resets derived state to the anchor and replays the journal up to `height`. Heights
 * below `verifyBelow` must reproduce their stored state roots; a difference is a halt.
 */
export async function rederive(l: Ledger, height: number, opts: { dropJournalAbove: boolean; verifyBelow: number }): Promise<void> {
  await l.flushBlocks();
  if (l.stopping.signal.aborted) throw stopped(l, 're-derivation', height);
  const anchor = l.anchor!;
  // A late payload's replay still owed (queued behind this job): the roots stored from its
  // block up predate the payload the journal now places there, so they are not checked.
  const owed = l.owedReplayHeight();
  const verifyBelow = owed === null ? opts.verifyBelow : Math.min(opts.verifyBelow, owed);
  l.log.warn('re-deriving state from the block journal', { from: anchor.height, to: height });
  const oldRoots = new Map<number, StateRootAt>();
  for (const { value } of await l.db.rangeOf(stateRoots.all())) {
    const r = stateRoots.decode(value);
    oldRoots.set(r.height, r);
  }
  const ops: BatchOp[] = [];
  for (const name of DERIVED_BUCKETS) {
    const keep = KEEP_ON_REDERIVE[name];
    for (const { key: k } of await l.db.rangeOf(bucketRange(Bucket[name]))) if (!keep || !keep(k, anchor)) ops.push({ type: 'del', key: k });
  }
  // What the node received is kept, its derived parts reset: the journal above `height`
  // when the chain left it, every stored call pending again, every contract registered
  // again (not active), the tip at the anchor.
  if (opts.dropJournalAbove) {
    for (const { key: k } of await l.db.rangeOf(journal.all())) if (journal.heightOf(k) > height) ops.push({ type: 'del', key: k });
  }
  for (const { key: k } of await l.db.rangeOf(calls.all())) {
    ops.push({ type: 'put', key: pendingCalls.key(calls.txidOf(k)), value: pendingCalls.VALUE });
  }
  for (const { key: k, value } of await l.db.rangeOf(contracts.all())) {
    ops.push({ type: 'put', key: k, value: contracts.encode(contracts.asRegistered(contracts.decode(value))) });
  }
  ops.push({ type: 'put', key: meta.tip.key, value: meta.tip.encode(anchor) });
  await l.writeOrHalt(ops);
  await l.load();

  let interrupted = false;
  for (let h = anchor.height + 1; h <= height; h++) {
    if (l.stopping.signal.aborted) {
      interrupted = true;
      break;
    }
    const rec = await journalBlock(l.db, h);
    // The undo window is rebuilt for the last blocks only; older undo logs are not kept.
    await l.reapplyBlock(rec, { sync: false });
    const old = oldRoots.get(h);
    if (h < verifyBelow && old && old.block_hash === rec.hash && old.state_root !== l.stateRoot) {
      await l.halt('state_mismatch', `re-derivation disagrees with stored state at height ${h}: stored ${old.state_root}, replay ${l.stateRoot}`);
      return;
    }
  }
  // Undo logs beyond the window were pruned during replay; make the result durable.
  await l.flushBlocks();
  await l.writeOrHalt([{ type: 'put', key: meta.tip.key, value: meta.tip.encode(l.tip!) }], true);
  if (interrupted) throw stopped(l, 're-derivation', height);
  l.log.info('re-derivation done', { height: l.tip!.height, state_root: l.stateRoot });
}

/** Replays blocks from `fromHeight` after a late payload, keeping the journal. */
export async function replayFrom(l: Ledger, fromHeight: number): Promise<void> {
  await l.flushBlocks();
  if (!l.tip || fromHeight > l.tip.height) return;
  const target = l.tip.height;
  if (l.stopping.signal.aborted) throw stopped(l, 'replay', target);
  if (fromHeight - 1 >= l.replayFloor) {
    await l.rewindTo(fromHeight - 1, { dropJournal: false });
    for (let h = fromHeight; h <= target; h++) {
      if (l.stopping.signal.aborted) {
        await l.flushBlocks();
        throw stopped(l, 'replay', target);
      }
      await l.reapplyBlock(await journalBlock(l.db, h), {});
    }
    await l.flushBlocks();
  } else {
    await l.rederive(target, { dropJournalAbove: false, verifyBelow: fromHeight });
  }
  l.log.info('replayed after a late payload', { from: fromHeight, to: target, state_root: l.stateRoot });
}

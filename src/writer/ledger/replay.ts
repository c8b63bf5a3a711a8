/**
 * Replays: the journal applied again. A late payload replays from its stamp's block
 * (rewinding through the undo logs when the window covers it); a rewind deeper than the
 * window, or a halt being cleared, re-derives everything from the anchor and checks each
 * block against its stored state root.
 *
 * Both end at a block boundary once the node stops (Ledger.stopping, set by the writer's
 * stop and close): what they applied is durable, the tip is the last block applied, and
 * they throw `overloaded` (the node is stopping) so nothing builds on the unfinished
 * work. At the next start the block watcher applies the blocks above that tip again from
 * the chain, and a late payload's replay still owed resumes (Writer.open).
 */
import { Bucket, key, prefixEnd, type BatchOp } from '../db.js';
import { NodeError } from '../../errors.js';
import type { ContractRecord } from '../records.js';
import { json, parse } from './bytes.js';
import { journalBlock } from './stored.js';
import type { Ledger } from './index.js';

/** What a replay or re-derivation ended by a stop request throws, once its work is durable. */
function stopped(l: Ledger, what: string, target: number): NodeError {
  const at = l.tip?.height ?? null;
  l.log.info(`${what} ended by the node's stop`, { at, target });
  return new NodeError('overloaded', `the node is stopping: ${what} ended at block ${at} of ${target}`);
}

/**
 * Resets derived state to the anchor and replays the journal up to `height`. Heights
 * below `verifyBelow` must reproduce their stored state roots; a difference is a halt.
 */
export async function rederive(l: Ledger, height: number, opts: { dropJournalAbove: boolean; verifyBelow: number }): Promise<void> {
  await l.flushBlocks();
  if (l.stopping.signal.aborted) throw stopped(l, 're-derivation', height);
  const anchor = l.anchor!;
  l.log.warn('re-deriving state from the block journal', { from: anchor.height, to: height });
  const oldRoots = new Map<number, { block_hash: string; state_root: string }>();
  for (const { value } of await l.db.range(key(Bucket.stateRoot), prefixEnd(key(Bucket.stateRoot)))) {
    const r = parse<{ height: number; block_hash: string; state_root: string }>(value);
    oldRoots.set(r.height, r);
  }
  const ops: BatchOp[] = [];
  const wipe = async (bucket: Bucket, keep?: (k: Buffer) => boolean): Promise<void> => {
    for (const { key: k } of await l.db.range(key(bucket), prefixEnd(key(bucket)))) if (!keep || !keep(k)) ops.push({ type: 'del', key: k });
  };
  await wipe(Bucket.storage);
  await wipe(Bucket.event);
  await wipe(Bucket.undo);
  await wipe(Bucket.callIdIndex);
  await wipe(Bucket.contractCalls);
  await wipe(Bucket.callCount);
  await wipe(Bucket.orphanStamp);
  await wipe(Bucket.stateRoot, (k) => k.readUInt32BE(1) === anchor.height);
  if (opts.dropJournalAbove) await wipe(Bucket.block, (k) => k.readUInt32BE(1) <= height);
  await wipe(Bucket.callDecision);
  for (const { key: k } of await l.db.range(key(Bucket.call), prefixEnd(key(Bucket.call)))) {
    ops.push({ type: 'put', key: key(Bucket.pendingCall, k.subarray(1)), value: Buffer.alloc(0) });
  }
  for (const { key: k, value } of await l.db.range(key(Bucket.contract), prefixEnd(key(Bucket.contract)))) {
    const c = parse<ContractRecord>(value);
    ops.push({ type: 'put', key: k, value: json({ ...c, status: 'pending', block_height: null, tx_index: null }) });
  }
  ops.push({ type: 'put', key: key(Bucket.meta, 'tip'), value: json(anchor) });
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
    if (h < opts.verifyBelow && old && old.block_hash === rec.hash && old.state_root !== l.stateRoot) {
      await l.halt(`re-derivation disagrees with stored state at height ${h}: stored ${old.state_root}, replay ${l.stateRoot}`);
      return;
    }
  }
  // Undo logs beyond the window were pruned during replay; make the result durable.
  await l.flushBlocks();
  await l.writeOrHalt([{ type: 'put', key: key(Bucket.meta, 'tip'), value: json(l.tip) }], true);
  if (interrupted) throw stopped(l, 're-derivation', height);
  l.log.info('re-derivation done', { height: l.tip!.height, state_root: l.stateRoot });
}

/** Replays blocks from `fromHeight` after a late payload, keeping the journal. */
export async function replayFrom(l: Ledger, fromHeight: number): Promise<void> {
  await l.flushBlocks();
  if (!l.tip || fromHeight > l.tip.height) return;
  const target = l.tip.height;
  if (l.stopping.signal.aborted) throw stopped(l, 'replay', target);
  if (fromHeight - 1 >= l.undoFloor) {
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

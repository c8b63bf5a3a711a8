/**
 * Halts (docs/ARCHITECTURE.md, Halts): the node stops applying blocks and refuses
 * payloads until the operator clears the halt, which re-derives from the journal.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { meta } from '../store/index.js';
import type { HaltKind } from '../store/meta.js';
import type { Ledger } from './index.js';

export async function halt(l: Ledger, kind: HaltKind, reason: string, persist: boolean): Promise<void> {
  if (l.halted) return;
  l.halted = true;
  l.haltKind = kind;
  l.haltReason = reason;
  l.log.error('consensus halt', { kind, reason });
  if (persist) {
    try {
      await l.db.batch([{ type: 'put', key: meta.halt.key, value: meta.halt.encode({ reason, kind }) }], true);
    } catch {
      /* the halt stays in memory; the reason is logged */
    }
  }
  // Memory may be ahead of what reached the disk: reload what is durable (blocks of a run
  // not handed over yet are forgotten with it).
  l.dropRun();
  try {
    await l.load();
    l.halted = true;
    l.haltKind = kind;
    l.haltReason = reason;
  } catch {
    /* reads may be stale until the operator clears the halt */
  }
}

/** Operator action: re-derive from the journal and resume if it agrees with itself. */
export async function clearHalt(l: Ledger): Promise<void> {
  await l.flushBlocks().catch(() => undefined);
  const kind = l.haltKind;
  const reason = l.haltReason;
  l.halted = false;
  l.haltKind = null;
  l.haltReason = null;
  try {
    // After a storage failure RocksDB refuses writes until reopened.
    if (kind === 'storage_write_failed') await l.db.reopen();
    await l.db.batch([{ type: 'del', key: meta.halt.key }], true);
  } catch (e) {
    l.halted = true;
    l.haltKind = kind;
    l.haltReason = reason;
    // A reopen that failed says why (Db.reopen); a write that failed, only its code.
    const why = e instanceof NodeError ? e.message : `storage still failing (${(e as NodeJS.ErrnoException).code ?? 'write error'})`;
    throw new NodeError('halted', `cannot clear the halt: ${why}`);
  }
  await l.load();
  try {
    if (l.tip && l.anchor) await l.rederive(l.tip.height, { dropJournalAbove: false, verifyBelow: l.tip.height + 1 });
  } catch (e) {
    // A stop ended the re-derivation before it checked every block: the halt stands
    // (stored again), to be cleared after the next start.
    if (l.stopping.signal.aborted && kind !== null && reason !== null) await halt(l, kind, reason, true);
    throw e;
  }
  if (l.halted) throw new NodeError('halted', `halt not cleared: ${l.haltReason}`);
  l.log.info('halt cleared', { previous_reason: reason });
}

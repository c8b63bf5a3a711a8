/**
 * Rewinds: the state after an earlier block. Within the journal window (a reorganisation)
 * or the undo logs held (a replay) the undo logs run backwards and memory is restored from
 * their entries; deeper, the state is re-derived from the journal (replay.ts).
 */
import type { BatchOp } from '../db.js';
import { NodeError } from '@svc-node/protocol/errors';
import { callDecisions, journal, stateRoots, undo, type UndoEntry } from '../store/index.js';
import { LedgerMemory } from './memory.js';
import { JOURNAL_WINDOW, journalHashes, readCalls, type StoredCall } from './stored.js';
import type { Ledger } from './index.js';

/** Reorg fork heights remembered for droppedAt: far more reorgs than one intake round trip can see. */
const REORG_LOG = 64;

/**
 * Makes the state that after block `height`; `dropJournal`: the blocks above `height`
 * left the best chain (a reorg). Returns how many blocks were rewound.
 */
export async function rewindTo(l: Ledger, height: number, opts: { dropJournal: boolean }): Promise<number> {
  await l.flushBlocks();
  const tip = l.tip;
  if (!tip || height >= tip.height) return 0;
  if (height < l.anchor!.height) throw new NodeError('internal', `cannot rewind below the journal anchor ${l.anchor!.height}`);
  if (opts.dropJournal) {
    l.chainEpoch++;
    l.reorgForks.push({ epoch: l.chainEpoch, fork: height });
    if (l.reorgForks.length > REORG_LOG) l.reorgForks.shift();
  }
  // A reorganisation rolls back through the reorg window only (SERVICE-SPEC section 3); a
  // replay (the journal kept) through every undo log held.
  if (height >= (opts.dropJournal ? l.undoFloor : l.replayFloor)) {
    const undone: UndoEntry[][] = [];
    for (let h = tip.height; h > height; h--) {
      const raw = await l.db.get(undo.key(h));
      if (!raw) throw new Error(`undo log of block ${h} is missing`);
      const entries = undo.decode(raw);
      const ops: BatchOp[] = entries.map(([k, v]) => (v === null ? { type: 'del', key: k } : { type: 'put', key: k, value: v }));
      ops.push({ type: 'del', key: undo.key(h) });
      if (opts.dropJournal) {
        ops.push({ type: 'del', key: journal.key(h) });
        l.memory.forgetSpends(h);
      }
      await l.writeOrHalt(ops);
      undone.push(entries);
    }
    if (l.undoLow > height) l.undoLow = Infinity;
    await restoreFromUndo(l, height, undone, opts.dropJournal);
  } else {
    await l.rederive(height, { dropJournalAbove: opts.dropJournal, verifyBelow: height + 1 });
  }
  return tip.height - height;
}

/**
 * Brings memory to the state after block `height` once the undo logs of the blocks
 * above it are on disk. Each undo entry names a key a block wrote and what it held
 * before, so memory is restored from those entries alone (LedgerMemory.restoreFromUndo):
 * a rewind costs what the rewound blocks wrote, not what the node holds. A full reload
 * read every pending call and rebuilt every contract's trie: a 1-block reorg or late
 * payload with 100,000 calls pending took about 3 s.
 *
 * Reads come first; memory then changes in one synchronous step, so a read served
 * meanwhile never sees half of it. The restored state root must be the one stored for
 * `height`, and anything unexpected in a log falls back to the full reload.
 */
async function restoreFromUndo(l: Ledger, height: number, undone: UndoEntry[][], dropJournal: boolean): Promise<void> {
  const fallback = async (reason: string): Promise<void> => {
    l.log.warn('rewind: memory reloaded from disk', { height, reason });
    await l.load();
  };
  // Calls whose decision a rewound block made: pending again (their marker is back).
  const reopened: Buffer[] = [];
  for (const entries of undone) {
    for (const [k, prev] of entries) {
      const odd = LedgerMemory.undoEntryProblem(k, prev);
      if (odd) return fallback(odd);
      if (callDecisions.isKey(k)) reopened.push(callDecisions.txidOf(k));
    }
  }
  const records: StoredCall[] = [];
  const calls = await readCalls(l.db, reopened);
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    if (typeof c === 'string') return fallback(`call ${reopened[i]!.toString('hex')}: ${c}`);
    records.push(c);
  }
  const stored = await l.db.get(stateRoots.key(height));
  // Block hashes a load keeps (JOURNAL_WINDOW * 2 below the tip) that memory dropped as
  // the rewound blocks came: as many journal entries as blocks rewound, at most.
  const oldTip = l.tip!.height;
  // A replay keeps the journal: the blocks above `height` stay this node's chain.
  const refill = dropJournal ? await journalHashes(l.db, height - 2 * JOURNAL_WINDOW, oldTip - 2 * JOURNAL_WINDOW) : [];
  if (l.anchor) refill.push([l.anchor.height, l.anchor.hash]);

  // One synchronous step from here.
  const memory = l.memory;
  const tip = memory.restoreFromUndo(undone, records, l.tip, { drop: dropJournal ? { above: height, upTo: oldTip } : null, set: refill });
  // The restored contracts trie must give the fork point's stored contracts root; the
  // block's decisions are read with it (memory holds contract state only).
  const root = memory.root();
  const at = stored ? stateRoots.decode(stored) : null;
  l.setProcessed(tip, at?.state_root ?? root, at?.decisions_root ?? null);
  const want = at ? stateRoots.contractsRootOf(at) : null;
  if (want !== null && want !== root) return fallback(`restored contracts root ${root} is not the stored ${want}`);
}

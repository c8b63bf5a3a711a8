/**
 * Loading: builds the ledger's memory from RocksDB, aside, for the ledger to swap in
 * whole (reads served while a rewind or replay runs never see a half-loaded state).
 */
import type { Db } from '../db.js';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import type { ContractRecord } from '../../records.js';
import { STORE_FORMAT, callCounts, contracts, journal, meta, orphanStamps, pendingCalls, storage, type Tip } from '../store/index.js';
import type { HaltKind, MetaEntry } from '../store/meta.js';
import { bytesOf } from './bytes.js';
import { LedgerMemory } from './memory.js';
import { JOURNAL_WINDOW, journalHashes, readCalls } from './stored.js';

export interface Loaded {
  memory: LedgerMemory;
  tip: Tip | null;
  anchor: Tip | null;
  /** The stored halt, null when the node is not halted. */
  halt: { reason: string; kind?: HaltKind } | null;
  /** The store's layout is an earlier one whose derived state must be re-derived (Writer.open). */
  rederiveOwed: boolean;
}

/**
 * Earlier layouts this node takes over (see loadFromDisk): their records read as they are
 * (format 4 is format 5 without headers, evidence and journal branches; journal entries
 * of format 1 have no branches), but their state roots are of an earlier root version (1 in
 * formats 4 and 5, 2 in format 6), so their derived state is re-derived from the journal
 * before the layout is marked current.
 */
const REDERIVED_FORMATS: readonly number[] = [4, 5, 6];

export async function loadFromDisk(db: Db): Promise<Loaded> {
  const memory = new LedgerMemory();
  const read = async <T>(entry: MetaEntry<T>): Promise<T | null> => {
    const v = await db.get(entry.key);
    return v ? entry.decode(v) : null;
  };
  const tip = await read(meta.tip);
  const anchor = await read(meta.anchor);
  const halt = await read(meta.halt);
  const format = await read(meta.format);
  // Taken over in place (the chain follower fills a format-4 store's header chain from the
  // anchor up) once Writer.open has re-derived it; until then it reads as it is.
  const rederiveOwed = tip !== null && format !== null && REDERIVED_FORMATS.includes(format);
  if (tip && format !== STORE_FORMAT && !rederiveOwed) {
    throw new Error(`the data directory ${db.path} holds storage format ${format ?? 1}, this node reads format ${STORE_FORMAT}: move it aside and let the node sync again`);
  }

  for (const { value } of await db.rangeOf(contracts.all())) {
    const rec = contracts.decode(value);
    if (rec.status === 'active') await activateStored(db, memory, rec);
    else memory.pendingContracts.set(rec.contract_id, rec);
  }
  const pendingTxids = (await db.rangeOf(pendingCalls.all())).map((r) => pendingCalls.txidOf(r.key));
  const calls = await readCalls(db, pendingTxids);
  calls.forEach((c, i) => {
    if (c === 'no record') return;
    if (c === 'no payload') throw new Error(`pending call ${pendingTxids[i]!.toString('hex')} has no stored payload`);
    memory.trackPending(c.rec, c.envelope);
  });
  for (const { value } of await db.rangeOf(orphanStamps.all())) {
    const o = orphanStamps.decode(value);
    memory.orphans.set(o.txid, o);
  }
  for (const { key: k, value } of await db.rangeOf(callCounts.all())) {
    memory.callCounts.set(callCounts.contractOf(k), callCounts.decode(value));
  }
  if (tip) {
    // Up to the journal's last entry, which is above the tip only while a replay re-applies
    // the journal (or after a stop in one): those blocks are still this node's chain, and
    // the block watcher may ask for them meanwhile (knownHash).
    const [last] = await db.rangeOf(journal.all(), { limit: 1, reverse: true });
    const top = Math.max(tip.height, last ? journal.heightOf(last.key) : 0);
    for (const [h, hash] of await journalHashes(db, top - 2 * JOURNAL_WINDOW, top + 1)) memory.recentHashes.set(h, hash);
    if (anchor) memory.recentHashes.set(anchor.height, anchor.hash);
  }
  return { memory, tip, anchor, halt, rederiveOwed };
}

async function activateStored(db: Db, memory: LedgerMemory, rec: ContractRecord): Promise<void> {
  const v = verifyArtifact(rec.artifact);
  if (!v.ok) throw new Error(`stored contract ${rec.contract_id} no longer verifies: ${v.reason}`);
  const entries: [Uint8Array, Uint8Array][] = [];
  let size = 0;
  for (const { key: k, value } of await db.rangeOf(storage.ofContract(bytesOf(rec.contract_id)))) {
    const sk = new Uint8Array(storage.fieldOf(k));
    entries.push([sk, value]);
    size += sk.length + value.length;
  }
  memory.activate(rec, bytesOf(rec.code_hash), v.program, entries, size);
}

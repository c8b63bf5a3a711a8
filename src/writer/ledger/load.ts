/**
 * Loading: builds the ledger's memory from RocksDB, aside, for the ledger to swap in
 * whole (reads served while a rewind or replay runs never see a half-loaded state).
 */
import { Bucket, key, prefixEnd, type Db } from '../db.js';
import { verifyArtifact } from '../../vm/verifier.js';
import type { ContractRecord, OrphanStamp } from '../records.js';
import { bytesOf, parse } from './bytes.js';
import { LedgerMemory } from './memory.js';
import { JOURNAL_WINDOW, STORE_FORMAT, journalHashes, readCalls, type Tip } from './stored.js';

export interface Loaded {
  memory: LedgerMemory;
  tip: Tip | null;
  anchor: Tip | null;
  /** The stored halt, null when the node is not halted. */
  halt: { reason: string } | null;
}

export async function loadFromDisk(db: Db): Promise<Loaded> {
  const memory = new LedgerMemory();
  const meta = async <T>(name: string): Promise<T | null> => {
    const v = await db.get(key(Bucket.meta, name));
    return v ? parse<T>(v) : null;
  };
  const tip = await meta<Tip>('tip');
  const anchor = await meta<Tip>('anchor');
  const halt = await meta<{ reason: string }>('halt');
  const format = await meta<number>('format');
  if (tip && format !== STORE_FORMAT) {
    throw new Error(`the data directory ${db.path} holds storage format ${format ?? 1}, this node reads format ${STORE_FORMAT}: move it aside and let the node sync again`);
  }

  for (const { value } of await db.range(key(Bucket.contract), prefixEnd(key(Bucket.contract)))) {
    const rec = parse<ContractRecord>(value);
    if (rec.status === 'active') await activateStored(db, memory, rec);
    else memory.pendingContracts.set(rec.contract_id, rec);
  }
  const pendingTxids = (await db.range(key(Bucket.pendingCall), prefixEnd(key(Bucket.pendingCall)))).map((r) => r.key.subarray(1));
  const calls = await readCalls(db, pendingTxids);
  calls.forEach((c, i) => {
    if (c === 'no record') return;
    if (c === 'no payload') throw new Error(`pending call ${pendingTxids[i]!.toString('hex')} has no stored payload`);
    memory.trackPending(c.rec, c.envelope);
  });
  for (const { value } of await db.range(key(Bucket.orphanStamp), prefixEnd(key(Bucket.orphanStamp)))) {
    const o = parse<OrphanStamp>(value);
    memory.orphans.set(o.txid, o);
  }
  for (const { key: k, value } of await db.range(key(Bucket.callCount), prefixEnd(key(Bucket.callCount)))) {
    memory.callCounts.set(k.subarray(1).toString('hex'), Number(value.toString('utf8')));
  }
  if (tip) {
    // Up to the journal's last entry, which is above the tip only while a replay re-applies
    // the journal (or after a stop in one): those blocks are still this node's chain, and
    // the block watcher may ask for them meanwhile (knownHash).
    const [last] = await db.range(key(Bucket.block), prefixEnd(key(Bucket.block)), { limit: 1, reverse: true });
    const top = Math.max(tip.height, last ? last.key.readUInt32BE(1) : 0);
    for (const [h, hash] of await journalHashes(db, top - 2 * JOURNAL_WINDOW, top + 1)) memory.recentHashes.set(h, hash);
    if (anchor) memory.recentHashes.set(anchor.height, anchor.hash);
  }
  return { memory, tip, anchor, halt };
}

async function activateStored(db: Db, memory: LedgerMemory, rec: ContractRecord): Promise<void> {
  const v = verifyArtifact(rec.artifact as never);
  if (!v.ok) throw new Error(`stored contract ${rec.contract_id} no longer verifies: ${v.reason}`);
  const entries: [Uint8Array, Uint8Array][] = [];
  let size = 0;
  const prefix = key(Bucket.storage, bytesOf(rec.contract_id));
  for (const { key: k, value } of await db.range(prefix, prefixEnd(prefix))) {
    const sk = new Uint8Array(k.subarray(prefix.length));
    entries.push([sk, value]);
    size += sk.length + value.length;
  }
  memory.activate(rec, bytesOf(rec.code_hash), v.program, entries, size);
}

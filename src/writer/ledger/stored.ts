/**
 * What the ledger's phases read back from RocksDB in bulk (call records for a load or a
 * rewind, journal entries and their hashes), and the constants of its stored layout.
 */
import { Bucket, key, type Db } from '../db.js';
import { decodeEnvelope, type CallEnvelope } from '../../protocol/envelope.js';
import { decodeBlockRecord, decodeCallRecord, storedBlockHash, type BlockRecord, type CallRecord } from '../records.js';
import { u32be } from './bytes.js';

/** SERVICE-SPEC section 3: undo logs and the block journal cover the last 144 blocks. */
export const JOURNAL_WINDOW = 144;

/**
 * Layout of the stored records (records.ts). A data directory written with another
 * layout is refused at startup rather than misread; 2: binary call records; 3: state roots
 * from the Merkle trie (stored roots of format 2 would not replay), events in runs of
 * EVENT_CHUNK per key; 4: a call's decision in its own record (Bucket.callDecision),
 * event runs, decisions and journal entries binary.
 */
export const STORE_FORMAT = 4;

export interface Tip {
  height: number;
  hash: string;
}

/** Pending calls read back per getMany in a reload: one round trip per this many calls. */
const RELOAD_CHUNK = 512;

export type StoredCall = { rec: CallRecord; envelope: CallEnvelope };

/**
 * Records and payloads of these calls in batched reads (one round trip per
 * RELOAD_CHUNK calls), in order. Envelopes are decoded from a copy, as at acceptance,
 * so a call held in memory keeps no slice of a larger buffer.
 */
export async function readCalls(db: Db, txids: readonly Buffer[]): Promise<(StoredCall | 'no record' | 'no payload')[]> {
  const out: (StoredCall | 'no record' | 'no payload')[] = [];
  for (let i = 0; i < txids.length; i += RELOAD_CHUNK) {
    const chunk = txids.slice(i, i + RELOAD_CHUNK);
    const got = await db.getMany(chunk.flatMap((t) => [key(Bucket.call, t), key(Bucket.callBody, t)]));
    for (let j = 0; j < chunk.length; j++) {
      const fixed = got[2 * j];
      const body = got[2 * j + 1];
      out.push(!fixed ? 'no record' : !body ? 'no payload' : { rec: decodeCallRecord(fixed, undefined), envelope: decodeEnvelope(new Uint8Array(body)) });
    }
  }
  return out;
}

/** Block hashes of the journal entries at heights from..to-1 (from below 0 counts from 0). */
export async function journalHashes(db: Db, from: number, to: number): Promise<[number, string][]> {
  if (to <= Math.max(0, from)) return [];
  const rows = await db.range(key(Bucket.block, u32be(Math.max(0, from))), key(Bucket.block, u32be(to)));
  return rows.map(({ key: k, value }) => [k.readUInt32BE(1), storedBlockHash(value)]);
}

/** The journal entry of block `height`; its absence is a broken invariant (a halt). */
export async function journalBlock(db: Db, height: number): Promise<BlockRecord> {
  const raw = await db.get(key(Bucket.block, u32be(height)));
  if (!raw) throw new Error(`block journal entry ${height} is missing`);
  return decodeBlockRecord(raw);
}

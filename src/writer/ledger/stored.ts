/**
 * What the ledger's phases read back from RocksDB in bulk (call records for a load or a
 * rewind, journal entries and their hashes), and the journal's window.
 */
import type { Db } from '../db.js';
import { decodeEnvelope, type CallEnvelope } from '@svc-node/protocol/envelope';
import type { BlockRecord, CallRecord } from '../../records.js';
import { callBodies, calls, journal } from '../store/index.js';

/** SERVICE-SPEC section 3: undo logs and the block journal cover the last 144 blocks. */
export const JOURNAL_WINDOW = 144;

/**
 * Undo logs are kept longer than the reorganisation window, for late confirmations: a
 * payload whose block the node applied without it (a burst the node applied as headers
 * before a deferred check placed a held call, a payload that reached the node after its
 * block) replays from that block by rewinding through them, instead of re-deriving
 * everything from the journal's anchor. A week of blocks covers a node away that long;
 * a block's log holds what the block wrote (a header-only block's, a few hundred bytes).
 * Reorganisations still roll back through the last JOURNAL_WINDOW only (SERVICE-SPEC
 * section 3: deeper, the node re-derives).
 */
export const REPLAY_WINDOW = 1_008;

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
    const got = await db.getMany(chunk.flatMap((t) => [calls.key(t), callBodies.key(t)]));
    for (let j = 0; j < chunk.length; j++) {
      const fixed = got[2 * j];
      const body = got[2 * j + 1];
      out.push(!fixed ? 'no record' : !body ? 'no payload' : { rec: calls.decode(fixed, undefined), envelope: decodeEnvelope(callBodies.decode(body)) });
    }
  }
  return out;
}

/** Block hashes of the journal entries at heights from..to-1 (from below 0 counts from 0). */
export async function journalHashes(db: Db, from: number, to: number): Promise<[number, string][]> {
  if (to <= Math.max(0, from)) return [];
  const rows = await db.rangeOf(journal.heights(Math.max(0, from), to));
  return rows.map(({ key: k, value }) => [journal.heightOf(k), journal.hashOf(value)]);
}

/** The journal entry of block `height`; its absence is a broken invariant (a halt). */
export async function journalBlock(db: Db, height: number): Promise<BlockRecord> {
  const raw = await db.get(journal.key(height));
  if (!raw) throw new Error(`block journal entry ${height} is missing`);
  return journal.decode(raw);
}

/**
 * Bucket `meta`: single named entries, key the name in utf8. The node id, the store's
 * layout and the journal anchor are written once; the tip with every block; the halt
 * while the node is halted. JSON but the node id (utf8).
 */
import { Bucket } from './buckets.js';
import { bucketKey, jsonValue, parseJson } from './keys.js';

/** A block the ledger stands on: the processed tip, or the journal's anchor. */
export interface Tip {
  height: number;
  hash: string;
}

export interface MetaEntry<T> {
  readonly key: Buffer;
  encode(v: T): Buffer;
  decode(b: Buffer): T;
}

function jsonEntry<T>(name: string): MetaEntry<T> {
  return { key: bucketKey(Bucket.meta, name), encode: (v) => jsonValue(v), decode: (b) => parseJson<T>(b) };
}

const tipEntry = (name: string): MetaEntry<Tip> => ({
  key: bucketKey(Bucket.meta, name),
  encode: (t) => jsonValue({ height: t.height, hash: t.hash }),
  decode: (b) => parseJson<Tip>(b),
});

/** The last block applied (the anchor before any). */
export const tip = tipEntry('tip');
/** The block the journal starts after: the node's first processed height. */
export const anchor = tipEntry('anchor');
/**
 * What stopped the node, stable across wordings of the reason (which is for people):
 * clearing a halt acts on the kind (src/writer/ledger/halt.ts). A storage failure is
 * never stored (the write that would store it is what failed).
 */
export type HaltKind = 'storage_write_failed' | 'state_mismatch' | 'internal_error';

/** Why the node is halted; absent while it is not. `kind` is absent in halts stored before kinds. */
export const halt = jsonEntry<{ reason: string; kind?: HaltKind }>('halt');
/** The layout of the stored records (STORE_FORMAT). */
export const format = jsonEntry<number>('format');
/** The node_id this data directory was first opened with. */
export const nodeId: MetaEntry<string> = { key: bucketKey(Bucket.meta, 'node_id'), encode: (s) => Buffer.from(s, 'utf8'), decode: (b) => b.toString('utf8') };

/**
 * When the database was last opened, present until the writer closes it cleanly: found
 * at the next start, it says the last run was killed or crashed (utf8 ISO time).
 */
export const openSince: MetaEntry<string> = { key: bucketKey(Bucket.meta, 'open'), encode: (s) => Buffer.from(s, 'utf8'), decode: (b) => b.toString('utf8') };

export function isTipKey(k: Buffer): boolean {
  return k.equals(tip.key);
}

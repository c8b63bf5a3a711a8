/**
 * Bucket `block`: the block journal (docs/STATE.md), one entry per block applied, key
 * u32be height. Kept through re-derivations, which replay it.
 */
import type { BlockRecord, BlockTx } from '../../records.js';
import { Bucket } from './buckets.js';
import { bucketRange, keyOfHeight, type KeyRange } from './keys.js';

export const key = (height: number): Buffer => keyOfHeight(Bucket.block, height);
export const all = (): KeyRange => bucketRange(Bucket.block);
/** Entries of heights [from, to). */
export const heights = (from: number, to: number): KeyRange => ({ gte: key(from), lt: key(to) });
export const heightOf = (k: Buffer): number => k.readUInt32BE(1);

/**
 * The entry is binary: replay reads transactions as raw bytes (half the size of hex in
 * JSON, and no JSON to build for a block of thousands).
 *
 *   u8 format (2) | u32be height | hash[32] | prev_hash[32] | state_root[32] |
 *   u32be count | per tx: u32be tx_index | txid[32] | u32be len(raw) | raw |
 *                         u8 branch_depth (0xff: not known) | branch_depth x hash[32] |
 *   u32be count | per dropped call: txid[32] |
 *   u32be count | per unstamped anchor: u32be tx_index | txid[32]
 *
 * Hashes and txids in display order, as everywhere in the node; branch hashes in internal
 * order (as they fold). Format 1, written before merkle branches were kept, is the same
 * without the branch fields: it still decodes (branches null).
 */
const JOURNAL_FORMAT = 2;
const JOURNAL_FORMAT_NO_BRANCHES = 1;
/** Branch depth byte of a transaction whose branch is not known. */
const NO_BRANCH = 0xff;

export function encode(r: BlockRecord): Buffer {
  let len = 1 + 4 + 96 + 4 + 4 + 32 * r.dropped.length + 4 + 36 * r.unstamped.length;
  for (const t of r.txs) len += 41 + t.hex.length / 2 + 32 * (t.branch?.length ?? 0);
  const out = Buffer.allocUnsafe(len);
  out[0] = JOURNAL_FORMAT;
  let o = out.writeUInt32BE(r.height, 1);
  o += out.write(r.hash, o, 32, 'hex');
  o += out.write(r.prevHash, o, 32, 'hex');
  o += out.write(r.state_root, o, 32, 'hex');
  o = out.writeUInt32BE(r.txs.length, o);
  for (const t of r.txs) {
    o = out.writeUInt32BE(t.txIndex, o);
    o += out.write(t.txid, o, 32, 'hex');
    const n = t.hex.length / 2;
    o = out.writeUInt32BE(n, o);
    if (out.write(t.hex, o, n, 'hex') !== n) throw new Error(`journal: transaction ${t.txid} is not hex`);
    o += n;
    const branch = t.branch ?? null;
    if (branch && branch.length >= NO_BRANCH) throw new Error(`journal: branch of ${t.txid} is too deep`);
    out[o++] = branch ? branch.length : NO_BRANCH;
    for (const h of branch ?? []) {
      if (h.length !== 32) throw new Error(`journal: branch of ${t.txid} holds a hash of ${h.length} bytes`);
      out.set(h, o);
      o += 32;
    }
  }
  o = out.writeUInt32BE(r.dropped.length, o);
  for (const txid of r.dropped) o += out.write(txid, o, 32, 'hex');
  o = out.writeUInt32BE(r.unstamped.length, o);
  for (const [txIndex, txid] of r.unstamped) {
    o = out.writeUInt32BE(txIndex, o);
    o += out.write(txid, o, 32, 'hex');
  }
  if (o !== len) throw new Error('journal: a hash or txid is not 32 bytes of hex');
  return out;
}

function formatOf(b: Buffer): number {
  if (b[0] !== JOURNAL_FORMAT && b[0] !== JOURNAL_FORMAT_NO_BRANCHES) throw new Error('stored journal entry has an unknown format');
  return b[0];
}

/** The block hash of a stored journal entry, without decoding the rest. */
export function hashOf(b: Buffer): string {
  formatOf(b);
  return b.toString('hex', 5, 37);
}

export function decode(b: Buffer): BlockRecord {
  const withBranches = formatOf(b) === JOURNAL_FORMAT;
  const height = b.readUInt32BE(1);
  const hash = b.toString('hex', 5, 37);
  const prevHash = b.toString('hex', 37, 69);
  const state_root = b.toString('hex', 69, 101);
  let o = 101;
  const txs: BlockTx[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++) {
    const txIndex = b.readUInt32BE(o);
    const txid = b.toString('hex', o + 4, o + 36);
    const len = b.readUInt32BE(o + 36);
    const hex = b.toString('hex', o + 40, o + 40 + len);
    o += 40 + len;
    let branch: Uint8Array[] | null = null;
    if (withBranches) {
      const depth = b[o++]!;
      if (depth !== NO_BRANCH) {
        branch = [];
        for (let d = 0; d < depth; d++, o += 32) branch.push(b.subarray(o, o + 32));
      }
    }
    txs.push({ txIndex, txid, hex, branch });
  }
  const dropped: string[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 32) dropped.push(b.toString('hex', o, o + 32));
  const unstamped: [number, string][] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 36) unstamped.push([b.readUInt32BE(o), b.toString('hex', o + 4, o + 36)]);
  return { height, hash, prevHash, txs, dropped, unstamped, state_root };
}

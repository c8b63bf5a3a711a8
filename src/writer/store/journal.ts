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

/** Offset of the transaction count in an entry: format, height, three hashes. */
const TXS_AT = 101;

/** The transaction stored at offset `o` and the offset after it. */
function txAt(b: Buffer, o: number, withBranches: boolean): { tx: BlockTx; next: number } {
  const txIndex = b.readUInt32BE(o);
  const txid = b.toString('hex', o + 4, o + 36);
  const len = b.readUInt32BE(o + 36);
  const hex = b.toString('hex', o + 40, o + 40 + len);
  let next = o + 40 + len;
  let branch: Uint8Array[] | null = null;
  if (withBranches) {
    const depth = b[next++]!;
    if (depth !== NO_BRANCH) {
      branch = [];
      for (let d = 0; d < depth; d++, next += 32) branch.push(b.subarray(next, next + 32));
    }
  }
  return { tx: { txIndex, txid, hex, branch }, next };
}

/** The offset after the transaction stored at `o`, reading only its lengths. */
function skipTx(b: Buffer, o: number, withBranches: boolean): number {
  let next = o + 40 + b.readUInt32BE(o + 36);
  if (withBranches) {
    const depth = b[next++]!;
    if (depth !== NO_BRANCH) next += 32 * depth;
  }
  return next;
}

export function decode(b: Buffer): BlockRecord {
  const withBranches = formatOf(b) === JOURNAL_FORMAT;
  const height = b.readUInt32BE(1);
  const hash = b.toString('hex', 5, 37);
  const prevHash = b.toString('hex', 37, 69);
  const state_root = b.toString('hex', 69, 101);
  let o = TXS_AT;
  const txs: BlockTx[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++) {
    const t = txAt(b, o, withBranches);
    txs.push(t.tx);
    o = t.next;
  }
  const dropped: string[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 32) dropped.push(b.toString('hex', o, o + 32));
  const unstamped: [number, string][] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 36) unstamped.push([b.readUInt32BE(o), b.toString('hex', o + 4, o + 36)]);
  return { height, hash, prevHash, txs, dropped, unstamped, state_root };
}

/**
 * A stored entry read for a few of its transactions (a peer's GetPayloads wants some
 * calls of a block of thousands): the transactions are located by txid on first use,
 * reading only their lengths, and decoded one at a time. Decoding the whole entry (every
 * raw transaction as hex) for each question made serving a block's payloads cost ~3 ms a
 * payload for 2,000-call blocks.
 */
export class EntryView {
  readonly height: number;
  readonly hash: string;
  private readonly withBranches: boolean;
  private offsets: Map<string, number> | null = null;

  constructor(private readonly b: Buffer) {
    this.withBranches = formatOf(b) === JOURNAL_FORMAT;
    this.height = b.readUInt32BE(1);
    this.hash = b.toString('hex', 5, 37);
  }

  /** The stored transaction `txid`, null when the block holds none of that id. */
  tx(txid: string): BlockTx | null {
    if (!this.offsets) {
      const offsets = new Map<string, number>();
      let o = TXS_AT;
      for (let n = this.b.readUInt32BE(o), i = (o += 4, 0); i < n; i++) {
        offsets.set(this.b.toString('hex', o + 4, o + 36), o);
        o = skipTx(this.b, o, this.withBranches);
      }
      this.offsets = offsets;
    }
    const at = this.offsets.get(txid);
    return at === undefined ? null : txAt(this.b, at, this.withBranches).tx;
  }
}

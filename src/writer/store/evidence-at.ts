/**
 * Bucket `evidenceAt`: claims that a block confirms a payload's anchor or spends the
 * outpoint a call names, filed under the block they name so that a block read as a header
 * alone finds them (src/writer/ledger/evidence.ts). Key u32be height || block hash (32,
 * display order) || txid of the payload (32) || kind (1). A claim is checked against the
 * header when its block is applied, never trusted before.
 *
 *   anchor: u32be tx_index | u32be len(raw) | raw anchor | u8 depth | depth x hash[32] | [root]
 *   spend:  u32be spender tx_index | spender txid[32] | outpoint txid[32] | u32be vout |
 *           u8 depth | depth x hash[32] | [root]
 *
 * Branch hashes in internal order, leaf level first; txids in display order. `root` (32,
 * internal order) is the merkle root the branch folds to, folded by this node when it
 * filed the claim, so applying the block compares it with the header's instead of
 * folding the branch a second time; claims filed before it was kept have none and are
 * folded then.
 */
import { Bucket } from './buckets.js';
import type { KeyRange } from './keys.js';

export const KIND_ANCHOR = 1;
export const KIND_SPEND = 2;

/** `root`: what the branch folds to (internal order), when stored (see the file header). */
export type AnchorClaim = { kind: typeof KIND_ANCHOR; txid: string; txIndex: number; raw: Uint8Array; branch: Uint8Array[]; root?: Uint8Array };
export type SpendClaim = { kind: typeof KIND_SPEND; txid: string; spenderIndex: number; spenderTxid: string; outpoint: string; branch: Uint8Array[]; root?: Uint8Array };
export type Claim = AnchorClaim | SpendClaim;

function prefix(height: number, blockHash: string, extra: number): Buffer {
  const out = Buffer.allocUnsafe(37 + extra);
  out[0] = Bucket.evidenceAt;
  out.writeUInt32BE(height, 1);
  if (out.write(blockHash, 5, 32, 'hex') !== 32) throw new Error('evidenceAt: a block hash is 32 bytes of hex');
  return out;
}

export function key(height: number, blockHash: string, txid: string, kind: number): Buffer {
  const out = prefix(height, blockHash, 33);
  if (out.write(txid, 37, 32, 'hex') !== 32) throw new Error('evidenceAt: a txid is 32 bytes of hex');
  out[69] = kind;
  return out;
}

/** Every claim naming a block at heights [from, to]. */
export function heights(from: number, to: number): KeyRange {
  const k = (h: number): Buffer => {
    const out = Buffer.allocUnsafe(5);
    out[0] = Bucket.evidenceAt;
    out.writeUInt32BE(h, 1);
    return out;
  };
  return { gte: k(from), lt: k(to + 1) };
}

function branchBytes(branch: readonly Uint8Array[]): number {
  if (branch.length > 0xff) throw new Error('evidenceAt: branch too deep');
  return 1 + 32 * branch.length;
}

function writeBranch(out: Buffer, o: number, branch: readonly Uint8Array[]): number {
  out[o++] = branch.length;
  for (const h of branch) {
    if (h.length !== 32) throw new Error('evidenceAt: a branch hash is 32 bytes');
    out.set(h, o);
    o += 32;
  }
  return o;
}

/** The folded root after the branch, when the claim has one. */
function writeRoot(out: Buffer, o: number, root: Uint8Array | undefined): void {
  if (!root) return;
  if (root.length !== 32) throw new Error('evidenceAt: a merkle root is 32 bytes');
  out.set(root, o);
}

function readRoot(b: Buffer, o: number): Uint8Array | undefined {
  return b.length === o + 32 ? b.subarray(o, o + 32) : undefined;
}

function readBranch(b: Buffer, o: number): [Uint8Array[], number] {
  const n = b[o++]!;
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++, o += 32) out.push(b.subarray(o, o + 32));
  return [out, o];
}

export function encode(c: Claim): Buffer {
  if (c.kind === KIND_ANCHOR) {
    const out = Buffer.allocUnsafe(8 + c.raw.length + branchBytes(c.branch) + (c.root ? 32 : 0));
    let o = out.writeUInt32BE(c.txIndex, 0);
    o = out.writeUInt32BE(c.raw.length, o);
    out.set(c.raw, o);
    writeRoot(out, writeBranch(out, o + c.raw.length, c.branch), c.root);
    return out;
  }
  const [otxid, vout] = c.outpoint.split(':') as [string, string];
  const out = Buffer.allocUnsafe(72 + branchBytes(c.branch) + (c.root ? 32 : 0));
  let o = out.writeUInt32BE(c.spenderIndex, 0);
  o += out.write(c.spenderTxid, o, 32, 'hex');
  o += out.write(otxid, o, 32, 'hex');
  o = out.writeUInt32BE(Number(vout), o);
  writeRoot(out, writeBranch(out, o, c.branch), c.root);
  return out;
}

/** A stored claim from its key and value. */
export function decode(k: Buffer, v: Buffer): Claim {
  const txid = k.toString('hex', 37, 69);
  const kind = k[69];
  if (kind === KIND_ANCHOR) {
    const txIndex = v.readUInt32BE(0);
    const len = v.readUInt32BE(4);
    const [branch, end] = readBranch(v, 8 + len);
    const root = readRoot(v, end);
    return { kind, txid, txIndex, raw: v.subarray(8, 8 + len), branch, ...(root ? { root } : {}) };
  }
  if (kind === KIND_SPEND) {
    const spenderIndex = v.readUInt32BE(0);
    const spenderTxid = v.toString('hex', 4, 36);
    const outpoint = `${v.toString('hex', 36, 68)}:${v.readUInt32BE(68)}`;
    const [branch, end] = readBranch(v, 72);
    const root = readRoot(v, end);
    return { kind, txid, spenderIndex, spenderTxid, outpoint, branch, ...(root ? { root } : {}) };
  }
  throw new Error(`stored evidence claim has an unknown kind ${kind}`);
}

export const heightOf = (k: Buffer): number => k.readUInt32BE(1);
export const blockHashOf = (k: Buffer): string => k.toString('hex', 5, 37);

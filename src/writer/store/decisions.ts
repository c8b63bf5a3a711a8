/**
 * Bucket `decisions`: the decision leaves of each processed block (packages/protocol/src/state/decisions.ts),
 * key u32be height, binary: what a call proof's branch is built from. Written once, by
 * the block (drops have no leaf, so a late drop leaves it as it is); its undo deletes it.
 *
 *   u8 format (1) | u32be count | per leaf, ascending by txid: txid[32] | u32be len | leaf
 */
import { Bucket } from './buckets.js';
import { keyOfHeight } from './keys.js';

export const key = (height: number): Buffer => keyOfHeight(Bucket.decisions, height);

/** One leaf: the call's txid (32 bytes, display order) and its encoded decision. */
export type DecisionLeaf = [Uint8Array, Uint8Array];

const DECISIONS_FORMAT = 1;

export function encode(leaves: readonly DecisionLeaf[]): Buffer {
  const sorted = [...leaves].sort((a, b) => Buffer.compare(a[0], b[0]));
  let len = 5;
  for (const [, leaf] of sorted) len += 36 + leaf.length;
  const out = Buffer.allocUnsafe(len);
  out[0] = DECISIONS_FORMAT;
  let o = out.writeUInt32BE(sorted.length, 1);
  for (const [txid, leaf] of sorted) {
    out.set(txid, o);
    o = out.writeUInt32BE(leaf.length, o + 32);
    out.set(leaf, o);
    o += leaf.length;
  }
  return out;
}

export function decode(b: Buffer): DecisionLeaf[] {
  if (b[0] !== DECISIONS_FORMAT) throw new Error('stored block decisions have an unknown format');
  const n = b.readUInt32BE(1);
  const out: DecisionLeaf[] = [];
  let o = 5;
  for (let i = 0; i < n; i++) {
    const txid = b.subarray(o, o + 32);
    const len = b.readUInt32BE(o + 32);
    out.push([txid, b.subarray(o + 36, o + 36 + len)]);
    o += 36 + len;
  }
  return out;
}

/**
 * Bucket `contractCalls`: a contract's call log, one record per contract and block, key
 * contract id (32 bytes) || u32be height; the value is the 32-byte txids (display order)
 * of the calls of that contract the block decided, in tx_index order.
 */
import { Bucket } from './buckets.js';
import { keyOfIdInts, prefixRange, type KeyRange } from './keys.js';

export const key = (contractId: Uint8Array, height: number): Buffer => keyOfIdInts(Bucket.contractCalls, contractId, height);
/** The records of `contractId`, every block. */
export const ofContract = (contractId: Uint8Array): KeyRange => prefixRange(keyOfIdInts(Bucket.contractCalls, contractId));
/** The records of `contractId` in blocks [from, to]. */
export const inBlocks = (contractId: Uint8Array, from: number, to: number): KeyRange => ({ gte: key(contractId, from), lt: key(contractId, to + 1) });

/** The block height of a record's key. */
export const heightOf = (k: Buffer): number => k.readUInt32BE(k.length - 4);

export function encode(txids: Uint8Array[]): Buffer {
  return Buffer.concat(txids);
}

export function decode(v: Buffer): string[] {
  const out: string[] = [];
  for (let o = 0; o + 32 <= v.length; o += 32) out.push(v.toString('hex', o, o + 32));
  return out;
}

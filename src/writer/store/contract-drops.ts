/**
 * Bucket `contractDrops`: the calls of a contract a block dropped (PROTOCOL section 5:
 * their named outpoint spent by another transaction), one empty record per call, key
 * contract id (32 bytes) || u32be height || txid (32 bytes, display order). A drop has no
 * position, so it is kept beside the call log (`contractCalls`) rather than in it: the
 * live feed lists a block's drops after its positioned calls, in txid order. Written by
 * the block's application, or later into a processed block's undo log when a call's
 * payload arrives after the spend (JournalAmendments): each drop its own key, so a late
 * one never rewrites a record the block wrote.
 */
import { Bucket } from './buckets.js';
import { keyOfIdInts, type KeyRange } from './keys.js';

export const VALUE = Buffer.alloc(0);

export function key(contractId: Uint8Array, height: number, txid: Uint8Array): Buffer {
  return Buffer.concat([keyOfIdInts(Bucket.contractDrops, contractId, height), txid]);
}

/** The drops of `contractId` in blocks [from, to]. */
export const inBlocks = (contractId: Uint8Array, from: number, to: number): KeyRange => ({ gte: keyOfIdInts(Bucket.contractDrops, contractId, from), lt: keyOfIdInts(Bucket.contractDrops, contractId, to + 1) });

/** The block height of a key. */
export const heightOf = (k: Buffer): number => k.readUInt32BE(33);
/** The dropped call's txid (hex, display order) of a key. */
export const txidOf = (k: Buffer): string => k.toString('hex', 37, 69);

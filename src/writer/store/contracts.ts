/**
 * Bucket `contract`: a deploy registration by contract id (32 bytes), JSON. The
 * registration is written at intake; a block's activation rewrites it with its status
 * and position, and a re-derivation resets that part (`asRegistered`).
 */
import type { ContractRecord } from '../../records.js';
import { Bucket } from './buckets.js';
import { bucketRange, idBytes, jsonValue, keyOfId, parseJson } from './keys.js';

export const key = (contractId: Uint8Array): Buffer => keyOfId(Bucket.contract, contractId);
export const keyOf = (contractIdHex: string): Buffer => key(idBytes(contractIdHex));
export const all = () => bucketRange(Bucket.contract);
export const idOf = (k: Buffer): Buffer => k.subarray(1);

export const encode = (rec: ContractRecord): Buffer => jsonValue(rec);
export const decode = (b: Buffer): ContractRecord => parseJson<ContractRecord>(b);

/** The record as registered, before any block activated it. */
export function asRegistered(rec: ContractRecord): ContractRecord {
  return { ...rec, status: 'pending', block_height: null, tx_index: null };
}

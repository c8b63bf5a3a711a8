/**
 * Bucket `storage`: contract storage, one key per entry: contract id (32 bytes) ||
 * storage key; the value is the entry's bytes as the VM wrote them.
 */
import { Bucket } from './buckets.js';
import { keyOfId, keyOfIdAnd, prefixRange, type KeyRange } from './keys.js';

const ID_END = 33;

export const key = (contractId: Uint8Array, field: Uint8Array): Buffer => keyOfIdAnd(Bucket.storage, contractId, field);
/** Every entry of one contract. */
export const ofContract = (contractId: Uint8Array): KeyRange => prefixRange(keyOfId(Bucket.storage, contractId));
export const contractIdOf = (k: Buffer): Buffer => k.subarray(1, ID_END);
export const fieldOf = (k: Buffer): Buffer => k.subarray(ID_END);
/** Whether `k` holds a contract id at all (an undo entry is checked before it is trusted). */
export const isWellFormed = (k: Buffer): boolean => k.length >= ID_END;

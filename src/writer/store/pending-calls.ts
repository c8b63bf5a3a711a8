/**
 * Bucket `pendingCall`: the txids (32 bytes) of pending calls, empty values; what the
 * start-up load reads instead of every call record. A block deciding a call deletes its
 * entry; its undo puts it back.
 */
import { Bucket } from './buckets.js';
import { bucketRange, keyOfId } from './keys.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.pendingCall, txid);
export const all = () => bucketRange(Bucket.pendingCall);
export const txidOf = (k: Buffer): Buffer => k.subarray(1);
/** The value of every entry. */
export const VALUE = Buffer.alloc(0);

/**
 * Bucket `callBody`: a call's payload by txid (32 bytes), the borsh envelope exactly as
 * received; stored once at intake, kept for the life of the store.
 */
import { Bucket } from './buckets.js';
import { keyOfId } from './keys.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.callBody, txid);
export const encode = (body: Buffer): Buffer => body;
/** The envelope bytes in memory of their own (a decoded envelope copies nothing from them). */
export const decode = (b: Buffer): Uint8Array => new Uint8Array(b);

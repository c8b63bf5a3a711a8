/**
 * Bucket `callCount`: how many calls of a contract blocks have decided with a position
 * (the length of its call log), key contract id (32 bytes), value the count in decimal.
 */
import { Bucket } from './buckets.js';
import { bucketRange, idBytes, keyOfId } from './keys.js';

export const key = (contractId: Uint8Array): Buffer => keyOfId(Bucket.callCount, contractId);
export const keyOf = (contractIdHex: string): Buffer => key(idBytes(contractIdHex));
export const all = () => bucketRange(Bucket.callCount);
/** The contract id (hex) of a count's key. */
export const contractOf = (k: Buffer): string => k.toString('hex', 1);

export const encode = (n: number): Buffer => Buffer.from(String(n));
export const decode = (b: Buffer): number => Number(b.toString('utf8'));

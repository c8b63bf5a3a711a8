/**
 * Bucket `orphanStamp`: stamps a block confirmed before the node held their payload, by
 * txid (32 bytes), JSON. A payload arriving later replays from the stamp's block.
 */
import type { OrphanStamp } from '../../records.js';
import { Bucket } from './buckets.js';
import { bucketRange, idBytes, jsonValue, keyOfId, parseJson } from './keys.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.orphanStamp, txid);
export const keyOf = (txidHex: string): Buffer => key(idBytes(txidHex));
export const all = () => bucketRange(Bucket.orphanStamp);
/** The txid (hex) of a stamp's key. */
export const txidOf = (k: Buffer): string => k.toString('hex', 1);

export const encode = (o: OrphanStamp): Buffer => jsonValue(o);
export const decode = (b: Buffer): OrphanStamp => parseJson<OrphanStamp>(b);

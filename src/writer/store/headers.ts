/**
 * Bucket `header`: the node's header chain, key u32be height, value the 80-byte block
 * header as Bitcoin serializes it. Written only after verification (packages/protocol/src/headers.ts:
 * linked by previous-block hash, proof of work), from the journal's anchor up, and may run
 * ahead of the processed tip (docs/STATE.md, "Bitcoin evidence"). Chain data, not derived.
 */
import { Bucket } from './buckets.js';
import { bucketRange, keyOfHeight, type KeyRange } from './keys.js';

export const HEADER_BYTES = 80;

export const key = (height: number): Buffer => keyOfHeight(Bucket.header, height);
export const all = (): KeyRange => bucketRange(Bucket.header);
/** Headers of heights [from, to]. */
export const heights = (from: number, to: number): KeyRange => ({ gte: key(from), lt: key(to + 1) });
/** Every header above `height`. */
export const above = (height: number): KeyRange => ({ gte: key(height + 1), lt: all().lt });
export const heightOf = (k: Buffer): number => k.readUInt32BE(1);

export function encode(header: Uint8Array): Buffer {
  if (header.length !== HEADER_BYTES) throw new Error(`a block header is ${HEADER_BYTES} bytes, not ${header.length}`);
  return Buffer.from(header);
}

export function decode(b: Buffer): Buffer {
  if (b.length !== HEADER_BYTES) throw new Error('stored block header is not 80 bytes');
  return b;
}

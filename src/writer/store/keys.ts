/**
 * Key assembly shared by the bucket modules of this folder (and only them): a key is the
 * bucket's id followed by its parts. Keys are built several times per applied call, so
 * each builder makes one allocation and plain copies, and the common shapes have their
 * own builder (no argument list to walk).
 */
import type { Bucket } from './buckets.js';

/** The bucket id, then `parts` (strings as utf8). */
export function bucketKey(bucket: Bucket, ...parts: (Uint8Array | string)[]): Buffer {
  let len = 1;
  for (const p of parts) len += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
  const out = Buffer.allocUnsafe(len);
  out[0] = bucket;
  let off = 1;
  for (const p of parts) {
    if (typeof p === 'string') off += out.write(p, off, 'utf8');
    else {
      out.set(p, off);
      off += p.length;
    }
  }
  return out;
}

/** The bucket id and `id` (a txid or contract id): the keys built per applied call. */
export function keyOfId(bucket: Bucket, id: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(1 + id.length);
  out[0] = bucket;
  out.set(id, 1);
  return out;
}

/** The bucket id, `id` and `rest`. */
export function keyOfIdAnd(bucket: Bucket, id: Uint8Array, rest: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(1 + id.length + rest.length);
  out[0] = bucket;
  out.set(id, 1);
  out.set(rest, 1 + id.length);
  return out;
}

/** The bucket id, `id` (a 32-byte id) and `ints` as u32be: one allocation. */
export function keyOfIdInts(bucket: Bucket, id: Uint8Array, ...ints: number[]): Buffer {
  const out = Buffer.allocUnsafe(1 + id.length + 4 * ints.length);
  out[0] = bucket;
  out.set(id, 1);
  let o = 1 + id.length;
  for (const n of ints) o = out.writeUInt32BE(n, o);
  return out;
}

/** The bucket id and `n` as u32be (keys by block height). */
export function keyOfHeight(bucket: Bucket, n: number): Buffer {
  const out = Buffer.allocUnsafe(5);
  out[0] = bucket;
  out.writeUInt32BE(n, 1);
  return out;
}

/** A 32-byte id in hex as bytes (ids and txids in display order, as everywhere in the node). */
export function idBytes(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

/** Upper bound for a prefix scan: the prefix with its last byte incremented (carrying). */
export function prefixEnd(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  return Buffer.concat([prefix, Buffer.of(0xff)]);
}

/** [gte, lt) bounds of every key starting with `prefix`. */
export interface KeyRange {
  gte: Buffer;
  lt: Buffer;
}

export function prefixRange(prefix: Buffer): KeyRange {
  return { gte: prefix, lt: prefixEnd(prefix) };
}

/** Every key of one bucket. */
export function bucketRange(bucket: Bucket): KeyRange {
  return prefixRange(Buffer.of(bucket));
}

/** The bucket a stored key belongs to. */
export function bucketOf(k: Uint8Array): number {
  return k[0]!;
}

/** A JSON record as stored (utf8). */
export const jsonValue = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
export const parseJson = <T>(b: Buffer): T => JSON.parse(b.toString('utf8')) as T;

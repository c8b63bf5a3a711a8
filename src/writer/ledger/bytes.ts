/** Conversions the ledger's phases share: hex, fixed-width integers for keys, JSON records. */
import type { CallOutcome } from '../records.js';
import { toHex } from '../../protocol/hash.js';

export const hexOf = (b: Uint8Array): string => toHex(b);
export const bytesOf = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
/** A copy of `k` in memory of its own (kept while a call is pending: not a slice of the shared pool). */
export const ownKey = (k: Buffer): Buffer => {
  const b = Buffer.allocUnsafeSlow(k.length);
  k.copy(b);
  return b;
};
/** 32 bytes of hex in a Buffer of its own: kept while a call is pending, so not a slice of the shared pool. */
export const ownBytes = (h: string): Buffer => {
  const b = Buffer.allocUnsafeSlow(h.length >>> 1);
  if (b.write(h, 'hex') !== b.length) throw new Error(`not hex: ${h}`);
  return b;
};
export const u32be = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
};
export const u64be = (n: bigint): Buffer => {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(n, 0);
  return b;
};
export const EMPTY = Buffer.alloc(0);
/** The decision of a dropped call: no position, no result (PROTOCOL section 5). */
export const DROPPED: CallOutcome = { status: 'dropped', block_height: null, tx_index: null, result: null, error: null, instructions: null };
export const bufferView = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
export const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
export const parse = <T>(b: Buffer): T => JSON.parse(b.toString('utf8')) as T;

/** Conversions the ledger's phases share: hex and buffers of their own (stored formats are src/writer/store/'s). */
import type { CallOutcome } from '../../records.js';
import { toHex } from '@svc-node/protocol/hash';

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
/** The decision of a dropped call: no position, no result (PROTOCOL section 5). */
export const DROPPED: CallOutcome = { status: 'dropped', block_height: null, tx_index: null, result: null, error: null, instructions: null };
export const bufferView = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

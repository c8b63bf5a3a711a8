/**
 * Bucket `callDecision`: what a block decided for a call, by txid (32 bytes), binary. A
 * block creates it and its undo deletes it; a call without one is pending.
 *
 *   u8 format (1) | u8 status | u32be block_height+1 | u32be tx_index+1 |
 *   u32be instructions+1 | u8 has_result | [typed value (values.ts)] |
 *   u8 has_error | [u16be len(code) | code | u32be len(message) | message]
 *
 * (0 in a +1 field means null; strings utf8.) Deciding a call so writes some 20 bytes
 * and its undo only the key, not a copy of the whole record; byte 1 gives the status
 * without decoding the rest.
 */
import { valueToJson } from '@svc-node/protocol/value';
import type { CallDecision, CallError, CallOutcome, CallStatus } from '../../records.js';
import { Bucket } from './buckets.js';
import { bucketRange, keyOfId } from './keys.js';
import { readValue, valueBytes, writeValue } from './values.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.callDecision, txid);
export const all = () => bucketRange(Bucket.callDecision);
export const isKey = (k: Buffer): boolean => k[0] === Bucket.callDecision;
export const txidOf = (k: Buffer): Buffer => k.subarray(1);

const DECISION_FORMAT = 1;
const DECISION_HEAD = 14;
const STATUS_CODES: readonly CallStatus[] = ['pending', 'executed', 'failed', 'invalid', 'dropped'];
const STATUS_BYTE: Record<CallStatus, number> = { pending: 0, executed: 1, failed: 2, invalid: 3, dropped: 4 };

export function encode(d: CallOutcome): Buffer {
  const err = d.error;
  const len = DECISION_HEAD + 1 + (d.result ? valueBytes(d.result) : 0) + 1 + (err ? 6 + Buffer.byteLength(err.code, 'utf8') + Buffer.byteLength(err.message, 'utf8') : 0);
  const out = Buffer.allocUnsafe(len);
  out[0] = DECISION_FORMAT;
  out[1] = STATUS_BYTE[d.status];
  out.writeUInt32BE(d.block_height === null ? 0 : d.block_height + 1, 2);
  out.writeUInt32BE(d.tx_index === null ? 0 : d.tx_index + 1, 6);
  out.writeUInt32BE(d.instructions === null ? 0 : d.instructions + 1, 10);
  let o = DECISION_HEAD;
  out[o++] = d.result ? 1 : 0;
  if (d.result) o = writeValue(out, o, d.result);
  out[o++] = err ? 1 : 0;
  if (err) {
    const c = out.write(err.code, o + 2, 'utf8');
    out.writeUInt16BE(c, o);
    o += 2 + c;
    const m = out.write(err.message, o + 4, 'utf8');
    out.writeUInt32BE(m, o);
  }
  return out;
}

/** The status of a stored decision, without decoding the rest. */
export function statusOf(b: Buffer): CallStatus {
  const s = STATUS_CODES[b[1]!];
  if (b[0] !== DECISION_FORMAT || s === undefined) throw new Error('stored call decision has an unknown format');
  return s;
}

const opt = (v: number): number | null => (v === 0 ? null : v - 1);

/**
 * Where a stored decision places its call (the block and the call's index there; both
 * null for a drop), without decoding its result or error: what serving the call to a
 * peer needs of it.
 */
export function positionOf(b: Buffer): Pick<CallDecision, 'block_height' | 'tx_index'> {
  statusOf(b);
  return { block_height: opt(b.readUInt32BE(2)), tx_index: opt(b.readUInt32BE(6)) };
}

export function decode(b: Buffer): CallDecision {
  const status = statusOf(b);
  let o = DECISION_HEAD;
  let result: unknown = null;
  if (b[o++] === 1) {
    const [v, next] = readValue(b, o);
    result = valueToJson(v);
    o = next;
  }
  let error: CallError | null = null;
  if (b[o++] === 1) {
    const c = b.readUInt16BE(o);
    const code = b.toString('utf8', o + 2, o + 2 + c);
    o += 2 + c;
    const m = b.readUInt32BE(o);
    error = { code, message: b.toString('utf8', o + 4, o + 4 + m) };
  }
  return { status, block_height: opt(b.readUInt32BE(2)), tx_index: opt(b.readUInt32BE(6)), result, error, instructions: opt(b.readUInt32BE(10)) };
}

/**
 * Bucket `event`: the events of a contract in a block, in runs (below).
 */
import { valueToJson, type Value } from '@svc-node/protocol/value';
import type { EventRecord } from '../../records.js';
import { Bucket } from './buckets.js';
import { keyOfId, keyOfIdInts, prefixEnd } from './keys.js';
import { readValue, valueBytes, writeValue } from './values.js';

/** The run starting at (height, tx_index, log_index) of contract `contractId` (32 bytes): one allocation. */
export const key = (contractId: Uint8Array, height: number, txIndex: number, logIndex: number): Buffer => keyOfIdInts(Bucket.event, contractId, height, txIndex, logIndex);
/** Where the runs of `contractId` from block `height` on start. */
export const fromHeight = (contractId: Uint8Array, height: number): Buffer => keyOfIdInts(Bucket.event, contractId, height);
/** After every run of `contractId`. */
export const end = (contractId: Uint8Array): Buffer => prefixEnd(keyOfId(Bucket.event, contractId));
/** Just after the key of a run starting exactly at (height, tx_index, log_index): the bound of a scan for the run holding that event. */
export const justAfter = (contractId: Uint8Array, height: number, txIndex: number, logIndex: number): Buffer => Buffer.concat([key(contractId, height, txIndex, logIndex), Buffer.of(0)]);
/** The block height of a run's key. */
export const heightOf = (k: Buffer): number => k.readUInt32BE(33);

/** One event as the VM emitted it: [tx_index, log_index, name, params, txid (32 bytes, display order)]. */
export type StoredEventRow = [number, number, string, readonly Value[], Uint8Array];

/**
 * A run of at most EVENT_CHUNK events of one contract in one block (key contract id
 * || u32be height || u32be tx_index || u32be log_index of its first event).
 * Runs, not one key per event, so a block of transfers writes a few keys, not thousands;
 * and not one record per block, so a page read from any position decodes at most a few
 * runs (a block with 20,000 events of one contract made each page decode all of them).
 *
 * Binary, with typed parameter values; the JSON a reader gets (parameter names from the
 * ABI, valueToJson) is built when read, not when the block is applied:
 *
 *   u8 format (1), then per event in (tx_index, log_index) order:
 *   u32be tx_index | u32be log_index | txid[32] | u16be len(name) | name |
 *   u16be count | per parameter: a typed value (writeValue)
 */
export const EVENT_CHUNK = 64;
const EVENTS_FORMAT = 1;

export function encode(rows: readonly StoredEventRow[]): Buffer {
  let len = 1;
  for (const [, , name, params] of rows) {
    len += 4 + 4 + 32 + 2 + Buffer.byteLength(name, 'utf8') + 2;
    for (const v of params) len += valueBytes(v);
  }
  const out = Buffer.allocUnsafe(len);
  out[0] = EVENTS_FORMAT;
  let o = 1;
  for (const [txIndex, logIndex, name, params, txid] of rows) {
    o = out.writeUInt32BE(txIndex, o);
    o = out.writeUInt32BE(logIndex, o);
    out.set(txid, o);
    o += 32;
    const nameLen = out.write(name, o + 2, 'utf8');
    out.writeUInt16BE(nameLen, o);
    o += 2 + nameLen;
    o = out.writeUInt16BE(params.length, o);
    for (const v of params) o = writeValue(out, o, v);
  }
  return out;
}

/**
 * The events of a stored run, their parameters named by `paramNames` (the contract's
 * ABI; an unnamed parameter is named by its position).
 */
export function decode(contractId: string, height: number, v: Buffer, paramNames: (event: string) => readonly string[] | undefined): EventRecord[] {
  if (v[0] !== EVENTS_FORMAT) throw new Error('stored event run has an unknown format');
  const out: EventRecord[] = [];
  let o = 1;
  while (o < v.length) {
    const tx_index = v.readUInt32BE(o);
    const log_index = v.readUInt32BE(o + 4);
    const txid = v.toString('hex', o + 8, o + 40);
    const nameLen = v.readUInt16BE(o + 40);
    const name = v.toString('utf8', o + 42, o + 42 + nameLen);
    o += 42 + nameLen;
    const count = v.readUInt16BE(o);
    o += 2;
    const names = paramNames(name);
    const params: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const [value, next] = readValue(v, o);
      o = next;
      params[names?.[i] ?? String(i)] = valueToJson(value);
    }
    out.push({ name, params, txid, block_height: height, tx_index, log_index, contract_id: contractId });
  }
  return out;
}

/**
 * Records the writer stores (JSON in RocksDB) and the block input it applies. Hex is
 * lowercase; txids and contract ids in display order (PROTOCOL section 1).
 */
import type { ErrorCode } from '../errors.js';
import type { CallStatusBody } from '../messages.js';
import type { StampResult } from '../protocol/stamp.js';
import { VALUE_TAG, VALUE_TYPES, valueToJson, type Value } from '../protocol/value.js';

export type CallStatus = 'pending' | 'executed' | 'failed' | 'invalid' | 'dropped';
export type ContractStatus = 'pending' | 'active';

export interface ContractRecord {
  contract_id: string;
  txid: string;
  code_hash: string;
  status: ContractStatus;
  block_height: number | null;
  tx_index: number | null;
  /** The registration as received: artifact core and metadata. */
  artifact: { bytecode: string; abi: unknown[]; function_offsets: Record<string, unknown>; function_offset_to_locals: Record<string, unknown>; constants: unknown[]; metadata: Record<string, unknown> };
  /** SHA-256 of the canonical registration, to tell a repeat from a conflict. */
  body_hash: string;
}

export interface CallError {
  code: string;
  message: string;
}

export interface CallRecord {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  function: string;
  caller: string;
  call_id: string;
  status: CallStatus;
  block_height: number | null;
  tx_index: number | null;
  result: unknown;
  error: CallError | null;
  /**
   * base64 of borsh(envelope), exactly as received. Present on pending records; decided
   * records leave it out (it is kept once in Bucket.callBody): see Ledger.callPayload.
   */
  payload?: string;
  /** "txid:vout" the anchoring transaction must spend. */
  outpoint: string;
  /** Instructions the VM used (executed/failed). */
  instructions: number | null;
}

/** A transaction of a block that the writer needs: carries SVC outputs or anchors a known call. */
export interface BlockTx {
  txIndex: number;
  txid: string;
  hex: string;
  /**
   * The parsed inputs and outputs, when the sender already parsed the transaction (the
   * core does, from the raw block): saves the writer a second parse. Not stored.
   */
  parts?: TxParts;
}

/** What binding checks and the execution context read of a transaction (bitcoinjs shape). */
export interface TxParts {
  ins: { hash: Uint8Array; index: number }[];
  outs: { script: Uint8Array; value: bigint }[];
  /** The inputs as the execution context gives them (txids in display order), made by the core. */
  inputs?: { txid: Uint8Array; vout: number }[];
  /** The transaction's stamp (findStamp), which the core's watcher already parsed. */
  stamp?: StampResult;
}

/**
 * The parts of a parsed transaction, as the core sends them with a block. The context's
 * inputs are made here, on the sender's thread, rather than by the writer for every call.
 */
export function txPartsOf(tx: { ins: { hash: Uint8Array; index: number }[]; outs: { script: Uint8Array; value: bigint }[] }, stamp?: StampResult): TxParts {
  return {
    stamp,
    ins: tx.ins.map((i) => ({ hash: i.hash, index: i.index })),
    outs: tx.outs.map((o) => ({ script: o.script, value: o.value })),
    inputs: tx.ins.map((i) => ({ txid: Uint8Array.from(i.hash).reverse(), vout: i.index })),
  };
}

/** What the core hands the writer per connected block; also the stored journal entry. */
export interface BlockInput {
  height: number;
  hash: string;
  prevHash: string;
  /** Transactions with SVC outputs (well formed or not), in block order. */
  txs: BlockTx[];
  /** Every txid of the block, in order (to find anchors of known calls that carry no stamp). */
  txids?: string[];
  /** Outpoints spent in the block: [outpoint "txid:vout", spender txid]. */
  spends?: [string, string][];
}

/** The stored journal entry: the block input reduced to what replay needs. */
export interface BlockRecord {
  height: number;
  hash: string;
  prevHash: string;
  txs: BlockTx[];
  /** Calls of this block decided dropped (their outpoint spent by another transaction). */
  dropped: string[];
  /** Anchors of known calls that carry no stamp: [txIndex, txid]. */
  unstamped: [number, string][];
  state_root: string;
}

export interface EventRecord {
  name: string;
  params: Record<string, unknown>;
  txid: string;
  block_height: number;
  tx_index: number;
  log_index: number;
  contract_id: string;
}

export interface OrphanStamp {
  txid: string;
  kind: 'deploy' | 'call';
  block_height: number;
  tx_index: number;
}

export interface DecideOutcome {
  status: Exclude<CallStatus, 'pending'>;
  code?: ErrorCode | string;
}

/** GET /contract_call/{txid}/status from a stored record; `tip` gives confirmations. */
export function statusBody(rec: CallRecord, tip: number | null): CallStatusBody {
  return {
    txid: rec.txid,
    contract_id: rec.contract_id,
    envelope_hash: rec.envelope_hash,
    function: rec.function,
    caller: rec.caller,
    call_id: rec.call_id,
    status: rec.status,
    block_height: rec.block_height,
    tx_index: rec.tx_index,
    result: rec.result,
    error: rec.error,
    confirmations: rec.block_height !== null && tip !== null ? tip - rec.block_height + 1 : null,
  };
}

// ------------------------------------------------------------------ block journal

/**
 * The stored journal entry (Bucket.block), binary: replay reads transactions as raw bytes
 * (half the size of hex in JSON, and no JSON to build for a block of thousands).
 *
 *   u8 format (1) | u32be height | hash[32] | prev_hash[32] | state_root[32] |
 *   u32be count | per tx: u32be tx_index | txid[32] | u32be len(raw) | raw |
 *   u32be count | per dropped call: txid[32] |
 *   u32be count | per unstamped anchor: u32be tx_index | txid[32]
 *
 * Hashes and txids in display order, as everywhere in the node.
 */
const JOURNAL_FORMAT = 1;

export function encodeBlockRecord(r: BlockRecord): Buffer {
  let len = 1 + 4 + 96 + 4 + 4 + 32 * r.dropped.length + 4 + 36 * r.unstamped.length;
  for (const t of r.txs) len += 40 + t.hex.length / 2;
  const out = Buffer.allocUnsafe(len);
  out[0] = JOURNAL_FORMAT;
  let o = out.writeUInt32BE(r.height, 1);
  o += out.write(r.hash, o, 32, 'hex');
  o += out.write(r.prevHash, o, 32, 'hex');
  o += out.write(r.state_root, o, 32, 'hex');
  o = out.writeUInt32BE(r.txs.length, o);
  for (const t of r.txs) {
    o = out.writeUInt32BE(t.txIndex, o);
    o += out.write(t.txid, o, 32, 'hex');
    const n = t.hex.length / 2;
    o = out.writeUInt32BE(n, o);
    if (out.write(t.hex, o, n, 'hex') !== n) throw new Error(`journal: transaction ${t.txid} is not hex`);
    o += n;
  }
  o = out.writeUInt32BE(r.dropped.length, o);
  for (const txid of r.dropped) o += out.write(txid, o, 32, 'hex');
  o = out.writeUInt32BE(r.unstamped.length, o);
  for (const [txIndex, txid] of r.unstamped) {
    o = out.writeUInt32BE(txIndex, o);
    o += out.write(txid, o, 32, 'hex');
  }
  if (o !== len) throw new Error('journal: a hash or txid is not 32 bytes of hex');
  return out;
}

/** The block hash of a stored journal entry, without decoding the rest. */
export function storedBlockHash(b: Buffer): string {
  if (b[0] !== JOURNAL_FORMAT) throw new Error('stored journal entry has an unknown format');
  return b.toString('hex', 5, 37);
}

export function decodeBlockRecord(b: Buffer): BlockRecord {
  if (b[0] !== JOURNAL_FORMAT) throw new Error('stored journal entry has an unknown format');
  const height = b.readUInt32BE(1);
  const hash = b.toString('hex', 5, 37);
  const prevHash = b.toString('hex', 37, 69);
  const state_root = b.toString('hex', 69, 101);
  let o = 101;
  const txs: BlockTx[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++) {
    const txIndex = b.readUInt32BE(o);
    const txid = b.toString('hex', o + 4, o + 36);
    const len = b.readUInt32BE(o + 36);
    txs.push({ txIndex, txid, hex: b.toString('hex', o + 40, o + 40 + len) });
    o += 40 + len;
  }
  const dropped: string[] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 32) dropped.push(b.toString('hex', o, o + 32));
  const unstamped: [number, string][] = [];
  for (let n = b.readUInt32BE(o), i = (o += 4, 0); i < n; i++, o += 36) unstamped.push([b.readUInt32BE(o), b.toString('hex', o + 4, o + 36)]);
  return { height, hash, prevHash, txs, dropped, unstamped, state_root };
}

// ------------------------------------------------------------------ typed values, binary

/**
 * A typed value as stored in event runs and call decisions: u8 tag (VALUE_TAG), then
 * u64 and i64 8 bytes big-endian (i64 two's complement), u128 16 bytes, bool 1 byte,
 * key 32 bytes, string (utf8) and bytes u32be length then the bytes.
 */
export function valueBytes(v: Value): number {
  switch (v.type) {
    case 'u64':
    case 'i64':
      return 9;
    case 'u128':
      return 17;
    case 'bool':
      return 2;
    case 'key':
      return 33;
    case 'string':
      return 5 + Buffer.byteLength(v.value, 'utf8');
    case 'bytes':
      return 5 + v.value.length;
  }
}

/** Writes `v` at `o`; returns the offset after it. `out` has valueBytes(v) bytes there. */
export function writeValue(out: Buffer, o: number, v: Value): number {
  out[o++] = VALUE_TAG[v.type];
  switch (v.type) {
    case 'u64':
      return out.writeBigUInt64BE(v.value, o);
    case 'i64':
      return out.writeBigInt64BE(v.value, o);
    case 'u128':
      o = out.writeBigUInt64BE(v.value >> 64n, o);
      return out.writeBigUInt64BE(v.value & 0xffffffffffffffffn, o);
    case 'bool':
      out[o] = v.value ? 1 : 0;
      return o + 1;
    case 'key':
      out.set(v.value, o);
      return o + 32;
    case 'string': {
      const n = out.write(v.value, o + 4, 'utf8');
      out.writeUInt32BE(n, o);
      return o + 4 + n;
    }
    case 'bytes':
      o = out.writeUInt32BE(v.value.length, o);
      out.set(v.value, o);
      return o + v.value.length;
  }
}

/** The value at `o` and the offset after it. */
export function readValue(b: Buffer, o: number): [Value, number] {
  const tag = b[o++]!;
  switch (VALUE_TYPES[tag]) {
    case 'u64':
      return [{ type: 'u64', value: b.readBigUInt64BE(o) }, o + 8];
    case 'i64':
      return [{ type: 'i64', value: b.readBigInt64BE(o) }, o + 8];
    case 'u128':
      return [{ type: 'u128', value: (b.readBigUInt64BE(o) << 64n) | b.readBigUInt64BE(o + 8) }, o + 16];
    case 'bool':
      return [{ type: 'bool', value: b[o] === 1 }, o + 1];
    case 'key':
      return [{ type: 'key', value: b.subarray(o, o + 32) }, o + 32];
    case 'string': {
      const n = b.readUInt32BE(o);
      return [{ type: 'string', value: b.toString('utf8', o + 4, o + 4 + n) }, o + 4 + n];
    }
    case 'bytes': {
      const n = b.readUInt32BE(o);
      return [{ type: 'bytes', value: b.subarray(o + 4, o + 4 + n) }, o + 4 + n];
    }
    default:
      throw new Error(`stored value has an unknown tag ${tag}`);
  }
}

// ------------------------------------------------------------------ stored call records

/**
 * Stored form of a call: two records. Bucket.call holds the fields fixed at intake
 * (JSON), written once when the call is accepted and never again. Bucket.callDecision
 * holds what a block decided, written by that block and deleted by its undo, in binary:
 *
 *   u8 format (1) | u8 status | u32be block_height+1 | u32be tx_index+1 |
 *   u32be instructions+1 | u8 has_result | [typed value (writeValue)] |
 *   u8 has_error | [u16be len(code) | code | u32be len(message) | message]
 *
 * (0 in a +1 field means null; strings utf8.) A call with no decision record is pending.
 * Deciding a call so writes some 20 bytes and its undo only the key, not a copy of the
 * whole record; byte 1 gives the status without decoding the rest.
 */
const DECISION_FORMAT = 1;
const DECISION_HEAD = 14;
const STATUS_CODES: readonly CallStatus[] = ['pending', 'executed', 'failed', 'invalid', 'dropped'];
const STATUS_BYTE: Record<CallStatus, number> = { pending: 0, executed: 1, failed: 2, invalid: 3, dropped: 4 };

type CallFixed = Pick<CallRecord, 'txid' | 'contract_id' | 'envelope_hash' | 'function' | 'caller' | 'call_id' | 'outpoint'>;
export type CallDecision = Pick<CallRecord, 'status' | 'block_height' | 'tx_index' | 'result' | 'error' | 'instructions'>;
/** A decision as a block makes it: the result as the VM's typed value (JSON is made when read). */
export type CallOutcome = Omit<CallDecision, 'result'> & { result: Value | null };

/** The part of a call record fixed at intake (Bucket.call). */
export function encodeCallFixed(rec: CallRecord): Buffer {
  const fixed: CallFixed = {
    txid: rec.txid,
    contract_id: rec.contract_id,
    envelope_hash: rec.envelope_hash,
    function: rec.function,
    caller: rec.caller,
    call_id: rec.call_id,
    outpoint: rec.outpoint,
  };
  return Buffer.from(JSON.stringify(fixed), 'utf8');
}

export function encodeCallDecision(d: CallOutcome): Buffer {
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
export function storedDecisionStatus(b: Buffer): CallStatus {
  const s = STATUS_CODES[b[1]!];
  if (b[0] !== DECISION_FORMAT || s === undefined) throw new Error('stored call decision has an unknown format');
  return s;
}

export function decodeCallDecision(b: Buffer): CallDecision {
  const status = storedDecisionStatus(b);
  const opt = (v: number): number | null => (v === 0 ? null : v - 1);
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

const PENDING: CallDecision = { status: 'pending', block_height: null, tx_index: null, result: null, error: null, instructions: null };

/** A call record from its stored fixed part and its decision (none: pending). */
export function decodeCallRecord(fixed: Buffer, decision: Buffer | undefined): CallRecord {
  // Fields set on the parsed object, not spread into a new one: a rewind decodes every
  // call it makes pending again.
  const rec = JSON.parse(fixed.toString('utf8')) as CallRecord;
  const d = decision ? decodeCallDecision(decision) : PENDING;
  rec.status = d.status;
  rec.block_height = d.block_height;
  rec.tx_index = d.tx_index;
  rec.result = d.result;
  rec.error = d.error;
  rec.instructions = d.instructions;
  return rec;
}

/** One event as the VM emitted it: [tx_index, log_index, name, params, txid (32 bytes, display order)]. */
export type StoredEventRow = [number, number, string, readonly Value[], Uint8Array];

/**
 * A run of at most EVENT_CHUNK events of one contract in one block (Bucket.event, key
 * contract || u32be height || u32be tx_index || u32be log_index of its first event).
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

export function encodeBlockEvents(rows: readonly StoredEventRow[]): Buffer {
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
export function decodeBlockEvents(contractId: string, height: number, v: Buffer, paramNames: (event: string) => readonly string[] | undefined): EventRecord[] {
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

/**
 * Decided calls of one contract in one block (Bucket.contractCalls, key contract ||
 * u32be height): their 32-byte txids (display order) in tx_index order.
 */
export function encodeBlockCalls(txids: Uint8Array[]): Buffer {
  return Buffer.concat(txids);
}

export function decodeBlockCalls(v: Buffer): string[] {
  const out: string[] = [];
  for (let o = 0; o + 32 <= v.length; o += 32) out.push(v.toString('hex', o, o + 32));
  return out;
}

/**
 * Records the writer stores (JSON in RocksDB) and the block input it applies. Hex is
 * lowercase; txids and contract ids in display order (PROTOCOL section 1).
 */
import type { ErrorCode } from '../errors.js';
import type { CallStatusBody } from '../messages.js';

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

// ------------------------------------------------------------------ stored call records

/**
 * Stored form of a call record (Bucket.call). A fixed binary head for what a decision
 * changes, then the fields fixed at intake as JSON, encoded once per call and reused
 * for every decision and rewind, then the decision's result and error as JSON (empty
 * when both are null):
 *
 *   u8 format (1) | u8 status | u32be block_height+1 | u32be tx_index+1 |
 *   u32be instructions+1 | u32be len(fixed) | fixed JSON | decision JSON
 *
 * (0 in a +1 field means null.) Deciding a call so costs a copy and a short JSON, not a
 * JSON encoding of the whole record; byte 1 gives the status without parsing.
 */
const CALL_FORMAT = 1;
const CALL_HEAD = 18;
const STATUS_CODES: readonly CallStatus[] = ['pending', 'executed', 'failed', 'invalid', 'dropped'];
const STATUS_BYTE: Record<CallStatus, number> = { pending: 0, executed: 1, failed: 2, invalid: 3, dropped: 4 };

type CallFixed = Pick<CallRecord, 'txid' | 'contract_id' | 'envelope_hash' | 'function' | 'caller' | 'call_id' | 'outpoint'>;

/** The part of a call record fixed at intake, encoded once. */
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

export function encodeCallRecord(
  fixed: Buffer,
  d: Pick<CallRecord, 'status' | 'block_height' | 'tx_index' | 'result' | 'error' | 'instructions'>,
): Buffer {
  const decision = d.result === null && d.error === null ? null : Buffer.from(JSON.stringify({ result: d.result, error: d.error }), 'utf8');
  const out = Buffer.allocUnsafe(CALL_HEAD + fixed.length + (decision?.length ?? 0));
  out[0] = CALL_FORMAT;
  out[1] = STATUS_BYTE[d.status];
  out.writeUInt32BE(d.block_height === null ? 0 : d.block_height + 1, 2);
  out.writeUInt32BE(d.tx_index === null ? 0 : d.tx_index + 1, 6);
  out.writeUInt32BE(d.instructions === null ? 0 : d.instructions + 1, 10);
  out.writeUInt32BE(fixed.length, 14);
  fixed.copy(out, CALL_HEAD);
  decision?.copy(out, CALL_HEAD + fixed.length);
  return out;
}

/** The fixed part of a stored call record (to re-encode it with another decision). */
export function storedCallFixed(b: Buffer): Buffer {
  return b.subarray(CALL_HEAD, CALL_HEAD + b.readUInt32BE(14));
}

/** The status of a stored call record, without decoding the rest. */
export function storedCallStatus(b: Buffer): CallStatus {
  const s = STATUS_CODES[b[1]!];
  if (b[0] !== CALL_FORMAT || s === undefined) throw new Error('stored call record has an unknown format');
  return s;
}

export function decodeCallRecord(b: Buffer): CallRecord {
  const status = storedCallStatus(b);
  const opt = (v: number): number | null => (v === 0 ? null : v - 1);
  const fixedLen = b.readUInt32BE(14);
  const fixed = JSON.parse(b.toString('utf8', CALL_HEAD, CALL_HEAD + fixedLen)) as CallFixed;
  const rest = CALL_HEAD + fixedLen < b.length ? (JSON.parse(b.toString('utf8', CALL_HEAD + fixedLen)) as { result: unknown; error: CallError | null }) : { result: null, error: null };
  return {
    ...fixed,
    status,
    block_height: opt(b.readUInt32BE(2)),
    tx_index: opt(b.readUInt32BE(6)),
    result: rest.result,
    error: rest.error,
    instructions: opt(b.readUInt32BE(10)),
  };
}

/** One event as stored: [tx_index, log_index, name, params, txid]. */
export type StoredEventRow = [number, number, string, Record<string, unknown>, string];

/**
 * A run of at most EVENT_CHUNK events of one contract in one block (Bucket.event, key
 * contract || u32be height || u32be tx_index || u32be log_index of its first event): a
 * JSON array of rows in (tx_index, log_index) order. Runs, not one key per event, so a
 * block of transfers writes a few keys, not thousands; and not one record per block, so
 * a page read from any position decodes at most a few runs (a block with 20,000 events
 * of one contract made each page decode all of them).
 */
export const EVENT_CHUNK = 64;

export function encodeBlockEvents(rows: StoredEventRow[]): Buffer {
  return Buffer.from(JSON.stringify(rows), 'utf8');
}

export function decodeBlockEvents(contractId: string, height: number, v: Buffer): EventRecord[] {
  const rows = JSON.parse(v.toString('utf8')) as StoredEventRow[];
  return rows.map(([tx_index, log_index, name, params, txid]) => ({ name, params, txid, block_height: height, tx_index, log_index, contract_id: contractId }));
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

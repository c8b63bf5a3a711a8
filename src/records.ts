/**
 * Records the writer stores and the block input it applies, as the node's code handles
 * them; how each is stored is its bucket's module (src/writer/store/). Beside src/messages/
 * because the chain follower builds the block input, and the messages and the core carry
 * these shapes: none of them may import the writer. Hex is lowercase;
 * txids and contract ids in display order (PROTOCOL section 1).
 */
import type { FeedCall } from '@svc-node/protocol/feed';
import type { StampResult } from '@svc-node/protocol/stamp';
import type { Value } from '@svc-node/protocol/value';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import type { TxShape } from '@svc-node/protocol/tx-shape';
import { reversed } from '@svc-node/protocol/bytes';

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
  artifact: ArtifactCore & { metadata: Record<string, unknown> };
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
   * records leave it out (it is kept once in the callBody bucket): see Ledger.callPayload.
   */
  payload?: string;
  /** "txid:vout" the anchoring transaction must spend. */
  outpoint: string;
  /** Instructions the VM used (executed/failed). */
  instructions: number | null;
}

/** What opening a call's envelope gives (the pool's openCall), as a pending record needs it. */
export interface OpenedCallFields {
  contractId: string;
  envelopeHash: string;
  function: string;
  caller: string;
  callId: string;
  outpoint: string;
}

/** The record of a call taken but not yet decided: its payload (base64) and envelope's fields. */
export function pendingCallRecord(txid: string, opened: OpenedCallFields, payloadB64: string): CallRecord {
  return {
    txid,
    contract_id: opened.contractId,
    envelope_hash: opened.envelopeHash,
    function: opened.function,
    caller: opened.caller,
    call_id: opened.callId,
    status: 'pending',
    block_height: null,
    tx_index: null,
    result: null,
    error: null,
    payload: payloadB64,
    outpoint: opened.outpoint,
    instructions: null,
  };
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
  /**
   * The merkle branch placing the transaction at `txIndex` in its block (internal byte
   * order, leaf level first): the evidence the node serves for it to peers and clients
   * (docs/STATE.md, "Bitcoin evidence"). Null in journal entries written before branches
   * were kept.
   */
  branch?: Uint8Array[] | null;
}

/**
 * A transaction as block application reads it: the protocol's TxShape, which a parsed
 * bitcoinjs Transaction also is, with what the core adds when it parsed it already.
 */
export interface TxParts extends TxShape {
  /** The inputs as the execution context gives them (txids in display order), made by the core. */
  inputs?: { txid: Uint8Array; vout: number }[];
  /** The transaction's stamp (findStamp), which the core's watcher already parsed. */
  stamp?: StampResult;
}

/**
 * The parts of a parsed transaction, as the core sends them with a block. The context's
 * inputs are made here, on the sender's thread, rather than by the writer for every call.
 */
export function txPartsOf(tx: TxShape, stamp?: StampResult): TxParts {
  return {
    stamp,
    ins: tx.ins.map((i) => ({ hash: i.hash, index: i.index })),
    outs: tx.outs.map((o) => ({ script: o.script, value: o.value })),
    inputs: tx.ins.map((i) => ({ txid: reversed(i.hash), vout: i.index })),
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
  /** The block's 80-byte header: stored in the node's header chain with the block. */
  header?: Uint8Array;
  /**
   * The block was read as its header alone (light following): `txs` and `spends` are
   * filled by the writer from the evidence it holds for this block (ledger/evidence.ts).
   */
  headerOnly?: boolean;
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


/** GET /contract_call/{txid}/status (PROTOCOL section 6, plus confirmations): the feed's `call` carries it too. */
export type CallStatusBody = FeedCall;

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

// ------------------------------------------------------------------ what blocks decide

/** What a block decided for a call (stored in the callDecision bucket, src/writer/store/call-decisions.ts). */
export type CallDecision = Pick<CallRecord, 'status' | 'block_height' | 'tx_index' | 'result' | 'error' | 'instructions'>;
/** A decision as a block makes it: the result as the VM's typed value (JSON is made when read). */
export type CallOutcome = Omit<CallDecision, 'result'> & { result: Value | null };

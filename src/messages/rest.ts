/** The reads the REST front asks of the core (typed RPC over the core's local socket). */
import type { FeedEvent } from '@svc-node/protocol/feed';
import type { CallStatusBody, ContractRecord } from '../records.js';

/** Reads served to the REST front. */
export type ReadApi = {
  contractIds(params: Record<string, never>): { contract_ids: string[] };
  /** A contract's registration: ids, status, position, ABI and metadata (GET /contracts/{id}). */
  contractInfo(params: { contract_id: string }): ContractInfo;
  /** Field read; `arg` is the raw (percent-decoded) path segment, decoded by the ABI key type. */
  readField(params: FieldReadParams): FieldReadBody;
  events(params: EventsParams): EventsPage;
  calls(params: { contract_id: string; limit: number; offset: number }): CallsPage;
  simulate(params: SimulateParams): SimulateBody;
  /** Resolves when the processed (height, state_root) differs from `known` (long poll, at most `waitMs`). */
  waitState(params: { known: StateVersion | null; waitMs: number }): StateVersion;
  /** Everything the core and writer count, for GET /metrics (the REST process renders it). */
  metrics(params: Record<string, never>): CoreMetrics;
  /** One step of the live feed (src/rest/stream/): durable blocks and what they hold, read at one state. */
  streamStep(params: StreamStepParams): StreamStep;
};

/** A block as the live feed knows it. */
export interface StreamBlock {
  height: number;
  block_hash: string;
  state_root: string;
}

/**
 * What the live feed asks the writer in one step (src/writer/stream-queries.ts). Every
 * read is answered from one state between two writer jobs, so after the chain update that
 * applied the blocks is durable, and up to one height (`StreamStep.to`).
 */
export interface StreamStepParams {
  /** Blocks the feed has delivered, newest first: the writer answers the highest still on its chain. */
  known: { height: number; hash: string }[];
  /** Most new blocks answered in one step (the rest come in the next step). */
  max_blocks: number;
  /**
   * Event pages up to `to`: after a position (exclusive) or from a height. `tags`: the
   * locator of a client's cursor not yet checked against the chain (hex, 8 bytes each).
   */
  events: { contract_id: string; event_name: string | null; after: [number, number, number] | null; from_height: number; limit: number; tags?: string[] }[];
  /** Pages of a contract's decided calls (its call log) up to `to`, like `events`; positions are (height, ordinal in the block, 0). */
  call_pages: { contract_id: string; after: [number, number, number] | null; from_height: number; limit: number; tags?: string[] }[];
  /** Pages of stored blocks from a height (block subscriptions behind the feed), up to `to`: at most `limit` blocks; fewer means the page reached `to`. */
  block_pages: { from_height: number; limit: number }[];
  /** Contracts whose call decisions in blocks (common, to] are wanted. */
  call_contracts: string[];
  /** Txids whose current status is wanted (null: the node holds no such call). */
  txids: string[];
  /** Contracts whose existence is asked (subscriptions that start at the head read nothing yet). */
  contracts: string[];
}

/** A decided call in a contract's call log, with its position (height, ordinal in the block, 0). */
export interface StreamCall {
  pos: [number, number, number];
  body: CallStatusBody;
}

export interface StreamStep {
  /** The highest `known` block still on the chain; null when none is (or none was given). */
  common: number | null;
  /** Height every read of this step stops at; null before the node has a block. */
  to: number | null;
  /** The node's durable tip when the step was read: above `to`, the feed has more blocks to step through at once. */
  tip: number | null;
  /** Blocks (common, to] ascending; without `known`, the last `max_blocks` blocks up to the tip. */
  blocks: StreamBlock[];
  /**
   * Per event read; `unknown`: the node holds no such contract (the subscription is refused);
   * `fork`: the cursor's block left the chain, roll back to this height (nothing read).
   */
  events: { events: EventJson[]; more: boolean; unknown?: true; fork?: number }[];
  /** Per call page, like `events`. */
  call_pages: { calls: StreamCall[]; more: boolean; unknown?: true; fork?: number }[];
  block_pages: StreamBlock[][];
  /** Calls decided in (common, to], per contract asked, in call-log order (their place in it: `pos`). */
  calls: { contract_id: string; calls: StreamCall[] }[];
  txids: (CallStatusBody | null)[];
  /** `contracts` the node does not hold. */
  missing: string[];
  /**
   * Cursor locators (packages/protocol/src/cursor.ts) by height, hex of the concatenated block tags:
   * for every height an answer holds (events, calls), `to`, `common` and every `fork - 1`.
   */
  locators: Record<number, string>;
}

/** A contract as reads answer it: its record's fixed fields, with the artifact's ABI and metadata. */
export interface ContractInfo extends Pick<ContractRecord, 'contract_id' | 'txid' | 'code_hash' | 'status' | 'block_height' | 'tx_index'> {
  abi: unknown[];
  metadata: Record<string, unknown>;
}

/** The version of the hot state the REST read cache is valid for. */
export interface StateVersion {
  height: number | null;
  state_root: string | null;
  block_hash: string | null;
}

export interface FieldReadParams {
  contract_id: string;
  field: string;
  arg: string | null;
  proof: boolean;
}

/** JSON of a Merkle trie proof for one key (docs/STATE.md, "Proofs over REST"). */
export interface ProofJson {
  /** Sibling hashes from the root down to where the key's path ends. */
  siblings: string[];
  /** The leaf the path ends at (the key's own when present), or null (an empty subtree). */
  leaf: { path: string; value: string } | null;
}

export interface FieldReadBody {
  contract_id: string;
  field: string;
  key: string | boolean | null;
  value: string | boolean;
  exists: boolean;
  height: number | null;
  /** The state root at `height` (the cache key of the REST read replica; what a proof proves against). */
  state_root: string;
  block_hash?: string | null;
  /** `contracts_root` and `decisions_root` fold to `state_root` (packages/protocol/src/state/decisions.ts; decisions_root null at the journal's anchor). */
  proof?: { storage_key: string; contracts_root: string; decisions_root: string | null; contract: ProofJson; storage: ProofJson };
}

/** An event as GET /events lists it (and the feed's `event` carries it). */
export type EventJson = FeedEvent;

export interface EventsParams {
  contract_id: string;
  event_name: string | null;
  from_block: number;
  to_block: number;
  limit: number;
  offset: number;
  /** Position after which to start (block height, tx index, log index), from a cursor. */
  after: [number, number, number] | null;
  /** The cursor's locator tags (hex), checked against the chain first. */
  tags?: string[];
}

export interface EventsPage {
  contract_id: string;
  events: EventJson[];
  /** True when more events match after this page. */
  more: boolean;
  /** The given cursor's block left the chain: the page starts after `rollback`'s position instead. */
  rollback?: { fork_height: number; after: [number, number, number] | null; locator: string };
  /** The cursor locator (hex tags) of the last event's block (or of the cursor given, when none). */
  locator?: string;
}

export interface CallsPage {
  contract_id: string;
  total: number;
  limit: number;
  offset: number;
  calls: CallStatusBody[];
}

export interface SimulateParams {
  contract_id: string;
  function: string;
  /** PROTOCOL typed values `{type, value}` as sent by the client (checked in the pool). */
  args: unknown[];
  caller: string | null;
  inputs: { txid: string; vout: number }[];
  outputs: { value: string; script: string }[];
}

export interface SimulateBody {
  contract_id: string;
  function: string;
  height: number;
  state_root: string | null;
  status: 'executed' | 'failed';
  result: string | boolean | null;
  error: { code: string; message: string } | null;
  events: { contract_id: string; name: string; params: Record<string, unknown> }[];
  instructions: number;
}

export interface WriterMetrics {
  processed_height: number | null;
  undo_depth: number;
  blocks_applied: number;
  block_apply_seconds: { sum: number; count: number; buckets: number[] };
  reorgs_by_depth: Record<string, number>;
  calls_by_status: Record<string, number>;
  contracts: number;
  pending_calls: number;
  halted: boolean;
}

export interface CoreMetrics {
  writer: WriterMetrics;
  tip_height: number | null;
  chain_endpoint_ok: boolean;
  pool: { threads: number; queued: number; queue_limit: number; saturated: boolean; completed: number };
  peers: number;
  simulations: Record<string, number>;
  /** A state divergence against a peer is reported and not resolved (node_status.divergence). */
  divergence_unresolved: boolean;
}

/** Bucket upper bounds (seconds) of the block-application histogram, shared by writer and REST. */
export const BLOCK_APPLY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

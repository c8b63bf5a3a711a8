/**
 * Every message that crosses a process or thread boundary, declared in one place with
 * its direction. Processes: supervisor, core (writer thread + worker pool), rest,
 * gossip. Transports: child_process IPC (supervisor <-> children, advanced
 * serialization), a local socket with typed RPC (rest/gossip -> core), a MessagePort
 * with typed RPC (core main thread -> writer thread).
 */
import type { NodeConfig } from './config/options.js';
import type { WireError } from '@svc-node/protocol/errors';
import type { CallProofJson, DecisionProofJson, Evidence, FoldedRoots, SpentBy } from '@svc-node/protocol/evidence';
import type { CheckedCoin, CoinEvidence } from '@svc-node/protocol/coin';
import type { FeedEvent } from '@svc-node/protocol/feed';
import type { BlockInput, CallRecord, CallStatus, CallStatusBody, ContractRecord, ContractStatus } from './records.js';
// Declared beside the stored record it is cut from (src/records.ts imports nothing from here).
export type { CallStatusBody };

export type Role = 'core' | 'rest' | 'gossip';

/** Gossip identity: created once by the supervisor so it survives child restarts. */
export interface GossipIdentity {
  /** Ed25519 seed (secret). */
  seed: Uint8Array;
  publicKeyHex: string;
  stable: boolean;
}

/**
 * One Prometheus metric family as prom-client's `getMetricsAsJSON` gives it: how the
 * children's process metrics cross to the REST front, which renders /metrics.
 */
export interface MetricFamily {
  name: string;
  help: string;
  type: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/** Which roles are serving, as the supervisor sees them (a child that listens or is ready). */
export type Serving = Record<Role, boolean>;

// ---- supervisor -> child (child_process IPC) ----
export type SupervisorToChild =
  | { type: 'init'; role: Role; config: NodeConfig; ipcPath: string; identity: GossipIdentity; version: string }
  | { type: 'shutdown' }
  /**
   * To the core, first thing when the node stops: end long work now (a replay or
   * re-derivation at its next block, block watching after the update in hand), so that
   * requests the front still drains that wait on it are answered at once. Its `shutdown`
   * follows once the front and gossip have stopped.
   */
  | { type: 'stopping' }
  /** To the REST front, at every change: what /ready reports for the other roles. */
  | { type: 'serving'; serving: Serving }
  /** To core and gossip: send your process metrics (answered with `metrics`). */
  | { type: 'collect_metrics'; id: number }
  /** To the REST front: the answer to `node_metrics`, every other process's families. */
  | { type: 'node_metrics'; id: number; families: MetricFamily[] };

// ---- child -> supervisor (child_process IPC) ----
export type ChildToSupervisor =
  | { type: 'ready'; role: Role }
  | { type: 'listening'; role: Role; address: string; port: number }
  | { type: 'fatal'; role: Role; reason: string }
  /** A listening address is taken or not allowed: the supervisor stops the node (no restart). */
  | { type: 'bind_failed'; role: Role; key: string; address: string; errno: string }
  | { type: 'metrics'; id: number; families: MetricFamily[] }
  /** From the REST front, per /metrics scrape. */
  | { type: 'node_metrics'; id: number };

/** Deferred checks of pending payloads (src/core/deferred-checks.ts), in node_status.chain. */
export interface DeferredStats {
  /** Pending payloads the scheduler follows. */
  tracked: number;
  /** Of them, checks due now and waiting for the budget. */
  due: number;
  checks_total: number;
  placed_total: number;
  dropped_total: number;
  evicted_total: number;
}

// ---- rest / gossip -> core (RPC over the core socket) ----
export interface NodeStatus {
  node_id: string;
  version: string;
  tip_height: number | null;
  processed_height: number | null;
  state_root: string | null;
  halted: boolean;
  halt_reason: string | null;
  /** Active gossip peers (heard from within gossip.peer_expiry_s). */
  peers: number;
  pending_calls: number;
  /** Pending payloads evicted for others that pay more (docs/STATE.md, "Coin evidence"): replaced on their coin, outbid in a full set. */
  pending_evicted: { replaced: number; outbid: number };
  contracts: number;
  gossip_public_key: string;
  caught_up: boolean;
  pool: { threads: number; queued: number; queue_limit: number; saturated: boolean };
  chain: {
    endpoint: string;
    endpoint_ok: boolean;
    last_error: string | null;
    tip_hash: string | null;
    /** config chain_mode. */
    mode: 'light' | 'blocks';
    /** The highest verified block header held (light following runs ahead of processed_height). */
    header_height: number | null;
    /**
     * Peers' tip announcements lead (light following): the last new block came from one
     * before this node's own poll found it, so it polls only after 30 intervals without a block.
     */
    peers_lead: boolean;
    /** Deferred checks of pending payloads (src/core/deferred-checks.ts). */
    deferred_checks: DeferredStats;
    /** The request budget at the chain-data endpoint (src/chain/budget.ts). */
    budget: ChainBudgetStatus;
  };
  last_block_processed_at: string | null;
  uptime_s: number;
  /** Gossip and sync counters (issue 8); zeros until the gossip process reports. */
  gossip: GossipCounters;
  /** Peers' payloads kept while this node's header chain catches up (docs/STATE.md, "Coin evidence"). */
  unproven_pool: UnprovenPoolStatus;
  /** The last state divergence found against a peer, or null. */
  divergence: DivergenceReport | null;
}

/** node_status.chain.budget: the chain-data request budget (src/chain/budget.ts). */
export interface ChainBudgetStatus {
  requests_per_hour: number;
  burst: number;
  /** Whole requests the node may send now. */
  available: number;
  /** Requests (attempts) sent in the last hour, counted per minute. */
  used_last_hour: number;
  /** Requests queued for the budget, by priority. */
  waiting: { tip: number; intake: number; deferred: number };
  /** 429 answers from the endpoint since the core started. */
  throttled_total: number;
}

/** POST /contract_call body after the REST layer's shape checks. */
export interface CallSubmission {
  txid: string;
  contract_id: string;
  /** borsh(envelope), decoded from base64. */
  payload: Uint8Array;
  /** REST `anchor_tx` (PROTOCOL section 6): the anchoring transaction's bytes, so intake asks the endpoint nothing. */
  anchor_tx?: Uint8Array;
  /** A peer's payload: the Bitcoin evidence it came with (checked, never trusted). */
  evidence?: Evidence;
  /** REST `coin` (docs/STATE.md, "Coin evidence"): what pays for the call's wait. A peer's travels in `evidence`. */
  coin?: CoinEvidence;
}

/** What a deploy registration came with besides its body: REST `anchor_tx`, or a peer's evidence. */
export interface DeployExtras {
  anchor_tx?: Uint8Array;
  evidence?: Evidence;
  /** REST `coin`, as for a call. */
  coin?: CoinEvidence;
}

export interface CallAnswer {
  created: boolean;
  body: { txid: string; contract_id: string; envelope_hash: string; status: CallStatus };
  /** The evidence stored with a payload intake created (for gossip to forward it with); the core keeps it to itself. */
  evidence?: Evidence;
}

export interface DeployAnswer {
  created: boolean;
  body: { contract_id: string; txid: string; code_hash: string; status: ContractStatus };
  evidence?: Evidence;
}


/**
 * The core's RPC surface, in three parts so that each role's owner extends its own:
 * intake and status (core), reads for the REST front (ReadApi), peers (PeerApi).
 */
export type CoreApi = IntakeApi & ReadApi & PeerApi;

/** Reads served to the REST front (issue 7). */
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

/** A payload as peers exchange it (proto Payload): a REST body in binary form. */
export interface WirePayload {
  kind: 'call' | 'deploy';
  /** Anchoring txid, display hex. */
  txid: string;
  /** Target contract (calls); '' for deploys. */
  contract_id: string;
  /** Calls: borsh(envelope). Deploys: UTF-8 JSON registration record. At most 64 KiB. */
  body: Uint8Array;
  /** The payload's Bitcoin evidence (packages/protocol/src/evidence.ts); null: none. Checked by every receiver, never trusted. */
  evidence: Evidence | null;
}

/**
 * A WirePayload packed into one byte array (src/packed-payload.ts): payloads travel
 * so between the gossip process, the core and the writer.
 */
export type PackedPayload = Uint8Array;

/**
 * node_status.unproven_pool (src/core/unproven-pool.ts): peers' payloads refused
 * `coin_unproven` for a header this node lacks yet, kept until its header tip reaches it.
 */
export interface UnprovenPoolStatus {
  /** Payloads kept now, and their bytes. */
  held: number;
  bytes: number;
  /** Since start: kept; tried again after the header tip advanced; stored by intake on a retry; dropped still unproven past their wait; tried again and refused for another reason; dropped for a bound by a better ranked one. */
  kept: number;
  retried: number;
  taken: number;
  expired: number;
  refused: number;
  evicted: number;
}

/** Payload announced by the core to the gossip process after REST intake stored it. */
export const PAYLOAD_ACCEPTED_EVENT = 'payload_accepted';

/** Counters the gossip process keeps and reports (node_status.gossip). */
export interface GossipCounters {
  /** Payloads received in SubmitPayload requests. */
  payloads_received: number;
  /** Of those, newly stored by intake. */
  payloads_accepted: number;
  /** Of those, refused by intake (bad signature, stamp mismatch, ...). */
  payloads_refused: number;
  /** Of the refused, those that showed no coin paying for their wait (coin_missing, bad_coin, coin_unproven): each cost its sender inbound budget. */
  payloads_unpaid: number;
  /** Of those, skipped as already seen. */
  payloads_duplicate: number;
  /** Payload copies sent to peers by gossip. */
  payloads_forwarded: number;
  /** Requests refused before any handler ran: unsigned, bad signature, stale clock. */
  requests_unauthenticated: number;
  /** Requests refused by the inbound rate limits. */
  requests_rate_limited: number;
  /** Requests whose bytes are not a protobuf message of the method (INVALID_ARGUMENT). */
  requests_malformed: number;
  /** Payload copies not sent because the peer's send backlog was full (sync repairs them). */
  payloads_forward_dropped: number;
  /** Sync rounds completed (one per peer per round). */
  sync_rounds: number;
  /** Contracts whose Merkle root differed from a peer's during sync. */
  sync_contracts_differing: number;
  /** Payloads this node fetched from peers by sync (GetPayloadByTxid calls it made). */
  sync_payloads_fetched: number;
  /** Of those, newly stored by intake. */
  sync_payloads_applied: number;
  /** Payloads this node served to peers (GetPayloadByTxid answers it gave). */
  payloads_served: number;
  /** Block headers this node served to peers (GetHeaders). */
  headers_served: number;
  /** Block headers taken from peers by sync (verified, the top of each run authenticated by the endpoint). */
  sync_headers_accepted: number;
  /** Evidence of this node's pending payloads taken from peers by sync. */
  sync_evidence_taken: number;
  /** Peer answers refused as false (bad_evidence): header runs and payload evidence that did not hold. */
  sync_bad_evidence: number;
  /** Peers' heartbeat tip announcements above this node's header tip, passed to the core (which asks the endpoint at most once a poll interval). */
  tip_announcements_passed: number;
}

/** Every gossip counter at 0: the gossip process's start and the core's view before its first report. */
export function zeroCounters(): GossipCounters {
  return {
    payloads_received: 0,
    payloads_accepted: 0,
    payloads_refused: 0,
    payloads_unpaid: 0,
    payloads_duplicate: 0,
    payloads_forwarded: 0,
    requests_unauthenticated: 0,
    requests_rate_limited: 0,
    requests_malformed: 0,
    payloads_forward_dropped: 0,
    sync_rounds: 0,
    sync_contracts_differing: 0,
    sync_payloads_fetched: 0,
    sync_payloads_applied: 0,
    payloads_served: 0,
    headers_served: 0,
    sync_headers_accepted: 0,
    sync_evidence_taken: 0,
    sync_bad_evidence: 0,
    tip_announcements_passed: 0,
  };
}

/** The last state divergence found against a peer (node_status.divergence). */
export interface DivergenceReport {
  peer: string;
  /** First height (same block hash on both nodes) where the state roots differ. */
  height: number;
  block_hash: string;
  local_root: string;
  peer_root: string;
  detected_at: string;
  /** Re-sync brought the roots together. */
  resolved: boolean;
  /** What happened after detection: "resynced", "local replay agrees with stored state", "halted", "pending". */
  outcome: string;
}

/** What the gossip process asks of the core (issue 8). Payloads go through intake. */
export type PeerApi = {
  /** Runs intake on a peer's payload (the same checks as REST) and stores it. */
  /** `from`: the sending peer's key (a payload refused only for a header this node lacks yet is kept for it: core/unproven-pool.ts). */
  peerSubmit(params: { payload: PackedPayload; from?: string }): { created: boolean };
  /**
   * peerSubmit for several payloads in one round trip (sync hands a fetched page at
   * once); one result per payload, in order: a refusal fails only its own entry.
   */
  peerSubmitMany(params: { payloads: PackedPayload[] }): { results: ({ ok: true; created: boolean } | { ok: false; error: WireError })[] };
  /** Runs the intake checks without storing (PreparePayload). */
  peerPrepare(params: { payload: PackedPayload }): { valid: true };
  /** One page of the contract ids known (active and pending), ascending, after `after`. */
  peerContractIds(params: { after: string; limit: number }): { ids: string[]; more: boolean };
  /** Contract summary (docs/STATE.md): root, count and one page of pairs ascending by txid. */
  peerSummary(params: { contract_id: string; after_txid: string; limit: number }): ContractSummary;
  /** A contract's summary root and payload count, without the pairs (GetContractMerkleRoot). */
  peerRoot(params: { contract_id: string }): { root: string; count: number };
  /** Every contract's whole-set count and fingerprint (proto/svc.proto, header section 3). */
  peerFingerprints(params: Record<string, never>): Record<string, { count: number; fingerprint: string }>;
  /** One page of a contract's payload txids: the deploy first, then calls in position order. */
  peerTxids(params: { contract_id: string; offset: number; limit: number }): TxidPage;
  /** Counts and fingerprints (or txid lists) of txid ranges of a contract (GetContractRanges). */
  peerRanges(params: { contract_id: string; ranges: RangeQuery[] }): RangeAnswer[];
  /** One payload by txid with this node's position for it, or null. */
  peerPayload(params: { txid: string }): PackedPeerPayload | null;
  /** Several payloads, in the order asked (null: not held): one round trip for a peer's GetPayloads. */
  peerPayloads(params: { txids: string[] }): (PackedPeerPayload | null)[];
  /** Stored state roots in [from, to] (at most 1,000 heights). */
  peerStateRoots(params: { from: number; to: number }): StateRootRange;
  /** Waits for the writer to finish every job queued so far (late-payload replays). */
  peerSettle(params: Record<string, never>): { processed_height: number | null; state_root: string | null };
  /**
   * What heartbeats advertise, read when one is sent or answered: the processed height as
   * of the writer's last state event (from the core's memory, no writer round trip) and
   * the header tip with its 80 bytes (read from the writer once per new tip).
   */
  peerAdvert(params: Record<string, never>): { height: number | null; tip: { height: number; header: Uint8Array } | null };
  /**
   * A peer's heartbeat announced a header tip above this node's (a hint, never trusted:
   * ChainFollower.notePeerTip decides whether to ask the endpoint). `announcer`: the
   * peer's hex public key.
   */
  peerTip(params: { height: number; header: Uint8Array; announcer: string }): { ok: true };
  /**
   * Re-derives the state from the journal and compares every stored state root; a
   * difference halts the node (the ledger's rule). Answers whether it halted.
   */
  peerVerifyReplay(params: Record<string, never>): { halted: boolean; halt_reason: string | null };
  /** Verified block headers of heights [from, from + count), as far as held, and the header tip (GetHeaders). */
  peerHeaders(params: { from: number; count: number }): { headers: Uint8Array[]; tip: number | null };
  /**
   * What header sync starts from: the journal's anchor (null before it is anchored), the
   * header tip, and whether this node takes peers' header runs (chain_mode light).
   */
  peerHeaderState(params: Record<string, never>): { anchor: number | null; tip: number | null; takesHeaders: boolean };
  /**
   * A peer's run of headers from `from` (ChainFollower.submitHeaders: linkage, proof of
   * work, and one endpoint answer for its top); `linked` false when its first header does
   * not follow this node's block at `from - 1` (another branch: not taken, not a lie).
   * A run that fails verification or authentication is refused `bad_evidence`.
   */
  peerSubmitHeaders(params: { from: number; headers: Uint8Array[] }): { accepted: number; linked: boolean };
  /**
   * Pending payloads this node holds whose evidence a peer may improve, ascending by txid
   * after `after`, from a page of `limit` (sync asks peers for their evidence). Left out:
   * a payload whose stored evidence places or drops it in a block above the processed tip
   * (that block decides it). `next`: the cursor of the next page, '' when this was the last.
   */
  peerPending(params: { after: string; limit: number }): { txids: string[]; next: string };
  /**
   * A peer's evidence for a pending payload this node holds: checked (checkEvidence, then
   * the writer against its headers) and kept where it holds (Writer.takeEvidence).
   * `taken`: the payload was still pending here and the evidence was kept. A claim that
   * does not hold is refused `bad_evidence`.
   */
  peerTakeEvidence(params: { txid: string; evidence: Evidence }): { taken: boolean };
  /**
   * Gossip's first sync round with its peers since it started has ended, whether it
   * brought anything or every peer failed: a light node stops holding block application
   * back for it (ChainFollower.noteInitialSync). Sent again after a core restart.
   */
  peerInitialSyncDone(params: Record<string, never>): { ok: true };
  /**
   * A sync has taken every payload its peer listed anchored at or below `height` (the
   * peer lists them in chain order), or (null) every payload it listed: while the first
   * sync still delivers, a light node applies blocks up to there
   * (ChainFollower.notePeerDelivered).
   */
  peerSyncDelivered(params: { height: number | null }): { ok: true };
  /**
   * A sync round has listed `payloads` payloads to fetch from its peer (what it lacks of
   * the peer's sets), before fetching them: what the `catching up` line counts the
   * payloads taken against while the first sync holds blocks back
   * (ChainFollower.notePeerPayloadsListed).
   */
  peerSyncListed(params: { payloads: number }): { ok: true };
  /** The gossip process's view, shown in node_status. */
  peerReport(params: { peers: number; counters: GossipCounters; divergence: DivergenceReport | null }): { ok: true };
};

export interface ContractSummary {
  contract_id: string;
  root: string;
  /** Pairs in the whole summary. */
  count: number;
  /** One page of pairs, ascending by txid. */
  payloads: { txid: string; payload_hash: string }[];
  /** Further pairs follow the page. */
  more: boolean;
}

/** One page of a contract's txid list, and the length of the whole list. */
export interface TxidPage {
  refs: PayloadRef[];
  total: number;
}

/** A txid range [lower, upper) as hex bounds of 0 to 32 bytes ('' upper: the end). */
export interface RangeQuery {
  lower: string;
  upper: string;
  /** List the txids when the range holds at most this many. */
  list_up_to: number;
}

export interface RangeAnswer {
  count: number;
  /** 16 bytes hex (proto/svc.proto, header section 3). */
  fingerprint: string;
  /** The range's txids ascending when listed, else null. */
  txids: string[] | null;
}

/** A payload with the node's confirmation position for it (calls; null while pending). */
export interface PeerPayload {
  payload: WirePayload;
  height: number | null;
  tx_index: number | null;
}

/** A PeerPayload as it crosses threads and processes: the payload packed. */
export interface PackedPeerPayload {
  payload: PackedPayload;
  height: number | null;
  tx_index: number | null;
}

export interface PayloadRef {
  txid: string;
  kind: 'deploy' | 'call';
  /** Confirmation position, null while pending. */
  height: number | null;
  tx_index: number | null;
}

export interface StateRootRange {
  roots: { height: number; block_hash: string; state_root: string }[];
  anchor_height: number | null;
  tip_height: number | null;
}

export type IntakeApi = {
  nodeStatus(params: Record<string, never>): NodeStatus;
  /** Liveness of the core and its writer thread. */
  ping(params: Record<string, never>): { ok: true };
  submitCall(params: CallSubmission): CallAnswer;
  /** The deploy registration record (SERVICE-SPEC section 2) as parsed JSON. */
  submitDeploy(params: { body: Record<string, unknown>; anchor_tx?: Uint8Array; coin?: CoinEvidence }): DeployAnswer;
  /** `proof`: add the call's Bitcoin evidence (docs/STATE.md, "Call proofs"). */
  callStatus(params: { txid: string; proof?: boolean }): CallStatusBody & { proof?: CallProofJson };
  stateRoot(params: { height: number | null }): { height: number; block_hash: string; state_root: string };
  clearHalt(params: Record<string, never>): { halted: false };
};

// ---- core main thread -> writer thread (RPC over the worker's port) ----
/** A pending payload as deferred checks and the peers' evidence pull list them (Ledger.pendingPayloads). */
export interface PendingPayload {
  txid: string;
  kind: 'call' | 'deploy';
  contract_id: string;
  /** A call's named outpoint ("txid:vout"); null for a deploy. */
  outpoint: string | null;
  /** The lowest block its stored evidence places or drops it in (settlesAt); null: none. */
  settles_at: number | null;
}

export interface WriterStatus {
  processedHeight: number | null;
  processedHash: string | null;
  anchorHeight: number | null;
  stateRoot: string | null;
  halted: boolean;
  haltReason: string | null;
  contracts: number;
  pendingCalls: number;
  /** Deploys registered whose anchor has not confirmed yet. */
  pendingDeploys: number;
  /** Writer.coinEvictions: pending payloads evicted for others that pay more, since start. */
  coinEvictions: { replaced: number; outbid: number };
  lastBlockAt: string | null;
  /** The highest verified block header held (may be above the processed height). */
  headerHeight: number | null;
  headerHash: string | null;
}

export interface ChainUpdate {
  fork_height: number;
  /** Blocks that left the best chain, tip first. */
  disconnected: { height: number; hash: string }[];
  /** New best-chain blocks, ascending. */
  connected: BlockInput[];
  /**
   * The best chain ends at the last connected block (the follower saw its tip there):
   * headers the node holds above it belong to a branch that is gone and are removed.
   */
  endsChain?: boolean;
}

/** The writer's answer to a chain update: its status, and the calls the update's blocks dropped. */
export interface ChainUpdateAnswer extends WriterStatus {
  /** Calls dropped by the connected blocks read in full: the core attaches each spender's evidence. */
  drops: { txid: string; outpoint: string; spender: string; height: number }[];
}

/** The writer's RPC surface: core operations, reads (issue 7), peer data (issue 8). */
export type WriterApi = WriterCoreApi & WriterReadApi & WriterPeerApi;

export type WriterReadApi = {
  contractIds(params: Record<string, never>): string[];
  readField(params: FieldReadParams): FieldReadBody;
  events(params: EventsParams): EventsPage;
  calls(params: { contract_id: string; limit: number; offset: number }): CallsPage;
  /** One atomic snapshot of the named active contracts (program + storage) for a simulation. */
  simSnapshot(params: { ids: string[] }): SimSnapshot;
  stateVersion(params: Record<string, never>): StateVersion;
  readMetrics(params: Record<string, never>): WriterMetrics;
  streamStep(params: StreamStepParams): StreamStep;
};

export interface SimContract {
  id: string;
  program: import('@svc-node/protocol/vm/types').Program;
  /** [storage key, value] as stored. */
  storage: [Uint8Array, Uint8Array][];
  size: number;
}

export interface SimSnapshot {
  height: number | null;
  state_root: string | null;
  contracts: SimContract[];
  /** Requested ids that are not active contracts. */
  missing: string[];
}

/** Peer data the writer answers (issue 8; src/writer/peer-queries.ts). */
export type WriterPeerApi = {
  /** One page of the known contract ids (active and pending), ascending, after `after`. */
  peerContractIds(params: { after: string; limit: number }): { ids: string[]; more: boolean };
  peerSummary(params: { contract_id: string; after_txid: string; limit: number }): ContractSummary | null;
  peerRoot(params: { contract_id: string }): { root: string; count: number } | null;
  peerFingerprints(params: Record<string, never>): Record<string, { count: number; fingerprint: string }>;
  peerTxids(params: { contract_id: string; offset: number; limit: number }): TxidPage | null;
  peerRanges(params: { contract_id: string; ranges: RangeQuery[] }): RangeAnswer[] | null;
  peerPayload(params: { txid: string }): PackedPeerPayload | null;
  /** Several payloads, in the order asked (null: not held): one round trip for a peer's GetPayloads. */
  peerPayloads(params: { txids: string[] }): (PackedPeerPayload | null)[];
  peerStateRoots(params: { from: number; to: number }): StateRootRange;
  /** Resolves after every writer job queued before it (late-payload replays included). */
  peerSettle(params: Record<string, never>): WriterStatus;
  /** Re-derivation check of the whole journal; halts on a disagreement. */
  peerVerifyReplay(params: Record<string, never>): WriterStatus;
};

/**
 * What intake learned about the outpoint a call names, for PROTOCOL section 5's `dropped`
 * (a chain fact: the outpoint spent by a confirmed transaction other than the anchor),
 * so a node that receives the call after that spend decides what a node that held it
 * before decided (docs/STATE.md, "Dropped calls").
 */
export interface OutpointCheck {
  /**
   * The writer's processed height and chain epoch (a count of reorgs) at intake's look-up,
   * before it asked the chain endpoint: every block applied since, on any branch, is
   * checked by the writer (`Ledger.droppedAt`).
   */
  lookedUpAt: { height: number; epoch: number } | null;
  /** The confirmed transaction other than the anchor that spends the outpoint, as the endpoint answered; null when none. */
  spentBy: { txid: string; height: number; blockHash: string } | null;
  /**
   * Intake asked the endpoint nothing (the spend check is off its path: deferred checks,
   * evidence): the blocks whose spends the writer remembers decide a drop now, and nothing
   * is refused for a window they do not cover.
   */
  memoryOnly?: boolean;
}

export type WriterCoreApi = {
  status(params: Record<string, never>): WriterStatus;
  initAnchor(params: { height: number; hash: string }): WriterStatus;
  knownHash(params: { height: number }): string | null;
  payloadAt(params: { txid: string }): { kind: 'deploy' | 'call'; contract_id: string; body_hash: string } | null;
  contract(params: { id: string }): ContractRecord | null;
  /**
   * Intake's look-ups for a call in one round trip: what the node holds for the txid
   * (`payloadAt`), whether the contract's deploy payload is held (`contract`), and the
   * processed height and chain epoch they were read at (the start of the window
   * `OutpointCheck` covers).
   */
  callLookup(params: { txid: string; contractId: string }): {
    known: { kind: 'deploy' | 'call'; contract_id: string; body_hash: string } | null;
    contractKnown: boolean;
    lookedUpAt: { height: number; epoch: number } | null;
  };
  /**
   * `evidence`: the deploy's Bitcoin evidence (its anchor; placements when known), kept with it;
   * `folded`: the roots intake's checkEvidence folded its branches to (both accepts).
   */
  acceptDeploy(params: { record: ContractRecord; evidence?: Evidence; folded?: FoldedRoots; coin?: CheckedCoin | null }): { created: boolean; record: ContractRecord };
  /** `pendingCalls`: the writer's pending count once the call's batch is durable (intake's early bound check). */
  acceptCall(params: { record: CallRecord; outpoint: OutpointCheck; evidence?: Evidence; folded?: FoldedRoots; coin?: CheckedCoin | null }): { created: boolean; record: CallRecord; pendingCalls: number };
  call(params: { txid: string }): CallRecord | null;
  applyChainUpdate(params: ChainUpdate): ChainUpdateAnswer;
  stateRoot(params: { height: number | null }): { height: number; block_hash: string; state_root: string } | null;
  clearHalt(params: Record<string, never>): WriterStatus;
  /** A verified, authenticated run of block headers from `from` (light following). */
  putHeaders(params: { from: number; headers: Uint8Array[]; truncate: boolean }): WriterStatus;
  /** Stored headers of heights [from, from + count), as far as they go. */
  headers(params: { from: number; count: number }): Uint8Array[];
  /** The evidence the node holds for a payload (served to peers and clients). */
  payloadEvidence(params: { txid: string }): Evidence | null;
  /** A call's proof material: evidence as decided, payload, the named blocks' headers (null: no such call). */
  callProof(params: { txid: string }): { evidence: Evidence; payload: Uint8Array; headers: { confirmed: Uint8Array | null; spentBy: Uint8Array | null }; decision: DecisionProofJson | null } | null;
  /** Evidence found for a payload the node holds (deferred checks); false when it holds none. */
  takeEvidence(params: { txid: string; evidence: Evidence }): boolean;
  /** Spender evidence of calls dropped by blocks read in full. */
  storeSpentBy(params: { items: { txid: string; spentBy: SpentBy }[] }): { stored: true };
  /** Pending payloads ascending by txid after `after`. */
  pendingPayloads(params: { after: string; limit: number }): PendingPayload[];
  /** Which of `txids` are held pending (a call or a deploy), in the given order. */
  stillPending(params: { txids: string[] }): boolean[];
  /** Forgets pending payloads whose anchor the endpoint knows nowhere; answers those removed. */
  evictPayloads(params: { txids: string[] }): string[];
  /**
   * The node is stopping: a replay or re-derivation in hand ends at its next block and
   * chain updates are refused from now on (writer.ts, stop). Sent before the core waits
   * for the block watcher, whose update in hand may be that re-derivation.
   */
  stop(params: Record<string, never>): { stopping: true };
  /** Flush and close RocksDB; the writer thread exits afterwards. */
  close(params: Record<string, never>): { closed: true };
};

/** workerData handed to the writer thread. */
export interface WriterInit {
  dbPath: string;
  nodeId: string;
  /** Config max_pending_calls: beyond it acceptCall answers overloaded. */
  maxPendingCalls: number;
  logFilter: string;
  secrets: string[];
}

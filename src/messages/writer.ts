/** Core main thread -> writer thread (typed RPC over the worker's MessagePort) and the thread's start data. */
import type { DecisionProofJson, Evidence, FoldedRoots, SpentBy } from '@svc-node/protocol/evidence';
import type { CheckedCoin } from '@svc-node/protocol/coin';
import type { Program } from '@svc-node/protocol/vm/types';
import type { BlockInput, CallRecord, ContractRecord } from '../records.js';
import type { StreamStepParams, StreamStep, StateVersion, FieldReadParams, FieldReadBody, EventsParams, EventsPage, CallsPage, WriterMetrics } from './rest.js';
import type { ContractSummary, TxidPage, RangeQuery, RangeAnswer, PackedPeerPayload, StateRootRange } from './gossip.js';

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

/** The writer's RPC surface: core operations, reads, peer data. */
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
  program: Program;
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

/**
 * The peer queries the writer answers (src/writer/peer-queries.ts). The core forwards each
 * to the gossip process through one generic path (core/peer-handlers.ts): the answer as
 * it is, but that a contract-scoped query's null (the contract is not known here) is
 * refused `not_found` (`PEER_QUERIES`, `ForwardedPeerQueries`).
 */
export type PeerQueryApi = {
  /** One page of the known contract ids (active and pending), ascending, after `after`. */
  peerContractIds(params: { after: string; limit: number }): { ids: string[]; more: boolean };
  /** Contract summary (docs/STATE.md): root, count and one page of pairs ascending by txid. */
  peerSummary(params: { contract_id: string; after_txid: string; limit: number }): ContractSummary | null;
  /** A contract's summary root and payload count, without the pairs (GetContractMerkleRoot). */
  peerRoot(params: { contract_id: string }): { root: string; count: number } | null;
  /** Every contract's whole-set count and fingerprint (proto/svc.proto, header section 3). */
  peerFingerprints(params: Record<string, never>): Record<string, { count: number; fingerprint: string }>;
  /** One page of a contract's payload txids: the deploy first, then calls in position order. */
  peerTxids(params: { contract_id: string; offset: number; limit: number }): TxidPage | null;
  /** Counts and fingerprints (or txid lists) of txid ranges of a contract (GetContractRanges). */
  peerRanges(params: { contract_id: string; ranges: RangeQuery[] }): RangeAnswer[] | null;
  /** One payload by txid with this node's position for it, or null. */
  peerPayload(params: { txid: string }): PackedPeerPayload | null;
  /** Several payloads, in the order asked (null: not held): one round trip for a peer's GetPayloads. */
  peerPayloads(params: { txids: string[] }): (PackedPeerPayload | null)[];
  /** Stored state roots in [from, to] (at most 1,000 heights). */
  peerStateRoots(params: { from: number; to: number }): StateRootRange;
};

/**
 * Every peer query (the compiler holds it to PeerQueryApi): `contract`, its null answer
 * means the contract is not known and the core refuses it `not_found`; `as_is`, the
 * answer goes to gossip as the writer gave it.
 */
export const PEER_QUERIES = {
  peerContractIds: 'as_is',
  peerSummary: 'contract',
  peerRoot: 'contract',
  peerFingerprints: 'as_is',
  peerTxids: 'contract',
  peerRanges: 'contract',
  peerPayload: 'as_is',
  peerPayloads: 'as_is',
  peerStateRoots: 'as_is',
} as const satisfies { readonly [Q in keyof PeerQueryApi]: 'as_is' | 'contract' };

/** The peer queries as the core answers them to the gossip process (a contract-scoped null refused). */
export type ForwardedPeerQueries = {
  [Q in keyof PeerQueryApi]: (params: Parameters<PeerQueryApi[Q]>[0]) => (typeof PEER_QUERIES)[Q] extends 'contract' ? NonNullable<ReturnType<PeerQueryApi[Q]>> : ReturnType<PeerQueryApi[Q]>;
};

/** Peer data the writer answers: the queries, and the two checks divergence handling runs. */
export type WriterPeerApi = PeerQueryApi & {
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

/** What the writer thread sends the core unasked, by event (eventFrame; RpcClient.on). */
export interface WriterEvents {
  /** The store is open and the thread answers. */
  ready: null;
  /** The hot state changed (the REST read cache's version). */
  state: StateVersion;
}

/** workerData handed to the writer thread. */
export interface WriterInit {
  dbPath: string;
  nodeId: string;
  /** Config max_pending_calls: beyond it acceptCall answers overloaded. */
  maxPendingCalls: number;
  logFilter: string;
  secrets: string[];
}

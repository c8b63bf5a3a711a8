/**
 * What the REST front and the gossip process ask of the core (typed RPC over the core's
 * local socket): intake and status here; the reads in rest.ts, the peers' in gossip.ts.
 */
import type { CallProofJson, Evidence } from '@svc-node/protocol/evidence';
import type { CoinEvidence } from '@svc-node/protocol/coin';
import type { CallStatus, CallStatusBody, ContractStatus } from '../records.js';
import type { ReadApi } from './rest.js';
import type { GossipCounters, DivergenceReport, PeerApi } from './gossip.js';

/** Deferred checks of pending payloads (src/core/deferred/), in node_status.chain. */
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
    /** Deferred checks of pending payloads (src/core/deferred/). */
    deferred_checks: DeferredStats;
    /** The request budget at the chain-data endpoint (src/chain/budget.ts). */
    budget: ChainBudgetStatus;
  };
  last_block_processed_at: string | null;
  uptime_s: number;
  /** Gossip and sync counters; zeros until the gossip process reports. */
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

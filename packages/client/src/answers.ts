/**
 * Typed answers of the node's REST endpoints that src/client/node.ts does not define
 * beside the calls that ask them (docs/openapi.yaml is their contract: each interface
 * here has its schema's properties, no more, no fewer; test/client/answers.test.ts checks
 * both the key lists and live answers against the spec).
 */
import type { CallStatus } from './node.js';

/** GET /health. */
export interface HealthAnswer {
  status: 'ok';
}

/** GET /ready (200, or 503 with `error`). */
export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: {
    rest: 'ok';
    core: 'ok' | 'not answering' | 'failing' | 'unknown';
    writer: 'ok' | 'unknown';
    gossip: 'ok' | 'not serving' | 'unknown';
    halted: boolean | null;
  };
  error?: { code: 'not_ready'; message: string };
}

/** The chain-data request budget (docs/OPERATING.md, "Chain-data request budget"). */
export interface ChainBudget {
  requests_per_hour: number;
  burst: number;
  available: number;
  used_last_hour: number;
  waiting: { tip: number; intake: number; deferred: number };
  throttled_total: number;
}

/** GET /node_status. */
export interface NodeStatusAnswer {
  node_id: string;
  version: string;
  tip_height: number | null;
  processed_height: number | null;
  state_root: string | null;
  halted: boolean;
  halt_reason: string | null;
  peers: number;
  pending_calls: number;
  pending_evicted?: { replaced: number; outbid: number };
  contracts: number;
  unproven_pool?: { held: number; bytes: number; kept: number; retried: number; taken: number; expired: number; refused: number; evicted: number };
  gossip_public_key: string;
  caught_up?: boolean;
  lag_blocks?: number | null;
  pool?: { threads?: number; queued?: number; queue_limit?: number; saturated?: boolean };
  chain?: {
    endpoint?: string;
    endpoint_ok?: boolean;
    last_error?: string | null;
    tip_hash?: string | null;
    mode?: 'light' | 'blocks';
    header_height?: number | null;
    peers_lead?: boolean;
    deferred_checks?: { tracked: number; due: number; checks_total: number; placed_total: number; dropped_total: number; evicted_total: number };
    budget?: ChainBudget;
  };
  last_block_processed_at?: string | null;
  uptime_s?: number;
  read_cache?: { entries?: number; height?: number | null } | null;
  /** The gossip process's counters since start, by name (docs/GOSSIP.md). */
  gossip?: Record<string, number>;
  /** The last state divergence found against a peer; null when none. */
  divergence?: { peer: string; height: number; block_hash: string; local_root: string; peer_root: string; detected_at: string; resolved: boolean; outcome: string } | null;
}

/** GET /v2/state_root and /v2/state_root/{height}. */
export interface StateRootAnswer {
  height: number;
  block_hash: string;
  state_root: string;
}

/** GET /contracts. */
export interface ContractsAnswer {
  contract_ids: string[];
}

/** GET /contracts/{id}/abi. */
export interface AbiAnswer {
  contract_id: string;
  abi: unknown[];
}

/** GET /calls/{id} (operator). */
export interface CallsPage {
  contract_id: string;
  total: number;
  limit: number;
  offset: number;
  calls: CallStatus[];
}

/** POST /admin/clear_halt (operator). */
export interface ClearHaltAnswer {
  halted: false;
}

/**
 * Every message that crosses a process or thread boundary, declared in one place with
 * its direction. Processes: supervisor, core (writer thread + worker pool), rest,
 * gossip. Transports: child_process IPC (supervisor <-> children, advanced
 * serialization), a local socket with typed RPC (rest/gossip -> core), a MessagePort
 * with typed RPC (core main thread -> writer thread).
 */
import type { NodeConfig } from './config/options.js';

export type Role = 'core' | 'rest' | 'gossip';

/** Gossip identity: created once by the supervisor so it survives child restarts. */
export interface GossipIdentity {
  /** Ed25519 seed (secret). */
  seed: Uint8Array;
  publicKeyHex: string;
  stable: boolean;
}

// ---- supervisor -> child (child_process IPC) ----
export type SupervisorToChild =
  | { type: 'init'; role: Role; config: NodeConfig; ipcPath: string; identity: GossipIdentity; version: string }
  | { type: 'shutdown' };

// ---- child -> supervisor (child_process IPC) ----
export type ChildToSupervisor =
  | { type: 'ready'; role: Role }
  | { type: 'listening'; role: Role; address: string; port: number }
  | { type: 'fatal'; role: Role; reason: string };

// ---- rest / gossip -> core (RPC over the core socket) ----
export interface NodeStatus {
  node_id: string;
  version: string;
  tip_height: number | null;
  processed_height: number | null;
  state_root: string | null;
  halted: boolean;
  halt_reason: string | null;
  peers: number;
  pending_calls: number;
  contracts: number;
  gossip_public_key: string;
  caught_up: boolean;
  pool: { threads: number; queued: number; queue_limit: number; saturated: boolean };
  chain: { endpoint_ok: boolean; last_error: string | null };
  last_block_processed_at: string | null;
  uptime_s: number;
}

export type CoreApi = {
  nodeStatus(params: Record<string, never>): NodeStatus;
  /** Liveness of the core and its writer thread. */
  ping(params: Record<string, never>): { ok: true };
};

// ---- core main thread -> writer thread (RPC over the worker's port) ----
export interface WriterStatus {
  processedHeight: number | null;
  processedHash: string | null;
  stateRoot: string | null;
  halted: boolean;
  haltReason: string | null;
  contracts: number;
  pendingCalls: number;
}

export type WriterApi = {
  status(params: Record<string, never>): WriterStatus;
  /** Flush and close RocksDB; the writer thread exits afterwards. */
  close(params: Record<string, never>): { closed: true };
};

/** workerData handed to the writer thread. */
export interface WriterInit {
  dbPath: string;
  nodeId: string;
  logFilter: string;
  secrets: string[];
}

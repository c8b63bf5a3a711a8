/**
 * Every message that crosses a process or thread boundary, declared in one place with
 * its direction. Processes: supervisor, core (writer thread + worker pool), rest,
 * gossip. Transports: child_process IPC (supervisor <-> children, advanced
 * serialization), a local socket with typed RPC (rest/gossip -> core), a MessagePort
 * with typed RPC (core main thread -> writer thread).
 */
import type { NodeConfig } from './config/options.js';
import type { BlockInput, CallRecord, CallStatus, ContractRecord, ContractStatus } from './writer/records.js';

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
  chain: { endpoint: string; endpoint_ok: boolean; last_error: string | null; tip_hash: string | null };
  last_block_processed_at: string | null;
  uptime_s: number;
}

/** POST /contract_call body after the REST layer's shape checks. */
export interface CallSubmission {
  txid: string;
  contract_id: string;
  /** borsh(envelope), decoded from base64. */
  payload: Uint8Array;
}

export interface CallAnswer {
  created: boolean;
  body: { txid: string; contract_id: string; envelope_hash: string; status: CallStatus };
}

export interface DeployAnswer {
  created: boolean;
  body: { contract_id: string; txid: string; code_hash: string; status: ContractStatus };
}

/** GET /contract_call/{txid}/status (PROTOCOL section 6, plus confirmations). */
export type CallStatusBody = Omit<CallRecord, 'payload' | 'outpoint' | 'instructions'> & { confirmations: number | null };

/**
 * The core's RPC surface, in three parts so that each role's owner extends its own:
 * intake and status (core), reads for the REST front (ReadApi), peers (PeerApi).
 */
export type CoreApi = IntakeApi & ReadApi & PeerApi;

/** Reads served to the REST front (issue 7 extends it). */
export type ReadApi = Record<never, never>;

/** What the gossip process asks of the core (issue 8 extends it). */
export type PeerApi = Record<never, never>;

export type IntakeApi = {
  nodeStatus(params: Record<string, never>): NodeStatus;
  /** Liveness of the core and its writer thread. */
  ping(params: Record<string, never>): { ok: true };
  submitCall(params: CallSubmission): CallAnswer;
  /** The deploy registration record (SERVICE-SPEC section 2) as parsed JSON. */
  submitDeploy(params: { body: Record<string, unknown> }): DeployAnswer;
  callStatus(params: { txid: string }): CallStatusBody;
  stateRoot(params: { height: number | null }): { height: number; block_hash: string; state_root: string };
  clearHalt(params: Record<string, never>): { halted: false };
};

// ---- core main thread -> writer thread (RPC over the worker's port) ----
export interface WriterStatus {
  processedHeight: number | null;
  processedHash: string | null;
  anchorHeight: number | null;
  stateRoot: string | null;
  halted: boolean;
  haltReason: string | null;
  contracts: number;
  pendingCalls: number;
  lastBlockAt: string | null;
}

export interface ChainUpdate {
  fork_height: number;
  /** Blocks that left the best chain, tip first. */
  disconnected: { height: number; hash: string }[];
  /** New best-chain blocks, ascending. */
  connected: BlockInput[];
}

/** The writer's RPC surface: core operations, reads (issue 7), peer data (issue 8). */
export type WriterApi = WriterCoreApi & WriterReadApi & WriterPeerApi;

export type WriterReadApi = Record<never, never>;

export type WriterPeerApi = Record<never, never>;

export type WriterCoreApi = {
  status(params: Record<string, never>): WriterStatus;
  initAnchor(params: { height: number; hash: string }): WriterStatus;
  knownHash(params: { height: number }): string | null;
  payloadAt(params: { txid: string }): { kind: 'deploy' | 'call'; contract_id: string; body_hash: string } | null;
  contract(params: { id: string }): ContractRecord | null;
  isCallIdUsed(params: { caller: string; callId: string }): boolean;
  acceptDeploy(params: { record: ContractRecord }): { created: boolean; record: ContractRecord };
  acceptCall(params: { record: CallRecord }): { created: boolean; record: CallRecord };
  call(params: { txid: string }): CallRecord | null;
  applyChainUpdate(params: ChainUpdate): WriterStatus;
  stateRoot(params: { height: number | null }): { height: number; block_hash: string; state_root: string } | null;
  clearHalt(params: Record<string, never>): WriterStatus;
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

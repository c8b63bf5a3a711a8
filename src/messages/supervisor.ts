/**
 * Supervisor <-> child process messages (child_process IPC, advanced serialization):
 * each role's start, stop and metrics, with their direction.
 */
import type { NodeConfig } from '../config/options.js';

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

/** What the sync engine and its parts are given by the gossip process (src/gossip/main.ts). */
import type { PeerSet } from '../peers.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { CoreApi } from '../../messages/core.js';
import type { GossipCounters, WirePayload } from '../../messages/gossip.js';
import type { Logger } from '../../log.js';

export interface SyncDeps {
  core: () => RpcClient<CoreApi>;
  peers: PeerSet;
  counters: GossipCounters;
  concurrency: number;
  log: Logger;
  /** A payload this node now holds (for the seen set). */
  stored: (p: WirePayload) => void;
  /** Something node_status shows changed. */
  changed: () => void;
  /** A sync with one peer completed (the first one tells the core its peers have been heard). */
  synced?: () => void;
  /** This node's processed height as its heartbeats last advertised it (null: not known); decides pushes. */
  localHeight?: () => number | null;
}

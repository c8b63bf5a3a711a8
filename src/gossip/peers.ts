/**
 * The peer set: the configured `peers` plus peers learned from signed heartbeats,
 * bounded by gossip.max_peers. A peer is active while it was heard from (an inbound
 * signed request or a successful outbound call) within gossip.peer_expiry_s; learned
 * peers that fall silent are dropped, configured ones stay and are retried.
 */
import { PeerClient } from './client.js';
import type { Signer } from './auth.js';

export interface Peer {
  url: string;
  configured: boolean;
  client: PeerClient;
  /** Hex Ed25519 key, once known (its heartbeat, or its answer to ours). */
  publicKey: string | null;
  nodeId: string | null;
  /** Last time it was heard from (ms since epoch), 0 = never. */
  lastSeen: number;
  failures: number;
}

export interface PeerSetOptions {
  configured: string[];
  selfUrl: string;
  selfKey: string;
  maxPeers: number;
  expiryMs: number;
  timeoutMs: number;
}

const norm = (url: string): string => url.replace(/\/+$/, '');

export class PeerSet {
  private readonly peers = new Map<string, Peer>();

  constructor(
    private readonly o: PeerSetOptions,
    private readonly signer: Signer,
    private readonly now: () => number = Date.now,
  ) {
    for (const url of o.configured) {
      const u = norm(url);
      if (u === norm(o.selfUrl) || this.peers.has(u)) continue;
      this.peers.set(u, this.make(u, true));
      if (this.peers.size >= o.maxPeers) break;
    }
  }

  private make(url: string, configured: boolean): Peer {
    return { url, configured, client: new PeerClient(url, this.signer, this.o.timeoutMs), publicKey: null, nodeId: null, lastSeen: 0, failures: 0 };
  }

  all(): Peer[] {
    return [...this.peers.values()];
  }

  isActive(p: Peer): boolean {
    return p.lastSeen > 0 && this.now() - p.lastSeen <= this.o.expiryMs;
  }

  active(): Peer[] {
    return this.all().filter((p) => this.isActive(p));
  }

  byKey(key: string): Peer | undefined {
    for (const p of this.peers.values()) if (p.publicKey === key) return p;
    return undefined;
  }

  /**
   * A verified heartbeat: the sender (key) says it serves at `url`. Returns whether the
   * peer is in the set afterwards (false when the set is full of active peers).
   */
  learn(url: string, key: string, nodeId: string): boolean {
    let u: string;
    try {
      const parsed = new URL(url);
      if (!['http:', 'https:', 'grpc:'].includes(parsed.protocol) || !parsed.hostname) return false;
      u = norm(url);
    } catch {
      return false;
    }
    if (u === norm(this.o.selfUrl) || key === this.o.selfKey) return false;
    let p = this.peers.get(u);
    if (!p) {
      if (this.peers.size >= this.o.maxPeers && !this.evictOne()) return false;
      p = this.make(u, false);
      this.peers.set(u, p);
    }
    // One key per URL: a key now claimed at a new URL leaves its old learned entry.
    for (const other of this.peers.values()) if (other !== p && other.publicKey === key) other.publicKey = null;
    p.publicKey = key;
    p.nodeId = nodeId.slice(0, 64);
    p.lastSeen = this.now();
    p.failures = 0;
    return true;
  }

  /** A signed request from `key` arrived. */
  heard(key: string): void {
    const p = this.byKey(key);
    if (p) p.lastSeen = this.now();
  }

  ok(p: Peer, key?: string, nodeId?: string): void {
    if (key !== undefined) {
      if (key === this.o.selfKey) {
        // Our own URL under another name: never talk to ourselves.
        this.remove(p);
        return;
      }
      p.publicKey = key;
    }
    if (nodeId !== undefined) p.nodeId = nodeId.slice(0, 64);
    p.lastSeen = this.now();
    p.failures = 0;
  }

  failed(p: Peer): void {
    p.failures++;
  }

  private remove(p: Peer): void {
    p.client.close();
    this.peers.delete(p.url);
  }

  /** Drops the learned peer silent the longest, if any is expired. */
  private evictOne(): boolean {
    let victim: Peer | undefined;
    for (const p of this.peers.values()) {
      if (p.configured || this.isActive(p)) continue;
      if (!victim || p.lastSeen < victim.lastSeen) victim = p;
    }
    if (!victim) return false;
    this.remove(victim);
    return true;
  }

  /** Drops learned peers silent longer than the expiry. */
  expire(): string[] {
    const gone: string[] = [];
    for (const p of [...this.peers.values()]) {
      if (!p.configured && !this.isActive(p)) {
        gone.push(p.url);
        this.remove(p);
      }
    }
    return gone;
  }

  /** Up to `limit` peers to forward to, active ones first, never `exclude` (the sender). */
  targets(limit: number, excludeKey: string | null): Peer[] {
    const cands = this.all().filter((p) => excludeKey === null || p.publicKey !== excludeKey);
    cands.sort((a, b) => Number(this.isActive(b)) - Number(this.isActive(a)) || a.failures - b.failures);
    return cands.slice(0, limit);
  }

  close(): void {
    for (const p of this.peers.values()) p.client.close();
    this.peers.clear();
  }
}

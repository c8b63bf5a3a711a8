/**
 * The peer set: the configured `peers` plus peers learned from signed heartbeats,
 * bounded by gossip.max_peers. A peer is active while it was heard from (an inbound
 * signed request or a successful outbound call) within gossip.peer_expiry_s; learned
 * peers that fall silent are dropped, configured ones stay and are retried.
 *
 * Learned peers and eclipses. A fresh gossip identity costs one signature, so
 * heartbeats alone could fill every learned slot with URLs of an attacker's choosing and
 * keep them active. Three rules bound that:
 * - one learned URL per key: a key that claims a new URL gives up the entry it had;
 * - a learned peer is *proven* once an outbound call to its URL succeeded (our heartbeat,
 *   a sync, a forwarded batch): the URL really serves a node. At most half of the learned
 *   slots hold unproven peers, so a flood of heartbeats cannot take the slots of peers
 *   the node has reached; an unproven peer whose URL failed an outbound call (or that
 *   expired) gives its slot to a newcomer;
 * - at most LEARNED_PER_SOURCE unproven peers introduced from one network source (the
 *   sender's IPv4 address, or its IPv6 /64), so the unproven half takes that many hosts.
 * Proven peers are never displaced by newcomers; they leave only by expiry.
 */
import { isIPv4, isIPv6 } from 'node:net';
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
  /** Outbound calls failed since the last success (inbound requests do not reset it). */
  failures: number;
  /** An outbound call to its URL succeeded at least once (always true when configured). */
  proven: boolean;
  /** Network source of the heartbeat that introduced it (learned peers); '' if unknown. */
  source: string;
  /** The processed height its last heartbeat answer advertised (0: not anchored); null until one came. */
  height: number | null;
}

/**
 * Unproven learned peers one network source may introduce. An honest host runs one node,
 * sometimes two (a node and its replacement); beyond that an attacker needs more hosts.
 */
export const LEARNED_PER_SOURCE = 2;

/**
 * The network source of a gRPC peer (grpc-js `call.getPeer()`: the remote address and
 * port, `127.0.0.1:5555` or `::1:5555`): the IPv4 address, or the /64 of an IPv6 address
 * (one host usually holds a whole /64). Anything else is its own source, as given.
 */
export function sourceOf(peer: string): string {
  // Drop the port; tolerate the `ipv4:` / `ipv6:[...]` forms of other gRPC stacks.
  let addr = peer.replace(/^ipv[46]:/, '').replace(/:\d+$/, '');
  if (addr.startsWith('[') && addr.endsWith(']')) addr = addr.slice(1, -1);
  if (isIPv4(addr)) return addr;
  if (!isIPv6(addr)) return peer;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  if (mapped) return mapped[1]!;
  const [head, tail] = addr.toLowerCase().split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
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

  private make(url: string, configured: boolean, source = ''): Peer {
    return { url, configured, client: new PeerClient(url, this.signer, this.o.timeoutMs), publicKey: null, nodeId: null, lastSeen: 0, failures: 0, proven: configured, source, height: null };
  }

  /** Slots for learned peers: what the configured ones leave of gossip.max_peers. */
  private get learnedCapacity(): number {
    let configured = 0;
    for (const p of this.peers.values()) if (p.configured) configured++;
    return Math.max(0, this.o.maxPeers - configured);
  }

  /** Unproven learned peers held at most: half of the learned slots, at least one. */
  get unprovenCapacity(): number {
    return Math.max(1, Math.floor(this.learnedCapacity / 2));
  }

  /** Learned peers not proven yet, optionally only those introduced from `source`. */
  unproven(source?: string): Peer[] {
    return this.all().filter((p) => !p.configured && !p.proven && (source === undefined || p.source === source));
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
   * A verified heartbeat: the sender (key), connected from network `source`, says it
   * serves at `url`. Returns whether the peer is in the set afterwards (false when the
   * URL is refused, or no slot may be given to it: see the rules above).
   */
  learn(url: string, key: string, nodeId: string, source = ''): boolean {
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
      if (this.unproven(source).filter((x) => x.publicKey !== key).length >= LEARNED_PER_SOURCE) return false;
      // The key's own earlier learned entry does not count: it is given up below.
      const mine = [...this.peers.values()].find((x) => !x.configured && x.publicKey === key);
      const unprovenOthers = this.unproven().filter((x) => x !== mine).length;
      if (unprovenOthers >= this.unprovenCapacity && !this.evictOne((x) => !x.proven && x !== mine && (x.failures > 0 || !this.isActive(x)))) return false;
      if (this.peers.size - (mine ? 1 : 0) >= this.o.maxPeers && !this.evictOne((x) => x !== mine && !this.isActive(x))) return false;
      if (mine) this.remove(mine);
      p = this.make(u, false, source);
      this.peers.set(u, p);
    } else {
      // One learned URL per key: an entry the key had elsewhere is given up.
      for (const other of [...this.peers.values()]) if (other !== p && other.publicKey === key && !other.configured) this.remove(other);
    }
    for (const other of this.peers.values()) if (other !== p && other.publicKey === key) other.publicKey = null;
    p.publicKey = key;
    p.nodeId = nodeId.slice(0, 64);
    p.lastSeen = this.now();
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
    p.proven = true;
  }

  failed(p: Peer): void {
    p.failures++;
  }

  private remove(p: Peer): void {
    p.client.close();
    this.peers.delete(p.url);
  }

  /** Drops the learned peer silent the longest among those `may` allows, if any. */
  private evictOne(may: (p: Peer) => boolean): boolean {
    let victim: Peer | undefined;
    for (const p of this.peers.values()) {
      if (p.configured || !may(p)) continue;
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

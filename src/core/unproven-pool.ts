/**
 * Peers' payloads refused `coin_unproven` only because this node's header chain is a
 * block or two behind the sender's (docs/STATE.md, "Coin evidence", "Waiting for a
 * header"), kept in memory until the header tip reaches the block their evidence names,
 * as Bitcoin Core keeps orphan transactions until their parents arrive. Nothing here is
 * stored, relayed or counted as pending, and nothing here reaches a state root: it only
 * decides which refused payloads are tried again without waiting for a sync round.
 *
 * Bounded by count and bytes, each sending peer to a share of both, so one peer cannot
 * fill it. What stays when the bounds bite does not depend on arrival order: entries are
 * ranked by (height awaited, txid), and the lowest ranked that fit are kept (the same set
 * whatever order the same payloads came in).
 */
import type { UnprovenPoolStatus } from '../messages/core.js';

/** Orphan pools hold about this many (Bitcoin Core's DEFAULT_MAX_ORPHAN_TRANSACTIONS, 100). */
export const UNPROVEN_POOL_MAX = 100;
/**
 * 4 MiB in all: a hundred payloads of the protocol's usual size (a call is a few hundred
 * bytes with its evidence, a deploy up to 64 KiB) with room to spare, never more memory
 * than a few blocks' worth of gossip.
 */
export const UNPROVEN_POOL_MAX_BYTES = 4 * 1024 * 1024;
/** A quarter of each bound per sending peer: at least four peers share a full pool. */
export const UNPROVEN_POOL_PEER_MAX = UNPROVEN_POOL_MAX / 4;
export const UNPROVEN_POOL_PEER_MAX_BYTES = UNPROVEN_POOL_MAX_BYTES / 4;
/**
 * How many blocks past the header tip it was held at a payload waits, and how far above
 * that tip the block it awaits may be. Ordinary lag between nodes is a block or two (a
 * header arrives by the node's own poll or a peer's tip announcement within seconds of
 * the block); three covers a block found while the header of the one before is still on
 * its way. A node further behind is catching up: it counts the wait from the chain
 * endpoint's tip it knows of instead (`offer`'s `known`), since the blocks up to it exist.
 */
export const UNPROVEN_WAIT_BLOCKS = 3;

export interface UnprovenLimits {
  max: number;
  maxBytes: number;
  peerMax: number;
  peerMaxBytes: number;
  waitBlocks: number;
}

export const UNPROVEN_LIMITS: UnprovenLimits = {
  max: UNPROVEN_POOL_MAX,
  maxBytes: UNPROVEN_POOL_MAX_BYTES,
  peerMax: UNPROVEN_POOL_PEER_MAX,
  peerMaxBytes: UNPROVEN_POOL_PEER_MAX_BYTES,
  waitBlocks: UNPROVEN_WAIT_BLOCKS,
};

export interface UnprovenEntry<P> {
  txid: string;
  /** The sending peer's key. */
  from: string;
  /** The payload as it came (its size counts against the byte bounds). */
  payload: P;
  bytes: number;
  /** The header height it waits for: tried again once the header tip reaches it. */
  awaits: number;
  /** The header tip at which it is dropped if still unproven. */
  expiresAt: number;
}

/** Ranking: lower first; the highest ranked go when a bound bites. */
function rank(a: { awaits: number; txid: string }, b: { awaits: number; txid: string }): number {
  return a.awaits - b.awaits || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0);
}

export class UnprovenPool<P> {
  private readonly entries = new Map<string, UnprovenEntry<P>>();
  private bytes = 0;
  readonly counters = { kept: 0, retried: 0, taken: 0, expired: 0, refused: 0, evicted: 0 };

  constructor(private readonly limits: UnprovenLimits = UNPROVEN_LIMITS) {}

  get size(): number {
    return this.entries.size;
  }

  has(txid: string): boolean {
    return this.entries.has(txid);
  }

  status(): UnprovenPoolStatus {
    return { held: this.entries.size, bytes: this.bytes, ...this.counters };
  }

  /**
   * Keeps a refused payload awaiting header `awaits`, refused at header tip `tip`
   * (`again`: its expiry, when it was kept before and is offered back after a retry;
   * `known`: the highest block the node knows exists, its chain endpoint's tip, when above
   * `tip`: a node still catching up waits for a block it knows is coming, as a node at the
   * tip waits for the next few). False when not kept: already held, awaiting a block beyond
   * the wait, larger than a peer's share, or ranked out by the bounds.
   */
  offer(e: { txid: string; from: string; payload: P; bytes: number; awaits: number }, tip: number, again?: number, known?: number): boolean {
    const L = this.limits;
    const expiresAt = again ?? Math.max(tip, known ?? tip) + L.waitBlocks;
    if (this.entries.has(e.txid) || e.awaits > expiresAt || tip >= expiresAt || e.bytes > L.peerMaxBytes) return false;
    const entry: UnprovenEntry<P> = { ...e, expiresAt };
    this.entries.set(e.txid, entry);
    this.bytes += e.bytes;
    // The sender's share first, then the whole pool's: each drops its highest ranked.
    const mine = [...this.entries.values()].filter((x) => x.from === e.from).sort(rank);
    let count = mine.length;
    let bytes = mine.reduce((n, x) => n + x.bytes, 0);
    while (count > L.peerMax || bytes > L.peerMaxBytes) {
      const out = mine[--count]!;
      bytes -= out.bytes;
      this.evict(out, e.txid);
    }
    if (this.entries.size > L.max || this.bytes > L.maxBytes) {
      const all = [...this.entries.values()].sort(rank);
      while (this.entries.size > L.max || this.bytes > L.maxBytes) this.evict(all.pop()!, e.txid);
    }
    if (!this.entries.has(e.txid)) return false;
    if (again === undefined) this.counters.kept++;
    return true;
  }

  /** Drops `x` for a bound; the payload being offered (`offered`) was never kept, so it is no eviction. */
  private evict(x: UnprovenEntry<P>, offered: string): void {
    if (!this.entries.delete(x.txid)) return;
    this.bytes -= x.bytes;
    if (x.txid !== offered) this.counters.evicted++;
  }

  /**
   * The header tip is now `tip`: the payloads whose awaited header it reaches are taken
   * out to be tried again (the caller offers back those still unproven within their wait,
   * or counts them expired). None outlives its wait here: one is kept only awaiting a
   * block at most its expiry, so the tip reaches what it awaits first.
   */
  due(tip: number): UnprovenEntry<P>[] {
    const out: UnprovenEntry<P>[] = [];
    for (const x of [...this.entries.values()].sort(rank)) {
      if (x.awaits <= tip) {
        this.entries.delete(x.txid);
        this.bytes -= x.bytes;
        this.counters.retried++;
        out.push(x);
      }
    }
    return out;
  }

  /** A retried payload was taken by intake. */
  noteTaken(): void {
    this.counters.taken++;
  }

  /** A retried payload is dropped, still unproven past its wait. */
  noteExpired(): void {
    this.counters.expired++;
  }

  /** A retried payload was refused for another reason than an unproven coin, and dropped. */
  noteRefused(): void {
    this.counters.refused++;
  }
}

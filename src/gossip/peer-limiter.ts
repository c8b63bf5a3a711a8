/**
 * Inbound rate limits per verified peer key, with a bounded number of keys tracked.
 *
 * Each key has a token bucket (`ratePerS` tokens a second, at most one second's worth
 * saved up) and a queue of at most `queue` requests waiting for a token; beyond it a
 * request is refused (rate_limited). A key costs a few hundred bytes and no timer while
 * it is idle; a timer runs only while its queue holds requests.
 *
 * Why not one Bottleneck limiter per key (the first version): every Bottleneck limiter
 * with a refreshing reservoir keeps a 250 ms heartbeat timer for the limiter's lifetime,
 * and a Group keeps each one 5 minutes. A fresh Ed25519 identity costs an attacker one
 * signature, so 20,000 identities (10 s at the default global rate) held 118 MiB of heap,
 * 529 MiB of RSS and half a core of timer work (measured, docs/RELIABILITY.md section 1).
 *
 * The table is an LRU: when it is full, the least recently used idle key is forgotten.
 * A forgotten key comes back with a full bucket, which any fresh key gets anyway, so
 * forgetting never throttles an honest peer; it only bounds memory. Keys with waiting
 * requests are never forgotten; if the oldest few are all busy, a new key is refused.
 */
import { perSecond, TokenBucket } from '../bounded.js';

interface Budget {
  /** The key's tokens: its debt may reach one second's worth (`charge`). */
  bucket: TokenBucket;
  waiting: (() => void)[];
  timer: NodeJS.Timeout | null;
}

export interface PeerLimiterOptions {
  /** Requests per second per key (also the burst). */
  ratePerS: number;
  /** Requests of one key that may wait for a token. */
  queue: number;
  /** Keys tracked at once. */
  capacity: number;
}

/**
 * Oldest entries examined for an idle one to forget when the table is full. Entries move
 * to the end when used, so busy keys are near the end; a handful suffices, and the cost
 * of admitting a request stays constant.
 */
const EVICTION_SCAN = 8;

export class PeerLimiter {
  private readonly keys = new Map<string, Budget>();
  private readonly burst: number;

  constructor(
    private readonly o: PeerLimiterOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(o.ratePerS > 0) || !Number.isInteger(o.queue) || o.queue < 0 || !Number.isInteger(o.capacity) || o.capacity < 1) throw new RangeError('bad PeerLimiter options');
    this.burst = Math.max(1, o.ratePerS);
  }

  /** Keys tracked now. */
  get size(): number {
    return this.keys.size;
  }

  /** Requests waiting across all keys. */
  get waiting(): number {
    let n = 0;
    for (const b of this.keys.values()) n += b.waiting.length;
    return n;
  }

  /**
   * Runs `job` now if `key` has a token, later (in order) if its queue has room; returns
   * false, and never runs `job`, when the request is refused.
   */
  admit(key: string, job: () => void): boolean {
    const t = this.now();
    const b = this.budget(key, t);
    if (!b) return false;
    if (b.waiting.length === 0 && b.bucket.tryTake(t)) {
      job();
      return true;
    }
    if (b.waiting.length >= this.o.queue) return false;
    b.waiting.push(job);
    this.schedule(b, t);
    return true;
  }

  /**
   * Takes `tokens` from `key`'s budget for bad input it sent (limits.ts,
   * UNPAID_PAYLOAD_COST): the budget may go below zero, down to one second's worth less
   * than empty, so its next requests wait (or are refused once its queue is full) until
   * the refill covers the debt. A key not tracked is not charged (it has sent nothing).
   */
  charge(key: string, tokens: number): void {
    const b = this.keys.get(key);
    if (!b || !(tokens > 0)) return;
    b.bucket.charge(tokens, this.now());
  }

  /** Stops every timer; waiting jobs are dropped (shutdown). */
  close(): void {
    for (const b of this.keys.values()) {
      if (b.timer) clearTimeout(b.timer);
      b.timer = null;
      b.waiting = [];
    }
    this.keys.clear();
  }

  private budget(key: string, now: number): Budget | null {
    const b = this.keys.get(key);
    if (b) {
      this.keys.delete(key); // most recently used goes to the end
      this.keys.set(key, b);
      return b;
    }
    if (this.keys.size >= this.o.capacity && !this.evictIdle()) return null;
    const fresh: Budget = { bucket: new TokenBucket(perSecond(this.o.ratePerS, this.burst, this.burst), now), waiting: [], timer: null };
    this.keys.set(key, fresh);
    return fresh;
  }

  private evictIdle(): boolean {
    let scanned = 0;
    for (const [k, b] of this.keys) {
      if (b.waiting.length === 0) {
        this.keys.delete(k);
        return true;
      }
      if (++scanned >= EVICTION_SCAN) break;
    }
    return false;
  }

  /** Arms `b`'s timer for its next token, its bucket last read at `now`. */
  private schedule(b: Budget, now: number): void {
    if (b.timer || b.waiting.length === 0) return;
    const ms = Math.max(1, b.bucket.msUntil(1, now));
    b.timer = setTimeout(() => {
      b.timer = null;
      const t = this.now();
      while (b.waiting.length > 0 && b.bucket.tryTake(t)) b.waiting.shift()?.();
      this.schedule(b, t);
    }, ms);
  }
}

/**
 * Bounded state, the one home of the node's "keep at most N, the oldest goes" rule and of
 * its token bucket (layer 1: nothing of the node). `BoundedMap` holds entries in insertion
 * order, a `set` making its key the newest (a cache that refreshes on use sets what it
 * got); `BoundedCache` is an LRU bounded by entry count and by total size (caller-supplied
 * sizes); `TokenBucket` is a rate with a burst, on the caller's clock.
 */

/**
 * A bounded map in insertion order: when full, the oldest entry goes. The gossip seen set
 * (txid + body hash to the verdict or the intake still running), the peer keys the
 * verifier parsed, the block txid lists the deferred checks share, sync's refused
 * payloads, a stream subscription's recently decided calls.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  has(k: K): boolean {
    return this.map.has(k);
  }

  get(k: K): V | undefined {
    return this.map.get(k);
  }

  /** Sets `k` as the newest entry; true when the oldest went to make room. */
  set(k: K, v: V): boolean {
    if (this.map.has(k)) this.map.delete(k);
    this.map.set(k, v);
    let evicted = false;
    for (const oldest of this.map.keys()) {
      if (this.map.size <= this.capacity) break;
      this.map.delete(oldest);
      evicted = true;
    }
    return evicted;
  }

  delete(k: K): void {
    this.map.delete(k);
  }

  /** Keys, oldest first. */
  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  /** Values, oldest first. */
  values(): IterableIterator<V> {
    return this.map.values();
  }
}

/**
 * A small LRU bounded by entry count and by total size. Used for immutable chain data
 * only: raw blocks by hash and transaction hex by txid, whose content the key commits to,
 * so an entry never goes stale.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    // Refresh recency: Map keeps insertion order, so re-insert.
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  set(key: string, value: V, size: number): void {
    if (this.maxEntries <= 0 || size > this.maxBytes) return;
    const old = this.map.get(key);
    if (old) {
      this.bytes -= old.size;
      this.map.delete(key);
    }
    this.map.set(key, { value, size });
    this.bytes += size;
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.map.keys().next().value as string;
      this.bytes -= this.map.get(oldest)!.size;
      this.map.delete(oldest);
    }
  }

  get size(): number {
    return this.map.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }
}

/**
 * How a `TokenBucket` counts. Its level is in units: `unitsPerToken` make one token, and
 * `periodMs` milliseconds add `unitsPerPeriod` units, so a refill after `dt` ms adds
 * `(dt / periodMs) * unitsPerPeriod`. The chain-data budget counts exactly in whole
 * milliseconds: a unit is a millisecond of an hour (unitsPerToken 3,600,000, periodMs 1,
 * unitsPerPeriod the requests per hour), integers below 2^53 throughout. The gossip
 * limiters count tokens on performance.now() (unitsPerToken 1, periodMs 1000,
 * unitsPerPeriod the rate a second).
 */
export interface TokenBucketRate {
  unitsPerToken: number;
  unitsPerPeriod: number;
  periodMs: number;
  /** Tokens saved up at most (a fresh bucket is full). */
  burst: number;
  /** Tokens `charge` may take below empty (0: none). */
  debt?: number;
}

/** `ratePerS` tokens a second, at most `burst` saved up, `debt` below empty at most: the gossip limiters' rate, counted in tokens. */
export function perSecond(ratePerS: number, burst: number, debt = 0): TokenBucketRate {
  return { unitsPerToken: 1, unitsPerPeriod: ratePerS, periodMs: 1000, burst, debt };
}

/** A token bucket on the caller's clock (`now`: milliseconds, monotonic); time running backwards adds nothing. */
export class TokenBucket {
  private readonly capacity: number;
  private readonly floor: number;
  private level: number;
  private last: number;

  constructor(
    private readonly r: TokenBucketRate,
    now: number,
  ) {
    if (!(r.unitsPerToken > 0) || !(r.unitsPerPeriod > 0) || !(r.periodMs > 0) || !(r.burst > 0) || !((r.debt ?? 0) >= 0)) throw new RangeError('token bucket: rate, period, token size and burst must be positive, debt not negative');
    this.capacity = r.burst * r.unitsPerToken;
    this.floor = -(r.debt ?? 0) * r.unitsPerToken;
    this.level = this.capacity;
    this.last = now;
  }

  private refill(now: number): void {
    const dt = now - this.last;
    if (dt <= 0) return;
    this.last = now;
    // Whole milliseconds and integer rates: exact while the sum is below the capacity, and
    // a sum past it (however rounded) is capped.
    this.level = Math.min(this.capacity, this.level + (dt / this.r.periodMs) * this.r.unitsPerPeriod);
  }

  /** Whole tokens available at `now` (negative while in debt). */
  available(now: number): number {
    this.refill(now);
    return Math.floor(this.level / this.r.unitsPerToken);
  }

  /** Takes one token if there is one at `now`. */
  tryTake(now: number): boolean {
    this.refill(now);
    if (this.level < this.r.unitsPerToken) return false;
    this.level -= this.r.unitsPerToken;
    return true;
  }

  /** Takes `tokens` at `now` whether or not they are there, down to `debt` below empty. */
  charge(tokens: number, now: number): void {
    this.refill(now);
    this.level = Math.max(this.floor, this.level - tokens * this.r.unitsPerToken);
  }

  /** Milliseconds from `now` until `tokens` whole tokens are available (0 when they are). */
  msUntil(tokens: number, now: number): number {
    this.refill(now);
    const need = tokens * this.r.unitsPerToken - this.level;
    return need <= 0 ? 0 : Math.ceil((need / this.r.unitsPerPeriod) * this.r.periodMs);
  }
}

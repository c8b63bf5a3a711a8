/**
 * Bounded maps, the one home of the node's "keep at most N, the oldest goes" rule (layer 1:
 * nothing of the node). `BoundedMap` holds entries in insertion order, a `set` making its
 * key the newest (a cache that refreshes on use sets what it got); `BoundedCache` is an LRU
 * bounded by entry count and by total size (caller-supplied sizes).
 */

/**
 * A bounded map in insertion order: when full, the oldest entry goes. The gossip seen set
 * (txid + body hash to the verdict or the intake still running), the peer keys the
 * verifier parsed, the block txid lists the deferred checks share.
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

  set(k: K, v: V): void {
    if (this.map.has(k)) this.map.delete(k);
    this.map.set(k, v);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(k: K): void {
    this.map.delete(k);
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

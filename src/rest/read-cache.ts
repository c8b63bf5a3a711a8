/**
 * The REST process's read replica of hot state: answers of field reads (serialised JSON),
 * valid for exactly one state version (processed height, state root, block hash).
 *
 * The core relays each new version (the writer announces it the moment a block's root is
 * set) through a long poll; when it changes, the whole replica is dropped at once. A miss
 * goes to the writer (two IPC hops) and is stored only when the answer's (height,
 * state_root) equals the current version, so every answer, cached or not, belongs to a
 * single processed block. While the version is unknown (start, core restart) nothing is
 * cached and every read goes to the writer.
 */
import type { StateVersion } from '../messages/rest.js';

/** Bounds of the replica: entries and bytes of serialised answers (a field value is at most 64 KiB). */
export const CACHE_MAX_ENTRIES = 100_000;
export const CACHE_MAX_BYTES = 64 * 1024 * 1024;

export class ReadCache {
  private v: StateVersion | null = null;
  private readonly map = new Map<string, string>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  get version(): StateVersion | null {
    return this.v;
  }

  /** A new version from the core (or null: unknown); drops the replica when it differs. */
  setVersion(v: StateVersion | null): void {
    const same = v !== null && this.v !== null && v.height === this.v.height && v.state_root === this.v.state_root && v.block_hash === this.v.block_hash;
    if (same) return;
    this.v = v;
    this.map.clear();
    this.bytes = 0;
  }

  get(k: string): string | undefined {
    if (this.v === null) return undefined;
    const t = this.map.get(k);
    if (t === undefined) this.misses++;
    else this.hits++;
    return t;
  }

  /** Like get, counting hits only (the fast path; a miss is counted by the normal path after it). */
  peek(k: string): string | undefined {
    if (this.v === null) return undefined;
    const t = this.map.get(k);
    if (t !== undefined) this.hits++;
    return t;
  }

  /** Stores an answer computed at (height, stateRoot) when that is the current version. */
  put(k: string, text: string, height: number | null, stateRoot: string): void {
    if (this.v === null || this.v.height !== height || this.v.state_root !== stateRoot) return;
    if (this.map.size >= CACHE_MAX_ENTRIES || this.bytes + text.length > CACHE_MAX_BYTES) {
      this.map.clear();
      this.bytes = 0;
    }
    this.map.set(k, text);
    this.bytes += text.length + k.length;
  }

  get size(): number {
    return this.map.size;
  }
}

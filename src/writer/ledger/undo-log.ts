/**
 * A block's undo log: the previous value of every key the block writes, taken from memory
 * (never read back from disk), written in the block's own atomic batch. `UndoBatch`
 * collects a block's writes and their previous values; the log's encoding is the undo
 * bucket's (src/writer/store/undo.ts).
 */
import type { BatchOp, WriteBatch } from '../db.js';
import type { StoredEventRow } from '../store/events.js';
import { UndoLog } from '../store/undo.js';

/** Collects one block's writes with the previous value of each key, for its undo log. */
export class UndoBatch {
  readonly undo = new UndoLog();
  /** Call-id index keys (latin1) this block claims. */
  readonly claims: string[] = [];
  /**
   * Per contract (hex id): this block's events and decided calls, written as one record
   * each at the end of the block rather than one key per event and per call.
   */
  readonly perContract = new Map<string, { id: Uint8Array; events: StoredEventRow[]; calls: Uint8Array[] }>();

  /** The block's decision leaves: (txid, encoded decision), packages/protocol/src/state/decisions.ts. */
  readonly decisions: [Uint8Array, Uint8Array][] = [];

  contractLog(cid: string, id: Uint8Array): { id: Uint8Array; events: StoredEventRow[]; calls: Uint8Array[] } {
    let c = this.perContract.get(cid);
    if (!c) {
      c = { id, events: [], calls: [] };
      this.perContract.set(cid, c);
    }
    return c;
  }
  private readonly seen = new Set<string>();
  /**
   * Storage writes by key (latin1): a key written by several calls of the block reaches
   * RocksDB once, with its last value (flushStorage); one native put costs about 2 us.
   */
  private readonly storage = new Map<string, [Buffer, Buffer | null]>();

  constructor(readonly out: WriteBatch) {}

  storageWrite(k: Buffer, v: Buffer | null, prev: Buffer | null): void {
    if (this.flushed) throw new Error('storage write after the block was flushed');
    const id = k.toString('latin1');
    const pending = this.storage.get(id);
    if (pending !== undefined) {
      pending[1] = v; // the first previous value is the one to restore
      return;
    }
    this.undo.add(k, prev);
    this.storage.set(id, [k, v]);
  }

  /** Once, after the block's last call: a write after it would be lost. */
  flushStorage(): void {
    if (this.flushed) throw new Error('block storage flushed twice');
    this.flushed = true;
    for (const [k, v] of this.storage.values()) {
      if (v) this.out.put(k, v);
      else this.out.del(k);
    }
  }
  private flushed = false;

  put(k: Buffer, v: Buffer, prev: Buffer | null): void {
    this.remember(k, prev);
    this.out.put(k, v);
  }

  del(k: Buffer, prev: Buffer | null): void {
    this.remember(k, prev);
    this.out.del(k);
  }

  delOnce(k: Buffer, prev: Buffer | null): void {
    this.undo.add(k, prev);
    this.out.del(k);
  }

  /**
   * A key this block creates and nothing else writes (an event, a call-id index entry, a
   * call-log entry): undone by deleting it, with no de-duplication bookkeeping.
   */
  putNew(k: Buffer, v: Buffer): void {
    this.undo.add(k, null);
    this.out.put(k, v);
  }

  /** A write that is not undone (the undo log itself, the journal). */
  raw(op: BatchOp): void {
    if (op.type === 'put') this.out.put(op.key, op.value!);
    else this.out.del(op.key);
  }

  private remember(k: Buffer, prev: Buffer | null): void {
    const id = k.toString('latin1');
    if (this.seen.has(id)) return; // the first previous value is the one to restore
    this.seen.add(id);
    this.undo.add(k, prev);
  }
}

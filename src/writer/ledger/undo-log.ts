/**
 * A block's undo log: the previous value of every key the block writes, taken from memory
 * (never read back from disk), written in the block's own atomic batch. `UndoBatch`
 * collects a block's writes and their previous values; `UndoLog` is the binary encoding.
 */
import type { BatchOp, WriteBatch } from '../db.js';
import type { StoredEventRow } from '../records.js';

/** One undo entry: a key and what it held before the block (null: absent). */
export type UndoEntry = [Buffer, Buffer | null];

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

/**
 * Undo log encoding: per entry u32le key length, key, u8 present, then (if present)
 * u32le value length and value. Binary, so no per-key hex or base64 work; written as
 * entries come (one growing buffer, no list of pairs encoded again at the end).
 */
export class UndoLog {
  private buf = Buffer.allocUnsafe(UNDO_INITIAL_BYTES);
  private len = 0;

  add(k: Buffer, v: Buffer | null): void {
    const need = 9 + k.length + (v ? v.length : 0);
    if (this.len + need > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + need));
      this.buf.copy(next, 0, 0, this.len);
      this.buf = next;
    }
    // set(), not copy(): copy() goes through a native call, about twice the cost for
    // entries this small (tens of bytes), and a block adds thousands of them.
    const out = this.buf;
    let o = out.writeUInt32LE(k.length, this.len);
    out.set(k, o);
    o += k.length;
    out[o++] = v ? 1 : 0;
    if (v) {
      o = out.writeUInt32LE(v.length, o);
      out.set(v, o);
      o += v.length;
    }
    this.len = o;
  }

  /** The encoded log (a view of the buffer: RocksDB copies it into its batch). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}
/** A block of 1,000 transfers writes about 220 KB of undo entries: a few doublings at most. */
const UNDO_INITIAL_BYTES = 64 * 1024;

export function decodeUndo(b: Buffer): UndoEntry[] {
  const out: UndoEntry[] = [];
  let o = 0;
  while (o < b.length) {
    const kl = b.readUInt32LE(o);
    o += 4;
    const k = b.subarray(o, o + kl);
    o += kl;
    const present = b[o++] === 1;
    if (!present) {
      out.push([k, null]);
      continue;
    }
    const vl = b.readUInt32LE(o);
    o += 4;
    out.push([k, b.subarray(o, o + vl)]);
    o += vl;
  }
  return out;
}

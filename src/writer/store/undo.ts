/**
 * Bucket `undo`: a block's undo log, key u32be height: the previous value of every key
 * the block wrote, written in the block's own batch and kept for the last REPLAY_WINDOW
 * blocks (src/writer/ledger/stored.ts). The keys inside are stored keys of the other
 * buckets, whole.
 */
import { Bucket } from './buckets.js';
import { bucketRange, keyOfHeight, type KeyRange } from './keys.js';

export const key = (height: number): Buffer => keyOfHeight(Bucket.undo, height);
export const all = (): KeyRange => bucketRange(Bucket.undo);
export const heightOf = (k: Buffer): number => k.readUInt32BE(1);

/** One undo entry: a key and what it held before the block (null: absent). */
export type UndoEntry = [Buffer, Buffer | null];

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
/**
 * First size of a block's undo log; it doubles as needed (a block of 1,000 transfers
 * writes about 220 KB, eight doublings). Small, because every block starts one: at 64 KiB
 * a catch-up's tens of thousands of empty header-only blocks (a few entries each)
 * allocated gigabytes between them.
 */
const UNDO_INITIAL_BYTES = 1024;

export function decode(b: Buffer): UndoEntry[] {
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

/** A stored log with more entries after its own (a late call dropped in its block). */
export const append = (stored: Buffer, more: UndoLog): Buffer => Buffer.concat([stored, more.bytes()]);

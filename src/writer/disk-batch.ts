/**
 * A write batch packed into one buffer, the message between the writer thread and the
 * disk thread (disk-thread.ts): per operation `u8 kind | u32 key length | key` and, for
 * a put, `u32 value length | value` (little-endian). Packing is a copy per operation on
 * the writer thread; the native calls per operation run on the disk thread.
 */

const PUT = 0;
const DEL = 1;
/**
 * First size of a batch's buffer; it doubles as needed (a 1000-transfer block packs to
 * ~1 MB, ten doublings). Small, because every block starts one: a catch-up's tens of
 * thousands of empty header-only blocks each pack a few hundred bytes, and at 16 KiB
 * they allocated ~1 GB between them, which the writer's GC paid for.
 */
const INITIAL_BYTES = 1 << 10;

/** Requests to the disk thread; each is answered by a DiskReply with its id. */
export type DiskRequest =
  /** Share the open database behind `handle` as database `db` (see disk-thread.ts). */
  | { k: 'attach'; id: number; db: number; handle: bigint }
  /** Write a packed batch to database `db`; its buffer is transferred, not copied. */
  | { k: 'write'; id: number; db: number; buf: ArrayBuffer; bytes: number; sync: boolean }
  /** Forget database `db` (its owner closes it next). */
  | { k: 'detach'; id: number; db: number };

/** The disk thread's answer to request `id`. */
export type DiskReply = { id: number; ok: true } | { id: number; ok: false; message: string };

export class PackedBatch {
  /** Operations packed so far. */
  length = 0;
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private used = 0;

  private reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.used + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  put(k: Uint8Array, v: Uint8Array): void {
    this.reserve(9 + k.length + v.length);
    const b = this.buf;
    let o = this.used;
    b[o] = PUT;
    b.writeUInt32LE(k.length, o + 1);
    b.set(k, o + 5);
    o += 5 + k.length;
    b.writeUInt32LE(v.length, o);
    b.set(v, o + 4);
    this.used = o + 4 + v.length;
    this.length++;
  }

  del(k: Uint8Array): void {
    this.reserve(5 + k.length);
    const b = this.buf;
    b[this.used] = DEL;
    b.writeUInt32LE(k.length, this.used + 1);
    b.set(k, this.used + 5);
    this.used += 5 + k.length;
    this.length++;
  }

  /** Bytes packed so far. */
  get bytes(): number {
    return this.used;
  }

  /** Appends every operation packed in `other`, in order (a copy of its bytes; `other` is unchanged). */
  append(other: PackedBatch): void {
    this.reserve(other.used);
    other.buf.copy(this.buf, this.used, 0, other.used);
    this.used += other.used;
    this.length += other.length;
  }

  /**
   * The packed bytes as a transferable ArrayBuffer of their own. A buffer from
   * allocUnsafe may be a slice of Node's shared pool, which cannot be transferred, so a
   * pooled one is copied out.
   */
  take(): { buf: ArrayBuffer; bytes: number } {
    const b = this.buf;
    const own = b.byteOffset === 0 && b.buffer.byteLength === b.length && b.buffer instanceof ArrayBuffer;
    const buf = own ? (b.buffer as ArrayBuffer) : (new Uint8Array(b.subarray(0, this.used)).buffer as ArrayBuffer);
    const bytes = this.used;
    this.buf = Buffer.alloc(0);
    this.used = 0;
    return { buf, bytes };
  }
}

/** Calls `put` or `del` for each packed operation, in order, with views into `b` (no copies). */
export function forEachPacked(b: Buffer, put: (k: Buffer, v: Buffer) => void, del: (k: Buffer) => void): void {
  let o = 0;
  while (o < b.length) {
    const at = o;
    const kind = b[o]!;
    const klen = b.readUInt32LE(o + 1);
    const k = b.subarray(o + 5, o + 5 + klen);
    o += 5 + klen;
    if (kind === PUT) {
      const vlen = b.readUInt32LE(o);
      put(k, b.subarray(o + 4, o + 4 + vlen));
      o += 4 + vlen;
    } else if (kind === DEL) {
      del(k);
    } else {
      throw new Error(`packed batch: unknown operation ${kind} at byte ${at}`);
    }
  }
}

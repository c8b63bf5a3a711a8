/**
 * RocksDB through levelup, opened only by the writer thread (rocksdb@5.2.1 registers in
 * one thread per process). Keys start with a one-byte bucket id; retired ids are never
 * reused, so old data can never be misread as new.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import levelup from 'levelup';
import rocksdb from 'rocksdb';

export const Bucket = {
  meta: 0x01,
  contract: 0x02,
  storage: 0x03,
  call: 0x04,
  event: 0x05,
  block: 0x06,
  undo: 0x07,
  stateRoot: 0x08,
  callIdIndex: 0x09,
  orphanStamp: 0x0a,
  payload: 0x0b,
  contractCalls: 0x0c,
  pendingCall: 0x0d,
  callCount: 0x0e,
  /** A call's payload (borsh envelope), stored once at intake; decided records omit it. */
  callBody: 0x0f,
} as const;
export type Bucket = (typeof Bucket)[keyof typeof Bucket];

export function key(bucket: Bucket, ...parts: (Uint8Array | string)[]): Buffer {
  // One allocation and plain copies: keys are built several times per applied call.
  let len = 1;
  for (const p of parts) len += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
  const out = Buffer.allocUnsafe(len);
  out[0] = bucket;
  let off = 1;
  for (const p of parts) {
    if (typeof p === 'string') off += out.write(p, off, 'utf8');
    else {
      out.set(p, off);
      off += p.length;
    }
  }
  return out;
}

export interface BatchOp {
  type: 'put' | 'del';
  key: Buffer;
  value?: Buffer;
}

/** Minimal promise wrapper over levelup so the rest of the writer is plain async code. */
export class Db {
  private constructor(
    private db: ReturnType<typeof levelup>,
    readonly path: string,
  ) {}

  private static async openLevel(path: string): Promise<ReturnType<typeof levelup>> {
    mkdirSync(dirname(path), { recursive: true });
    const db = levelup(rocksdb(path));
    await new Promise<void>((resolve, reject) => db.open((e?: Error | null) => (e ? reject(e) : resolve())));
    return db;
  }

  static async open(path: string): Promise<Db> {
    return new Db(await Db.openLevel(path), path);
  }

  /**
   * Closes and opens the database again. RocksDB stays read-only after a failed write
   * (for example a full disk) until it is reopened; the operator's clear_halt does this.
   */
  async reopen(): Promise<void> {
    await this.close().catch(() => undefined);
    this.db = await Db.openLevel(this.path);
  }

  /** Gets asked for in the current synchronous run, read together at its end. */
  private gets: { k: Buffer; resolve: (v: Buffer | undefined) => void; reject: (e: unknown) => void }[] = [];

  /**
   * One key; undefined when missing. Gets asked for in the same synchronous run (for
   * example intake's look-ups of many concurrent submissions, which reach the writer
   * together) are read in one getMany: one round trip to RocksDB's thread pool instead of
   * one per key. Read through getMany even alone: a missing key is then a plain undefined,
   * where `get` builds two Error objects with stack traces (leveldown's and levelup's
   * NotFoundError), and intake's look-ups mostly miss.
   */
  get(k: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      if (this.gets.length === 0) queueMicrotask(() => this.readGets());
      this.gets.push({ k, resolve, reject });
    });
  }

  private readGets(): void {
    const gets = this.gets;
    this.gets = [];
    this.db.getMany(
      gets.map((g) => g.k),
      {},
      (e, v) => {
        if (e) for (const g of gets) g.reject(e);
        else gets.forEach((g, i) => g.resolve(v?.[i] ?? undefined));
      },
    );
  }

  /** Several keys in one round trip to RocksDB's thread pool; missing keys are undefined. */
  getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => this.db.getMany(keys, {}, (e, v) => (e ? reject(e) : resolve(v ?? []))));
  }

  /** Applies ops atomically; `sync` fsyncs the WAL so the batch survives power loss. */
  batch(ops: BatchOp[], sync = true): Promise<void> {
    return new Promise((resolve, reject) =>
      this.db.batch(ops as never, { sync } as never, (e?: Error | null) => (e ? reject(e) : resolve())),
    );
  }

  put(k: Buffer, v: Buffer, sync = true): Promise<void> {
    return this.batch([{ type: 'put', key: k, value: v }], sync);
  }

  /** All entries with keys in [gte, lt), in key order. */
  range(gte: Buffer, lt: Buffer, opts: { limit?: number; reverse?: boolean } = {}): Promise<{ key: Buffer; value: Buffer }[]> {
    return new Promise((resolve, reject) => {
      const out: { key: Buffer; value: Buffer }[] = [];
      this.db
        .createReadStream({ gte, lt, limit: opts.limit ?? -1, reverse: opts.reverse ?? false })
        .on('data', (d: { key: Buffer; value: Buffer }) => out.push(d))
        .on('error', reject)
        .on('end', () => resolve(out));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((e?: Error | null) => (e ? reject(e) : resolve())));
  }
}

/** Upper bound for a prefix scan: the prefix with its last byte incremented (carrying). */
export function prefixEnd(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  return Buffer.concat([prefix, Buffer.of(0xff)]);
}

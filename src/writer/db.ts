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
  /** What a block decided for a call (records.ts); absent while the call is pending. */
  callDecision: 0x10,
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

type Down = ReturnType<typeof rocksdb>;
type Chained = ReturnType<Down['batch']>;

/**
 * A RocksDB write batch filled as work proceeds: each put or del goes to the native batch
 * at once (one native call per operation, no array of op objects converted at the end,
 * which cost twice as much in a 7,000-operation block), and `Db.commit` writes it atomically.
 */
export class WriteBatch {
  length = 0;
  constructor(private readonly chained: Chained) {}

  put(k: Buffer, v: Buffer): void {
    this.chained.put(k, v);
    this.length++;
  }

  del(k: Buffer): void {
    this.chained.del(k);
    this.length++;
  }

  /** @internal */
  write(sync: boolean): Promise<void> {
    return new Promise((resolve, reject) => this.chained.write({ sync } as never, (e?: Error | null) => (e ? reject(e) : resolve())));
  }
}

/**
 * Minimal promise wrapper over levelup so the rest of the writer is plain async code.
 *
 * Writes are ordered: each batch starts after the previous one finished. A caller may
 * hand over a batch and go on without awaiting it (the ledger computes the next block
 * while RocksDB writes the last one); every read waits for the writes handed over before
 * it, so nobody reads the disk behind what the writer already committed to it.
 */
export class Db {
  /** The last write handed to RocksDB; settles (never rejects) when it is done. */
  private inflight: Promise<void> = Promise.resolve();

  private constructor(
    private db: ReturnType<typeof levelup>,
    private down: Down,
    readonly path: string,
  ) {}

  private static async openLevel(path: string): Promise<{ db: ReturnType<typeof levelup>; down: Down }> {
    mkdirSync(dirname(path), { recursive: true });
    const down = rocksdb(path);
    // levelup opens from its constructor; given no callback there, a failed open (a
    // database locked by another node, an unwritable directory) is also emitted as an
    // 'error' event nobody listens to: an uncaught exception that reached the core as
    // "[object Object]". With the callback the failure is only this rejection.
    const db = await new Promise<ReturnType<typeof levelup>>((resolve, reject) => {
      const opened: ReturnType<typeof levelup> = levelup(down, (e?: Error | null) => (e ? reject(e) : resolve(opened)));
    });
    return { db, down };
  }

  static async open(path: string): Promise<Db> {
    const { db, down } = await Db.openLevel(path);
    return new Db(db, down, path);
  }

  /**
   * Closes and opens the database again. RocksDB stays read-only after a failed write
   * (for example a full disk) until it is reopened; the operator's clear_halt does this.
   */
  async reopen(): Promise<void> {
    await this.close().catch(() => undefined);
    const { db, down } = await Db.openLevel(this.path);
    this.db = db;
    this.down = down;
  }

  /** Resolves when every write handed over so far has finished (failed ones included). */
  settled(): Promise<void> {
    return this.inflight;
  }

  /** Gets asked for in the current synchronous run, read together at its end. */
  private gets: { k: Buffer; resolve: (v: Buffer | undefined) => void; reject: (e: unknown) => void }[] = [];

  /**
   * One key; undefined when missing. Waits for the writes handed over before it. Gets
   * asked for in the same synchronous run (for example intake's look-ups of many
   * concurrent submissions, which reach the writer together) are read in one getMany:
   * one round trip to RocksDB's thread pool instead of one per key. Read through getMany
   * even alone: a missing key is then a plain undefined, where `get` builds two Error
   * objects with stack traces (leveldown's and levelup's NotFoundError), and intake's
   * look-ups mostly miss.
   */
  async get(k: Buffer): Promise<Buffer | undefined> {
    await this.inflight;
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
  async getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]> {
    await this.inflight;
    return this.getManyNow(keys);
  }

  /**
   * `getMany` without waiting for writes in flight: the answer reflects either the state
   * before or after the write in flight (batches are atomic). The caller accounts for it.
   */
  getManyNow(keys: Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => this.db.getMany(keys, {}, (e, v) => (e ? reject(e) : resolve(v ?? []))));
  }

  newBatch(): WriteBatch {
    return new WriteBatch(this.down.batch());
  }

  /**
   * Writes `b` atomically after every write handed over before it; `sync` fsyncs the WAL
   * so the batch survives power loss. The promise settles when this batch is written.
   */
  commit(b: WriteBatch, sync = true): Promise<void> {
    const run = this.inflight.then(() => b.write(sync));
    this.inflight = run.catch(() => undefined);
    return run;
  }

  /** Applies ops atomically (see `commit`). */
  batch(ops: BatchOp[], sync = true): Promise<void> {
    const b = this.newBatch();
    for (const op of ops) {
      if (op.type === 'put') b.put(op.key, op.value!);
      else b.del(op.key);
    }
    return this.commit(b, sync);
  }

  put(k: Buffer, v: Buffer, sync = true): Promise<void> {
    return this.batch([{ type: 'put', key: k, value: v }], sync);
  }

  /** All entries with keys in [gte, lt), in key order. */
  async range(gte: Buffer, lt: Buffer, opts: { limit?: number; reverse?: boolean } = {}): Promise<{ key: Buffer; value: Buffer }[]> {
    await this.inflight;
    return new Promise((resolve, reject) => {
      const out: { key: Buffer; value: Buffer }[] = [];
      this.db
        .createReadStream({ gte, lt, limit: opts.limit ?? -1, reverse: opts.reverse ?? false })
        .on('data', (d: { key: Buffer; value: Buffer }) => out.push(d))
        .on('error', reject)
        .on('end', () => resolve(out));
    });
  }

  async close(): Promise<void> {
    await this.inflight;
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

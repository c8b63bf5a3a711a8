/**
 * RocksDB through @nxtedition/rocksdb (abstract-level API), opened only by the writer
 * thread, which owns state and the journal. What is stored under which key is the
 * bucket modules' (src/writer/store/); this file moves bytes.
 *
 * Why this binding and not rocksdb@5.2.1 (docs/ARCHITECTURE.md, "Storage engine"): the
 * old one aborts while loading under official Node builds from 20.12 on, so the node
 * could not run on Node 22; this one ships prebuilds for every current Node line.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { RocksLevel } from '@nxtedition/rocksdb';
import { PackedBatch, type DiskReply, type DiskRequest } from './disk-batch.js';
import { NodeError, describeError } from '@svc-node/protocol/errors';

export interface BatchOp {
  type: 'put' | 'del';
  key: Buffer;
  value?: Buffer;
}

/**
 * A write batch filled as work proceeds: each put or del is packed into one buffer at
 * once (a copy; no array of op objects, which cost twice as much in a 7,000-operation
 * block), and `Db.commit` hands it to the disk thread, which writes it atomically.
 */
export class WriteBatch extends PackedBatch {
  constructor(private readonly writeTo: (b: PackedBatch, sync: boolean) => Promise<void>) {
    super();
  }

  /** @internal */
  write(sync: boolean): Promise<void> {
    return this.writeTo(this, sync);
  }
}

/**
 * The process's disk thread (disk-thread.ts) as the writer sees it: requests go in
 * order, each answered once done. Referenced (keeping the process alive) only while a
 * request is outstanding. If the thread dies, every outstanding and later request fails
 * (a failed write halts the node) and the next database opened starts a new one.
 */
class DiskThread {
  private static current: DiskThread | null = null;
  private nextId = 1;
  private nextDb = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private failure: Error | null = null;
  private readonly worker = new Worker(new URL('./disk-thread.js', import.meta.url));

  static get(): DiskThread {
    if (!DiskThread.current || DiskThread.current.failure) DiskThread.current = new DiskThread();
    return DiskThread.current;
  }

  private constructor() {
    this.worker.unref();
    this.worker.on('message', (r: DiskReply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (this.waiting.size === 0) this.worker.unref();
      if (r.ok) w.resolve();
      else w.reject(new Error(r.message));
    });
    const fail = (e: Error): void => {
      this.failure ??= e;
      for (const w of this.waiting.values()) w.reject(this.failure);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the disk thread exited (code ${code})`)));
  }

  private request(m: DiskRequest, transfer: ArrayBuffer[] = []): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiting.size === 0) this.worker.ref();
    const done = new Promise<void>((resolve, reject) => this.waiting.set(m.id, { resolve, reject }));
    this.worker.postMessage(m, transfer);
    return done;
  }

  /** Shares the open database behind `handle`; returns its number here. */
  async attach(handle: bigint): Promise<number> {
    const db = this.nextDb++;
    await this.request({ k: 'attach', id: this.nextId++, db, handle });
    return db;
  }

  write(db: number, b: PackedBatch, sync: boolean): Promise<void> {
    const { buf, bytes } = b.take();
    return this.request({ k: 'write', id: this.nextId++, db, buf, bytes, sync }, [buf]);
  }

  detach(db: number): Promise<void> {
    return this.request({ k: 'detach', id: this.nextId++, db });
  }
}

/** One database's writes through the disk thread. */
class DiskWriter {
  private constructor(
    private readonly thread: DiskThread,
    private readonly db: number,
  ) {}

  static async start(handle: bigint): Promise<DiskWriter> {
    const thread = DiskThread.get();
    return new DiskWriter(thread, await thread.attach(handle));
  }

  write(b: PackedBatch, sync: boolean): Promise<void> {
    return this.thread.write(this.db, b, sync);
  }

  /** Forgets the database in the disk thread; a dead thread has forgotten it already. */
  async stop(): Promise<void> {
    await this.thread.detach(this.db).catch(() => undefined);
  }
}

/**
 * RocksDB options (the binding's names), measured with the core bench (docs/PERFORMANCE.md,
 * "Storage binding"):
 * - level compaction with a 64 MiB memtable budget (the binding's default is 256): 16 MiB
 *   write buffers, two merged per flush. With 4 MiB ones (16 MiB, the earlier binding's)
 *   a light catch-up spent 7.5 s of its CPU in compaction for 100,000 payloads, 3.4 s
 *   with these (writes overwritten or deleted soon, such as claims filed under blocks
 *   not yet applied and pending-call entries, now mostly die in the memtable): 39 -> 36
 *   s, the machine's two cores busy. Block application is unchanged (the core bench, two
 *   A/B rounds: 52.7k, 50.6k transfers/s with 16 MiB; 53.2k, 54.6k with 64). Up to ~96
 *   MiB of memtables (six buffers) where 24 were;
 * - no WAL compression: zstd on every write for little gain on batches of hashes and
 *   small records;
 * - `compression: false` turns off only the binding's zstd dictionaries (16 KiB, trained
 *   on 1.6 MB of samples for every table file a compaction writes): a light node's
 *   catch-up of 30,000 payloads spent 3.1 s of CPU in compaction with them, 1.2 s
 *   without (100,000: 18 s of its 60 s), for tables 10-20% larger. Table files stay
 *   zstd-compressed from level 2 on (the binding's level default), without a dictionary.
 */
const ENGINE_OPTIONS = { compaction: 'level', memtableMemoryBudget: 64 << 20, walCompression: false, compression: false } as const;

/** Why a database did not open: abstract-level wraps the engine's reason in a generic "Database is not open". */
function openFailure(e: unknown): unknown {
  const cause = (e as { cause?: unknown } | null)?.cause;
  return cause instanceof Error ? cause : e;
}

/**
 * Creates `dir` and its missing parents one level at a time; the first level that cannot
 * be created throws, naming it. Not mkdirSync's `recursive`: where the kernel refuses a
 * new directory with ENOENT although its parent exists (anywhere under /proc) Node's
 * recursive mkdir retries the parent forever and the writer thread would never return.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      // Made meanwhile by someone else: as good as made here.
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      // Node's message ("ENOENT: no such file or directory, mkdir '/x'") less the path, named once.
      throw new Error(`cannot create the directory ${d} (${(e as Error).message.replace(/, mkdir .*$/, '')})`);
    }
  }
}

/** A RocksDB instance at `path` (not yet open) with the node's options and buffer keys and values. */
export function rocksAt(path: string): RocksLevel {
  return new RocksLevel(path, { keyEncoding: 'buffer', valueEncoding: 'buffer', ...ENGINE_OPTIONS });
}

/**
 * The RocksDB version that last opened the store at `path` when it is older than this
 * binding's engine (RocksDB 9), else null. RocksDB writes an OPTIONS file at every open;
 * the newest names the version. Checked before opening: a store of the earlier binding
 * may open without error (a table block is stored uncompressed when Snappy saved too
 * little) and fail later, at the first read of a Snappy block.
 */
export function legacyEngineVersion(path: string): string | null {
  if (!existsSync(join(path, 'CURRENT'))) return null;
  const newest = readdirSync(path)
    .filter((f) => /^OPTIONS-\d+$/.test(f))
    .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
    .pop();
  if (newest === undefined) return null;
  const m = /^\s*rocksdb_version=(\d+)\.(\d+)\.(\d+)\s*$/m.exec(readFileSync(join(path, newest), 'utf8'));
  return m && Number(m[1]) < 9 ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/** The data directory was written by the node's earlier storage binding (rocksdb@5.2.1). */
export class LegacyStoreError extends Error {
  /** `engineVersion`: the RocksDB version that last opened the store (its OPTIONS file). */
  constructor(readonly engineVersion: string) {
    super('it was written by the earlier storage engine (rocksdb 5.2.1, Snappy-compressed tables), which this node no longer reads: stop the node and run `npm run migrate-store -- <db_path>` under Node 20 (docs/OPERATING.md, "Storage engine")');
    this.name = 'LegacyStoreError';
  }
}

/**
 * Minimal promise wrapper over the binding so the rest of the writer is plain async code.
 *
 * Writes are ordered: each batch starts after the previous one finished. A caller may
 * hand over a batch and go on without awaiting it (the ledger computes the next block
 * while the disk thread writes the last one); every read waits for the writes handed
 * over before it, so nobody reads the disk behind what the writer already committed to
 * it. Reads run in RocksDB's thread pool through this thread's instance.
 */
export class Db {
  /** The last write handed to RocksDB; settles (never rejects) when it is done. */
  private inflight: Promise<void> = Promise.resolve();

  /**
   * Why the database is closed, set when a reopen failed (a disk still too full to flush
   * the replayed write-ahead log): every read and write then fails with that reason
   * instead of reaching the closed instance, which the binding does not check (a read
   * there killed the core with SIGSEGV). Cleared by a reopen that succeeds.
   */
  private closedBecause: string | null = null;

  private constructor(
    private db: RocksLevel,
    private disk: DiskWriter,
    readonly path: string,
  ) {}

  /** The open instance; throws `halted` with the reason while a failed reopen left it closed. */
  private live(): RocksLevel {
    if (this.closedBecause !== null) throw this.closedError();
    return this.db;
  }

  private closedError(): NodeError {
    return new NodeError('halted', `the database could not be reopened (${this.closedBecause}); free space on its disk and clear the halt again`);
  }

  private static async openLevel(path: string): Promise<{ db: RocksLevel; disk: DiskWriter }> {
    // The database's own directory too: the binding makes it with a recursive mkdir, which
    // spins where the kernel refuses it (a directory right under /proc, e.g. /proc/db).
    makeDirs(path);
    const legacy = legacyEngineVersion(path);
    if (legacy !== null) throw new LegacyStoreError(legacy);
    const db = rocksAt(path);
    try {
      await db.open();
    } catch (e) {
      throw openFailure(e);
    }
    try {
      return { db, disk: await DiskWriter.start(db.handle) };
    } catch (e) {
      await db.close().catch(() => undefined);
      throw e;
    }
  }

  static async open(path: string): Promise<Db> {
    const { db, disk } = await Db.openLevel(path);
    return new Db(db, disk, path);
  }

  /**
   * Closes and opens the database again. RocksDB stays read-only after a failed write
   * (for example a full disk) until it is reopened; the operator's clear_halt does this.
   */
  reopen(): Promise<void> {
    return this.inPlaceOfAWrite(async () => {
      await this.disk.stop();
      await this.db.close().catch(() => undefined);
      try {
        const { db, disk } = await Db.openLevel(this.path);
        this.db = db;
        this.disk = disk;
        this.closedBecause = null;
      } catch (e) {
        this.closedBecause = describeError(e);
        throw this.closedError();
      }
    });
  }

  /**
   * Runs `work` after the writes handed over before it, as a write: writes and reads
   * handed over meanwhile (the header follower's, a peer's question) wait for it. A write
   * reaching the disk thread for a closing instance would use a freed handle (the core
   * died of SIGSEGV when one raced clear_halt's reopen).
   */
  private inPlaceOfAWrite(work: () => Promise<void>): Promise<void> {
    const done = this.inflight.then(work);
    this.inflight = done.catch(() => undefined);
    return done;
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
   * even alone: a missing key is then a plain undefined, where `get` builds an Error
   * object with a stack trace, and intake's look-ups mostly miss.
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
    let db: RocksLevel;
    try {
      db = this.live();
    } catch (e) {
      for (const g of gets) g.reject(e);
      return;
    }
    db.getMany(gets.map((g) => g.k)).then(
      (v) => gets.forEach((g, i) => g.resolve(v[i] ?? undefined)),
      (e: unknown) => {
        for (const g of gets) g.reject(e);
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
  async getManyNow(keys: Buffer[]): Promise<(Buffer | undefined)[]> {
    if (keys.length === 0) return [];
    return (await this.live().getMany(keys)).map((v) => v ?? undefined);
  }

  newBatch(): WriteBatch {
    return new WriteBatch((b, sync) => (this.closedBecause === null ? this.disk.write(b, sync) : Promise.reject(this.closedError())));
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
    const rows = await this.live().iterator({ gte, lt, limit: opts.limit ?? -1, reverse: opts.reverse ?? false }).all();
    return rows.map(([key, value]) => ({ key, value }));
  }

  /** `range` over a key range as the bucket modules give it (src/writer/store/). */
  rangeOf(r: { gte: Buffer; lt: Buffer }, opts: { limit?: number; reverse?: boolean } = {}): Promise<{ key: Buffer; value: Buffer }[]> {
    return this.range(r.gte, r.lt, opts);
  }

  /** Closes after the writes handed over; the disk thread ends before the database closes. */
  close(): Promise<void> {
    // What is handed over meanwhile waits, then fails on the closed instance (the disk
    // thread refuses a detached one) rather than racing the close.
    return this.inPlaceOfAWrite(async () => {
      await this.disk.stop();
      await this.db.close();
    });
  }
}

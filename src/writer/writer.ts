/**
 * The single writer: sole owner of RocksDB and the block journal. Every mutation runs
 * through `serial`, one job at a time, so the order of writes never depends on the
 * order in which concurrent requests happen to finish.
 */
import { Db, Bucket, key } from './db.js';
import type { WriterStatus } from '../messages.js';
import type { Logger } from '../log.js';

export class Writer {
  private queue: Promise<unknown> = Promise.resolve();
  private halted = false;
  private haltReason: string | null = null;

  private constructor(
    readonly db: Db,
    private readonly log: Logger,
  ) {}

  static async open(dbPath: string, nodeId: string, log: Logger): Promise<Writer> {
    const db = await Db.open(dbPath);
    const w = new Writer(db, log);
    const idKey = key(Bucket.meta, 'node_id');
    const stored = await db.get(idKey);
    if (!stored) await db.put(idKey, Buffer.from(nodeId, 'utf8'));
    log.info('database open', { db_path: dbPath });
    return w;
  }

  /** Runs `job` after every job queued before it; a failure does not stop the queue. */
  serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  status(): WriterStatus {
    return {
      processedHeight: null,
      processedHash: null,
      stateRoot: null,
      halted: this.halted,
      haltReason: this.haltReason,
      contracts: 0,
      pendingCalls: 0,
    };
  }

  async close(): Promise<void> {
    await this.serial(async () => undefined);
    await this.db.close();
    this.log.info('database closed');
  }
}

/**
 * The single writer: sole owner of RocksDB and the block journal. Every mutation runs
 * through `serial`, one job at a time, so the order of writes never depends on the
 * order in which concurrent requests happen to finish.
 */
import { Db, Bucket, key } from './db.js';
import { Ledger } from './ledger.js';
import { NodeError } from '../errors.js';
import type { ChainUpdate, WriterStatus } from '../messages.js';
import type { CallRecord, ContractRecord } from './records.js';
import type { Logger } from '../log.js';

export interface WriterLimits {
  /**
   * Pending calls held at once (config max_pending_calls). A new call beyond it is
   * refused with 503 overloaded before anything is stored; a repeat of a call the node
   * already holds is still answered. Counted where calls are accepted, so REST, gossip
   * and sync share it; a reorg may briefly push the count above it (calls going back to
   * pending are never dropped).
   */
  maxPendingCalls: number;
}

export class Writer {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly db: Db,
    readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly limits: WriterLimits,
  ) {}

  static async open(dbPath: string, nodeId: string, log: Logger, limits: WriterLimits = { maxPendingCalls: Number.POSITIVE_INFINITY }): Promise<Writer> {
    const db = await Db.open(dbPath);
    const idKey = key(Bucket.meta, 'node_id');
    if (!(await db.get(idKey))) await db.put(idKey, Buffer.from(nodeId, 'utf8'));
    const ledger = new Ledger(db, log);
    await ledger.load();
    log.info('database open', { db_path: dbPath, processed_height: ledger.tip?.height ?? null, contracts: ledger.contractCount, pending_calls: ledger.pendingCount });
    return new Writer(db, ledger, log, limits);
  }

  /** Runs `job` after every job queued before it; a failure does not stop the queue. */
  serial<T>(job: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  status(): WriterStatus {
    const l = this.ledger;
    return {
      processedHeight: l.tip?.height ?? null,
      processedHash: l.tip?.hash ?? null,
      anchorHeight: l.anchor?.height ?? null,
      stateRoot: l.stateRoot,
      halted: l.halted,
      haltReason: l.haltReason,
      contracts: l.contractCount,
      pendingCalls: l.pendingCount,
      lastBlockAt: l.lastBlockAt,
    };
  }

  initAnchor(tip: { height: number; hash: string }): Promise<WriterStatus> {
    return this.serial(async () => {
      await this.ledger.initAnchor(tip);
      return this.status();
    });
  }

  acceptDeploy(record: ContractRecord): Promise<{ created: boolean; record: ContractRecord }> {
    return this.serial(async () => {
      const r = await this.ledger.acceptDeploy(record);
      if (r.replayFrom !== null) this.scheduleReplay(r.replayFrom);
      return { created: r.created, record: r.record };
    });
  }

  acceptCall(record: CallRecord): Promise<{ created: boolean; record: CallRecord }> {
    return this.serial(async () => {
      const l = this.ledger;
      if (l.pendingCount >= this.limits.maxPendingCalls && !(await l.payloadAt(record.txid))) {
        throw new NodeError('overloaded', `the node holds ${l.pendingCount} pending calls, its max_pending_calls; retry once blocks have confirmed some`);
      }
      const r = await l.acceptCall(record);
      if (r.replayFrom !== null) this.scheduleReplay(r.replayFrom);
      return { created: r.created, record: r.record };
    });
  }

  /** A payload whose stamp was already mined: replay from its block (after the answer). */
  private scheduleReplay(height: number): void {
    void this.serial(async () => {
      try {
        await this.ledger.replayFrom(height);
      } catch (e) {
        if (!(e instanceof NodeError)) await this.ledger.halt(`internal error while replaying from ${height}: ${(e as Error).message}`);
      }
    });
  }

  applyChainUpdate(u: ChainUpdate): Promise<WriterStatus> {
    return this.serial(async () => {
      const l = this.ledger;
      if (l.halted) throw new NodeError('halted', `node is halted: ${l.haltReason}`);
      try {
        if (u.disconnected.length > 0) {
          this.log.warn('reorganisation', { fork_height: u.fork_height, depth: u.disconnected.length, mode: u.fork_height >= l.undoFloor ? 'undo' : 're-derive' });
          await l.rewindTo(u.fork_height, { dropJournal: true });
        }
        for (const b of u.connected) await l.applyBlock(b);
        // Blocks of one update are written while the next is computed; the answer waits
        // until all are durable.
        await l.flushBlocks();
      } catch (e) {
        if (!(e instanceof NodeError)) await l.halt(`internal error applying blocks: ${(e as Error).message}`);
        throw e instanceof NodeError ? e : new NodeError('halted', 'node is halted: internal error applying blocks');
      }
      return this.status();
    });
  }

  clearHalt(): Promise<WriterStatus> {
    return this.serial(async () => {
      await this.ledger.clearHalt();
      return this.status();
    });
  }

  async close(): Promise<void> {
    await this.serial(async () => undefined);
    await this.db.close();
    this.log.info('database closed');
  }
}

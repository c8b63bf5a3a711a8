/**
 * The verification/VM worker pool (Piscina) behind one small interface, so intake can
 * ask `canAcceptWork()` and answer 503 instead of queueing without bound.
 *
 * Calls to open (decode + BIP-340 verify) are batched: at most two tasks per thread are
 * in flight (one running, one ready, so a thread never waits for the main thread's
 * round trip); calls arriving meanwhile wait here and leave together, split evenly over
 * the free task slots, at most OPEN_BATCH_MAX per task. An idle pool sends a call at
 * once (after the current event-loop turn, which gathers calls that arrived together),
 * so batching adds no wait of its own. Per task, Piscina costs a postMessage and an
 * Atomics wake-up on both sides, ~100 us per round trip on these 2 cores (CEILINGS.md
 * row 05: 24k trivial tasks/s); one verify is ~200 us, so single-call tasks lose a third
 * of the pool to that overhead, and the core's main thread pays it per call.
 */
import { Piscina } from 'piscina';
import { NodeError, fromWire } from '@svc-node/protocol/errors';
import type { OpenedCall, PoolResult, PoolTask } from './tasks.js';

/**
 * Calls per openCalls task: 32 verifies are ~6 ms of one thread, short enough that a
 * batch never holds a call noticeably longer than the queue it waited in; CEILINGS row 05
 * gets the full 2-core rate at 64 per task, and most of it well below.
 */
const OPEN_BATCH_MAX = 32;

interface WaitingOpen {
  payload: Uint8Array;
  resolve: (v: OpenedCall) => void;
  reject: (e: unknown) => void;
}

export interface WorkPoolOptions {
  threads: number;
  queueLimit: number;
}

export interface PoolStats {
  threads: number;
  queued: number;
  queue_limit: number;
  saturated: boolean;
  completed: number;
}

export class WorkPool {
  private readonly piscina: Piscina;
  private readonly opens: WaitingOpen[] = [];
  private openTasks = 0;
  private openScheduled = false;

  constructor(private readonly opts: WorkPoolOptions) {
    this.piscina = new Piscina({
      filename: new URL('../../workers/pool.worker.js', import.meta.url).href,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      maxQueue: opts.queueLimit,
      // Threads stay up for the life of the node: starting one costs tens of milliseconds.
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
  }

  canAcceptWork(): boolean {
    return this.queued < this.opts.queueLimit;
  }

  /** Work waiting for a thread: calls waiting to be batched plus tasks in Piscina's queue. */
  private get queued(): number {
    return this.opens.length + this.piscina.queueSize;
  }

  /** Strict decode + signature check of one call payload, batched with others (see above). */
  openCall(payload: Uint8Array): Promise<OpenedCall> {
    if (!this.canAcceptWork()) return Promise.reject(new NodeError('overloaded', 'verification pool is saturated; retry later'));
    return new Promise<OpenedCall>((resolve, reject) => {
      this.opens.push({ payload, resolve, reject });
      if (!this.openScheduled) {
        this.openScheduled = true;
        setImmediate(() => {
          this.openScheduled = false;
          this.dispatchOpens();
        });
      }
    });
  }

  private dispatchOpens(): void {
    const slots = 2 * this.opts.threads;
    while (this.opens.length > 0 && this.openTasks < slots) {
      const n = Math.min(OPEN_BATCH_MAX, Math.ceil(this.opens.length / (slots - this.openTasks)));
      const batch = this.opens.splice(0, n);
      this.openTasks++;
      (this.piscina.run({ kind: 'openCalls', payloads: batch.map((b) => b.payload) } satisfies PoolTask) as Promise<PoolResult>).then(
        (r) => {
          this.openTasks--;
          if (!r.ok) {
            const e = fromWire(r.error);
            for (const b of batch) b.reject(e);
          } else {
            (r.value as PoolResult[]).forEach((one, i) => (one.ok ? batch[i]!.resolve(one.value as OpenedCall) : batch[i]!.reject(fromWire(one.error))));
          }
          this.dispatchOpens();
        },
        (e: unknown) => {
          this.openTasks--;
          for (const b of batch) b.reject(e);
          this.dispatchOpens();
        },
      );
    }
  }

  async run<T>(task: PoolTask): Promise<T> {
    if (!this.canAcceptWork()) throw new NodeError('overloaded', 'verification pool is saturated; retry later');
    const r = await this.piscina.run(task);
    if (r.ok) return r.value as T;
    throw fromWire(r.error);
  }

  stats(): PoolStats {
    return {
      threads: this.piscina.threads.length,
      queued: this.queued,
      queue_limit: this.opts.queueLimit,
      saturated: !this.canAcceptWork(),
      completed: this.piscina.completed,
    };
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}

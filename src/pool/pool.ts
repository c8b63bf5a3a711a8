/**
 * The verification/VM worker pool (Piscina) behind one small interface, so intake can
 * ask `canAcceptWork()` and answer 503 instead of queueing without bound.
 */
import { Piscina } from 'piscina';
import { NodeError, fromWire } from '../errors.js';
import type { PoolTask } from './tasks.js';

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
    return this.piscina.queueSize < this.opts.queueLimit;
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
      queued: this.piscina.queueSize,
      queue_limit: this.opts.queueLimit,
      saturated: !this.canAcceptWork(),
      completed: this.piscina.completed,
    };
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}

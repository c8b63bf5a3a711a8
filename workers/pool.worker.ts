/**
 * Piscina worker: verification and VM tasks. Each export is one task kind; a task
 * never throws across the thread for a client's bad input: it returns a tagged result.
 */
import type { PoolTask, PoolResult } from '../src/pool/tasks.js';
import { runTask } from '../src/pool/tasks.js';

export default function handle(task: PoolTask): PoolResult {
  return runTask(task);
}

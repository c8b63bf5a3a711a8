/**
 * Tasks the core hands to the worker pool, typed in one place. Work that is pure and
 * CPU-bound (decoding, signature checks, bytecode verification, VM execution) runs here
 * so the core's event loop and the writer thread stay free.
 */
import { toWire, type WireError } from '../errors.js';

export type PoolTask = { kind: 'ping'; n: number };

export type PoolResult = { ok: true; value: unknown } | { ok: false; error: WireError };

export function runTask(task: PoolTask): PoolResult {
  try {
    switch (task.kind) {
      case 'ping':
        return { ok: true, value: task.n };
    }
  } catch (e) {
    return { ok: false, error: toWire(e) };
  }
}

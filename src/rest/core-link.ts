/**
 * The REST front's calls to the core, each with a deadline (issue 20). Before, a stalled
 * core held every REST request until the client gave up (16 s in the report) and then
 * answered 200; now a request the core does not answer in time gets 503
 * `core_unavailable`, as does one made while the core is restarting.
 */
import { NodeError } from '@svc-node/protocol/errors';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi } from '../messages.js';

/**
 * Deadline of a read or status request to the core. Reads are answered from RocksDB in
 * milliseconds (a full events page in tens); 5 s is far above any healthy answer and
 * below a load balancer's usual 10 s+ request timeout, so the client hears 503 from us
 * rather than a timeout from the balancer.
 */
export const CORE_DEADLINE_MS = 5_000;

/** The part of the core client the routes use. */
export interface CoreCaller {
  call<K extends keyof CoreApi & string>(method: K, params: Parameters<CoreApi[K]>[0], deadlineMs?: number): Promise<Awaited<ReturnType<CoreApi[K]>>>;
}

/**
 * Calls on whatever core connection `current` gives (it changes when the core restarts),
 * each bounded by `deadlineMs` unless the caller gives a longer one (intake waits on the
 * chain endpoint).
 */
export function coreLink(current: () => RpcClient<CoreApi>, defaultDeadlineMs = CORE_DEADLINE_MS): CoreCaller {
  return {
    call(method, params, deadlineMs = defaultDeadlineMs) {
      const c = current();
      if (c.isClosed) return Promise.reject(new NodeError('core_unavailable', 'the node core is not connected (it is restarting)'));
      // One timer per call (the RPC's own): this is on every uncached read.
      return c.call(method, params, deadlineMs, () => new NodeError('core_unavailable', `the node core did not answer within ${deadlineMs} ms`)).catch((e: unknown) => {
        throw c.isClosed && e instanceof NodeError && e.code === 'overloaded' ? new NodeError('core_unavailable', 'the node core connection closed (it is restarting)') : e;
      });
    },
  };
}

/** REST front process entry: uWebSockets.js on rest_address, calling the core over RPC. */
import { awaitInit, exitOnBindError, onShutdown, toSupervisor } from '../supervisor/child.js';
import { connectRpc, type RpcClient } from '../ipc/rpc.js';
import { RestServer } from './http.js';
import { routes } from './routes.js';
import { BearerAuth } from './auth.js';
import { configureLogging, logger } from '../log.js';
import { batchingSink } from './log-sink.js';
import { ReadCache } from './read-cache.js';
import { RestMetrics } from './metrics.js';
import { coreLink, CORE_DEADLINE_MS } from './core-link.js';
import type { CoreApi, MetricFamily, Serving, SupervisorToChild } from '../messages.js';
import { StreamHub } from './stream/hub.js';
import { registerStream } from './stream/socket.js';
import { registerStreamMetrics } from './stream/metrics.js';
import { CLOSE_GOING_AWAY } from './stream/protocol.js';

const log = logger('rest');
const init = await awaitInit('rest');
// One write per event-loop turn instead of one per line (the access log is per request);
// access lines are dropped and counted while stdout is backed up (log-sink.ts).
const logSink = batchingSink(1);
configureLogging({ sink: logSink.sink });
let core: RpcClient<CoreApi> = await connectRpc<CoreApi>(init.ipcPath);

/** Reconnects after a core restart; requests in the gap answer 503. */
function watchCore(c: RpcClient<CoreApi>): void {
  c.onClose(() => {
    void connectRpc<CoreApi>(init.ipcPath, 60_000).then(
      (next) => {
        core = next;
        watchCore(next);
        log.info('reconnected to core');
      },
      () => {
        log.error('core unreachable for 60 s; exiting so the supervisor restarts this process');
        process.exit(1);
      },
    );
  });
}
watchCore(core);

/**
 * The read replica follows the core's state version by a long poll; on any failure it
 * forgets the version (every read then goes to the writer) until the core answers again.
 */
const cache = new ReadCache();
/** The live feed (docs/STREAM.md) steps on every new state version; its reads are one writer job each. */
const hub = new StreamHub((p) => core.call('streamStep', p, 30_000));
let stopping = false;
async function followState(): Promise<void> {
  while (!stopping) {
    try {
      const v = await core.call('waitState', { known: cache.version, waitMs: 25_000 }, 35_000);
      cache.setVersion(v);
      hub.onVersion(v);
    } catch {
      cache.setVersion(null);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
void followState();

/** What the supervisor last said about the roles (GET /ready). */
let serving: Serving | null = null;
/** Scrapes waiting for the supervisor's gathering of the other processes' metrics. */
const gathering = new Map<number, (families: MetricFamily[]) => void>();
let nextGather = 1;
process.on('message', (m: SupervisorToChild) => {
  if (m.type === 'serving') serving = m.serving;
  else if (m.type === 'node_metrics') gathering.get(m.id)?.(m.families);
});
/** The supervisor's, core's and gossip's process metrics; [] if the supervisor does not answer in time. */
function otherProcesses(): Promise<MetricFamily[]> {
  const id = nextGather++;
  return new Promise((resolve) => {
    const done = (families: MetricFamily[]): void => {
      clearTimeout(timer);
      gathering.delete(id);
      resolve(families);
    };
    // The supervisor waits at most 2 s per child (supervisor.ts); one more second for itself.
    const timer = setTimeout(() => done([]), 3_000);
    gathering.set(id, done);
    toSupervisor({ type: 'node_metrics', id });
  });
}

const link = coreLink(() => core);
const metrics = new RestMetrics(cache, otherProcesses);
registerStreamMetrics(metrics.registry, hub);
const server = new RestServer(
  routes({ core: () => link, auth: new BearerAuth(init.config.apiToken), cache, metrics, serving: () => serving, intakeDeadlineMs: init.config.esploraTimeoutMs + CORE_DEADLINE_MS }),
  {
  observe: (method, route, status, seconds) => metrics.observeHttp(method, route, status, seconds),
  accessSink: { sink: logSink.access, proc: 'rest' },
  websockets: (app) => registerStream(app, hub),
  corsOrigins: init.config.corsOrigins,
});
const { host, port } = init.config.restAddress;
const bound = await exitOnBindError('rest', server.listen(host, port));
log.info('listening', { role: 'rest', address: `${host}:${bound}` });
toSupervisor({ type: 'listening', role: 'rest', address: host, port: bound });
onShutdown(async () => {
  stopping = true;
  hub.stop(CLOSE_GOING_AWAY, 'node is shutting down');
  await server.drain(5000);
  core.close();
});

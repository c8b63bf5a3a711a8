/** Helpers for a child process of the supervisor: receive init, report, shut down. */
import type { ChildToSupervisor, MetricFamily, Role, SupervisorToChild } from '../messages.js';
import { configureLogging, logger, registerSecret } from '../log.js';
import { secretsOf } from '../config/options.js';
import { BindError } from './address.js';
import { describeError } from '@svc-node/protocol/errors';
import { familiesOf, processRegistry } from './process-metrics.js';

export type InitMessage = Extract<SupervisorToChild, { type: 'init' }>;

export function toSupervisor(msg: ChildToSupervisor): void {
  if (process.send && process.connected) process.send(msg);
}

/**
 * A stop asked for (a shutdown message, the supervisor gone) after init but before the
 * role registered its drain, i.e. while it starts: the drain runs as soon as it is
 * registered. Without this a stop during a child's startup was ignored until the
 * supervisor killed it.
 */
let stopAsked = false;
let initDone = false;

/**
 * Waits for the supervisor's init message and sets up logging and secret redaction. From
 * here on the child watches its supervisor: the IPC channel closes when the supervisor is
 * gone, even by SIGKILL. Before init nothing is open, so the child exits at once; after
 * it, the stop waits for the role's drain (onShutdown), so no child outlives its
 * supervisor, also while it is still starting, and none leaves its database open.
 */
export function awaitInit(role: Role): Promise<InitMessage> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error(`the ${role} process is started by the supervisor (npm start), not directly`));
      return;
    }
    process.on('message', (m: SupervisorToChild) => {
      if (m.type === 'shutdown') stopAsked = true;
    });
    process.on('disconnect', () => {
      if (!initDone) process.exit(0);
      stopAsked = true;
    });
    // The supervisor owns signal handling; a terminal's Ctrl-C reaches the whole process
    // group, so children ignore SIGINT/SIGTERM and wait for the supervisor's shutdown.
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', () => undefined);
    const onMsg = (m: SupervisorToChild): void => {
      if (m.type !== 'init') return;
      process.off('message', onMsg);
      initDone = true;
      configureLogging({ filter: m.config.logFilter, process: role });
      for (const s of secretsOf(m.config)) registerSecret(s);
      registerSecret(Buffer.from(m.identity.seed).toString('hex'));
      resolve(m);
    };
    process.on('message', onMsg);
  });
}

/**
 * Runs `drain` once on a shutdown message or on losing the supervisor, then exits: 0 when
 * it finished, 1 when it failed (the database may not be closed: the supervisor's own
 * exit code says so).
 */
export function onShutdown(drain: () => Promise<void>): void {
  // stdout and stderr are pipes read by the supervisor (lines.ts). If it is gone
  // (SIGKILL), a write fails with EPIPE, which Node raises as an 'error' event and, with
  // no listener, as an uncaught exception: the drain below (closing RocksDB) would die
  // at its first log line. Lines written then are lost; the process is not.
  for (const out of [process.stdout, process.stderr]) out.on('error', () => undefined);
  let started = false;
  const go = (): void => {
    if (started) return;
    started = true;
    drain().then(
      () => process.exit(0),
      (e: unknown) => {
        logger('shutdown').error('stop failed', { error: describeError(e) });
        process.exit(1);
      },
    );
  };
  process.on('message', (m: SupervisorToChild) => {
    if (m.type === 'shutdown') go();
  });
  process.on('disconnect', go);
  if (stopAsked || !process.connected) go();
}

/**
 * A listener that cannot bind stops the node, not just this process: the supervisor is
 * told (and does not restart it), then the process exits 1. Anything else is rethrown.
 */
export async function exitOnBindError<T>(role: Role, listen: Promise<T>): Promise<T> {
  try {
    return await listen;
  } catch (e) {
    if (!(e instanceof BindError)) throw e;
    logger(role).error(e.message, { key: e.key, address: e.address, errno: e.errno });
    const msg: ChildToSupervisor = { type: 'bind_failed', role, key: e.key, address: e.address, errno: e.errno };
    // Exit once the message is written: exiting at once could lose it.
    if (process.send && process.connected) process.send(msg, () => process.exit(1));
    else process.exit(1);
    return new Promise<never>(() => undefined);
  }
}

/**
 * Answers the supervisor's `collect_metrics` with this process's default metrics
 * (labelled by role) and whatever `extra` adds (gossip: its counters).
 */
export function serveProcessMetrics(role: Role, extra?: () => MetricFamily[] | Promise<MetricFamily[]>): void {
  const registry = processRegistry(role);
  process.on('message', (m: SupervisorToChild) => {
    if (m.type !== 'collect_metrics') return;
    void Promise.all([familiesOf(registry), extra?.() ?? []]).then(([own, more]) => toSupervisor({ type: 'metrics', id: m.id, families: [...own, ...more] }));
  });
}

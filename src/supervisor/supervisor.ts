/**
 * The supervisor: validates configuration, creates the gossip identity, then starts the
 * core (writer thread + worker pool), and once it is ready the REST front and the gossip
 * process. A child that exits unexpectedly is restarted with exponential backoff.
 * SIGTERM/SIGINT: the front and gossip drain first, then the core closes RocksDB; exit 0,
 * or 1 when a child had to be killed or failed its own stop (the database may not be
 * closed, and whatever runs the node must be able to see that).
 * Each child writes its stdout and stderr into pipes of its own; the supervisor copies
 * whole lines to its own (lines.ts), so lines of different processes never mix.
 *
 * Exclusive addresses: both listening addresses are checked before anything starts (address.ts); a
 * child that still cannot bind reports `bind_failed` and the node stops with one line
 * naming the key, the address and the cause, instead of restarting it forever. The
 * supervisor tells the REST front which roles serve (for /ready), counts restarts, and
 * gathers every process's runtime metrics for /metrics.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Counter, Gauge } from 'prom-client';
import { logger } from '../log.js';
import { LineForwarder, type CutLine } from './lines.js';
import { BindError, checkAddresses } from './address.js';
import { familiesOf, processRegistry } from './process-metrics.js';
import type { NodeConfig } from '../config/options.js';
import type { ChildToSupervisor, GossipIdentity, MetricFamily, Role, Serving, SupervisorToChild } from '../messages/supervisor.js';

const log = logger('supervisor');

/** First restart delay; doubles per consecutive crash up to the cap. */
const RESTART_BASE_MS = 250;
/** A child crashing in a loop is retried at most this often. */
const RESTART_CAP_MS = 10_000;
/** A child that stayed up this long is considered healthy again: its backoff resets. */
const HEALTHY_AFTER_MS = 30_000;
/** SERVICE-SPEC/issue: the whole shutdown finishes within 10 s; children get 9 s. */
const SHUTDOWN_GRACE_MS = 9_000;
/**
 * After the children stopped: the longest wait for their last lines to be forwarded and
 * for our stdout to take them (a stalled reader would otherwise hold the exit forever).
 * Within the 10 s of the whole shutdown: 9 s for the children, at most 1 s for this.
 */
const OUTPUT_FLUSH_MS = 1_000;
/**
 * Longest wait for a child's process metrics in one scrape: a child that does not answer
 * (busy, restarting) is left out of that scrape rather than holding it; far below
 * Prometheus' default 10 s scrape timeout.
 */
const COLLECT_TIMEOUT_MS = 2_000;

const ENTRY: Record<Role, URL> = {
  core: new URL('../core/main.js', import.meta.url),
  rest: new URL('../rest/main.js', import.meta.url),
  gossip: new URL('../gossip/main.js', import.meta.url),
};

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

interface ChildState {
  role: Role;
  proc: ChildProcess | null;
  crashes: number;
  startedAt: number;
  restartTimer: NodeJS.Timeout | null;
  /** Listening (rest, gossip) or ready (core) since its last start. */
  serving: boolean;
  /** The last `fatal` reason it reported, for the startup failure line. */
  fatalReason: string | null;
}

export class Supervisor {
  private readonly children = new Map<Role, ChildState>();
  private stopping = false;
  private readonly ipcPath: string;
  private readonly version = packageVersion();
  private readonly stdout = new LineForwarder(process.stdout);
  private readonly stderr = new LineForwarder(process.stderr);
  /** Set once a listener could not bind: nothing is restarted any more, the node stops. */
  private failure: BindError | null = null;
  private readonly registry = processRegistry('supervisor');
  private readonly restarts = new Counter({ name: 'svc_child_restarts_total', help: 'Child processes restarted by the supervisor after an unexpected exit, by role', labelNames: ['role'], registers: [this.registry] });
  private readonly childUp = new Gauge({ name: 'svc_child_up', help: '1 while the role serves (core ready, REST and gossip listening)', labelNames: ['role'], registers: [this.registry] });
  private nextCollect = 1;
  private readonly collecting = new Map<number, (families: MetricFamily[]) => void>();

  constructor(
    private readonly config: NodeConfig,
    private readonly identity: GossipIdentity,
    /** Other entry files per role (tests: children that only write output). */
    private readonly entries: Partial<Record<Role, URL>> = {},
    /** Called once when the node must stop after startup (a restarted child cannot bind). */
    private readonly onFatal: (e: Error) => void = () => undefined,
  ) {
    const build = new Gauge({ name: 'svc_build_info', help: 'Always 1; the labels say which build runs', labelNames: ['version', 'node_version'], registers: [this.registry] });
    build.set({ version: this.version, node_version: process.version }, 1);
    for (const role of ['core', 'rest', 'gossip'] as const) {
      this.restarts.inc({ role }, 0);
      this.childUp.set({ role }, 0);
    }
    // Abstract-namespace socket (Linux): nothing on disk to clean up after a crash.
    this.ipcPath = `\0svc-core-${config.nodeId}-${process.pid}`;
  }

  async start(): Promise<void> {
    log.info('starting', { node_id: this.config.nodeId, version: this.version, identity: this.identity.stable ? 'stable' : 'ephemeral' });
    // Before the core opens the database: a second node started by mistake on the same
    // addresses stops here, without touching anything.
    await checkAddresses([
      { key: 'rest_address', ...this.config.restAddress },
      { key: 'bind_address', ...this.config.bindAddress },
    ]);
    await this.startChild('core');
    if (this.failure) throw this.failure;
    await Promise.all([this.startChild('rest'), this.startChild('gossip')]);
    if (this.failure) throw this.failure;
    this.startedOnce = true;
    log.info('node running');
  }

  /** Starts a child and resolves once it reports ready (core) or listening (rest, gossip). */
  private startChild(role: Role): Promise<void> {
    // A stop that came while an earlier child started: nothing new is started.
    if (this.stopping) return Promise.resolve();
    const st: ChildState = this.children.get(role) ?? { role, proc: null, crashes: 0, startedAt: 0, restartTimer: null, serving: false, fatalReason: null };
    this.children.set(role, st);
    st.restartTimer = null;
    st.fatalReason = null;
    const proc = fork(this.entries[role] ?? ENTRY[role], [], { serialization: 'advanced', stdio: ['inherit', 'pipe', 'pipe', 'ipc'], execArgv: process.execArgv });
    st.proc = proc;
    // A message sent while the child is going away (a shutdown, a crash) fails with an
    // 'error' event on the ChildProcess; unheard, it would kill the supervisor with exit 1
    // in the middle of a clean stop. The child's exit is handled below either way.
    proc.on('error', (e: Error) => log.debug('child channel error', { role, error: e.message }));
    const cut = (stream: string) => (c: CutLine) => log.warn('child log line cut', { role, child_pid: proc.pid, stream, bytes: c.bytes, head: c.head });
    this.stdout.attach(proc.stdout!, cut('stdout'));
    this.stderr.attach(proc.stderr!, cut('stderr'));
    st.startedAt = Date.now();
    log.info('child started', { role, child_pid: proc.pid });
    const init: SupervisorToChild = { type: 'init', role, config: this.config, ipcPath: this.ipcPath, identity: this.identity, version: this.version };
    proc.send(init);

    return new Promise((resolve, reject) => {
      let settled = false;
      proc.on('message', (m: ChildToSupervisor) => {
        if (m.type === 'ready' || m.type === 'listening') {
          this.setServing(st, true);
          if (!settled) {
            settled = true;
            resolve();
          }
        } else if (m.type === 'fatal') {
          st.fatalReason = m.reason;
          log.error('child reported a fatal error', { role, reason: m.reason });
        } else if (m.type === 'bind_failed') {
          this.fail(new BindError(m.key, m.address, m.errno));
        } else if (m.type === 'metrics') {
          this.collecting.get(m.id)?.(m.families);
        } else if (m.type === 'node_metrics') {
          void this.gatherMetrics().then((families) => {
            if (proc.connected) proc.send({ type: 'node_metrics', id: m.id, families } satisfies SupervisorToChild);
          });
        }
      });
      proc.on('exit', (code, signal) => {
        st.proc = null;
        this.setServing(st, false);
        if (this.stopping) return;
        if (this.failure) {
          // Not restarted: it would only fail the same way.
          if (!settled) {
            settled = true;
            resolve();
          }
          return;
        }
        log.error('child exited', { role, code, signal });
        if (!settled && role === 'core' && !this.startedOnce) {
          // The core failing its first start (a locked or unwritable database, a bad
          // path) fails the same way again: the node stops, naming the reason, instead of
          // restarting it in a loop.
          settled = true;
          reject(new Error(`core exited during startup (${signal ? `killed by ${signal}` : `code ${code}`})${st.fatalReason ? `: ${st.fatalReason}` : ''}`));
          return;
        }
        if (Date.now() - st.startedAt > HEALTHY_AFTER_MS) st.crashes = 0;
        const delay = Math.min(RESTART_BASE_MS * 2 ** st.crashes, RESTART_CAP_MS);
        st.crashes++;
        log.info('restarting child', { role, in_ms: delay, crashes: st.crashes });
        this.restarts.inc({ role });
        st.restartTimer = setTimeout(() => {
          this.startChild(role).catch((e: Error) => log.error('restart failed', { role, error: e }));
        }, delay);
        if (!settled) {
          settled = true;
          // A restarted core failing again is retried with backoff; REST and gossip failing
          // their first start are too (the others do not wait for them).
          if (role !== 'core') resolve();
          else reject(new Error(`core exited during restart (${signal ? `killed by ${signal}` : `code ${code}`})${st.fatalReason ? `: ${st.fatalReason}` : ''}`));
        }
      });
    });
  }

  /** The first bind failure: remembered (no more restarts) and reported once. */
  private fail(e: BindError): void {
    if (this.failure) return;
    this.failure = e;
    // During startup `start()` rejects with it; afterwards the owner is told.
    if (this.startedOnce) this.onFatal(e);
  }

  private startedOnce = false;

  /** True once every role served after `start()`. */
  get started(): boolean {
    return this.startedOnce;
  }

  /** Marks a role serving or not, and tells the REST front (its /ready reports it). */
  private setServing(st: ChildState, serving: boolean): void {
    st.serving = serving;
    this.childUp.set({ role: st.role }, serving ? 1 : 0);
    const rest = this.children.get('rest')?.proc;
    if (rest?.connected) rest.send({ type: 'serving', serving: this.serving() } satisfies SupervisorToChild);
  }

  serving(): Serving {
    return { core: this.children.get('core')?.serving ?? false, rest: this.children.get('rest')?.serving ?? false, gossip: this.children.get('gossip')?.serving ?? false };
  }

  /** The supervisor's own families and those of core and gossip that answer in time. */
  async gatherMetrics(): Promise<MetricFamily[]> {
    const out = await familiesOf(this.registry);
    const asks: Promise<MetricFamily[]>[] = [];
    for (const role of ['core', 'gossip'] as const) {
      const proc = this.children.get(role)?.proc;
      if (!proc?.connected) continue;
      const id = this.nextCollect++;
      asks.push(
        new Promise<MetricFamily[]>((resolve) => {
          const timer = setTimeout(() => {
            this.collecting.delete(id);
            resolve([]);
          }, COLLECT_TIMEOUT_MS);
          this.collecting.set(id, (families) => {
            clearTimeout(timer);
            this.collecting.delete(id);
            resolve(families);
          });
          proc.send({ type: 'collect_metrics', id } satisfies SupervisorToChild);
        }),
      );
    }
    for (const families of await Promise.all(asks)) out.push(...families);
    return out;
  }

  /**
   * Stops every child within SHUTDOWN_GRACE_MS; resolves true when each stopped by itself
   * with exit code 0, false when one had to be killed or reported a failed stop.
   */
  async stop(): Promise<boolean> {
    if (this.stopping) return true;
    this.stopping = true;
    log.info('shutting down');
    for (const st of this.children.values()) if (st.restartTimer) clearTimeout(st.restartTimer);
    const deadline = Date.now() + SHUTDOWN_GRACE_MS;
    const core = this.children.get('core')?.proc;
    if (core?.connected) core.send({ type: 'stopping' } satisfies SupervisorToChild);
    const front = await Promise.all([this.stopChild('rest', deadline), this.stopChild('gossip', deadline)]);
    const clean = (await this.stopChild('core', deadline)) && front.every(Boolean);
    if (clean) log.info('stopped');
    else log.error('stopped uncleanly: a child had to be killed or failed its stop; the database may not have been closed');
    await Promise.all([this.stdout.flushed(OUTPUT_FLUSH_MS), this.stderr.flushed(OUTPUT_FLUSH_MS)]);
    return clean;
  }

  /** Asks a child to stop; true when it exited by itself with code 0 (or was not running). */
  private stopChild(role: Role, deadline: number): Promise<boolean> {
    const proc = this.children.get(role)?.proc;
    if (!proc || proc.exitCode !== null) return Promise.resolve(true);
    return new Promise((resolve) => {
      let killed = false;
      const timer = setTimeout(() => {
        log.warn('child did not stop in time; killing it', { role });
        killed = true;
        proc.kill('SIGKILL');
      }, Math.max(0, deadline - Date.now()));
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (!killed && code !== 0) log.error('child failed its stop', { role, code, signal });
        resolve(!killed && code === 0);
      });
      if (proc.connected) proc.send({ type: 'shutdown' } satisfies SupervisorToChild);
      else proc.kill('SIGTERM');
    });
  }
}

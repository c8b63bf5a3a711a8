/**
 * The supervisor: validates configuration, creates the gossip identity, then starts the
 * core (writer thread + worker pool), and once it is ready the REST front and the gossip
 * process. A child that exits unexpectedly is restarted with exponential backoff.
 * SIGTERM/SIGINT: the front and gossip drain first, then the core closes RocksDB; exit 0.
 * Each child writes its stdout and stderr into pipes of its own; the supervisor copies
 * whole lines to its own (lines.ts), so lines of different processes never mix.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { logger } from '../log.js';
import { LineForwarder, type CutLine } from './lines.js';
import type { NodeConfig } from '../config/options.js';
import type { ChildToSupervisor, GossipIdentity, Role, SupervisorToChild } from '../messages.js';

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
}

export class Supervisor {
  private readonly children = new Map<Role, ChildState>();
  private stopping = false;
  private readonly ipcPath: string;
  private readonly version = packageVersion();
  private readonly stdout = new LineForwarder(process.stdout);
  private readonly stderr = new LineForwarder(process.stderr);

  constructor(
    private readonly config: NodeConfig,
    private readonly identity: GossipIdentity,
    /** Other entry files per role (tests: children that only write output). */
    private readonly entries: Partial<Record<Role, URL>> = {},
  ) {
    // Abstract-namespace socket (Linux): nothing on disk to clean up after a crash.
    this.ipcPath = `\0svc-core-${config.nodeId}-${process.pid}`;
  }

  async start(): Promise<void> {
    log.info('starting', { node_id: this.config.nodeId, version: this.version, identity: this.identity.stable ? 'stable' : 'ephemeral' });
    await this.startChild('core');
    await Promise.all([this.startChild('rest'), this.startChild('gossip')]);
    log.info('node running');
  }

  /** Starts a child and resolves once it reports ready (core) or listening (rest, gossip). */
  private startChild(role: Role): Promise<void> {
    const st: ChildState = this.children.get(role) ?? { role, proc: null, crashes: 0, startedAt: 0, restartTimer: null };
    this.children.set(role, st);
    st.restartTimer = null;
    const proc = fork(this.entries[role] ?? ENTRY[role], [], { serialization: 'advanced', stdio: ['inherit', 'pipe', 'pipe', 'ipc'], execArgv: process.execArgv });
    st.proc = proc;
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
        if ((m.type === 'ready' || m.type === 'listening') && !settled) {
          settled = true;
          resolve();
        }
        if (m.type === 'fatal') log.error('child reported a fatal error', { role, reason: m.reason });
      });
      proc.on('exit', (code, signal) => {
        st.proc = null;
        if (this.stopping) return;
        log.error('child exited', { role, code, signal });
        if (Date.now() - st.startedAt > HEALTHY_AFTER_MS) st.crashes = 0;
        const delay = Math.min(RESTART_BASE_MS * 2 ** st.crashes, RESTART_CAP_MS);
        st.crashes++;
        log.info('restarting child', { role, in_ms: delay, crashes: st.crashes });
        st.restartTimer = setTimeout(() => {
          this.startChild(role).catch((e: Error) => log.error('restart failed', { role, error: e }));
        }, delay);
        if (!settled) {
          settled = true;
          // The first start of the core failing is not fatal: it retries like any crash,
          // but the others wait for it.
          if (role !== 'core') resolve();
          else reject(new Error(`core exited during startup (code ${code})`));
        }
      });
    });
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    log.info('shutting down');
    for (const st of this.children.values()) if (st.restartTimer) clearTimeout(st.restartTimer);
    const deadline = Date.now() + SHUTDOWN_GRACE_MS;
    await Promise.all([this.stopChild('rest', deadline), this.stopChild('gossip', deadline)]);
    await this.stopChild('core', deadline);
    log.info('stopped');
    await Promise.all([this.stdout.flushed(OUTPUT_FLUSH_MS), this.stderr.flushed(OUTPUT_FLUSH_MS)]);
  }

  private stopChild(role: Role, deadline: number): Promise<void> {
    const proc = this.children.get(role)?.proc;
    if (!proc || proc.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        log.warn('child did not stop in time; killing it', { role });
        proc.kill('SIGKILL');
      }, Math.max(0, deadline - Date.now()));
      proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      if (proc.connected) proc.send({ type: 'shutdown' } satisfies SupervisorToChild);
      else proc.kill('SIGTERM');
    });
  }
}

/** Starts the real node (dist/src/main.js) as a child process and reads its JSON log lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/** How long a started node may take to listen on REST and gRPC. */
const STARTUP_TIMEOUT_MS = 60_000;

export interface LogLine {
  level: string;
  target: string;
  msg: string;
  [k: string]: unknown;
}

export class NodeProcess {
  readonly lines: LogLine[] = [];
  readonly raw: string[] = [];
  private waiters: { pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  readonly exited: Promise<number | null>;
  restUrl = '';
  grpcPort = 0;

  constructor(readonly proc: ChildProcess) {
    let buf = '';
    const onText = (chunk: Buffer): void => {
      buf += chunk.toString('utf8');
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.raw.push(line);
        let o: LogLine;
        try {
          o = JSON.parse(line) as LogLine;
        } catch {
          continue;
        }
        this.lines.push(o);
        for (const w of [...this.waiters]) {
          if (w.pred(o)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(o);
          }
        }
      }
    };
    proc.stdout!.on('data', onText);
    proc.stderr!.on('data', (c: Buffer) => this.raw.push(c.toString('utf8')));
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  }

  /** Resolves with the first line (already seen or future) matching `pred`. */
  waitFor(pred: (l: LogLine) => boolean, timeoutMs = 20_000, what = 'log line'): Promise<LogLine> {
    const seen = this.lines.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; last lines:\n${this.raw.slice(-15).join('\n')}`)), timeoutMs);
      this.waiters.push({ pred, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  /** Waits for the next line matching `pred` that arrives after now. */
  waitForNext(pred: (l: LogLine) => boolean, timeoutMs = 20_000, what = 'log line'): Promise<LogLine> {
    const seen = this.lines.length;
    return this.waitFor((l) => this.lines.indexOf(l) >= seen && pred(l), timeoutMs, what);
  }

  /** SIGKILL the whole process group (supervisor and children) at once, like a power cut. */
  async killHard(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.pid) {
      try {
        process.kill(-this.proc.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await this.exited;
  }

  async stop(): Promise<number | null> {
    if (this.proc.exitCode === null) this.proc.kill('SIGTERM');
    return this.exited;
  }
}

export interface StartOptions {
  env?: Record<string, string>;
  dataDir?: string;
  /** Node's own flags for the node's processes (the supervisor passes them on), e.g. --cpu-prof. */
  execArgv?: string[];
}

/** Spawns the node without waiting for it (startNode waits until it listens). */
export function spawnNode(opts: StartOptions = {}): NodeProcess {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-node-'));
  const proc = spawn(process.execPath, [...(opts.execArgv ?? []), join(repoRoot, 'dist/src/main.js')], {
    env: {
      ...process.env,
      SVC_CONFIG: join(repoRoot, 'test/fixtures/empty-config.toml'),
      SVC_REST_ADDRESS: '127.0.0.1:0',
      SVC_BIND_ADDRESS: '127.0.0.1:0',
      SVC_DB_PATH: join(dataDir, 'db'),
      SVC_ESPLORA_URL: 'http://127.0.0.1:9',
      SVC_WORKERS_POOL_SIZE: '1',
      RUST_LOG: 'info',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a test can kill the supervisor and children together.
    detached: true,
  });
  return new NodeProcess(proc);
}

export async function startNode(opts: StartOptions = {}): Promise<NodeProcess> {
  const node = spawnNode(opts);
  // A node that exits while starting fails the start at once, with its last lines.
  const exited = node.exited.then((code) => Promise.reject(new Error(`the node exited (code ${code}) while starting; last lines:\n${node.raw.slice(-15).join('\n')}`)));
  exited.catch(() => undefined);
  try {
    // Generous: a start on a 2-core machine shared with other jobs (load 15+) took over 20 s.
    const rest = await Promise.race([node.waitFor((l) => l.msg === 'listening' && l['role'] === 'rest', STARTUP_TIMEOUT_MS, 'REST listening'), exited]);
    const grpc = await Promise.race([node.waitFor((l) => l.msg === 'listening' && l['role'] === 'gossip', STARTUP_TIMEOUT_MS, 'gossip listening'), exited]);
    node.restUrl = `http://${String(rest['address'])}`;
    node.grpcPort = Number(String(grpc['address']).split(':').pop());
  } catch (e) {
    // A node that never came up is killed, or its open pipes keep the test file alive forever.
    await node.killHard();
    throw e;
  }
  return node;
}

/**
 * A throwaway PostgreSQL server for tests: a real cluster (Debian's `postgresql` package,
 * /usr/lib/postgresql/N/bin) made with initdb in a temp dir, started on a free loopback
 * port with its unix socket in that dir, and removed by `stop()`. initdb refuses to run
 * as root, so when the tests run as root the cluster belongs to the `postgres` system user
 * (created by the package) and the tools run through runuser.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Where Debian installs the server binaries; the highest installed major version is used. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql: apt-get install postgresql (.ci/run does)');
  return join(root, versions[0]!, 'bin');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface PgServer {
  port: number;
  /** Connection URL of the database `svc` (user `postgres`, trust auth on loopback). */
  url: string;
  /** A client on `svc`, for test assertions. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<T>>;
  /** Stops the server (fast shutdown); `start()` brings it back on the same port and data. */
  stopServer(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes the cluster. */
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PgServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const run = (tool: string, args: string[]): string => {
    const cmd = asRoot ? 'runuser' : join(bin, tool);
    const full = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    return execFileSync(cmd, full, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  if (asRoot) {
    chmodSync(dir, 0o755);
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    // postgres itself (not pg_ctl), so the test owns the process; fsync off: a test cluster.
    const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=40'];
    proc = asRoot ? spawn('runuser', ['-u', 'postgres', '--', join(bin, 'postgres'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let errText = '';
    // Ready when the server logs so (it writes its log to stderr without a log collector).
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres did not start within 30 s: ${errText}`)), 30_000);
      proc!.stderr!.on('data', (d: Buffer) => {
        errText = (errText + d.toString()).slice(-4000);
        if (errText.includes('ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc!.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`postgres exited (${code}) while starting: ${errText}`));
      });
    });
  };
  const stopServer = async (): Promise<void> => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    // SIGINT: PostgreSQL's fast shutdown (disconnects clients, stops at once).
    try {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    } catch {
      p.kill('SIGKILL');
    }
    await exited;
  };
  await start();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE svc');
  await admin.end();
  const url = `postgres://postgres@127.0.0.1:${port}/svc`;
  let client: pg.Client | null = null;
  const query: PgServer['query'] = async (text, values) => {
    if (!client) {
      client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
    }
    try {
      return await client.query(text, values as unknown[]);
    } catch (e) {
      // The server went away under the client: the next query connects again.
      if (!(e as { code?: string }).code) {
        await client.end().catch(() => undefined);
        client = null;
      }
      throw e;
    }
  };
  return {
    port,
    url,
    query,
    stopServer: async () => {
      await client?.end().catch(() => undefined);
      client = null;
      await stopServer();
    },
    start,
    stop: async () => {
      await client?.end().catch(() => undefined);
      client = null;
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

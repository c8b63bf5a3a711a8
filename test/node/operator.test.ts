/**
 * Exclusive addresses and store with the real node: a second node started on a taken REST or gRPC address, or
 * on a database another node holds, stops before it serves anything, with one line
 * naming the cause, and exit code 1 (no restart loop).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RestServer } from '../../src/rest/http.js';
import { spawnNode, startNode, type LogLine } from '../helpers/node-process.js';
import { repoRoot } from '../helpers/paths.js';

/** Runs the node to its exit (it must not come up); returns its exit code and log lines. */
async function runToExit(env: Record<string, string>, dataDir: string): Promise<{ code: number | null; lines: LogLine[]; raw: string[] }> {
  const node = spawnNode({ env, dataDir });
  const code = await node.exited;
  return { code, lines: node.lines, raw: node.raw };
}

function listenNet(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

test('a REST address another server holds: the node exits 1 before opening its database, one line naming key, address and cause', async () => {
  // The holder is a uWS server like the node's own REST front.
  const holder = new RestServer([{ method: 'GET', pattern: '/health', handler: () => ({ status: 200, body: { holder: true } }) }]);
  const port = await holder.listen('127.0.0.1', 0);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bind-'));
  try {
    const r = await runToExit({ SVC_REST_ADDRESS: `127.0.0.1:${port}` }, dataDir);
    assert.equal(r.code, 1, r.raw.join('\n'));
    const errors = r.lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]!.msg, `startup failed: cannot listen on rest_address 127.0.0.1:${port}: address already in use (another process listens there) (EADDRINUSE)`);
    assert.deepEqual([errors[0]!['key'], errors[0]!['address'], errors[0]!['errno']], ['rest_address', `127.0.0.1:${port}`, 'EADDRINUSE']);
    assert.equal(r.lines.filter((l) => l.msg === 'child started').length, 0, 'no process was started');
    assert.equal(existsSync(join(dataDir, 'db')), false, 'the database was not touched');
    // Every connection still reaches the holder.
    for (let i = 0; i < 4; i++) assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/health`)).json(), { holder: true });
  } finally {
    await holder.drain(0);
  }
});

test('a gRPC address another process holds: the node exits 1 before opening its database, naming bind_address', async () => {
  const { server, port } = await listenNet();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bind-'));
  try {
    const r = await runToExit({ SVC_BIND_ADDRESS: `127.0.0.1:${port}` }, dataDir);
    assert.equal(r.code, 1, r.raw.join('\n'));
    const errors = r.lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.deepEqual([errors[0]!['key'], errors[0]!['address'], errors[0]!['errno']], ['bind_address', `127.0.0.1:${port}`, 'EADDRINUSE']);
    assert.equal(existsSync(join(dataDir, 'db')), false);
    assert.equal(r.raw.some((l) => l.includes('    at ')), false, 'no stack trace');
  } finally {
    server.close();
  }
});

test('a database another node holds: the second node exits 1 naming the lock, never "[object Object]"; the first keeps serving, and the HEALTHCHECK command finds it at its configured address', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  const first = await startNode({ dataDir });
  try {
    const r = await runToExit({}, dataDir);
    assert.equal(r.code, 1, r.raw.join('\n'));
    const last = r.lines.filter((l) => l.level === 'error').pop()!;
    assert.match(last.msg, /^startup failed: core exited during startup \(code 1\): cannot open the database at .*db: .*lock/i);
    assert.equal(r.raw.some((l) => l.includes('[object Object]')), false, r.raw.join('\n'));
    assert.equal(r.lines.filter((l) => l.msg === 'restarting child').length, 0, 'no restart loop');
    assert.equal((await fetch(`${first.restUrl}/health`)).status, 200);
    // Docker's HEALTHCHECK command finds the node where the configuration puts it.
    const probe = (rest: string): number | null =>
      spawnSync(process.execPath, [join(repoRoot, 'dist/src/healthcheck.js')], { env: { ...process.env, SVC_CONFIG: join(repoRoot, 'test/fixtures/empty-config.toml'), SVC_REST_ADDRESS: rest }, encoding: 'utf8' }).status;
    assert.equal(probe(first.restUrl.replace('http://', '')), 0);
    const { server, port } = await listenNet();
    server.close();
    assert.equal(probe(`127.0.0.1:${port}`), 1);
  } finally {
    await first.stop();
  }
});

test('a data directory of the earlier storage binding: the node exits 1 with one line saying to run migrate-store, and changes nothing', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-legacy-'));
  try {
    cpSync(join(repoRoot, 'test/fixtures/legacy-store/db'), join(dataDir, 'db'), { recursive: true });
    const before = readdirSync(join(dataDir, 'db')).sort();
    const r = await runToExit({}, dataDir);
    assert.equal(r.code, 1, r.raw.join('\n'));
    const errors = r.lines.filter((l) => l.level === 'error');
    assert.match(errors.pop()!.msg, /^startup failed: core exited during startup \(code 1\): cannot open the database at .*db: it was written by the earlier storage engine \(rocksdb 5\.2\.1, Snappy-compressed tables\).*run `npm run migrate-store -- <db_path>` under Node 20/);
    assert.equal(r.lines.filter((l) => l.msg === 'restarting child').length, 0, 'no restart loop');
    assert.deepEqual(readdirSync(join(dataDir, 'db')).filter((f) => f !== 'LOCK').sort(), before.filter((f) => f !== 'LOCK'));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// The timeout turns the old hang into a failure rather than a stalled suite.
test('a db_path under a directory where nothing can be created (/proc): the node exits 1 with one line naming the directory and the cause', { timeout: 60_000 }, async () => {
  // The kernel refuses new entries under /proc with ENOENT although /proc exists; Node's
  // recursive mkdir retried there forever and the node neither started nor exited.
  // The database's own directory as well as a parent: one right under /proc (or a process's).
  const cases = [
    ['/proc/svc-test/db', '/proc/svc-test'],
    ['/proc/db', '/proc/db'],
    ['/proc/self/db', '/proc/self/db'],
  ] as const;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-procdb-'));
  try {
    const runs = await Promise.all(cases.map(([db], i) => runToExit({ SVC_DB_PATH: db }, join(dataDir, String(i)))));
    runs.forEach((r, i) => {
      const [db, dir] = cases[i]!;
      assert.equal(r.code, 1, r.raw.join('\n'));
      const errors = r.lines.filter((l) => l.level === 'error');
      assert.equal(errors.at(-1)!.msg, `startup failed: core exited during startup (code 1): cannot open the database at ${db}: cannot create the directory ${dir} (ENOENT: no such file or directory)`, JSON.stringify(errors));
      assert.equal(r.lines.filter((l) => l.msg === 'restarting child').length, 0, 'no restart loop');
      assert.equal(r.raw.some((l) => l.includes('    at ')), false, 'no stack trace');
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('`npm run devnet` refuses to start when its ports are taken, before touching the devnet data directory', async () => {
  const { server, port } = await listenNet();
  // What a running devnet's node keeps there; the old devnet wiped it at every start.
  const dataDir = join(repoRoot, 'data', 'devnet');
  mkdirSync(dataDir, { recursive: true });
  const marker = join(dataDir, `still-here-${process.pid}`);
  writeFileSync(marker, 'a running devnet owns this directory');
  try {
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist/src/devnet/main.js')], {
      env: { ...process.env, SVC_DEVNET_PORT: '0', SVC_REST_ADDRESS: `127.0.0.1:${port}`, SVC_BIND_ADDRESS: '127.0.0.1:0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 1, `${r.stdout}${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^devnet not started: cannot listen on SVC_REST_ADDRESS 127\\.0\\.0\\.1:${port}: address already in use .*Nothing was changed\\.$`, 'm'));
    assert.equal(existsSync(marker), true, 'the data directory was left alone');
  } finally {
    rmSync(marker, { force: true });
    server.close();
  }
});

/**
 * REST front throughput: field reads and /health per second through the real node's
 * uWebSockets.js front, against a bare uWebSockets.js hello-world measured in the same
 * run with the same load generator (bench/loadgen.ts, a separate process: raw keep-alive
 * sockets, CONNS connections, DEPTH requests in flight on each). Rounds alternate
 * ceiling and subject so machine noise hits both alike.
 *
 * The node runs as in production (supervisor, core, writer thread, REST process) on a
 * devnet chain, its log (access log at info included) written to a file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, stat, type Figure, type Stat } from './harness.js';
import { compileFixture, devnetEnv, fund, startDevnet, testWallet } from '../test/helpers/devnet-node.js';
import { SvcClient } from '@svc-node/client/sdk';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Load shape: enough connections and pipelining to saturate one uWS thread from one client thread. */
const CONNS = 32;
const DEPTH = 8;
const ROUNDS = 5;
const WINDOW_MS = 1000;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** One load run; `cpuPid`: also the server's CPU microseconds per answer over the run. */
async function loadgen(port: number, path: string, depth = DEPTH, cpuPid?: number): Promise<{ rate: number; non200: number; errors: number; cpuUsPerReq: number }> {
  const c0 = cpuPid ? cpuSeconds(cpuPid) : 0;
  const r = await loadgenRun(port, path, depth);
  const cpuUsPerReq = cpuPid ? ((cpuSeconds(cpuPid) - c0) * 1e6) / Math.max(1, r.total) : 0;
  return { ...r, cpuUsPerReq };
}

function loadgenRun(port: number, path: string, depth: number): Promise<{ rate: number; total: number; non200: number; errors: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(here, 'loadgen.js'), '127.0.0.1', String(port), path, String(CONNS), String(depth), '300', String(WINDOW_MS), '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.once('exit', () => {
      try {
        const j = JSON.parse(out) as { rates: number[]; total: number; non200: number; errors: number };
        resolve({ rate: j.rates[0]!, total: j.total, non200: j.non200, errors: j.errors });
      } catch (e) {
        reject(new Error(`loadgen output: ${out} (${(e as Error).message})`));
      }
    });
  });
}

async function waitForLine(file: string, pred: (o: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        if (pred(o)) return o;
      } catch {
        /* partial line */
      }
    }
    if (Date.now() > deadline) throw new Error(`bench node: timed out waiting in ${file}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function until<T>(f: () => Promise<T | null>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export default async function run(): Promise<Figure[]> {
  const devnet = await startDevnet();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-rest-'));
  const logFile = join(dir, 'node.log');
  const fd = openSync(logFile, 'w');
  const prof = process.env['REST_BENCH_PROFILE_DIR'];
  const node: ChildProcess = spawn(process.execPath, [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), join(repoRoot, 'dist/src/main.js')], {
    env: {
      ...process.env,
      SVC_CONFIG: join(repoRoot, 'test/fixtures/empty-config.toml'),
      SVC_REST_ADDRESS: '127.0.0.1:0',
      SVC_BIND_ADDRESS: '127.0.0.1:0',
      SVC_DB_PATH: join(dir, 'db'),
      RUST_LOG: 'info',
      ...devnetEnv(devnet),
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const hello = spawn(process.execPath, [join(here, 'hello-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const helloPid = hello.pid!;
    const helloPort = await new Promise<number>((resolve) => hello.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    const rest = await waitForLine(logFile, (o) => o['msg'] === 'listening' && o['role'] === 'rest', 30_000);
    const restUrl = `http://${String(rest['address'])}`;
    const restPort = Number(String(rest['address']).split(':').pop());
    const restPid = Number(rest['pid']);
    await waitForLine(logFile, (o) => o['msg'] === 'anchored block journal', 30_000);

    // State to read: the Fields fixture with a few entries.
    const wallet = testWallet(9);
    await fund(devnet, wallet, 4);
    const svc = new SvcClient({ nodeUrl: restUrl, esploraUrl: devnet.url, wallet, feeRate: 1 });
    const artifact = compileFixture('fields.svc');
    await until(async () => ((await (await fetch(`${restUrl}/node_status`)).json()) as { processed_height: number }).processed_height === devnet.chain.height || null, 30_000, 'sync');
    const dep = await svc.deploy(artifact);
    devnet.chain.mine(1);
    await until(async () => ((await fetch(`${restUrl}/v2/${dep.contractId}/total`)).status === 200 ? true : null), 30_000, 'deploy');
    const c = await svc.call({
      contractId: dep.contractId,
      function: 'set_all',
      args: [
        { type: 'u64', value: 5n },
        { type: 'i64', value: -7n },
        { type: 'u128', value: 1n << 100n },
        { type: 'string', value: 'bench' },
        { type: 'bytes', value: new Uint8Array([0xab, 0xcd]) },
      ],
      abi: artifact.abi,
    });
    devnet.chain.mine(1, [c.anchor.txid]);
    const fieldPath = `/v2/${dep.contractId}/by_u64/5`;
    await until(async () => (((await (await fetch(`${restUrl}${fieldPath}`)).json()) as { exists: boolean }).exists ? true : null), 30_000, 'call executed');
    const proofPath = `${fieldPath}?proof=true`;

    const samples = { hello: [] as number[], field: [] as number[], health: [] as number[], proof: [] as number[] };
    const cpu = { hello: [] as number[], field: [] as number[], health: [] as number[] };
    let bad = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const h = await loadgen(helloPort, '/health', DEPTH, helloPid);
      const f = await loadgen(restPort, fieldPath, DEPTH, restPid);
      const g = await loadgen(restPort, '/health', DEPTH, restPid);
      cpu.hello.push(h.cpuUsPerReq);
      cpu.field.push(f.cpuUsPerReq);
      cpu.health.push(g.cpuUsPerReq);
      // Answered asynchronously: uWebSockets.js 20.0.8 closes a connection that pipelines
      // a request behind a pending asynchronous answer, so this one runs without pipelining.
      const p = await loadgen(restPort, proofPath, 1);
      bad += f.non200 + g.non200 + p.non200 + f.errors + g.errors + p.errors;
      samples.hello.push(h.rate);
      samples.field.push(f.rate);
      samples.health.push(g.rate);
      samples.proof.push(p.rate);
    }
    if (bad > 0) throw new Error(`${bad} non-200 answers or socket errors during the bench`);
    const ceiling: { name: string } & Stat = { name: 'bare uWebSockets.js hello-world', ...stat(samples.hello) };
    const load = `load: ${CONNS} keep-alive connections x ${DEPTH} pipelined, separate process`;
    return [
      figure({ name: 'field read GET /v2/{id}/{field}/{arg} (read replica)', unit: 'req/s', value: stat(samples.field), ceiling, minRatio: 0.5, target: '>= 50% of hello-world', notes: load }),
      figure({ name: 'GET /health', unit: 'req/s', value: stat(samples.health), ceiling, notes: load }),
      // Server CPU per answer: robust to the machine's noise (other processes share the cores).
      // For "lower is better" the ratio is value / ceiling, target at most 2 (= 50% of the rate on a dedicated core).
      figure({ name: 'REST process CPU per field read (read replica)', unit: 'us/req', value: stat(cpu.field), ceiling: { name: 'hello-world CPU per request', ...stat(cpu.hello) }, maxRatio: 2, target: '<= 2x hello-world CPU', notes: 'from /proc/<pid>/stat over each run' }),
      figure({ name: 'REST process CPU per GET /health', unit: 'us/req', value: stat(cpu.health), ceiling: { name: 'hello-world CPU per request', ...stat(cpu.hello) }, notes: 'from /proc/<pid>/stat over each run' }),
      figure({ name: 'field read with ?proof=true (REST -> core -> writer, 2 IPC hops)', unit: 'req/s', value: stat(samples.proof), ceiling, notes: `load: ${CONNS} keep-alive connections, no pipelining` }),
    ];
  } finally {
    hello.kill();
    node.kill('SIGTERM');
    await new Promise((r) => node.once('exit', r));
    await devnet.close();
  }
}

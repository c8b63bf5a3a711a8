/**
 * Client: one client process submitting against one node (docs/PERFORMANCE.md,
 * "Client"). Figure: calls accepted per second by a Submitter (bench/client-load.ts: each
 * call built, signed, anchored, its coin checked, posted, then its anchor broadcast to the
 * devnet chain) in its own process. Ceiling, same run, same node: the node's own intake,
 * the same kind of call (Bank `mint` with anchor_tx and coin evidence) posted ready-made
 * from 32 connections by the raw load generator (bench/intake-load.ts, a small fraction
 * of the node's CPU per call), which broadcasts each accepted call's anchor to the same
 * chain as the submitter does: the chain (this process) verifies and holds one anchor per
 * call on both sides. Runs alternate, so load from other processes on the shared cores
 * falls on both sides. Settings:
 * - cores apart (the target, >= 0.9: the client is never what limits an indexer): the
 *   node's processes and threads pinned to the last core in both runs, the client (or the
 *   load generator) alone on core 0, as an indexer's client runs beside a node, not
 *   inside its cores; the chain stand-in (a remote endpoint in use, costing neither) on
 *   the node's core, where it takes the same share in both runs;
 * - cores apart with the chain on core 0 beside the client (for information): the
 *   chain's work per call, about a third of the client's, charged to the client;
 * - cores shared (for information): everything on the machine's cores at once, so the
 *   client's CPU is taken from the node's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BankCalls } from './lib/bank-calls.js';
import { figure, stat, type Figure } from './harness.js';
import { cpuPerUnitUs, nodeCpuSeconds, nodeProcessIds } from './lib/node-cpu.js';
import { startDevnet, startDevnetNode, waitSynced } from '../test/helpers/devnet-node.js';
import { repoRoot } from '../test/helpers/paths.js';
import { sha256 } from '@svc-node/protocol/hash';

const exec = promisify(execFile);

/**
 * Pins every thread of each process to `cpus` (taskset -a: threads started later inherit
 * it). Linux only, like the benches' machines.
 */
async function pin(pids: number[], cpus: string): Promise<void> {
  for (const pid of pids) await exec('taskset', ['-a', '-cp', cpus, String(pid)]);
}
/** Calls per measured run; runs of each side, alternating. */
const CALLS_PER_RUN = 600;
const RUNS = Number(process.env["SVC_BENCH_CLIENT_RUNS"] ?? 3);
/** The rounds above run in three settings: cores shared, then cores apart with the chain on the client's core, then on the node's. */
const SETTINGS = 3;
/** Unmeasured calls first on each side (V8 compiles the hot paths of node and client alike). */
const WARMUP_CALLS = 300;
/** The load generator's connections, as the intake bench: enough to keep every pool thread busy. */
const CONNECTIONS = 32;
/** The submitter's calls in flight: as many as the load generator's connections, so neither side is held to less concurrency. */
const IN_FLIGHT = 32;

export default async function run(): Promise<Figure[]> {
  const threads = availableParallelism();
  const devnet = await startDevnet();
  const dir = mkdtempSync(join(tmpdir(), 'svc-client-bench-'));
  // SVC_BENCH_NODE_ARGS (space-separated) goes to the node's processes, as SVC_BENCH_CLIENT_ARGS to the client's.
  const nodeArgs = (process.env['SVC_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a.length > 0);
  const node = await startDevnetNode(devnet, { execArgv: nodeArgs, env: { SVC_WORKERS_POOL_SIZE: String(threads), SVC_BLOCK_CHECK_INTERVAL_S: '0.2' } });
  try {
    // The ceiling's calls: ready-made bodies from BankCalls' wallet. The client's coins: another wallet's, in fan-outs of 100.
    const bank = new BankCalls(devnet.chain, 'client bench ceiling');
    bank.fund(WARMUP_CALLS + CALLS_PER_RUN * RUNS * SETTINGS);
    const label = 'client bench submitter';
    const clientCoins = new BankCalls(devnet.chain, label);
    clientCoins.fund(WARMUP_CALLS + CALLS_PER_RUN * RUNS * SETTINGS);
    const dep = bank.deploy();
    const reg = await fetch(`${node.restUrl}/deploy_contract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(dep.body) });
    if (reg.status !== 202) throw new Error(`deploy refused: ${await reg.text()}`);
    devnet.chain.mine(1);
    await waitSynced(node, devnet, 60_000);

    /** Core 0 when the node is pinned to the last core; else anywhere. */
    let clientCpus: string | null = null;
    const launch = (args: string[]): Promise<{ stdout: string }> =>
      clientCpus === null ? exec(process.execPath, args, { maxBuffer: 1 << 20 }) : exec('taskset', ['-c', clientCpus, process.execPath, ...args], { maxBuffer: 1 << 20 });
    /** This process's CPU (the devnet chain's server: the node's and the client's requests to it) per call, in µs, over one launch. */
    const devnetCpu = async <T>(calls: number, f: () => Promise<T>): Promise<{ r: T; us: number }> => {
      const c0 = process.cpuUsage();
      const r = await f();
      const c = process.cpuUsage(c0);
      return { r, us: (c.user + c.system) / calls };
    };
    /** The node's CPU per call over the load generator's launch only (not while this process builds the bodies). */
    const ceilingRun = async (name: string, n: number): Promise<{ rate: number; devnetUs: number; nodeUs: number }> => {
      // Anchors not yet in the chain's mempool: the load generator broadcasts each once the node took its call, as the submitter does.
      const bodies = Array.from({ length: n }, () => bank.next(true, false));
      const file = join(dir, `bodies-${name}.json`);
      writeFileSync(file, JSON.stringify(bodies));
      const node0 = nodeCpuSeconds(node.proc.pid!);
      const { r: out, us } = await devnetCpu(n, () => launch([join(repoRoot, 'dist/bench/intake-load.js'), node.restUrl, file, String(CONNECTIONS), devnet.url]));
      const nodeUs = cpuPerUnitUs(node0, nodeCpuSeconds(node.proc.pid!), n)['total']!;
      const res = JSON.parse(out.stdout) as { statuses: Record<string, number>; broadcast: Record<string, number>; accepted_per_s: number };
      if ((res.statuses['202'] ?? 0) !== n) throw new Error(`intake refused calls: ${JSON.stringify(res.statuses)}`);
      if ((res.broadcast['200'] ?? 0) !== n) throw new Error(`the chain refused anchors: ${JSON.stringify(res.broadcast)}`);
      return { rate: res.accepted_per_s, devnetUs: us, nodeUs };
    };
    const secret = Buffer.from(sha256(Buffer.from(`${label} wallet`))).toString('hex');
    // SVC_BENCH_CLIENT_ARGS (space-separated) goes to the client process, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof'.
    const clientArgs = (process.env['SVC_BENCH_CLIENT_ARGS'] ?? '').split(' ').filter((a) => a.length > 0);
    const clientRun = async (warmup: number, n: number): Promise<{ rate: number; cpuUs: number; devnetUs: number }> => {
      const { r: out, us } = await devnetCpu(warmup + n, () => launch([...clientArgs, join(repoRoot, 'dist/bench/client-load.js'), node.restUrl, devnet.url, secret, dep.contractId, String(warmup), String(n), String(IN_FLIGHT)]));
      const res = JSON.parse(out.stdout) as { fates: Record<string, number>; accepted_per_s: number; cpu_us_per_call: number; sys_us_per_call: number };
      if (process.env['SVC_BENCH_CLIENT_TRACE']) console.error(`client run: ${out.stdout.trim()}; devnet ${us.toFixed(0)} us/call`);
      if ((res.fates['accepted'] ?? 0) !== n) throw new Error(`the submitter did not get every call accepted: ${JSON.stringify(res.fates)}`);
      return { rate: res.accepted_per_s, cpuUs: res.cpu_us_per_call, devnetUs: us };
    };
    await ceilingRun('warmup', WARMUP_CALLS);
    /** Alternating runs of each side; the client's first run carries the longer warm-up. */
    let first = true;
    const rounds = async (): Promise<{ ceilings: number[]; rates: number[]; cpu: number[]; nodeCpu: number[]; nodeCpuCeiling: number[]; devnetCeiling: number[]; devnetClient: number[] }> => {
      const o = { ceilings: [] as number[], rates: [] as number[], cpu: [] as number[], nodeCpu: [] as number[], nodeCpuCeiling: [] as number[], devnetCeiling: [] as number[], devnetClient: [] as number[] };
      for (let r = 0; r < RUNS; r++) {
        const ceiling = await ceilingRun(String(r), CALLS_PER_RUN);
        o.nodeCpuCeiling.push(ceiling.nodeUs);
        o.ceilings.push(ceiling.rate);
        o.devnetCeiling.push(ceiling.devnetUs);
        // Each client run is its own process: its warm-up is in it (the node's CPU is counted over the whole run, warm-up included).
        const [warmup, measured] = first ? [WARMUP_CALLS, CALLS_PER_RUN] : [100, CALLS_PER_RUN - 100];
        first = false;
        const cpu0 = nodeCpuSeconds(node.proc.pid!);
        const c = await clientRun(warmup, measured);
        o.nodeCpu.push(cpuPerUnitUs(cpu0, nodeCpuSeconds(node.proc.pid!), warmup + measured)['total']!);
        o.rates.push(c.rate);
        o.cpu.push(c.cpuUs);
        o.devnetClient.push(c.devnetUs);
      }
      return o;
    };
    const shared = await rounds();
    const figures: Figure[] = [];
    if (threads >= 2) {
      const last = String(threads - 1);
      await pin(nodeProcessIds(node.proc.pid!), last);
      clientCpus = '0';
      // The chain (this process) on the client's core, then on the node's: in both runs of a setting alike.
      await pin([process.pid], '0');
      const chainWithClient = await rounds();
      await pin([process.pid], last);
      const chainWithNode = await rounds();
      figures.push(
        figure({
          name: `client, cores apart: calls accepted from one Submitter process alone on core 0 (build, sign, anchor, coin check, post, broadcast; ${IN_FLIGHT} in flight), the node and the devnet chain on core ${last}`,
          unit: 'calls/s',
          value: stat(chainWithNode.rates),
          ceiling: { name: `the node's intake on core ${last} beside the same chain work, same calls ready-made from ${CONNECTIONS} connections (raw load generator alone on core 0, broadcasting each accepted anchor)`, ...stat(chainWithNode.ceilings) },
          minRatio: 0.9,
          target: '>= 0.9 of the node intake',
        }),
        figure({
          name: `client, cores apart, the devnet chain on the client's core: calls accepted from one Submitter process on core 0 beside the chain, the node alone on core ${last}`,
          unit: 'calls/s',
          value: stat(chainWithClient.rates),
          ceiling: { name: `the node's intake alone on core ${last}, same calls ready-made (raw load generator on core 0 beside the chain, broadcasting each accepted anchor)`, ...stat(chainWithClient.ceilings) },
          target: "for information: the chain's work per call charged to the client's core",
        }),
        figure({
          name: `client, cores apart: CPU of the Submitter process per accepted call (alone on core 0)`,
          unit: 'us/call',
          value: stat(chainWithNode.cpu),
          ceiling: { name: `CPU of the node (all its processes, on core ${last}) per call at its ceiling (the load generator's runs)`, ...stat(chainWithNode.nodeCpuCeiling) },
          maxRatio: 1,
          target: '<= 1: on a core of its own the client keeps up with a node on one (a rate ratio less bent by other load)',
        }),
        figure({
          name: "client, cores apart: the devnet chain's CPU (this process) per call during the client's runs (the client's broadcasts and reads, the node's polls)",
          unit: 'us/call',
          value: stat([...chainWithNode.devnetClient, ...chainWithClient.devnetClient]),
          ceiling: { name: "the same during the ceiling's runs (the load generator's broadcasts, the node's polls)", ...stat([...chainWithNode.devnetCeiling, ...chainWithClient.devnetCeiling]) },
          target: 'for information: ~1, the same chain work on both sides',
        }),
      );
    }
    figures.push(
      figure({
        name: `client, cores shared: calls accepted from one Submitter process (${IN_FLIGHT} in flight), client, node and devnet chain on the same ${threads} cores`,
        unit: 'calls/s',
        value: stat(shared.rates),
        ceiling: { name: `the node's intake, same calls ready-made from ${CONNECTIONS} connections (raw load generator, broadcasting each accepted anchor)`, ...stat(shared.ceilings) },
        target: "for information: the client's CPU is taken from the node's",
      }),
      figure({
        name: 'client: CPU of the Submitter process per accepted call (cores shared)',
        unit: 'us/call',
        value: stat(shared.cpu),
        ceiling: { name: 'CPU of the node (all its processes) per call it accepted from the Submitter', ...stat(shared.nodeCpu) },
        target: 'lower is better; ratio < 1: on equal cores the client is not what limits',
      }),
    );
    return figures;
  } finally {
    await node.stop();
    await devnet.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

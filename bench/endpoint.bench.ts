/**
 * Cost at the chain-data endpoint: requests and bytes a light node
 * (chain_mode "light") asks of the endpoint per unit of its own work, counted by the
 * devnet's own per-route counters (GET /devnet/counters, POST /devnet/counters/reset).
 * Every node is a real node process; each has its own HTTP endpoint over one shared
 * devnet chain, so each node's requests are counted apart.
 *
 * 1. Units of work, three nodes: L1 (light; takes the REST calls), L2 (light, peer of
 *    L1), B (chain_mode "blocks", peer of L1). Requests per call accepted with
 *    `anchor_tx` (ideal 0) and without (ideal 1), per payload received by gossip (ideal
 *    0), per block at the tip (ideal <= 1). Ratio: against the block-reading node B doing
 *    the same work in the same run (calls sent to B itself, payloads B received from L1,
 *    blocks B followed).
 * 2. A fresh light node catching up over HEADERS blocks with PAYLOADS payloads held by its
 *    peer P: endpoint requests (goal <= 50), bytes (goal < 50 MB), wall time (goal < 3
 *    min); payloads/s against BIP-340 verifies x threads measured in the same run (goal:
 *    at least half); the CPU both nodes spent per payload against one verify's (how far
 *    from the goal, in a form the machine's noise moves less), and against the floor, the
 *    work any design does per payload (bench/lib/payload-floor.ts), measured after the
 *    catch-up with both nodes stopped: how much of that CPU is the pipeline.
 * 3. The largest sustained call rate within a 700-requests-per-hour budget: the devnet in
 *    public mode (700 an hour, burst 10, per client address), the node with its default
 *    budget (DEFAULT_BUDGET) and block check interval (60 s), blocks every 10
 *    minutes, calls sent with anchors as fast as the node takes them; every request the
 *    endpoint answers counts (blocks at the tip, intake, deferred checks, 429s).
 *
 * Tip following runs on a clock TIME_SCALE times faster than Bitcoin's (blocks every
 * 600/TIME_SCALE s, polls every 60/TIME_SCALE s, budgets TIME_SCALE times larger, the
 * public mode's bucket on the same clock), so an hour of blocks takes a minute: the
 * requests per block and per hour of blocks are those of the real cadence. Calls are not
 * scaled: their rate is the node's real one.
 */
import type { NodeStatusAnswer } from '@svc-node/client/answers';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as ecc from 'tiny-secp256k1';
import { DevnetChain, DevnetEndpoint, type DevnetCounters, type PublicModeOptions } from '../src/devnet/chain-server.js';
import { DEFAULT_BUDGET } from '../src/chain/budget.js';
import { sha256 } from '@svc-node/protocol/hash';
import { figure, measureRate, stat, type Figure, type Stat } from './harness.js';
import { cpuPerUnitUs, nodeCpuSeconds, splitText } from './lib/node-cpu.js';
import { repoRoot } from '../test/helpers/ledger-fixture.js';
import { BankCalls, type CallBody } from './lib/bank-calls.js';
import { payloadFloor, syncedCalls } from './lib/payload-floor.js';
import { startNode, type NodeProcess } from '../test/helpers/node-process.js';
import { freePort, gossipEnv } from '../test/helpers/gossip.js';

const exec = promisify(execFile);
const env = (name: string, dflt: number): number => Number(process.env[name] ?? dflt);

/** Bitcoin's clock divided by this for tip following (see the header). */
const TIME_SCALE = env('ENDPOINT_BENCH_TIME_SCALE', 60);
const BLOCK_S = 600 / TIME_SCALE;
/** The node's default block_check_interval_s (60), scaled. */
const POLL_S = 60 / TIME_SCALE;
/** The fresh node's block check interval in the catch-up: the default (block_check_interval_s). */
const CATCHUP_POLL_S = 60;
/** Calls per kind in part 1. */
const UNIT_CALLS = 40;
/** Blocks followed at the tip in part 1: the first confirms every pending call. */
const TIP_BLOCKS = 6;
/**
 * Empty blocks mined before them, not counted: a light node starts polling on its own
 * and lets peers lead once one of their tip announcements brought a block first
 * (src/core/following/); the figure is the steady state after that.
 */
const TIP_WARMUP_BLOCKS = 6;
/** The default gossip.heartbeat_interval_s (15), scaled: announcements travel in heartbeats. */
const HEARTBEAT_S = 15 / TIME_SCALE;
/** Part 2: a year of blocks and the payloads the fresh node's peer holds. */
const HEADERS = env('ENDPOINT_BENCH_HEADERS', 52_560);
const PAYLOADS = env('ENDPOINT_BENCH_PAYLOADS', 100_000);
/** Where the fresh node of the catch-up writes CPU profiles (all its processes and threads), its peer's in peer/ (the peer's span its loading too; the catch-up is their last seconds); none when unset. */
const PROFILE_DIR = process.env['ENDPOINT_BENCH_PROFILE_DIR'];
/** Where each node's log goes, as <node name>.log (a run that stalls is read there); none by default. */
const LOG_DIR = process.env['ENDPOINT_BENCH_LOG_DIR'];
/** Calls per block while the peer takes them (a full mainnet block holds 2,500-4,000 transactions). */
const CALLS_PER_BLOCK = 2_000;
/** Calls the floor is measured over (the first blocks' worth): enough for stable per-payload figures. */
const FLOOR_SAMPLE = 8_192;
/** Part 3: an hour of blocks. */
const RATE_BLOCKS = 6;
/** Part 3: calls built before the run (the run ends early if the node takes them all). */
const RATE_CALLS = env('ENDPOINT_BENCH_RATE_CALLS', 12_000);
/** Concurrent REST submissions (one process, keep-alive). */
const SUBMIT_CONCURRENCY = 16;
/** The public endpoint's terms (src/devnet/chain-server.ts PUBLIC_MODE_DEFAULTS). */
const PUBLIC: PublicModeOptions = { requestsPerHour: 700, burst: 10 };
/** The node's default budget. */
const NODE_BUDGET = DEFAULT_BUDGET;
/** An endpoint with no budget worth the name (setup, and nodes whose cost is only counted). */
const UNLIMITED = { requestsPerHour: 1_000_000_000, burst: 100_000 };

/** One HTTP endpoint over the shared chain, with its own counters and public mode. */
interface Endpoint {
  url: string;
  counters(): Promise<DevnetCounters>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

async function serveEndpoint(chain: DevnetChain, publicMode?: PublicModeOptions): Promise<Endpoint> {
  const ep = new DevnetEndpoint(chain, publicMode ? { publicMode, now: () => performance.now() * TIME_SCALE } : {});
  const server = createServer(ep.handle);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    counters: async () => (await (await fetch(`${url}/devnet/counters`)).json()) as DevnetCounters,
    reset: async () => void (await (await fetch(`${url}/devnet/counters/reset`, { method: 'POST' })).arrayBuffer()),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Following the chain: block lists, heights, headers, raw blocks, the tip. */
const isTipRoute = (route: string): boolean => route.startsWith('/block');
/**
 * Deferred checks of payloads still pending a block's time after intake (outspends,
 * merkle proofs): counted apart in part 1, whose phases last longer than a scaled block.
 */
const isDeferredRoute = (route: string): boolean => route.endsWith('/outspend/:n') || route.endsWith('/merkle-proof');
function requestsOf(c: DevnetCounters, pred: (route: string) => boolean = () => true, what: 'requests' | 'bytes' = 'requests'): number {
  return Object.entries(c.routes).reduce((n, [r, t]) => n + (pred(r) ? t.all[what] : 0), 0);
}
/** Answer body bytes on the routes `pred` picks. */
const bytesOf = (c: DevnetCounters, pred: (route: string) => boolean): number => requestsOf(c, pred, 'bytes');
function routesText(c: DevnetCounters): string {
  const rows = Object.entries(c.routes).map(([r, t]) => `${r} ${t.all.requests}${t['429'].requests ? ` (${t['429'].requests} x 429)` : ''}`);
  return rows.length ? rows.join(', ') : 'none';
}

interface BenchNodeSpec {
  name: string;
  endpoint: string;
  mode?: 'light' | 'blocks';
  port?: number;
  peers?: number[];
  pollS: number;
  budget?: { requestsPerHour: number; burst: number };
  /** Journal anchor (SVC_START_HEIGHT); the network's default without it. */
  startHeight?: number;
  poolThreads?: number;
  /** CPU profiles of every process and thread of this node go here (--cpu-prof). */
  profileDir?: string;
}

/** Data directories of the nodes started, removed when the bench ends. */
const dataDirs: string[] = [];

async function startBenchNode(s: BenchNodeSpec): Promise<NodeProcess> {
  const budget = s.budget ?? UNLIMITED;
  const dataDir = mkdtempSync(join(tmpdir(), `svc-endpoint-${s.name}-`));
  dataDirs.push(dataDir);
  const node = await startNode({
    dataDir,
    env: {
      ...gossipEnv({ name: s.name, port: s.port ?? (await freePort()), peers: s.peers ?? [], ...(s.startHeight !== undefined ? { startHeight: s.startHeight } : {}) }),
      SVC_ESPLORA_URL: s.endpoint,
      SVC_CHAIN_MODE: s.mode ?? 'light',
      SVC_BLOCK_CHECK_INTERVAL_S: String(s.pollS),
      SVC_ESPLORA_REQUESTS_PER_HOUR: String(budget.requestsPerHour),
      SVC_ESPLORA_BURST: String(budget.burst),
      SVC_WORKERS_POOL_SIZE: String(s.poolThreads ?? 1),
      SVC_GOSSIP_HEARTBEAT_INTERVAL_S: String(HEARTBEAT_S),
      // Progress and applied blocks (chain), listening lines; no access log.
      RUST_LOG: 'info,rest::access=warn',
    },
    ...(s.profileDir ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${s.profileDir}`] } : {}),
  });
  if (LOG_DIR) {
    // From the start: the lines read while it started, then the rest as they come.
    const out = createWriteStream(join(LOG_DIR, `${s.name}.log`));
    out.write(node.raw.map((l) => `${l}\n`).join(''));
    node.proc.stdout!.pipe(out);
  }
  return node;
}

/** node_status with the counters the node reports beyond docs/openapi.yaml's schema. */
type BenchStatus = NodeStatusAnswer & { gossip?: Record<string, number>; chain?: { deferred_checks?: Record<string, number> } };

async function nodeStatus(n: NodeProcess): Promise<BenchStatus> {
  try {
    return (await (await fetch(`${n.restUrl}/node_status`)).json()) as BenchStatus;
  } catch (e) {
    // A pooled keep-alive connection the node closed as idle (uWS: after 10 s) while this
    // process was busy building calls: the GET is asked again, once, on a new one.
    if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
    return (await (await fetch(`${n.restUrl}/node_status`)).json()) as BenchStatus;
  }
}

/** Re-checks `cond` on every log line of `n` (and at least every `everyMs`) until it holds. */
async function until(n: NodeProcess, cond: () => Promise<boolean>, described: string | (() => string), timeoutMs: number, everyMs = 500): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    // Described when it fails: a function sees what the last check found.
    const what = typeof described === 'string' ? described : described();
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out waiting for ${what}; last lines:\n${n.raw.slice(-10).join('\n')}`);
    if (n.proc.exitCode !== null) throw new Error(`${what}: the node exited; last lines:\n${n.raw.slice(-15).join('\n')}`);
    await n.waitForNext(() => true, Math.min(left, everyMs), what).catch(() => undefined);
  }
}

/**
 * The journal anchor (start_height) for nodes whose coins were funded in the chain's last
 * block: one block below it. A node holds headers above its anchor only, so a coin
 * confirmed at or below it backs no pending payload there (docs/STATE.md, "Coin evidence":
 * refused coin_before_anchor). Deploy once the node holds that block (atTip), as the SDK
 * waits for it (awaitCoinBlocks).
 */
const anchorBelowFunding = (chain: DevnetChain): number => chain.height - 1;

const atTip = (n: NodeProcess, chain: DevnetChain, timeoutMs = 300_000): Promise<void> =>
  until(n, async () => {
    const s = await nodeStatus(n);
    if (s['halted']) throw new Error(`node halted: ${String(s['halt_reason'])}`);
    return s['processed_height'] === chain.height && s['chain']?.['tip_hash'] === chain.tip.hash;
  }, `height ${chain.height}`, timeoutMs);

const pendingAtLeast = (n: NodeProcess, count: number, timeoutMs = 120_000): Promise<void> =>
  until(n, async () => Number((await nodeStatus(n))['pending_calls']) >= count, `${count} pending calls`, timeoutMs, 100);

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

/** Posts `bodies` to `restUrl` with SUBMIT_CONCURRENCY in flight; every one must be accepted. */
async function submitAll(restUrl: string, path: string, bodies: unknown[]): Promise<void> {
  let at = 0;
  await Promise.all(
    Array.from({ length: SUBMIT_CONCURRENCY }, async () => {
      while (at < bodies.length) {
        const r = await post(`${restUrl}${path}`, bodies[at++]);
        if (r.status !== 202) throw new Error(`${path} refused: ${r.status} ${r.text}`);
      }
    }),
  );
}

/** Raw BIP-340 verifies per second on one thread (tiny-secp256k1, the pool's verifier). */
function verifyRate(): Stat {
  const secret = sha256(Buffer.from('endpoint bench verify'));
  const pub = ecc.xOnlyPointFromScalar(secret);
  const msgs = Array.from({ length: 256 }, (_, i) => sha256(Buffer.from(`m${i}`)));
  const sigs = msgs.map((m) => ecc.signSchnorr(m, secret, new Uint8Array(32)));
  let i = 0;
  return measureRate(() => {
    for (let j = 0; j < 32; j++, i++) if (!ecc.verifySchnorr(msgs[i & 255]!, pub, sigs[i & 255]!)) throw new Error('verify');
    return 32;
  });
}

const scaled = (s: Stat, k: number): Stat => ({ median: s.median * k, min: s.min * k, max: s.max * k });
const one = (v: number): Stat => ({ median: v, min: v, max: v });
/** A count figure against the block-reading node's count (ratio 0 when both are 0). */
function countFigure(name: string, unit: string, value: number, blocks: number, goal: number, notes: string): Figure {
  return {
    name,
    unit,
    value: one(value),
    ceiling: { name: 'the same work on a block-reading node (chain_mode "blocks"), same run', ...one(blocks) },
    ratio: blocks === 0 ? (value === 0 ? 0 : Infinity) : value / blocks,
    target: `ideal ${goal === 0 ? '0' : `<= ${goal}`}`,
    met: value <= goal,
    notes,
  };
}

// ------------------------------------------------------------------ part 1

async function unitsOfWork(): Promise<Figure[]> {
  const chain = new DevnetChain();
  chain.mine(101);
  const calls = new BankCalls(chain, 'endpoint bench units');
  calls.fund(4 * UNIT_CALLS);
  const [eL1, eL2, eB] = [await serveEndpoint(chain), await serveEndpoint(chain), await serveEndpoint(chain)];
  const [p1, p2, pB] = [await freePort(), await freePort(), await freePort()];
  const start = anchorBelowFunding(chain);
  const nodes: NodeProcess[] = [];
  try {
    const common = { pollS: POLL_S, startHeight: start };
    nodes.push(await startBenchNode({ ...common, name: 'units-l1', endpoint: eL1.url, port: p1, peers: [p2, pB] }));
    nodes.push(await startBenchNode({ ...common, name: 'units-l2', endpoint: eL2.url, port: p2, peers: [p1] }));
    nodes.push(await startBenchNode({ ...common, name: 'units-b', endpoint: eB.url, port: pB, peers: [p1], mode: 'blocks' }));
    const [L1, , B] = nodes as [NodeProcess, NodeProcess, NodeProcess];
    // The funding block held (the deploy's coin is proven against it). A light node with
    // peers holds block application until its first peer sync ends (at most 120 s).
    await Promise.all(nodes.map((n) => atTip(n, chain)));
    const dep = calls.deploy();
    for (const n of [L1, B]) {
      const r = await post(`${n.restUrl}/deploy_contract`, dep.body);
      // 200: B already had it from L1 by gossip.
      if (r.status !== 202 && r.status !== 200) throw new Error(`deploy refused: ${r.status} ${r.text}`);
    }
    chain.mine(1);
    await Promise.all(nodes.map((n) => atTip(n, chain)));
    const eps = [eL1, eL2, eB];
    // One per node, in the order of `nodes`: L1, L2, B.
    const countersOfAll = (): Promise<[DevnetCounters, DevnetCounters, DevnetCounters]> => Promise.all([eL1.counters(), eL2.counters(), eB.counters()]);
    const phase = async (target: NodeProcess, withAnchor: boolean): Promise<[DevnetCounters, DevnetCounters, DevnetCounters]> => {
      const before = await Promise.all(nodes.map(async (n) => Number((await nodeStatus(n))['pending_calls'])));
      await Promise.all(eps.map((e) => e.reset()));
      await submitAll(target.restUrl, '/contract_call', Array.from({ length: UNIT_CALLS }, () => calls.next(withAnchor)));
      await Promise.all(nodes.map((n, i) => pendingAtLeast(n, before[i]! + UNIT_CALLS)));
      return countersOfAll();
    };
    const callRoute = (r: string): boolean => !isTipRoute(r) && !isDeferredRoute(r);
    const perCall = (c: DevnetCounters): number => requestsOf(c, callRoute) / UNIT_CALLS;
    /** Bytes a call, on the light node and on the block-reading node. */
    const callBytes = (light: DevnetCounters, blocks: DevnetCounters): string => `bytes a call ${(bytesOf(light, callRoute) / UNIT_CALLS).toFixed(0)} (block-reading node ${(bytesOf(blocks, callRoute) / UNIT_CALLS).toFixed(0)})`;
    // Calls with anchors on L1 (L2 and B receive them by gossip), then on B (its own intake).
    const [withL1, withL2, withB] = await phase(L1, true);
    const [, , withOnB] = await phase(B, true);
    const [withoutL1, withoutL2] = await phase(L1, false);
    const [, , withoutOnB] = await phase(B, false);

    // Blocks at the tip, at Bitcoin's cadence scaled: empty ones first (not counted), then
    // the first counted block confirms the pending calls.
    const pending = Number((await nodeStatus(L1))['pending_calls']);
    for (let b = 0; b < TIP_WARMUP_BLOCKS; b++) {
      await new Promise((r) => setTimeout(r, BLOCK_S * 1000));
      chain.mine(1, []);
    }
    await Promise.all(nodes.map((n) => atTip(n, chain, 60_000)));
    await Promise.all(eps.map((e) => e.reset()));
    const t0 = performance.now();
    for (let b = 0; b < TIP_BLOCKS; b++) {
      await new Promise((r) => setTimeout(r, BLOCK_S * 1000));
      chain.mine(1);
    }
    await Promise.all(nodes.map((n) => atTip(n, chain, 60_000)));
    const tip = await countersOfAll();
    const elapsedBlocks = (performance.now() - t0) / 1000 / BLOCK_S;
    for (const n of nodes) if (Number((await nodeStatus(n))['pending_calls']) !== 0) throw new Error('calls still pending after the tip blocks');
    const [tL1, tL2, tB] = tip.map((c) => requestsOf(c, isTipRoute) / TIP_BLOCKS) as [number, number, number];
    const [bL1, bL2, bB] = tip.map((c) => bytesOf(c, isTipRoute) / TIP_BLOCKS) as [number, number, number];
    const tipNotes = (c: DevnetCounters): string => `${TIP_BLOCKS} blocks every ${BLOCK_S} s after ${TIP_WARMUP_BLOCKS} empty ones not counted, polls every ${POLL_S} s and heartbeats every ${HEARTBEAT_S} s (Bitcoin's 600 s and the defaults 60 s and 15 s, scaled ${TIME_SCALE}x; ${elapsedBlocks.toFixed(1)} block intervals in all), the first confirming ${pending} pending calls; routes: ${routesText(c)}`;
    return [
      countFigure('requests per call accepted with anchor_tx (REST, light node)', 'requests', perCall(withL1), perCall(withOnB), 0, `${UNIT_CALLS} calls; ${callBytes(withL1, withOnB)}; routes other than tip following: ${routesText(withL1)}`),
      countFigure('requests per call accepted without anchor_tx (REST, light node)', 'requests', perCall(withoutL1), perCall(withoutOnB), 1, `${UNIT_CALLS} calls; ${callBytes(withoutL1, withoutOnB)}; routes: ${routesText(withoutL1)}; block-reading node: ${routesText(withoutOnB)}`),
      countFigure('requests per payload received from a peer by gossip (light node)', 'requests', perCall(withL2), perCall(withB), 0, `${UNIT_CALLS} calls sent with anchor_tx to L1, forwarded with their evidence; the same after calls sent without: ${perCall(withoutL2).toFixed(2)}; ${callBytes(withL2, withB)}; routes: ${routesText(withL2)}`),
      countFigure('requests per block at the tip (light node with pending calls, and its peer)', 'requests', tL1, tB, 1, `${tipNotes(tip[0])}; bytes a block ${bL1.toFixed(0)} (light peer L2 ${bL2.toFixed(0)}, block-reading node ${bB.toFixed(0)}); light peer L2: ${tL2.toFixed(2)} a block; block-reading node routes: ${routesText(tip[2])}`),
    ];
  } finally {
    await Promise.all(nodes.map((n) => n.stop().catch(() => null)));
    await Promise.all([eL1, eL2, eB].map((e) => e.close()));
  }
}

// ------------------------------------------------------------------ part 2

/**
 * When a fresh node's catch-up passed its steps, in seconds from its first log line, read
 * from its log (its own clock; node_status polled every 2 s put the header chain at 3 s
 * where the log says under 1). The payload sync's log line gives its length, so where it
 * began: after the header chain and the state-root comparison.
 */
function catchUpMarks(n: NodeProcess, tipHeight: number): string {
  const t0 = Date.parse(String(n.lines[0]?.['ts']));
  const at = (ts: unknown, minusMs = 0): string => (typeof ts === 'string' ? ((Date.parse(ts) - minusMs - t0) / 1000).toFixed(1) : '?');
  const synced = n.lines.find((l) => l.msg === 'peer sync done' && Number(l['payloads_fetched']) > 0);
  const tip = n.lines.find((l) => l.msg === 'block applied' && l['height'] === tipHeight);
  return `from the node's log: payload sync from ${at(synced?.['ts'], Number(synced?.['payload_ms'] ?? 0))} s (the header chain taken before it), every payload fetched at ${at(synced?.['ts'])} s, the last block applied at ${at(tip?.['ts'])} s`;
}

async function freshCatchUp(verifies: Stat, threads: number): Promise<Figure[]> {
  const chain = new DevnetChain();
  chain.mine(101);
  const calls = new BankCalls(chain, 'endpoint bench catch-up');
  const t0 = performance.now();
  calls.fund(PAYLOADS);
  const eP = await serveEndpoint(chain);
  const eF = await serveEndpoint(chain);
  const dir = mkdtempSync(join(tmpdir(), 'svc-endpoint-bench-'));
  const nodes: NodeProcess[] = [];
  try {
    const pP = await freePort();
    // The peer: light, no peers of its own, the devnet's default journal anchor (block 0).
    const P = await startBenchNode({ name: 'catchup-peer', endpoint: eP.url, port: pP, pollS: 0.05, poolThreads: threads, ...(PROFILE_DIR ? { profileDir: join(PROFILE_DIR, 'peer') } : {}) });
    nodes.push(P);
    const dep = calls.deploy();
    const r = await post(`${P.restUrl}/deploy_contract`, dep.body);
    if (r.status !== 202) throw new Error(`deploy refused: ${r.text}`);
    chain.mine(1);
    await atTip(P, chain);
    // The calls, CALLS_PER_BLOCK a block, each taken by the peer while its anchor waits in
    // the mempool (with anchor_tx, as the SDK sends it), then mined; the peer reads each
    // block at the tip and keeps every call's evidence.
    const floorSample: CallBody[] = [];
    for (let done = 0; done < PAYLOADS; ) {
      const k = Math.min(CALLS_PER_BLOCK, PAYLOADS - done);
      const bodies = Array.from({ length: k }, () => calls.next(true));
      if (floorSample.length < FLOOR_SAMPLE) floorSample.push(...bodies.slice(0, FLOOR_SAMPLE - floorSample.length));
      const file = join(dir, 'bodies.json');
      writeFileSync(file, JSON.stringify(bodies));
      const out = await exec(process.execPath, [join(repoRoot, 'dist/bench/intake-load.js'), P.restUrl, file, String(SUBMIT_CONCURRENCY)], { maxBuffer: 1 << 20 });
      const res = JSON.parse(out.stdout) as { statuses: Record<string, number> };
      if ((res.statuses['202'] ?? 0) !== k) throw new Error(`the peer refused calls: ${JSON.stringify(res.statuses)}`);
      chain.mine(1);
      await atTip(P, chain);
      done += k;
    }
    const ps = await nodeStatus(P);
    if (ps['pending_calls'] !== 0) throw new Error(`the peer still holds ${String(ps['pending_calls'])} pending calls`);
    // The rest of the year: plain blocks (their headers are what the fresh node needs).
    if (chain.height < HEADERS) chain.mine(HEADERS - chain.height);
    await atTip(P, chain, 900_000);
    const setupS = (performance.now() - t0) / 1000;
    const peerRoot = String((await nodeStatus(P))['state_root']);

    // The fresh node: no data, the default journal anchor, P its only peer.
    await eF.reset();
    // The peer's CPU from here on is what serving the catch-up cost it (its loading is not counted).
    const peerCpuBefore = nodeCpuSeconds(P.proc.pid!);
    const start = performance.now();
    // The budget is lifted (as in the catch-up bench): the figures are what the node asks
    // and how long its own work takes; at 600 requests an hour, time = requests / 600 h.
    // Its block check interval is the default 60 s, not the scaled one: nothing is mined
    // during the catch-up, so a scaled poll would only multiply its tip polls (/blocks) by
    // TIME_SCALE (73 of 78 requests at 100,000 payloads) without bringing the tip sooner.
    const F = await startBenchNode({ name: 'catchup-fresh', endpoint: eF.url, peers: [pP], pollS: CATCHUP_POLL_S, poolThreads: threads, ...(PROFILE_DIR ? { profileDir: PROFILE_DIR } : {}) });
    nodes.push(F);
    let last = '';
    await until(F, async () => {
      const s = await nodeStatus(F);
      last = `processed ${String(s['processed_height'])}, headers ${String(s['chain']?.['header_height'])}, pending ${String(s['pending_calls'])}`;
      return s['processed_height'] === chain.height && s['state_root'] === peerRoot;
    }, () => `the fresh node at the tip with the peer's state root (${last})`, 3_600_000, 2_000);
    const wallS = (performance.now() - start) / 1000;
    const freshCpu = cpuPerUnitUs({}, nodeCpuSeconds(F.proc.pid!), PAYLOADS + 1);
    const peerCpu = cpuPerUnitUs(peerCpuBefore, nodeCpuSeconds(P.proc.pid!), PAYLOADS + 1);
    const c = await eF.counters();
    const fs = await nodeStatus(F);
    const requests = c.total.all.requests;
    const mb = c.total.all.bytes / 1e6;
    const ceiling = scaled(verifies, threads);
    // The floor with the machine otherwise idle: both nodes stopped.
    await Promise.all(nodes.map((n) => n.stop()));
    const floor = await payloadFloor(syncedCalls(chain, floorSample), PAYLOADS + 1);
    const verifyUs = 1e6 / verifies.median;
    const inVerifies = (us: number): string => `${Math.round(us)} us = ${(us / verifyUs).toFixed(2)} verifies`;
    const sizes = `${chain.height} blocks (${HEADERS} asked), ${PAYLOADS} calls + 1 deploy held by the peer; F's routes: ${routesText(c)}; gossip: ${JSON.stringify({ sync_payloads_fetched: fs['gossip']?.['sync_payloads_fetched'], payloads_accepted: fs['gossip']?.['payloads_accepted'] })}; ${catchUpMarks(F, chain.height)}; deferred checks: ${JSON.stringify(fs['chain']?.['deferred_checks'])}; at the default budget (600 an hour) these requests alone take ${(requests / 600).toFixed(1)} h; building the chain and loading the peer took ${setupS.toFixed(0)} s (not measured)`;
    return [
      {
        ...figure({ name: 'fresh light node catch-up: endpoint requests', unit: 'requests', value: one(requests), ceiling: { name: 'goal', ...one(50) }, maxRatio: 1, target: '<= 50' }),
        notes: sizes,
      },
      figure({ name: 'fresh light node catch-up: endpoint bytes', unit: 'MB', value: one(mb), ceiling: { name: 'goal', ...one(50) }, maxRatio: 1, target: '< 50 MB' }),
      {
        ...figure({ name: 'fresh light node catch-up: wall time', unit: 's', value: one(wallS), ceiling: { name: 'goal', ...one(180) }, maxRatio: 1, target: '< 3 min' }),
        notes: `from the node's start to its processed tip with the peer's state root, checked at each of its log lines (its tip's 'block applied' among them) and every 2 s`,
      },
      figure({
        name: 'fresh light node catch-up: payloads per second',
        unit: 'payloads/s',
        value: one((PAYLOADS + 1) / wallS),
        ceiling: { name: `raw BIP-340 verifies/s (tiny-secp256k1) x ${threads} threads`, ...ceiling },
        minRatio: 0.5,
        target: '>= 50% of verifies x threads',
      }),
      {
        // Holds up on a noisy machine where the rate does not. At half the ceiling the
        // machine takes threads x verifies / 2 payloads a second, so with as many cores as
        // threads each payload may cost two verifies' worth of CPU in all, both nodes'.
        ...figure({
          name: 'fresh light node catch-up: CPU per payload (both nodes, every process and thread)',
          unit: 'us/payload',
          value: one(freshCpu['total']! + peerCpu['total']!),
          ceiling: { name: 'CPU of one raw BIP-340 verify (tiny-secp256k1, 1 thread)', median: 1e6 / verifies.median, min: 1e6 / verifies.max, max: 1e6 / verifies.min },
          target: `lower is better; ratio = verifies worth of CPU per payload (half the ceiling needs <= 2 with the ${threads} threads' cores busy)`,
        }),
        notes: `from /proc/<pid>/stat: the fresh node from its start, the serving peer from the fresh node's start; fresh node ${Math.round(freshCpu['total']!)} us (${splitText(freshCpu)}); serving peer ${Math.round(peerCpu['total']!)} us (${splitText(peerCpu)})`,
      },
      {
        // What the pipeline costs beyond the work itself. Half the ceiling allows 2 verifies'
        // worth a payload in all (above): what the floor leaves of that is what every
        // process, thread and hand-over of both nodes must fit in.
        ...figure({
          name: 'fresh light node catch-up: CPU per payload against the floor (the work any design does per payload)',
          unit: 'us/payload',
          value: one(freshCpu['total']! + peerCpu['total']!),
          ceiling: { name: 'floor: open + evidence + wire + store, one thread of this process', ...one(floor.total) },
          target: `lower is better; 1 = nothing but the floor; half the verify ceiling needs <= ${((2 * verifyUs) / floor.total).toFixed(2)} here (2 verifies' worth)`,
        }),
        notes: `floor per payload, over ${floorSample.length} of the calls (store: ${PAYLOADS + 1} records): ${inVerifies(floor.total)} (open the envelope, with the verify, ${inVerifies(floor.open)}; evidence and binding ${inVerifies(floor.evidence)}; the peer wire, both ends, ${inVerifies(floor.wire)}; body and evidence into RocksDB, flushes and compactions included, ${inVerifies(floor.store)}); not counted: executing the call and storing its effects, the serving peer's reads, hand-overs between processes and threads, their garbage; so 2 verifies less the floor, ${Math.round(2 * verifyUs - floor.total)} us, is what all of that may cost a payload at half the ceiling`,
      },
    ];
  } finally {
    await Promise.all(nodes.map((n) => n.stop().catch(() => null)));
    await eP.close();
    await eF.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ part 3

async function budgetRate(verifies: Stat, threads: number): Promise<Figure[]> {
  const chain = new DevnetChain();
  chain.mine(101);
  const calls = new BankCalls(chain, 'endpoint bench rate');
  calls.fund(RATE_CALLS);
  const e = await serveEndpoint(chain, PUBLIC);
  let node: NodeProcess | null = null;
  try {
    node = await startBenchNode({
      name: 'rate',
      endpoint: e.url,
      pollS: POLL_S,
      budget: { requestsPerHour: NODE_BUDGET.requestsPerHour * TIME_SCALE, burst: NODE_BUDGET.burst },
      startHeight: anchorBelowFunding(chain),
      poolThreads: threads,
    });
    const n = node;
    await atTip(n, chain);
    const dep = calls.deploy();
    const r = await post(`${n.restUrl}/deploy_contract`, dep.body);
    if (r.status !== 202) throw new Error(`deploy refused: ${r.text}`);
    chain.mine(1);
    await atTip(n, chain);
    // Calls are built ahead (their anchors broadcast only as each is sent), so the run
    // measures the node, not the bench's signing.
    const built: CallBody[] = Array.from({ length: RATE_CALLS }, () => calls.next(true));
    await e.reset();
    const runMs = RATE_BLOCKS * BLOCK_S * 1000;
    const t0 = performance.now();
    let sent = 0;
    let accepted = 0;
    const refused: Record<string, number> = {};
    const senders = Array.from({ length: SUBMIT_CONCURRENCY }, async () => {
      while (sent < built.length && performance.now() - t0 < runMs) {
        const b = built[sent++]!;
        const res = await post(`${n.restUrl}/contract_call`, b);
        if (res.status === 202) accepted++;
        else refused[res.status] = (refused[res.status] ?? 0) + 1;
      }
    });
    let mined = 0;
    const miner = (async () => {
      while (mined < RATE_BLOCKS) {
        const wait = t0 + (mined + 1) * BLOCK_S * 1000 - performance.now();
        if (wait > 0) await new Promise((res) => setTimeout(res, wait));
        chain.mine(1);
        mined++;
      }
    })();
    await Promise.all([...senders, miner]);
    const runS = (performance.now() - t0) / 1000;
    const sendS = Math.min(runS, runMs / 1000);
    const c = await e.counters();
    const s = await nodeStatus(n);
    const requests = c.total.all.requests;
    const perHour = (requests * 3600) / (runS * TIME_SCALE);
    const rate = accepted / sendS;
    const deferred = s['chain']?.['deferred_checks'] as Record<string, number> | undefined;
    const notes = `${accepted} calls accepted in ${sendS.toFixed(1)} s${Object.keys(refused).length ? `, refused ${JSON.stringify(refused)}` : ''}${sent === built.length ? ' (every built call sent: the rate is a lower bound)' : ''}; ${RATE_BLOCKS} blocks at Bitcoin's cadence scaled ${TIME_SCALE}x (one hour of blocks in ${runS.toFixed(0)} s), polls every 60 s scaled; devnet public mode ${PUBLIC.requestsPerHour}/h burst ${PUBLIC.burst}, node budget ${NODE_BUDGET.requestsPerHour}/h burst ${NODE_BUDGET.burst} (both on the scaled clock); routes: ${routesText(c)}; 429 answers: ${c.total['429'].requests}; deferred checks: ${JSON.stringify(deferred)}; pending at the end ${String(s['pending_calls'])}`;
    return [
      {
        ...figure({
          name: 'sustained call rate (anchor_tx) within a 700-requests-an-hour endpoint',
          unit: 'calls/s',
          value: one(rate),
          ceiling: { name: `raw BIP-340 verifies/s (tiny-secp256k1) x ${threads} threads`, ...scaled(verifies, threads) },
        }),
        target: '>= 7 calls/s within 700 requests/hour',
        met: rate >= 7 && perHour <= PUBLIC.requestsPerHour && c.total['429'].requests === 0,
        notes,
      },
      figure({
        name: 'requests an hour used at that rate (tip, intake, deferred checks)',
        unit: 'requests/h',
        value: one(perHour),
        ceiling: { name: 'the public endpoint\'s budget', ...one(PUBLIC.requestsPerHour) },
        maxRatio: 1,
        target: '<= 700',
      }),
    ];
  } finally {
    await node?.stop().catch(() => null);
    await e.close();
  }
}

export default async function run(): Promise<Figure[]> {
  const threads = availableParallelism();
  const parts = (process.env['ENDPOINT_BENCH_PARTS'] ?? 'units,catchup,rate').split(',');
  try {
    return await runParts(parts, threads);
  } finally {
    for (const d of dataDirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

/** Each part's figures are also written to stderr as it ends, so a later part's failure loses none. */
function shown(figures: Figure[]): Figure[] {
  for (const f of figures) process.stderr.write(`endpoint: ${JSON.stringify(f)}\n`);
  return figures;
}

async function runParts(parts: string[], threads: number): Promise<Figure[]> {
  // Ceiling samples before each part, so other load on the shared cores falls on both sides.
  const verifies: number[] = [verifyRate().median];
  const figures: Figure[] = [];
  if (parts.includes('units')) figures.push(...shown(await unitsOfWork()));
  if (parts.includes('rate')) {
    verifies.push(verifyRate().median);
    figures.push(...shown(await budgetRate(stat(verifies), threads)));
  }
  if (parts.includes('catchup')) {
    verifies.push(verifyRate().median);
    figures.push(...shown(await freshCatchUp(stat(verifies), threads)));
  }
  return figures;
}

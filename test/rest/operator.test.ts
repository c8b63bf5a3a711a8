/**
 * What an operator's tools see, on real nodes over a devnet chain: readiness
 * and the REST-to-core deadline with the core stalled (SIGSTOP), /metrics checked by
 * promtool with every process's metrics, restarts and peers, and the chain endpoint's
 * health following the endpoint both ways.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devnetChainHandler, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { startDevnet, startDevnetNode } from '../helpers/devnet-node.js';
import { RestServer } from '../../src/rest/http.js';
import { routes } from '../../src/rest/routes.js';
import { BearerAuth } from '../../src/rest/auth.js';
import { coreLink } from '../../src/rest/core-link.js';
import type { RpcClient } from '../../src/ipc/rpc.js';
import type { CoreApi } from '../../src/messages/core.js';
import { recordAnswers, SpecChecker } from '../helpers/openapi-check.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

let devnet: DevnetChainHandle;
let a: NodeProcess;
let b: NodeProcess;
/** node B's chain endpoint: the devnet chain served by a server this test stops and restarts. */
let endpoint: Server;
let endpointPort = 0;
/** node B's block check interval (s). */
const B_INTERVAL_S = 1;

function serveChain(port: number): Promise<Server> {
  const s = createServer(devnetChainHandler(devnet.chain));
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/** Polls `probe` every 50 ms until it returns true; returns the time it took (ms). */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const status = async (n: NodeProcess): Promise<JsonAnswer> => (await fetch(`${n.restUrl}/node_status`)).json();
const metricsOf = async (n: NodeProcess): Promise<string> => (await fetch(`${n.restUrl}/metrics`)).text();
const childPid = (n: NodeProcess, role: string): number => Number(n.lines.filter((l) => l.msg === 'child started' && l['role'] === role).pop()!['child_pid']);

before(async () => {
  devnet = await startDevnet();
  a = await startDevnetNode(devnet, { env: { SVC_GOSSIP_HEARTBEAT_INTERVAL_S: '0.2' } });
  endpoint = await serveChain(0);
  endpointPort = (endpoint.address() as AddressInfo).port;
  b = await startDevnetNode(devnet, {
    env: {
      SVC_ESPLORA_URL: `http://127.0.0.1:${endpointPort}`,
      SVC_BLOCK_CHECK_INTERVAL_S: String(B_INTERVAL_S),
      SVC_PEERS: `http://127.0.0.1:${a.grpcPort}`,
      SVC_GOSSIP_HEARTBEAT_INTERVAL_S: '0.2',
    },
  });
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  endpoint?.closeAllConnections();
  endpoint?.close();
  await devnet?.close();
});

test('/ready is 200 while every part serves; with the core stalled it is 503 within its 2 s deadline, reads answer 503 core_unavailable, /health stays 200', async () => {
  const ready = await fetch(`${a.restUrl}/ready`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready', checks: { rest: 'ok', core: 'ok', writer: 'ok', gossip: 'ok', halted: false } });

  // The 503s of a stalled core are answers the spec documents: checked against it below.
  const recorded = recordAnswers(() => a.restUrl);
  const core = childPid(a, 'core');
  process.kill(core, 'SIGSTOP');
  try {
    let t0 = performance.now();
    const notReady = await fetch(`${a.restUrl}/ready`);
    const readyMs = performance.now() - t0;
    assert.equal(notReady.status, 503);
    const body = (await notReady.json()) as JsonAnswer;
    assert.equal(body.status, 'not_ready');
    assert.equal(body.checks.core, 'not answering');
    assert.equal(body.error.code, 'not_ready');
    // At its 2 s deadline (the upper bound leaves room for a loaded machine).
    assert.ok(readyMs >= 1900 && readyMs < 6000, `ready answered in ${readyMs} ms`);
    assert.equal((await fetch(`${a.restUrl}/health`)).status, 200);
    t0 = performance.now();
    const read = await fetch(`${a.restUrl}/contracts`);
    const readMs = performance.now() - t0;
    assert.equal(read.status, 503);
    assert.equal(((await read.json()) as JsonAnswer).error.code, 'core_unavailable');
    assert.ok(readMs >= 4900 && readMs < 10_000, `read answered in ${readMs} ms`);
  } finally {
    process.kill(core, 'SIGCONT');
    recorded.restore();
  }
  assert.deepEqual(recorded.answers.map((r) => r.status), [503, 200, 503]);
  const spec = new SpecChecker();
  assert.deepEqual(recorded.answers.flatMap((r) => spec.check(r)), []);
  await until('ready again', async () => (await fetch(`${a.restUrl}/ready`)).status === 200, 10_000);
});

test('/ready names gossip when the supervisor says it is not serving, and a halt', async () => {
  let halted = false;
  const fakeCore = { call: async () => ({ halted }) } as unknown as RpcClient<CoreApi>;
  let gossip = true;
  const server = new RestServer(routes({ core: () => coreLink(() => fakeCore), auth: new BearerAuth(null), serving: () => ({ core: true, rest: true, gossip }) }));
  const port = await server.listen('127.0.0.1', 0);
  try {
    const get = async (): Promise<[number, JsonAnswer]> => {
      const r = await fetch(`http://127.0.0.1:${port}/ready`);
      return [r.status, await r.json()];
    };
    assert.equal((await get())[0], 200);
    gossip = false;
    let [code, body] = await get();
    assert.deepEqual([code, body.checks.gossip, body.error.message], [503, 'not serving', 'not ready: gossip not serving']);
    gossip = true;
    halted = true;
    [code, body] = await get();
    assert.deepEqual([code, body.checks.halted, body.error.message], [503, true, 'not ready: the node is halted']);
  } finally {
    await server.drain(0);
  }
});

test('/metrics passes promtool, carries every process\'s runtime metrics by role, build info, gossip and chain-endpoint counters, the real peer count, and child restarts', async () => {
  // Node B heartbeats A: one active peer, on node_status and on /metrics alike.
  await until('B sees A as a peer', async () => (await status(b)).peers === 1, 20_000);
  // B's startup sync with A runs after its first heartbeat is answered, and gossip
  // reports its counters to the core after it: wait for the round to reach /metrics.
  await until('B\'s first sync round on /metrics', async () => /^svc_gossip_sync_rounds_total [1-9]\d*$/m.test(await metricsOf(b)), 20_000);
  let text = await metricsOf(b);
  assert.match(text, /^svc_peers 1$/m);
  assert.match(text, /^svc_gossip_peers_active 1$/m);
  assert.match(text, /^svc_gossip_sync_rounds_total [1-9]\d*$/m);

  const gossipPid = childPid(a, 'gossip');
  const relistened = a.waitForNext((l) => l.msg === 'listening' && l['role'] === 'gossip', 30_000, 'gossip restarted');
  process.kill(gossipPid, 'SIGKILL');
  await relistened;
  text = await metricsOf(a);

  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(promtool.error, undefined, 'promtool is needed (Debian package prometheus; .ci/run installs it)');
  assert.equal(promtool.status, 0, `${promtool.stdout}${promtool.stderr}`);

  for (const role of ['supervisor', 'core', 'rest', 'gossip']) {
    assert.match(text, new RegExp(`^process_cpu_user_seconds_total\\{role="${role}"\\} `, 'm'), role);
    assert.match(text, new RegExp(`^nodejs_eventloop_lag_seconds\\{role="${role}"\\} `, 'm'), role);
    assert.match(text, new RegExp(`^process_resident_memory_bytes\\{role="${role}"\\} `, 'm'), role);
  }
  assert.match(text, /^svc_build_info\{version="0\.1\.0",node_version="v\d+\.\d+\.\d+",role="supervisor"\} 1$/m);
  assert.match(text, /^svc_child_restarts_total\{role="gossip"\} 1$/m);
  assert.match(text, /^svc_child_restarts_total\{role="core"\} 0$/m);
  // A light node (the default) polls the ten newest headers, `GET /blocks`.
  assert.match(text, /^svc_chain_requests_total\{route="\/blocks",outcome="ok"\} [1-9]\d*$/m);
  assert.match(text, /^svc_chain_request_duration_seconds_count\{route="\/blocks"\} [1-9]\d*$/m);
  // The chain-data budget: the follower's polls are tip requests; nothing waits on the devnet's large budget.
  assert.match(text, /^svc_chain_budget_available \d+$/m);
  assert.match(text, /^svc_chain_budget_requests_total\{priority="tip"\} [1-9]\d*$/m);
  assert.match(text, /^svc_chain_budget_requests_total\{priority="deferred"\} 0$/m);
  for (const p of ['tip', 'intake', 'deferred']) assert.match(text, new RegExp(`^svc_chain_budget_waiting\\{priority="${p}"\\} 0$`, 'm'), p);
  assert.match(text, /^svc_chain_budget_throttled_total 0$/m);
  const budget = (await status(a)).chain.budget;
  assert.deepEqual({ ...budget, available: 0, used_last_hour: 0 }, { requests_per_hour: 1_000_000_000, burst: 100_000, available: 0, used_last_hour: 0, waiting: { tip: 0, intake: 0, deferred: 0 }, throttled_total: 0 });
  assert.ok(budget.used_last_hour > 0 && budget.available > 0 && budget.available <= 100_000, JSON.stringify(budget));
  assert.match(text, /^svc_gossip_payloads_received_total 0$/m);
  assert.match(text, /^svc_divergence_unresolved 0$/m);
  // Every family whose name ends in _total is typed counter (promtool's lint says the converse).
  for (const m of text.matchAll(/^# TYPE (\S+_total) (\S+)$/gm)) assert.equal(m[2], 'counter', m[1]);
  // One HELP/TYPE per family although four processes contribute to most of them.
  const types = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
  assert.equal(new Set(types).size, types.length);
});

test('chain endpoint health follows the endpoint within one check interval, down and back up', async () => {
  const up = async (): Promise<boolean> => (await status(b)).chain.endpoint_ok === true && /^svc_chain_endpoint_up 1$/m.test(await metricsOf(b));
  const down = async (): Promise<boolean> => (await status(b)).chain.endpoint_ok === false && /^svc_chain_endpoint_up 0$/m.test(await metricsOf(b));
  await until('endpoint up', up, 10_000);
  endpoint.closeAllConnections();
  await new Promise((r) => endpoint.close(r));
  const downMs = await until('endpoint seen down', down, 20_000);
  // Connection refused: the first attempt of the next check fails at once.
  // (Slack for a loaded machine. Health follows the client's last attempt, so it falls
  // with the first failed attempt, not once a whole request with its retries has failed.)
  assert.ok(downMs <= B_INTERVAL_S * 1000 + 3000, `seen down after ${downMs} ms`);
  endpoint = await serveChain(endpointPort);
  const upMs = await until('endpoint seen up again', up, 20_000);
  // The next attempt: the next check, or the retry in progress (its backoff is at most 4 s by default).
  assert.ok(upMs <= Math.max(B_INTERVAL_S * 1000, 4000) + 3000, `seen up after ${upMs} ms`);
  console.log(`# chain endpoint health: down seen after ${Math.round(downMs)} ms, up after ${Math.round(upMs)} ms (check interval ${B_INTERVAL_S} s)`);
});

/**
 * A node stops cleanly at any moment: SIGTERM at seeded random points of a
 * catch-up of thousands of blocks (read block by block, and as a light node walking
 * headers at a public endpoint's pace), and during re-derivations (after a reorg deeper than
 * the undo window, and an operator's clear_halt). Every stop must end within the node's stop budget (10 s, Docker's
 * default stop timeout), with exit code 0, the database closed by the node (its
 * "database closed" line, and no open-mark left in it: src/writer/writer.ts, meta.openSince.key),
 * and a data directory that opens again at a block of the chain, from which the node
 * carries on to the same state as a node that was never stopped.
 *
 * The seed is printed; SVC_STOP_SEED=<seed> replays the same stop points.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode, type NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, devnetEnv, fund, getJson, nodeStatus, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { Db } from '../../src/writer/db.js';
import { meta } from '../../src/writer/store/index.js';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';

/** The node's whole stop (supervisor: 9 s for the children, 1 s for their last lines). */
const STOP_BUDGET_MS = 10_000;
/** Blocks the node is behind when the stops begin (at least a third of it at each stop). */
const BACKLOG = 3_000;
/** Stops during the catch-up. */
const ROUNDS = Number(process.env['SVC_STOP_ROUNDS'] ?? 6);
/** Stops during a light catch-up's header walk, after those. */
const LIGHT_ROUNDS = 2;
/**
 * The light rounds' budget, as on a public endpoint: 20 requests a second, a burst of 10.
 * The ten-header pages of BACKLOG blocks then take ~15 s, so a stop lands in the walk on
 * any machine (unpaced, a light node reads 3,000 empty blocks in about a second).
 */
const PACED = { SVC_ESPLORA_REQUESTS_PER_HOUR: '72000', SVC_ESPLORA_BURST: '10' };
const TOKEN = 'operator-token-for-the-stop-test';
const SEED = Number(process.env['SVC_STOP_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

/** xorshift32: the same seed gives the same stop points. */
function prng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

interface Stopped {
  code: number | null;
  ms: number;
  tip: { height: number; hash: string } | null;
}

/** SIGTERM now; checks the stop was clean and within the budget, then reopens the database. */
async function stopAndReopen(node: NodeProcess, dbPath: string, devnet: DevnetChainHandle, what: string): Promise<Stopped> {
  const t0 = performance.now();
  node.proc.kill('SIGTERM');
  const code = await node.exited;
  const ms = Math.round(performance.now() - t0);
  const tail = `${what}; last lines:\n${node.raw.slice(-12).join('\n')}`;
  assert.equal(code, 0, `exit code 0 after a clean stop (${tail})`);
  assert.ok(ms < STOP_BUDGET_MS, `stopped in ${ms} ms, within ${STOP_BUDGET_MS} ms (${tail})`);
  assert.ok(!node.lines.some((l) => l.msg === 'child did not stop in time; killing it'), `no child killed (${tail})`);
  const opened = node.lines.some((l) => l.msg === 'database open');
  if (!opened) return { code, ms, tip: null };
  assert.ok(node.lines.some((l) => l.msg === 'database closed'), `the node closed its database (${tail})`);
  const db = await Db.open(dbPath);
  try {
    assert.equal(await db.get(meta.openSince.key), undefined, `the node marked its database closed (${what})`);
    const raw = await db.get(meta.tip.key);
    assert.ok(raw, `a stored tip (${what})`);
    const tip = meta.tip.decode(raw);
    assert.equal(tip.hash, devnet.chain.blockAt(tip.height)?.hash, `the stored tip is block ${tip.height} of the chain (${what})`);
    return { code, ms, tip };
  } finally {
    await db.close();
  }
}

/** Resolves once the node reports at least `height` processed (its REST API, polled). */
async function reachHeight(node: NodeProcess, height: number): Promise<number> {
  for (;;) {
    if (node.proc.exitCode !== null) throw new Error(`the node exited; last lines:\n${node.raw.slice(-12).join('\n')}`);
    const s = await nodeStatus(node).catch(() => null);
    const h = s ? Number(s['processed_height']) : -1;
    if (h >= height) return h;
    await node.waitForNext(() => true, 100).catch(() => undefined);
  }
}

/** Resolves once the node holds verified headers up to at least `height` (light following). */
async function reachHeaderHeight(node: NodeProcess, height: number): Promise<number> {
  for (;;) {
    if (node.proc.exitCode !== null) throw new Error(`the node exited; last lines:\n${node.raw.slice(-12).join('\n')}`);
    const s = await nodeStatus(node).catch(() => null);
    const chain = s?.['chain'] as { header_height?: number | null } | undefined;
    const h = chain?.header_height ?? -1;
    if (h >= height) return h;
    await node.waitForNext(() => true, 100).catch(() => undefined);
  }
}

/**
 * Stops a node `jitter` ms into a re-derivation (stopAndReopen's checks); true when the
 * stop ended it. A re-derivation that finished before the signal proves nothing about
 * the stop, but one still running when the signal came must have been ended by it.
 */
async function stopDuringRederivation(t: TestContext, node: NodeProcess, dbPath: string, devnet: DevnetChainHandle, jitter: number, what: string): Promise<boolean> {
  await new Promise((r) => setTimeout(r, jitter));
  const seen = node.lines.length;
  const s = await stopAndReopen(node, dbPath, devnet, `${what} (+${jitter} ms)`);
  const doneBefore = node.lines.slice(0, seen).some((l) => l.msg === 're-derivation done');
  const ended = node.lines.some((l) => l.msg === "re-derivation ended by the node's stop");
  t.diagnostic(`${what} (+${jitter} ms): stopped in ${s.ms} ms at height ${s.tip?.height}; ${ended ? 'the stop ended it' : 'it had finished before the signal'}`);
  if (!doneBefore) assert.ok(ended, `a re-derivation running at the signal is ended by the stop (${what})`);
  return ended;
}

/** POST /admin/clear_halt with the operator's token; the HTTP status. */
async function clearHalt(node: NodeProcess): Promise<number> {
  const r = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  await r.body?.cancel();
  return r.status;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function restUp(node: NodeProcess): Promise<void> {
  const rest = await node.waitFor((l) => l.msg === 'listening' && l['role'] === 'rest', 60_000, 'REST listening');
  node.restUrl = `http://${String(rest['address'])}`;
}

test(`SIGTERM at ${ROUNDS} seeded random points of a ${BACKLOG}-block catch-up, ${LIGHT_ROUNDS} of a paced light one, and during re-derivations: every stop is clean (seed ${SEED})`, { timeout: 600_000 }, async (t) => {
  t.diagnostic(`seed ${SEED} (SVC_STOP_SEED=${SEED} replays it)`);
  const rnd = prng(SEED);
  const devnet = await startDevnet();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-stop-'));
  const dbPath = join(dataDir, 'db');
  let node: NodeProcess | undefined;
  try {
    // Contract state before the backlog, so "the same state" means something.
    node = await startDevnetNode(devnet, { dataDir });
    const wallet = testWallet(61);
    const svc = client(node, devnet, wallet);
    const counter = compileFixture('counter.svc');
    await fund(devnet, wallet, 4);
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    for (const n of [3, 4]) await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${n}`], abi: counter.abi });
    devnet.chain.mine(1);
    const before = await waitSynced(node, devnet);
    const field = `/v2/${dep.contractId}/count`;
    const value = (await getJson(`${node.restUrl}${field}`)).body.value as string;
    assert.equal(value, '7');
    // The state's part of the root (served with a field proof): the tip's state root also
    // commits to its block's decisions, which the empty blocks after this one do not share.
    const contractsRoot = async (n: NodeProcess): Promise<string> => (await getJson(`${n.restUrl}${field}?proof=true`)).body.proof.contracts_root as string;
    const stateBefore = await contractsRoot(node);
    await stopAndReopen(node, dbPath, devnet, 'stop when synced');

    devnet.chain.mine(BACKLOG);
    let last = before.height;
    for (let round = 0; round < ROUNDS; round++) {
      // Every round stops a long catch-up: the chain stays far ahead of the node.
      if (devnet.chain.height - last < BACKLOG / 3) devnet.chain.mine(BACKLOG / 3);
      const end = devnet.chain.height;
      // Block by block (chain_mode "blocks"): a light node reads 3,000 empty blocks as
      // headers in about a second, too fast for a stop to land inside; the stop path (the
      // signal checked between events, the writer's last batch, the close) is the same.
      node = spawnNode({ dataDir, env: devnetEnv(devnet, { SVC_CHAIN_MODE: 'blocks' }) });
      // One round in three stops at a random moment of the start (opening the database,
      // anchoring, the first steps); the others at a random height of the catch-up.
      let what: string;
      const atStart = rnd(3) === 0;
      if (atStart) {
        const ms = rnd(3_000);
        what = `round ${round}: ${ms} ms after the start`;
        // From the node's first line: before it, Node itself is still starting and no
        // process can take a signal (its default action ends the process, exit null).
        await node.waitFor(() => true, 60_000, 'the first log line');
        await new Promise((r) => setTimeout(r, ms));
      } else {
        await restUp(node);
        const from = await reachHeight(node, 0);
        const target = from + rnd(Math.max(1, Math.floor((end - from) * 0.6)));
        const jitter = rnd(200);
        what = `round ${round}: at height ${target} (+${jitter} ms)`;
        await reachHeight(node, target);
        await new Promise((r) => setTimeout(r, jitter));
      }
      const s = await stopAndReopen(node, dbPath, devnet, what);
      t.diagnostic(`${what}: stopped in ${s.ms} ms at ${s.tip ? `height ${s.tip.height}` : 'startup'}`);
      if (s.tip) {
        assert.ok(s.tip.height >= last, `no block lost across the stop (${s.tip.height} >= ${last})`);
        // A stop at a height 60% of the way at most must land before the end: the node stops
        // when told, not after its catch-up. A stop at a moment of the start proves the start
        // (opening, anchoring, the first steps); where the catch-up is by then depends on the
        // machine (1,000 blocks can be read within its 3 s), so it is only reported.
        if (!atStart) assert.ok(s.tip.height < end, `stopped during the catch-up, not after it (${what})`);
        else if (s.tip.height >= end) t.diagnostic(`${what}: the catch-up had ended before the signal`);
        last = s.tip.height;
      }
    }

    // The light catch-up (the default mode; src/chain/header-follower.ts checks the stop
    // signal between pages and between runs of header-only blocks), paced as on a public
    // endpoint: each stop at a seeded header height in the first 60% of the walk.
    let lightHeaders = -1;
    for (let round = 0; round < LIGHT_ROUNDS; round++) {
      // The walk ahead of the stored headers stays at least BACKLOG / 3 long.
      if (devnet.chain.height - Math.max(last, lightHeaders) < BACKLOG / 3) devnet.chain.mine(BACKLOG / 3);
      const end = devnet.chain.height;
      node = spawnNode({ dataDir, env: devnetEnv(devnet, PACED) });
      await restUp(node);
      // From the headers the last round left (they are kept across a stop).
      const headersFrom = await reachHeaderHeight(node, 0);
      const target = headersFrom + 1 + rnd(Math.max(1, Math.floor((end - headersFrom) * 0.6)));
      const jitter = rnd(200);
      const what = `light round ${round}: at header ${target} (+${jitter} ms)`;
      await reachHeaderHeight(node, target);
      await new Promise((r) => setTimeout(r, jitter));
      const s = await stopAndReopen(node, dbPath, devnet, what);
      t.diagnostic(`${what}: stopped in ${s.ms} ms at height ${s.tip?.height}`);
      assert.ok(s.tip, `the light node had opened its database (${what})`);
      assert.ok(s.tip.height >= last && s.tip.height < end, `stopped during the light catch-up, no block lost (${last} <= ${s.tip.height} < ${end})`);
      lightHeaders = target;
      last = s.tip.height;
    }

    // The catch-up resumes to the tip with the state it had before the backlog.
    node = spawnNode({ dataDir, env: devnetEnv(devnet) });
    await restUp(node);
    await waitSynced(node, devnet, 300_000);
    assert.equal((await getJson(`${node.restUrl}${field}`)).body.value, value, 'the contract state survived every stop');
    assert.deepEqual((await getJson(`${node.restUrl}/v2/state_root/${before.height}`)).body.state_root, before.stateRoot);

    // A reorg deeper than the undo window: the node re-derives its state from the journal
    // (thousands of blocks). Stopped during it, the node must stop as cleanly.
    const rederiving = node.waitForNext((l) => l.msg === 're-deriving state from the block journal', 120_000, 're-derivation');
    devnet.chain.reorg({ depth: 200, blocks: 201 });
    await rederiving;
    await stopDuringRederivation(t, node, dbPath, devnet, rnd(300), 'reorg re-derivation');

    node = spawnNode({ dataDir, env: devnetEnv(devnet) });
    await restUp(node);
    const after = await waitSynced(node, devnet, 300_000);
    assert.equal(after.height, devnet.chain.height);
    assert.equal((await getJson(`${node.restUrl}${field}`)).body.value, value, 'the contract state survived the stopped re-derivation');
    assert.equal(after.height, devnet.chain.height);
    assert.equal(await contractsRoot(node), stateBefore, 'the same state as before the backlog (the backlog and the new branch hold no stamps)');
    await stopAndReopen(node, dbPath, devnet, 'stop when synced again');

    // An operator's clear_halt re-derives from the journal too. Stopped during it, the
    // node comes back halted with the same reason (the clear did not finish), and a
    // clear that runs to its end resumes it.
    const reason = 'halted by the test';
    const db = await Db.open(dbPath);
    await db.put(meta.halt.key, meta.halt.encode({ reason }));
    await db.close();
    const env = devnetEnv(devnet, { SVC_API_TOKEN: TOKEN });
    node = spawnNode({ dataDir, env });
    await restUp(node);
    assert.equal((await nodeStatus(node))['halt_reason'], reason);
    const clearing = node.waitForNext((l) => l.msg === 're-deriving state from the block journal', 60_000, 'clear_halt re-derivation');
    const clear = clearHalt(node).catch(() => null);
    await clearing;
    const ended = await stopDuringRederivation(t, node, dbPath, devnet, rnd(300), 'clear_halt re-derivation');
    await clear;
    node = spawnNode({ dataDir, env });
    await restUp(node);
    if (ended) assert.equal((await nodeStatus(node))['halt_reason'], reason, 'a clear_halt ended by a stop leaves the halt in place');
    if ((await nodeStatus(node))['halted']) assert.equal(await clearHalt(node), 200);
    await waitSynced(node, devnet, 300_000);
    assert.equal(await contractsRoot(node), stateBefore);
    await stopAndReopen(node, dbPath, devnet, 'stop after the halt was cleared');

    // The open-mark tells the other case apart: killed with the database open, the next
    // start says so.
    node = spawnNode({ dataDir, env: devnetEnv(devnet) });
    await node.waitFor((l) => l.msg === 'database open', 60_000, 'database open');
    const core = Number((await node.waitFor((l) => l.msg === 'child started' && l['role'] === 'core'))['child_pid']);
    await node.killHard();
    // The supervisor's exit is seen first; the core, holding the database's lock, goes with it.
    while (alive(core)) await new Promise((r) => setImmediate(r));
    const killed = await Db.open(dbPath);
    assert.ok(await killed.get(meta.openSince.key), 'a node killed with the database open leaves its open-mark');
    await killed.close();
    node = spawnNode({ dataDir, env: devnetEnv(devnet) });
    await node.waitFor((l) => l.msg === 'the previous run did not close the database: it was killed or crashed (RocksDB recovered the synced writes)', 60_000, 'the unclean-close warning');
    await stopAndReopen(node, dbPath, devnet, 'stop after a kill');
  } finally {
    await node?.killHard();
    await devnet.close();
  }
});

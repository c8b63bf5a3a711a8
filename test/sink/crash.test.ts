/**
 * Exactly once under kill -9: `svc sink postgres` (its own process) is killed with SIGKILL
 * at random points while it catches up on thousands of events, then started again; at the
 * end the tables equal what the node serves, with no event missing or doubled. The points
 * come from a seeded generator; the seed is printed, and SINK_CRASH_SEED=N replays it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { TOKEN, assertEqualToNode, sinkThrough, spawnSink } from './kit.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let pg: PgServer;
let emitterId = '';
/** Calls of the emitter fixture, 2,000 events each, one block each. */
const CALLS = 12;
const KILLS = 5;

/** mulberry32: a small seeded generator, so a failing run replays exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

before(async () => {
  [pg, devnet] = await Promise.all([startPostgres(), startDevnet()]);
  node = await startDevnetNode(devnet, { env: { SVC_API_TOKEN: TOKEN } });
  const wallet = testWallet(24);
  await fund(devnet, wallet, CALLS + 4);
  const svc = client(node, devnet, wallet);
  const emitter = compileFixture('emitter.svc');
  emitterId = (await svc.deploy(emitter)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  for (let i = 0; i < CALLS; i++) {
    const t = (await svc.call({ contractId: emitterId, function: 'burst', args: [], abi: emitter.abi })).anchor.txid;
    devnet.chain.mine(1, [t]);
  }
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
  await pg?.stop();
});

test(`kill -9 at ${KILLS} random points of a catch-up of ${CALLS * 2000} events, then a restart: equal to the node, nothing twice`, async () => {
  const seed = Number(process.env['SINK_CRASH_SEED'] ?? Date.now() % 1_000_000);
  console.log(`sink crash seed ${seed} (replay: SINK_CRASH_SEED=${seed})`);
  const random = rng(seed);
  const args = ['--node', node.restUrl, '--database', pg.url, '--contract', emitterId];
  const tip = devnet.chain.height;
  const landed: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const p = spawnSink(args);
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    // A random point of what is left of the catch-up: once the database passes a random
    // block of it, then a random 0-10 ms more (the next transaction is often in flight).
    const from = Math.max(await sinkThrough(pg).catch(() => -1), tip - CALLS);
    const target = from + Math.floor(random() * Math.max(1, tip - from));
    const extra = Math.floor(random() * 10);
    while ((await sinkThrough(pg).catch(() => -1)) < target && p.exitCode === null) await new Promise<void>((r) => setTimeout(r, 25)); // polls the database
    await new Promise<void>((r) => setTimeout(r, extra));
    p.kill('SIGKILL');
    await exited;
    landed.push(await sinkThrough(pg).catch(() => -2));
  }
  console.log(`through heights after each kill: ${landed.join(', ')} (tip ${tip})`);
  const p = spawnSink(args);
  // Its signal handlers are set before its first line; SIGTERM before that would kill it.
  while (!p.out.some((l) => l.startsWith('svc sink: following'))) {
    assert.equal(p.exitCode, null, `the sink exited: ${p.out.slice(-5).join('\n')}`);
    await new Promise<void>((r) => p.stdout!.once('data', () => r()));
  }
  try {
    const deadline = Date.now() + 120_000;
    while ((await sinkThrough(pg)) < tip) {
      assert.ok(Date.now() < deadline, `caught up by now; output:\n${p.out.slice(-10).join('\n')}`);
      assert.equal(p.exitCode, null, `the sink exited: ${p.out.slice(-5).join('\n')}`);
      await new Promise<void>((r) => setTimeout(r, 200)); // polls the database: the condition is its state
    }
  } finally {
    p.kill('SIGTERM');
    await new Promise<void>((r) => (p.exitCode !== null ? r() : p.once('exit', () => r())));
  }
  assert.equal(p.exitCode, 0, 'SIGTERM ends it cleanly');
  await assertEqualToNode(pg, node.restUrl, [emitterId]);
  const n = (await pg.query('SELECT count(*)::int AS n FROM svc.events')).rows[0].n;
  assert.equal(n, CALLS * 2000);
});

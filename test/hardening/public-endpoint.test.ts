/**
 * A node on an endpoint that behaves like the public one (the devnet's public mode: a
 * request budget per address, 429 with Retry-After past it), configured with a budget
 * larger than the endpoint allows: it is throttled, shows it (node_status.chain.budget,
 * svc_chain_budget_throttled_total), pauses, and still follows the chain. The same node
 * with a budget under the endpoint's never sees a 429. A fresh node with the default budget
 * catches up on the public endpoint's terms without one; a 429 it meets is one log line,
 * named in node_status while the node waits it out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PUBLIC_MODE_DEFAULTS, startDevnetChain } from '../../src/devnet/chain-server.js';
import { getJson, startDevnetNode, waitUntil } from '../helpers/devnet-node.js';
import { startNode } from '../helpers/node-process.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

test('a budget above the endpoint\'s is throttled, shown, paused and still follows the chain; one below it is never throttled', async () => {
  // 36,000 an hour per address: 10 a second, burst 5.
  const devnet = await startDevnetChain({ initialBlocks: 101, publicMode: { requestsPerHour: 36_000, burst: 5 } });
  // Polling every 20 ms asks for ~50 a second: over the endpoint's 10.
  // Anchored at the tip: no catch-up, only following.
  const greedy = await startDevnetNode(devnet, { env: { SVC_BLOCK_CHECK_INTERVAL_S: '0.02', SVC_START_HEIGHT: String(devnet.chain.height) } });
  try {
    const status = async (): Promise<JsonAnswer> => (await getJson(`${greedy.restUrl}/node_status`)).body;
    await waitUntil(greedy, async () => (await status()).chain.budget.throttled_total >= 2, 'the node throttled by the endpoint', 30_000);
    const metrics = await (await fetch(`${greedy.restUrl}/metrics`)).text();
    assert.match(metrics, /^svc_chain_budget_throttled_total [1-9]\d*$/m);
    assert.ok(devnet.endpoint.counters().total['429'].requests >= 2);
    // Still following: a new block is applied despite the 429s.
    const mined = devnet.chain.mine(1);
    await waitUntil(greedy, async () => (await status()).processed_height === mined.height, 'the new block applied', 30_000);
  } finally {
    await greedy.stop();
  }
  // A budget under the endpoint's: 7,200 an hour and a burst of 4, against its 36,000 and 5.
  devnet.endpoint.resetCounters();
  const modest = await startDevnetNode(devnet, {
    env: { SVC_BLOCK_CHECK_INTERVAL_S: '0.02', SVC_START_HEIGHT: String(devnet.chain.height), SVC_ESPLORA_REQUESTS_PER_HOUR: '7200', SVC_ESPLORA_BURST: '4' },
  });
  try {
    const status = async (): Promise<JsonAnswer> => (await getJson(`${modest.restUrl}/node_status`)).body;
    const mined = devnet.chain.mine(1);
    await waitUntil(modest, async () => (await status()).processed_height === mined.height, 'the new block applied', 30_000);
    const budget = (await status()).chain.budget;
    assert.equal(budget.requests_per_hour, 7_200);
    assert.equal(budget.throttled_total, 0);
    assert.ok(budget.used_last_hour >= 5, JSON.stringify(budget));
    assert.equal(devnet.endpoint.counters().total['429'].requests, 0);
  } finally {
    await modest.stop();
    await devnet.close();
  }
});

test('a fresh node with the default budget catches up on the public endpoint without a 429; a 429 is said once, shown in node_status, and waited out', async () => {
  // The public endpoint's terms: 700 an hour per address, 10 at once.
  const devnet = await startDevnetChain({ initialBlocks: 90, publicMode: PUBLIC_MODE_DEFAULTS });
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-public-'));
  // Only the endpoint is set: the budget and the block check interval are the defaults.
  const fresh = await startNode({ dataDir, env: { SVC_ESPLORA_URL: devnet.url } });
  let node = fresh;
  try {
    const status = async (): Promise<JsonAnswer> => (await getJson(`${node.restUrl}/node_status`)).body;
    await waitUntil(node, async () => (await status()).processed_height === 90, 'the catch-up', 90_000);
    const caughtUp = devnet.endpoint.counters().total;
    // More requests than the endpoint lets through at once: a budget with a burst above
    // the endpoint's would have been refused here.
    assert.ok(caughtUp.all.requests > PUBLIC_MODE_DEFAULTS.burst, JSON.stringify(caughtUp));
    assert.equal(caughtUp['429'].requests, 0, JSON.stringify(devnet.endpoint.counters().routes));
    assert.equal((await status()).chain.budget.throttled_total, 0);
    assert.equal(node.lines.filter((l) => /429/.test(l.msg)).length, 0);
    await node.stop();

    // Another client on the address spends the endpoint's allowance; the node, restarted
    // and polling often, meets a 429.
    for (let i = 0; i < 2 * PUBLIC_MODE_DEFAULTS.burst; i++) {
      if ((await fetch(`${devnet.url}/blocks/tip/height`).then((r) => (void r.arrayBuffer(), r.status))) === 429) break;
    }
    devnet.endpoint.resetCounters();
    const mined = devnet.chain.mine(1);
    node = await startNode({ dataDir, env: { SVC_ESPLORA_URL: devnet.url, SVC_BLOCK_CHECK_INTERVAL_S: '0.5' } });
    const said = await node.waitFor((l) => l.msg.startsWith('chain endpoint answered 429'), 30_000, 'the 429 line');
    assert.equal(said.level, 'warn');
    assert.equal(typeof said['wait_ms'], 'number');
    assert.ok((said['wait_ms'] as number) >= 1_000, JSON.stringify(said)); // the devnet's Retry-After, in whole seconds
    // While it waits, the status says why the endpoint is not ok.
    const waiting = (await status()).chain;
    assert.equal(waiting.endpoint_ok, false, JSON.stringify(waiting));
    assert.match(waiting.last_error, /429 Too Many Requests.*waits \d+ ms \(its Retry-After\)/);
    await waitUntil(node, async () => (await status()).processed_height === mined.height, 'the new block after the wait', 60_000);
    const after = (await status()).chain;
    assert.equal(after.endpoint_ok, true);
    assert.equal(after.last_error, null);
    assert.ok(after.budget.throttled_total >= 1);
    assert.equal(after.budget.throttled_total, devnet.endpoint.counters().total['429'].requests);
    // One line for the spell, however many 429s it held.
    assert.equal(node.lines.filter((l) => l.msg.startsWith('chain endpoint answered 429')).length, 1);
  } finally {
    await node.stop();
    await devnet.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * A node on an endpoint that behaves like the public one (the devnet's public mode: a
 * request budget per address, 429 with Retry-After past it), configured with a budget
 * larger than the endpoint allows: it is throttled, shows it (node_status.chain.budget,
 * svc_chain_budget_throttled_total), pauses, and still follows the chain. The same node
 * with a budget under the endpoint's never sees a 429.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDevnetChain } from '../../src/devnet/chain-server.js';
import { getJson, startDevnetNode, waitUntil } from '../helpers/devnet-node.js';

test('a budget above the endpoint\'s is throttled, shown, paused and still follows the chain; one below it is never throttled', async () => {
  // 36,000 an hour per address: 10 a second, burst 5.
  const devnet = await startDevnetChain({ initialBlocks: 101, publicMode: { requestsPerHour: 36_000, burst: 5 } });
  // Polling every 20 ms asks for ~50 a second: over the endpoint's 10.
  // Anchored at the tip: no catch-up, only following.
  const greedy = await startDevnetNode(devnet, { env: { SVC_BLOCK_CHECK_INTERVAL_S: '0.02', SVC_START_HEIGHT: String(devnet.chain.height) } });
  try {
    const status = async (): Promise<any> => (await getJson(`${greedy.restUrl}/node_status`)).body;
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
    const status = async (): Promise<any> => (await getJson(`${modest.restUrl}/node_status`)).body;
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

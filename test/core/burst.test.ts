/**
 * A burst of blocks reaching a light node (chain_mode "light", the default) that holds
 * pending calls: 300 blocks at once, as after an hour away at devnet speed. The blocks
 * that confirm the held calls are found before the burst is applied and applied with
 * them (no replay, no re-derivation), at a cost far below reading every block; roots and
 * statuses are those of a node reading every block (chain_mode "blocks", on its own
 * endpoint over the same chain so each node's requests are counted alone); the live feed
 * delivers every block of the burst and the next block's events.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DevnetEndpoint, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { FeedClient } from '../rest/stream/feed-client.js';

let devnet: DevnetChainHandle;
/** The blocks-mode node's own endpoint over the devnet's chain (its requests counted apart). */
let fullEndpoint: DevnetEndpoint;
let fullServer: Server;
let light: NodeProcess;
let full: NodeProcess;
let svc: SvcClient;
const wallet = testWallet(46);
let counter: Artifact;
let counterId = '';

before(async () => {
  devnet = await startDevnet();
  fullEndpoint = new DevnetEndpoint(devnet.chain);
  fullServer = createServer(fullEndpoint.handle);
  await new Promise<void>((r) => fullServer.listen(0, '127.0.0.1', () => r()));
  const fullUrl = `http://127.0.0.1:${(fullServer.address() as AddressInfo).port}`;
  // Polling every second (the devnet default is 0.05 s) puts deferred checks a few seconds
  // after a payload's arrival, as a public endpoint's budget does: the burst is applied
  // before any of them can place a held call, as it was on the node this was seen on.
  light = await startDevnetNode(devnet, { env: { SVC_BLOCK_CHECK_INTERVAL_S: '1' } });
  full = await startDevnetNode({ ...devnet, url: fullUrl }, { env: { SVC_CHAIN_MODE: 'blocks' } });
  await fund(devnet, wallet, 12);
  svc = client(light, devnet, wallet);
  counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  counterId = dep.contractId;
  assert.equal((await postJson(`${full.restUrl}/deploy_contract`, dep.body)).status < 300, true, 'the blocks-mode node takes the deploy');
  devnet.chain.mine(1);
  await Promise.all([waitSynced(light, devnet), waitSynced(full, devnet)]);
});

after(async () => {
  await Promise.all([light?.stop(), full?.stop()]);
  await new Promise<void>((r) => (fullServer ? fullServer.close(() => r()) : r()));
  await devnet?.close();
});

/** A call sent to the light node through the SDK and posted as is to the blocks-mode node. */
async function bump(n: number): Promise<string> {
  const c = await svc.call({ contractId: counterId, function: 'bump', args: [`u64:${n}`], abi: counter.abi });
  const r = await postJson(`${full.restUrl}/contract_call`, c.body);
  assert.ok(r.status < 300, `the blocks-mode node takes the call: ${JSON.stringify(r.body)}`);
  return c.anchor.txid;
}

const statusOf = async (node: NodeProcess, txid: string) => (await getJson(`${node.restUrl}/contract_call/${txid}/status`)).body;
const requests = (c: ReturnType<DevnetEndpoint['counters']>): number => c.total.all.requests;

test('a 300-block burst confirming held calls applies their blocks with them: no replay, no re-derivation, a few requests, the roots of a node reading every block', async () => {
  const feed = await FeedClient.connect(light.restUrl);
  feed.send({ type: 'subscribe', id: 'b', kind: 'blocks' });
  await feed.waitFor((m) => m.type === 'synced' && m['sub'] === 'b');
  const start = devnet.chain.height;

  const early = [await bump(1), await bump(2), await bump(3)];
  const middle = [await bump(4), await bump(5)];
  devnet.endpoint.resetCounters();
  fullEndpoint.resetCounters();
  // One burst: nothing runs between these lines, so both nodes see 300 new blocks at once.
  devnet.chain.mine(1, early);
  devnet.chain.mine(149, []);
  devnet.chain.mine(1, middle);
  devnet.chain.mine(149, []);
  const tip = devnet.chain.height;
  assert.equal(tip - start, 300);
  await Promise.all([waitSynced(light, devnet, 120_000), waitSynced(full, devnet, 120_000)]);

  assert.deepEqual(
    light.lines.filter((l) => l.msg === 're-deriving state from the block journal' || l.msg === 'replayed after a late payload').map((l) => l.msg),
    [],
    'the light node applied the confirming blocks with their calls: no replay, no re-derivation',
  );
  const lookups = light.lines.filter((l) => l.msg === 'held anchors looked for before applying blocks as headers');
  assert.equal(lookups.length, 1, 'one look for the held anchors, before the burst was applied');
  assert.deepEqual(lookups[0]!['confirming_blocks'], [start + 1, start + 151]);
  for (const [txid, height] of [...early.map((t) => [t, start + 1] as const), ...middle.map((t) => [t, start + 151] as const)]) {
    const [l, f] = await Promise.all([statusOf(light, txid), statusOf(full, txid)]);
    assert.equal(l.status, 'executed', JSON.stringify(l));
    assert.equal(l.block_height, height);
    assert.deepEqual(l, f, 'the same status as the blocks-mode node');
  }
  for (let h = start; h <= tip; h++) {
    const [l, f] = await Promise.all([getJson(`${light.restUrl}/v2/state_root/${h}`), getJson(`${full.restUrl}/v2/state_root/${h}`)]);
    assert.deepEqual(l.body, f.body, `the same root at ${h}`);
  }

  const lightCounts = devnet.endpoint.counters();
  const fullCounts = fullEndpoint.counters();
  const routes = (r: string): number => lightCounts.routes[r]?.all.requests ?? 0;
  const byRoute = JSON.stringify(Object.fromEntries(Object.entries(lightCounts.routes).map(([k, v]) => [k, v.all.requests])));
  // Headers: 30 pages; held anchors asked: at most one per ten blocks; the two confirming blocks read in full.
  assert.ok(routes('/tx/:id/status') <= 30, `held anchors asked ${routes('/tx/:id/status')} times: ${byRoute}`);
  assert.equal(routes('/block/:id/raw'), 2, `only the two confirming blocks are read in full: ${byRoute}`);
  assert.ok(requests(lightCounts) * 4 < requests(fullCounts), `light ${byRoute} against ${requests(fullCounts)} requests reading every block`);

  // The feed: every block of the burst, in order, then the next block's events to a subscription opened now.
  // Well within the 25 s after which the REST front looks at the node's state again unasked:
  // the feed steps through the burst as soon as the node has applied it.
  await feed.waitFor((m) => m.type === 'block' && m['sub'] === 'b' && m['height'] === tip, 15_000);
  assert.deepEqual(feed.of('b', 'block').map((m) => m['height']), Array.from({ length: tip - start }, (_, i) => start + 1 + i));
  feed.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: counterId });
  await feed.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
  const next = await bump(6);
  devnet.chain.mine(1, [next]);
  await waitSynced(light, devnet);
  const ev = await feed.waitFor((m) => m.type === 'event' && m['sub'] === 'e', 30_000);
  assert.equal(ev['txid'], next);
  assert.equal(ev['block_height'], tip + 1);
  feed.close();
});

test('a call confirmed deep in a burst that reached the node after it replays from its block, not from the journal\'s start', async () => {
  // Sent to the blocks-mode node only: the light node holds nothing, so it applies the burst as headers.
  const c = await client(full, devnet, wallet).call({ contractId: counterId, function: 'bump', args: ['u64:7'], abi: counter.abi });
  const start = devnet.chain.height;
  devnet.chain.mine(1, [c.anchor.txid]);
  devnet.chain.mine(299, []);
  const tip = devnet.chain.height;
  await Promise.all([waitSynced(light, devnet, 120_000), waitSynced(full, devnet, 120_000)]);
  assert.equal((await statusOf(full, c.anchor.txid)).block_height, start + 1);

  const seen = light.lines.length;
  const r = await postJson(`${light.restUrl}/contract_call`, c.body);
  assert.ok(r.status < 300, JSON.stringify(r.body));
  const replay = await light.waitFor((l) => light.lines.indexOf(l) >= seen && l.msg === 'replayed after a late payload', 60_000, 'the late call\'s replay');
  assert.equal(replay['from'], start + 1, 'replayed from the block that confirmed it');
  assert.equal(replay['to'], tip);
  assert.deepEqual(light.lines.slice(seen).filter((l) => l.msg === 're-deriving state from the block journal'), [], 'no re-derivation from the journal\'s start');
  const [l, f] = await Promise.all([statusOf(light, c.anchor.txid), statusOf(full, c.anchor.txid)]);
  assert.equal(l.status, 'executed', JSON.stringify(l));
  assert.deepEqual(l, f, 'the same status as the blocks-mode node');
  for (let h = start; h <= tip; h++) {
    const [a, b] = await Promise.all([getJson(`${light.restUrl}/v2/state_root/${h}`), getJson(`${full.restUrl}/v2/state_root/${h}`)]);
    assert.deepEqual(a.body, b.body, `the same root at ${h}`);
  }
});

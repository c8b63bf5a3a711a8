/**
 * Light catch-up over real processes: a fresh light node (chain_mode "light", the default) with
 * one peer catches up through the peer's verified headers (GetHeaders, each run
 * authenticated by one endpoint answer) and its payloads with their Bitcoin evidence, at
 * a counted cost at its own chain-data endpoint far below walking the headers ten a page;
 * and it ends with the roots and statuses of the peer, a node that reads every block
 * (chain_mode "blocks").
 *
 * The light node has an endpoint of its own: a second devnet HTTP front over the same
 * chain, whose counters (GET /devnet/counters) hold the light node's requests alone.
 */
import { test, after } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, getJson, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf, waitStatus } from '../helpers/gossip.js';
import { ownEndpoint as serveOwnEndpoint, requestsOf, type OwnEndpoint } from '../helpers/own-endpoint.js';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { PeerClient } from '../../src/gossip/client.js';
import { Signer } from '../../src/gossip/auth.js';

const cleanup: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

/** The light node's own endpoint (helpers/own-endpoint.ts), closed after the tests. */
async function ownEndpoint(devnet: DevnetChainHandle, notFound?: RegExp): Promise<OwnEndpoint> {
  const own = await serveOwnEndpoint(devnet, notFound);
  cleanup.push(() => own.close());
  return own;
}

/** Every height's state root and every call's status, as two nodes answer them, equal. */
async function sameAnswers(a: NodeProcess, b: NodeProcess, tip: number, txids: string[]): Promise<void> {
  for (let h = 0; h <= tip; h += 50) {
    const heights = Array.from({ length: Math.min(50, tip + 1 - h) }, (_, i) => h + i);
    const [ra, rb] = await Promise.all([a, b].map((n) => Promise.all(heights.map(async (x) => (await getJson(`${n.restUrl}/v2/state_root/${x}`)).body))));
    assert.deepEqual(rb, ra, `state roots at heights ${h}..${h + heights.length - 1}`);
  }
  for (const t of txids) {
    const [sa, sb] = await Promise.all([getJson(`${a.restUrl}/contract_call/${t}/status`), getJson(`${b.restUrl}/contract_call/${t}/status`)]);
    assert.equal(sa.status, 200);
    assert.deepEqual(sb, sa, `status of ${t}`);
  }
}

test('a fresh light node catches up through its peer\'s headers and evidenced payloads, with a handful of endpoint requests, and answers what a blocks node answers', { timeout: 300_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  // 1,500 blocks of history: walking them from the endpoint costs 150 requests of ten headers.
  devnet.chain.mine(1_400);
  const [pA, pL] = await Promise.all([freePort(), freePort()]);
  const A = await startPeerNode(devnet, { name: 'light-full', port: pA, peers: [], env: { SVC_CHAIN_MODE: 'blocks' } });
  cleanup.push(() => A.stop());
  const wallet = testWallet(26);
  await fund(devnet, wallet, 10);
  await waitSynced(A, devnet, 120_000);
  const svc = client(A, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  devnet.chain.mine(1);
  const txids: string[] = [];
  const bump = async (n: number): Promise<void> => {
    txids.push((await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${n}`], abi: counter.abi })).anchor.txid);
  };
  // Calls confirmed in three blocks deep in the history, then 20 more blocks, then two
  // calls still pending: the light node reads the deep blocks as headers with evidence.
  for (let i = 1; i <= 6; i++) {
    await waitSynced(A, devnet);
    await bump(i);
    if (i % 2 === 0) devnet.chain.mine(1);
  }
  devnet.chain.mine(20, []);
  await waitSynced(A, devnet);
  await bump(7);
  await bump(8);
  await waitStatus(A, (s) => s.pending_calls === 2, 'two calls pending on the blocks node');
  const tip = devnet.chain.height;

  const own = await ownEndpoint(devnet);
  const L = await startPeerNode(devnet, { name: 'light-fresh', port: pL, peers: [pA], env: { SVC_ESPLORA_URL: own.url, SVC_BLOCK_CHECK_INTERVAL_S: '0.5' } });
  cleanup.push(() => L.stop());
  await waitSynced(L, devnet, 120_000);
  if (process.env['GOSSIP_TEST_DEBUG']) {
    cleanup.push(async () => {
      for (const l of L.lines) if (String(l.target).startsWith('gossip')) console.error(JSON.stringify(l));
    });
  }
  const s = await waitStatus(L, (x) => x.gossip.sync_payloads_applied === txids.length + 1 && x.pending_calls === 2, 'the deploy and every call synced');
  await sameAnswers(A, L, tip, txids);
  // Every block applied once: none before the payloads anchored in it were taken (the
  // first sync holds blocks back while it delivers, up to the height it has delivered
  // everything through), so no payload arrived late and replayed the chain from its block.
  const replays = L.lines.filter((l) => l.msg === 'replayed after a late payload');
  assert.deepEqual(replays, [], 'no replay while catching up');
  // What an operator reads meanwhile: the payloads taken out of those the sync listed to
  // fetch (the deploy and the 8 calls), listed before the first was taken.
  const waiting = L.lines.filter((l) => l.msg === 'catching up' && l['waiting_for'] === 'first peer sync');
  assert.ok(waiting.length > 0, 'a catching-up line while the first sync held blocks back');
  for (const l of waiting) {
    const [taken, listed] = [Number(l['sync_payloads_taken']), Number(l['sync_payloads_listed'])];
    assert.ok(taken === 0 || listed === txids.length + 1, `payloads taken ${taken} out of ${listed} listed`);
    // And how fast, and when at that rate: a number once the sync has taken payloads twice, null before.
    for (const f of ['sync_payloads_per_s', 'sync_eta_s']) assert.ok(f in l && (l[f] === null || Number.isFinite(l[f])), `${f} in ${JSON.stringify(l)}`);
  }

  const c = await own.counters();
  const byRoute = Object.fromEntries(Object.entries(c.routes).map(([r, t]) => [r, t.all.requests]));
  const paging = Math.ceil(tip / 10);
  // Tip following (GET /blocks, every block_check_interval_s) is the same for any node and
  // grows with the wait, not with the history; everything else is what catching up cost.
  const catchUp = c.total.all.requests - requestsOf(c, '/blocks');
  console.log(`# light catch-up over ${tip} blocks from one peer: ${catchUp} endpoint requests besides tip polls (walking the headers: ${paging}); by route ${JSON.stringify(byRoute)}; headers from the peer ${s.gossip.sync_headers_accepted}`);
  assert.equal(requestsOf(c, '/blocks/:n'), 0, 'no header page walked at the endpoint');
  assert.equal(requestsOf(c, '/tx/:id/hex'), 0, 'every synced payload came with its anchor: intake asked nothing');
  assert.equal(requestsOf(c, '/tx/:id/merkle-proof'), 0, 'the evidence of the synced payloads placed them: no deferred check asked for a proof');
  // The two pending calls: a first check each (spent in the mempool), then checks wait for
  // new blocks of the chain, not for the blocks the node applies catching up (it was 10 a
  // call when backoff counted applied blocks). At most one more each if a first check
  // came before the header chain arrived.
  assert.ok(requestsOf(c, '/tx/:id/outspend/:n') <= 4, `outspend checks of the 2 pending calls: ${requestsOf(c, '/tx/:id/outspend/:n')}`);
  assert.ok(s.gossip.sync_headers_accepted >= tip - 10, `headers taken from the peer: ${s.gossip.sync_headers_accepted}`);
  assert.ok(catchUp * 5 <= paging, `${catchUp} requests to catch up, against ${paging} to walk the headers`);

  // GetHeaders as any peer asks it: the verified chain byte for byte, the tip, nothing above it.
  const asker = new PeerClient(urlOf(pL), new Signer(new Uint8Array(32).fill(77)), 10_000);
  try {
    const page = await asker.call('GetHeaders', { from_height: 1, count: 0 });
    assert.deepEqual([page.from_height, page.tip_height, page.headers.length], [1, tip, tip * 80], 'every header from 1 to the tip (under the 2,000 a page)');
    for (let h = 1; h <= tip; h += 97) assert.equal(Buffer.from(page.headers.subarray((h - 1) * 80, h * 80)).toString('hex'), devnet.chain.blockAt(h)!.header.hex, `header ${h}`);
    const last = await asker.call('GetHeaders', { from_height: tip - 1, count: 5 });
    assert.equal(last.headers.length, 2 * 80, 'as far as the node holds them');
    const above = await asker.call('GetHeaders', { from_height: tip + 1, count: 5 });
    assert.deepEqual([above.headers.length, above.tip_height], [0, tip], 'none above the tip, and the tip to say so');
  } finally {
    asker.close();
  }
});

test('a light node back after its pending call confirmed deep in the chain takes the confirmation from its peer\'s evidence, with no endpoint proof', { timeout: 240_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  const [pA, pV] = await Promise.all([freePort(), freePort()]);
  const A = await startPeerNode(devnet, { name: 'evidence-full', port: pA, peers: [], env: { SVC_CHAIN_MODE: 'blocks' } });
  cleanup.push(() => A.stop());
  const wallet = testWallet(28);
  await fund(devnet, wallet, 4);
  // The light node's endpoint serves neither merkle proofs nor outspends: its deferred
  // checks can place nothing, so only a peer's evidence can.
  const own = await ownEndpoint(devnet, /\/(merkle-proof|outspend\/\d+)$/);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-evidence-light-'));
  const env = { SVC_ESPLORA_URL: own.url, SVC_PEER_SYNC_INTERVAL_S: '1' };
  let V = await startPeerNode(devnet, { name: 'evidence-light', port: pV, peers: [pA], dataDir, env });
  cleanup.push(() => V.stop());
  await Promise.all([waitSynced(A, devnet), waitSynced(V, devnet)]);
  const svc = client(A, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  devnet.chain.mine(1);
  await Promise.all([waitSynced(A, devnet), waitSynced(V, devnet)]);
  await waitStatus(V, (s) => s.contracts === 1, 'the deploy on the light node');
  const call = (await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:5'], abi: counter.abi })).anchor.txid;
  await waitStatus(V, (s) => s.pending_calls === 1, 'the call pending on the light node');
  await V.stop();
  // Confirmed, then twenty blocks on: back, the light node reads that block as a header
  // (raw blocks only within six of its header tip, which a peer's run leaves six below
  // the peer's), and the call is placed only by evidence.
  devnet.chain.mine(1, [call]);
  devnet.chain.mine(20, []);
  await waitSynced(A, devnet);
  V = await startPeerNode(devnet, { name: 'evidence-light', port: pV, peers: [pA], dataDir, env });
  if (process.env['GOSSIP_TEST_DEBUG']) {
    const back = V;
    cleanup.push(async () => {
      for (const l of back.lines) if (String(l.target).startsWith('gossip') || l.level !== 'info') console.error(JSON.stringify(l));
    });
  }
  await waitSynced(V, devnet, 60_000);
  // The gossip process reports its counters to node_status at most four times a second.
  await waitStatus(V, (x) => x.pending_calls === 0 && x.gossip.sync_evidence_taken >= 1, 'the call decided on the light node by its peer\'s evidence', 30_000);
  const [sa, sv] = await Promise.all([getJson(`${A.restUrl}/contract_call/${call}/status`), getJson(`${V.restUrl}/contract_call/${call}/status`)]);
  assert.equal(sa.body.status, 'executed');
  assert.deepEqual(sv, sa, 'the same status and result as the blocks node');
  const c = await own.counters();
  assert.equal(c.routes['/tx/:id/merkle-proof']?.['2xx'].requests ?? 0, 0, 'no proof from the endpoint');
});

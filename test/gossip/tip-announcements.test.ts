/**
 * Issue 26, a block at the tip: a light node learns of new blocks from its peers'
 * heartbeats (each carries the sender's best header) and pays one endpoint request a
 * block: the raw block by the announced hash while payloads wait for a confirmation, the
 * endpoint's newest headers otherwise. Its own poll (block_check_interval_s, 300 s here)
 * never runs in the test's time, so every block it reaches came from an announcement.
 * Announcements are hints: a lying peer's cost one request an interval between them,
 * change nothing, and do not delay an honest peer's.
 *
 * The light node L has an endpoint of its own (helpers/own-endpoint.ts), so its counters
 * hold L's requests alone; its peer P reads every block (chain_mode "blocks") and polls
 * the devnet every 0.2 s.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, fund, getJson, nodeStatus, startDevnet, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf, waitStatus } from '../helpers/gossip.js';
import { ownEndpoint, requestsOf } from '../helpers/own-endpoint.js';
import { PeerClient } from '../../src/gossip/client.js';
import { Signer } from '../../src/gossip/auth.js';
import { hashMeetsTarget, parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import type { DevnetCounters } from '../../src/devnet/chain-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

/** Requests by route between two counter readings, routes with none left out. */
function delta(before: DevnetCounters, now: DevnetCounters): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of Object.keys(now.routes)) {
    const n = requestsOf(now, r) - requestsOf(before, r);
    if (n > 0) out[r] = n;
  }
  return out;
}

/**
 * An 80-byte header on `prevHash` that meets the target of its `bits` (regtest's own by
 * default: about one try in two) but is no block the chain holds.
 */
function forgedHeader(prevHash: string, bits = 0x207fffff): Uint8Array {
  const h = Buffer.alloc(80);
  h.writeUInt32LE(0x20000000, 0);
  Buffer.from(prevHash, 'hex').reverse().copy(h, 4);
  h.fill(0x5a, 36, 68);
  h.writeUInt32LE(1_700_000_000, 68);
  h.writeUInt32LE(bits, 72);
  for (let nonce = 0; ; nonce++) {
    h.writeUInt32LE(nonce, 76);
    const p = parseHeaderBytes(h);
    if (hashMeetsTarget(p.hash, p.bits)) return h;
  }
}

test('a light node follows the tip from its peers\' announcements at one request a block, and a lying announcer costs one request an interval', { timeout: 180_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  const own = await ownEndpoint(devnet);
  cleanup.push(() => own.close());
  const [pP, pL] = await Promise.all([freePort(), freePort()]);
  const P = await startPeerNode(devnet, { name: 'tip-blocks', port: pP, peers: [], env: { SVC_CHAIN_MODE: 'blocks', SVC_BLOCK_CHECK_INTERVAL_S: '0.2' } });
  cleanup.push(() => P.stop());
  const L = await startPeerNode(devnet, { name: 'tip-light', port: pL, peers: [pP], env: { SVC_ESPLORA_URL: own.url, SVC_BLOCK_CHECK_INTERVAL_S: '300' } });
  cleanup.push(() => L.stop());
  const wallet = testWallet(31);
  await fund(devnet, wallet, 4);
  await Promise.all([waitSynced(P, devnet), waitSynced(L, devnet)]);
  const svc = client(L, devnet, wallet);
  const counter = compileFixture('counter.svc');

  /** Mines one block and waits for L to apply it; the requests L made for it, by route. */
  const block = async (txids?: string[]): Promise<Record<string, number>> => {
    const before = await own.counters();
    devnet.chain.mine(1, txids);
    await waitSynced(L, devnet);
    return delta(before, await own.counters());
  };

  // The deploy waits for a confirmation: the announced block, read whole by its hash.
  // (Submitted to L itself: pending there once answered.)
  const dep = await svc.deploy(counter);
  assert.deepEqual(await block(), { '/block/:id/raw': 1 }, 'the deploy\'s block');
  await waitStatus(L, (s) => s.contracts === 1, 'the contract active on L');

  // A call waits: the same.
  const call1 = (await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: counter.abi })).anchor.txid;
  await waitStatus(L, (s) => s.pending_calls === 1, 'the call pending on L');
  assert.deepEqual(await block(), { '/block/:id/raw': 1 }, 'the call\'s block');
  assert.equal((await getJson(`${L.restUrl}/contract_call/${call1}/status`)).body.status, 'executed');

  // Nothing waits: the endpoint's newest headers authenticate the announced one.
  assert.deepEqual(await block([]), { '/blocks': 1 }, 'an empty block with nothing pending');

  // A liar (a key of its own, never proven by a block) announces while a call waits.
  const call2 = (await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:2'], abi: counter.abi })).anchor.txid;
  await waitStatus(L, (s) => s.pending_calls === 1, 'the second call pending on L');
  const liar = new PeerClient(urlOf(pL), new Signer(new Uint8Array(32).fill(0x33)), 10_000);
  cleanup.push(async () => liar.close());
  const announce = (height: number, header: Uint8Array) => liar.call('Heartbeat', { node_id: 'liar', url: '', height: '0', tip_height: String(height), tip_header: header });
  const tip = devnet.chain.height;
  const passedBefore = (await waitStatus(L, () => true, 'L status')).gossip.tip_announcements_passed;
  const beforeLies = await own.counters();
  // A header that extends L's tip but asks less work than the network's minimum: not worth
  // a request (had it cost one, the next would wait an interval and the 404 below never come).
  await announce(tip + 1, forgedHeader(devnet.chain.tip.hash, 0x2100ffff));
  // A header that extends L's tip and meets regtest's target, of no block the endpoint has:
  // L asks for it by hash (404) and keeps its tip.
  await announce(tip + 1, forgedHeader(devnet.chain.tip.hash));
  await waitStatus(L, () => true, 'L status');
  for (const deadline = Date.now() + 20_000; requestsOf(await own.counters(), '/block/:id/raw') === requestsOf(beforeLies, '/block/:id/raw'); ) {
    if (Date.now() > deadline) throw new Error(`L never asked for the forged block: ${JSON.stringify(delta(beforeLies, await own.counters()))} ${JSON.stringify((await nodeStatus(L))['gossip'])}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  // Then nine more within the interval, each of another height: none costs a request.
  for (let i = 0; i < 9; i++) await announce(tip + 2 + i, Buffer.alloc(80, i + 1));
  await waitStatus(L, (s) => s.gossip.tip_announcements_passed >= passedBefore + 11, 'the eleven announcements passed to L\'s core');
  // A malformed announcement is refused outright.
  await assert.rejects(announce(tip + 1, Buffer.alloc(79)), /INVALID_ARGUMENT bad_request: Heartbeat request: tip_header must be 0 or 80 bytes/);
  const st = await nodeStatus(L);
  assert.equal(st['processed_height'], tip, 'L kept its tip');
  assert.equal(st['halted'], false);

  // The honest peer's next announcement is followed at once (it proved itself with blocks).
  const after = await block([call2]);
  assert.deepEqual(delta(beforeLies, await own.counters()), { '/block/:id/raw': 2 }, `the forged block's 404 and the real block; the real block alone: ${JSON.stringify(after)}`);
  const lies = await own.counters();
  assert.equal((lies.routes['/block/:id/raw']?.['4xx'].requests ?? 0) - (beforeLies.routes['/block/:id/raw']?.['4xx'].requests ?? 0), 1, 'one 404');
  const [sp, sl] = await Promise.all([P, L].map(async (n) => getJson(`${n.restUrl}/contract_call/${call2}/status`)));
  assert.equal(sl.body.status, 'executed');
  assert.deepEqual(sl, sp, 'the same status and result as the blocks node');
  const [rp, rl] = await Promise.all([P, L].map(async (n) => (await getJson(`${n.restUrl}/v2/state_root/${devnet.chain.height}`)).body));
  assert.deepEqual(rl, rp, 'the same state root at the tip');
});

test('a light node whose peer announces blocks first stops polling on its own, and polls again when its own poll finds a block first', { timeout: 180_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  const own = await ownEndpoint(devnet);
  cleanup.push(() => own.close());
  const [pP, pL] = await Promise.all([freePort(), freePort()]);
  // P polls ten times as often as L, and both heartbeat every 50 ms: P's announcement
  // reaches L before L's own poll (0.2 s, jittered) in most blocks; one such block is enough.
  const fast = { SVC_GOSSIP_HEARTBEAT_INTERVAL_S: '0.05' };
  const P = await startPeerNode(devnet, { name: 'lead-blocks', port: pP, peers: [], env: { ...fast, SVC_CHAIN_MODE: 'blocks', SVC_BLOCK_CHECK_INTERVAL_S: '0.02' } });
  cleanup.push(() => P.stop());
  const L = await startPeerNode(devnet, { name: 'lead-light', port: pL, peers: [pP], env: { ...fast, SVC_ESPLORA_URL: own.url, SVC_BLOCK_CHECK_INTERVAL_S: '0.2' } });
  cleanup.push(() => L.stop());
  await Promise.all([waitSynced(P, devnet), waitSynced(L, devnet)]);
  const lead = async (): Promise<boolean> => (await nodeStatus(L) as { chain: { peers_lead: boolean } }).chain.peers_lead;
  for (let i = 0; i < 30 && !(await lead()); i++) {
    devnet.chain.mine(1, []);
    await waitSynced(L, devnet);
  }
  assert.ok(await lead(), 'P\'s announcements led within 30 blocks');
  // Led: over five of L's poll intervals after each block (time passing is what is
  // tested), L asks the endpoint nothing but the one answer per announced block.
  for (let b = 0; b < 3; b++) {
    const before = await own.counters();
    devnet.chain.mine(1, []);
    await waitSynced(L, devnet);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.deepEqual(delta(before, await own.counters()), { '/blocks': 1 }, `block ${b + 1} while led`);
  }
  // P stops: L's own poll (at the latest after 30 intervals, 6 s) finds the next block
  // itself, ends the lead, and polls every interval again.
  await P.stop();
  devnet.chain.mine(1, []);
  await waitSynced(L, devnet, 60_000);
  await waitUntil(L, async () => !(await lead()), 'the lead ended');
  const before = await own.counters();
  await new Promise((r) => setTimeout(r, 1_000));
  assert.ok(requestsOf(await own.counters(), '/blocks') - requestsOf(before, '/blocks') >= 2, 'polling on its own again (five intervals)');
});

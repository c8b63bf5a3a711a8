/**
 * A fresh-coin call gossiped to a peer a block behind (docs/STATE.md, "Coin evidence",
 * "Waiting for a header"): B refuses it coin_unproven (the coin's block is above its
 * header tip), keeps it in its unproven pool, and takes it when its header tip reaches
 * that block, then forwards it as any newly accepted payload (C gets it from B). No sync
 * round can deliver it: periodic sync and heartbeats are an hour apart, so nothing but the
 * test's own announcement tells B of a new block (B's own poll is 300 s).
 *
 * A reads every block (polls 0.2 s) and takes REST submissions; B is light, peered with A
 * and C; C reads every block and is peered with B only.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, fund, getJson, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf, waitStatus, type StatusView } from '../helpers/gossip.js';
import { PeerClient } from '../../src/gossip/client.js';
import { Signer } from '../../src/gossip/auth.js';
import type { UnprovenPoolStatus } from '../../src/messages/core.js';

const cleanup: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

type Status = StatusView & { unproven_pool: UnprovenPoolStatus; chain: { header_height: number | null } };

test('a peer a block behind keeps a fresh-coin call refused coin_unproven and takes it when its header tip advances, without a sync round', { timeout: 180_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  const [pA, pB, pC] = await Promise.all([freePort(), freePort(), freePort()]);
  // Heartbeats (which carry tips) and sync rounds an hour apart; peers stay active meanwhile.
  const quiet = { SVC_GOSSIP_HEARTBEAT_INTERVAL_S: '3600', SVC_GOSSIP_PEER_EXPIRY_S: '7200', SVC_PEER_SYNC_INTERVAL_S: '3600' };
  const fast = { ...quiet, SVC_CHAIN_MODE: 'blocks', SVC_BLOCK_CHECK_INTERVAL_S: '0.2' };
  const wallet = testWallet(44);
  await fund(devnet, wallet, 2);
  const [A, B, C] = await Promise.all([
    startPeerNode(devnet, { name: 'unproven-a', port: pA, peers: [pB], env: fast }),
    startPeerNode(devnet, { name: 'unproven-b', port: pB, peers: [pA, pC], env: { ...quiet, SVC_BLOCK_CHECK_INTERVAL_S: '300' } }),
    startPeerNode(devnet, { name: 'unproven-c', port: pC, peers: [pB], env: fast }),
  ]);
  for (const n of [A, B, C]) cleanup.push(() => n.stop());
  await Promise.all([A, B, C].map((n) => waitSynced(n, devnet)));

  // The test's own key announces the devnet's tip to B (as a peer's heartbeat would).
  const announcer = new PeerClient(urlOf(pB), new Signer(new Uint8Array(32).fill(0x44)), 10_000);
  cleanup.push(async () => announcer.close());
  const announceTip = async (): Promise<void> => {
    const tip = devnet.chain.tip;
    await announcer.call('Heartbeat', { node_id: 'announcer', url: '', height: '0', tip_height: String(tip.height), tip_header: tip.raw.subarray(0, 80) });
  };

  const counter = compileFixture('counter.svc');
  const contractId = (await client(A, devnet, wallet).deploy(counter)).contractId;
  devnet.chain.mine(1);
  await Promise.all([A, C].map((n) => waitSynced(n, devnet)));
  await announceTip();
  await waitSynced(B, devnet);
  await waitStatus(B, (s) => s.contracts === 1, 'the contract active on B');

  // A fresh coin, confirmed in a block B has not heard of.
  const fresh = testWallet(45);
  await fund(devnet, fresh, 1);
  const behind = devnet.chain.height - 1;
  await Promise.all([A, C].map((n) => waitSynced(n, devnet)));
  assert.equal(((await getJson(`${B.restUrl}/node_status`)).body as Status).chain.header_height, behind, 'B is a block behind');

  const txid = (await client(A, devnet, fresh).call({ contractId, function: 'bump', args: ['u64:1'], abi: counter.abi })).anchor.txid;
  const held = (await waitStatus(B, (s) => (s as Status).unproven_pool.held === 1, 'the call kept in B\'s unproven pool')) as Status;
  await waitStatus(B, (s) => s.gossip.payloads_unpaid >= 1, 'the refusal (coin_unproven) counted by B\'s gossip');
  assert.equal((await getJson(`${B.restUrl}/contract_call/${txid}/status`)).status, 404, 'kept, not stored');
  assert.equal(held.pending_calls, 0, 'not counted as pending');
  assert.equal((await getJson(`${C.restUrl}/contract_call/${txid}/status`)).status, 404, 'not relayed while kept');

  // B's header tip advances: the kept call goes through intake again, is taken, and forwarded.
  await announceTip();
  const took = (await waitStatus(B, (s) => (s as Status).unproven_pool.taken === 1, 'the kept call taken by B')) as Status;
  assert.deepEqual({ ...took.unproven_pool, bytes: 0 }, { held: 0, bytes: 0, kept: 1, retried: 1, taken: 1, expired: 0, refused: 0, evicted: 0 });
  assert.equal(took.pending_calls, 1);
  assert.equal((await getJson(`${B.restUrl}/contract_call/${txid}/status`)).body.status, 'pending');
  await waitStatus(C, (s) => s.pending_calls === 1, 'the call forwarded by B to C');
  for (const n of [B, C]) assert.equal((await waitStatus(n, () => true, 'status')).gossip.sync_payloads_fetched, 0, 'no sync delivered it');

  // And it executes alike everywhere.
  devnet.chain.mine(1, [txid]);
  await Promise.all([A, C].map((n) => waitSynced(n, devnet)));
  await announceTip();
  await waitSynced(B, devnet);
  const roots = await Promise.all([A, B, C].map(async (n) => (await getJson(`${n.restUrl}/v2/state_root/${devnet.chain.height}`)).body));
  assert.deepEqual(roots[1], roots[0]);
  assert.deepEqual(roots[2], roots[0]);
  assert.equal((await getJson(`${B.restUrl}/contract_call/${txid}/status`)).body.status, 'executed');
});

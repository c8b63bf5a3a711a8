/**
 * Three real node processes on loopback over a devnet chain (issue 8): gossip of REST
 * payloads, a late node catching up by Merkle-diff sync, a node that missed payloads
 * finding the divergence by bisection and re-syncing only what differs.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, waitCallKnown, waitStatus } from '../helpers/gossip.js';

let devnet: DevnetChainHandle;
let A: NodeProcess;
let B: NodeProcess;
let C: NodeProcess;
let pA = 0;
let pB = 0;
let pC = 0;
let anchor = 0;
/** Every node process started, for the debug dump (GOSSIP_TEST_DEBUG=1). */
const started: [string, NodeProcess][] = [];
const dirB = mkdtempSync(join(tmpdir(), 'svc-gossip-b-'));
const wallet = testWallet(7);
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';

async function bump(n: number): Promise<string> {
  const r = await svc.call({ contractId, function: 'bump', args: [`u64:${n}`], abi: artifact.abi });
  return r.anchor.txid;
}

async function sameRoots(nodes: NodeProcess[]): Promise<{ height: number; stateRoot: string }> {
  const all = await Promise.all(nodes.map((n) => waitSynced(n, devnet, 30_000)));
  for (const r of all) assert.deepEqual(r, all[0], 'same height, same state root');
  return all[0]!;
}

before(async () => {
  devnet = await startDevnet();
  [pA, pB, pC] = await Promise.all([freePort(), freePort(), freePort()]);
  anchor = devnet.chain.height;
  [A, B] = await Promise.all([
    startPeerNode(devnet, { name: 'node-a', port: pA, peers: [pB, pC], startHeight: anchor }),
    startPeerNode(devnet, { name: 'node-b', port: pB, peers: [pA], startHeight: anchor, dataDir: dirB }),
  ]);
  await fund(devnet, wallet, 10);
  started.push(['A', A], ['B', B]);
  svc = client(A, devnet, wallet);
  artifact = compileFixture('counter.svc');
});

after(async () => {
  if (process.env['GOSSIP_TEST_DEBUG']) {
    for (const [n, x] of started) {
      for (const l of x?.lines ?? []) if (String(l.target).startsWith('gossip')) console.error(n, JSON.stringify(l));
    }
  }
  await Promise.all([A?.stop(), B?.stop(), C?.stop()].filter(Boolean));
  await devnet?.close();
});

test('a deploy and a call submitted to A reach B by gossip, and both reach the same state root', async () => {
  await waitStatus(A, (s) => s.peers >= 1, 'A sees B');
  const dep = await svc.deploy(artifact);
  contractId = dep.contractId;
  await waitStatus(B, (s) => s.contracts === 1, 'the deploy reaches B');
  devnet.chain.mine(1);
  await sameRoots([A, B]);
  const c1 = await bump(1);
  assert.equal((await waitCallKnown(B, c1)).status, 'pending');
  devnet.chain.mine(1);
  await sameRoots([A, B]);
  const sb = await waitStatus(B, (x) => x.gossip.payloads_accepted >= 2, 'B counts both payloads');
  assert.equal(sb.gossip.payloads_accepted, 2, 'deploy and call arrived by gossip');
  assert.equal(sb.gossip.sync_payloads_fetched, 0, 'nothing needed syncing');
});

test('C started late catches up by sync, fetching only the payloads it lacks', async () => {
  // C knows A and B: with B it forms a triangle, so every payload reaches it twice.
  C = await startPeerNode(devnet, { name: 'node-c', port: pC, peers: [pA, pB], startHeight: anchor });
  started.push(['C', C]);
  const s = await waitStatus(C, (x) => x.gossip.sync_payloads_applied >= 2, 'C syncs the deploy and the call', 30_000);
  const { height, stateRoot } = await sameRoots([A, B, C]);
  assert.ok(height > anchor);
  const after = await status(C);
  assert.equal(after.gossip.sync_payloads_fetched, 2, 'exactly the deploy and the call crossed the wire');
  assert.equal(after.gossip.sync_payloads_applied, 2);
  assert.ok(s.gossip.sync_contracts_differing >= 1);
  assert.equal(after.state_root, stateRoot);
});

test('a call submitted to A reaches B and C by gossip, once each; all three reach equal state roots at the same height', async () => {
  await waitStatus(A, (s) => s.peers >= 2, 'A sees B and C');
  await waitStatus(B, (s) => s.peers >= 2, 'B sees A and C');
  await waitStatus(C, (x) => x.gossip.sync_rounds >= 2 && x.peers >= 2, 'C synced with A and B');
  const nodes = [A, B, C];
  const g0 = await Promise.all(nodes.map(async (n) => (await status(n)).gossip));
  const c2 = await bump(2);
  const [atB, atC] = await Promise.all([waitCallKnown(B, c2), waitCallKnown(C, c2)]);
  assert.equal(atB.status, 'pending');
  assert.equal(atC.status, 'pending');
  // A sends to B and C; each of them forwards once, to the one of the other two that did
  // not send it: 4 copies in all, and the 2 that arrive where the call already is are
  // recognised as seen, neither verified nor forwarded again.
  // Settled: at least the four copies arrived, every copy sent was answered (a sender
  // counts a forward once the receiver answered, and the receiver classified the copy and
  // queued its own forwards before answering), and every copy received was classified.
  // From then on nothing is in flight, so nothing further can arrive.
  const sum = (gs: (typeof g0)[number][], k: keyof (typeof g0)[number]): number => gs.reduce((a, g, i) => a + g[k] - g0[i]![k], 0);
  const settled = (gs: (typeof g0)[number][]): boolean => {
    const received = sum(gs, 'payloads_received');
    return received >= 4 && sum(gs, 'payloads_forwarded') === received && sum(gs, 'payloads_accepted') + sum(gs, 'payloads_duplicate') + sum(gs, 'payloads_refused') === received;
  };
  const deadline = Date.now() + 15_000;
  let g1 = await Promise.all(nodes.map(async (n) => (await status(n)).gossip));
  while (!settled(g1) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    g1 = await Promise.all(nodes.map(async (n) => (await status(n)).gossip));
  }
  const d = (k: keyof (typeof g0)[number]): number[] => g1.map((g, i) => g[k] - g0[i]![k]);
  assert.deepEqual(d('payloads_received').reduce((a, b) => a + b), 4, 'four copies in all');
  assert.deepEqual(d('payloads_accepted'), [0, 1, 1], 'stored once by B and C');
  assert.deepEqual(d('payloads_duplicate').reduce((a, b) => a + b), 2, 'two copies recognised as seen');
  assert.deepEqual(d('payloads_forwarded').slice(1), [1, 1], 'B and C forward once each, never back to the sender');
  assert.deepEqual(d('sync_payloads_fetched'), [0, 0, 0], 'by gossip, not by sync');
  devnet.chain.mine(1);
  await sameRoots([A, B, C]);
  const r = await fetch(`${C.restUrl}/contract_call/${c2}/status`).then((x) => x.json() as Promise<{ status: string; result: string }>);
  assert.deepEqual([r.status, r.result], ['executed', '3']);
});

test('B misses two calls while down; back, it finds the divergence by bisection and re-syncs only those two', async () => {
  await B.stop();
  // Once A has expired B (3 s of silence), gossip to B fails fast instead of waiting for
  // it to come back, so B really misses the two calls.
  await waitStatus(A, (s) => s.peers === 1, 'A notices B is gone');
  await waitStatus(C, (s) => s.peers === 1, 'C notices B is gone');
  const c3 = await bump(3);
  const c4 = await bump(4);
  // C must hold both by gossip before their block: otherwise it takes them as late
  // payloads and replays, and A and C agree only after that replay (a race, not the point).
  assert.deepEqual((await Promise.all([waitCallKnown(C, c3), waitCallKnown(C, c4)])).map((x) => x.status), ['pending', 'pending']);
  devnet.chain.mine(1, [c3, c4]);
  const divergedAt = devnet.chain.height;
  devnet.chain.mine(3);
  await sameRoots([A, C]);
  // Back without configured peers: it processes the new blocks without the two calls,
  // then learns A and C from their heartbeats and syncs with them on its next round.
  B = await startPeerNode(devnet, { name: 'node-b', port: pB, peers: [], dataDir: dirB, env: { SVC_PEER_SYNC_INTERVAL_S: '3' } });
  started.push(['B2', B]);
  const s = await waitStatus(B, (x) => x.divergence?.resolved === true, 'B resolves the divergence', 30_000);
  assert.equal(s.divergence!.height, divergedAt, 'bisection finds the block with the missed calls');
  assert.equal(s.divergence!.outcome, 'resynced');
  assert.ok([`http://127.0.0.1:${pA}`, `http://127.0.0.1:${pC}`].includes(s.divergence!.peer));
  assert.ok(B.lines.some((l) => l.msg === 'state divergence' && l['height'] === divergedAt));
  await sameRoots([A, B, C]);
  const after = await status(B);
  assert.equal(after.gossip.sync_payloads_fetched, 2, 'only the two missed calls crossed the wire');
  assert.equal(after.gossip.sync_payloads_applied, 2);
  assert.equal(after.halted, false);
  const r = await fetch(`${B.restUrl}/contract_call/${c4}/status`).then((x) => x.json() as Promise<{ status: string; result: string }>);
  assert.deepEqual([r.status, r.result], ['executed', '10']);
});

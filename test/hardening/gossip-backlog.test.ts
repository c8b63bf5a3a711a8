/**
 * A peer that accepts gRPC connections and never answers (peer queues): the
 * node's send backlog to it is bounded (PEER_SEND_INFLIGHT in flight, PEER_SEND_BACKLOG
 * waiting, the rest dropped and counted) and a live peer beside it still receives every
 * payload at once. Before the bound, every accepted payload added a batch to one shared
 * send queue that the hanging peer held for the whole request deadline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, waitCallKnown, waitStatus } from '../helpers/gossip.js';
import { PEER_SEND_BACKLOG, PEER_SEND_INFLIGHT } from '../../src/gossip/forwarder.js';

const CALLS = 30;

test('a peer that never answers: its send backlog is bounded and a live peer still gets every payload', { timeout: 120_000 }, async () => {
  // A TCP listener that reads and never writes: gRPC calls to it wait for their deadline.
  const sockets = new Set<Socket>();
  const hang = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.resume();
  });
  const hangPort = await freePort();
  await new Promise<void>((r) => hang.listen(hangPort, '127.0.0.1', () => r()));
  const devnet = await startDevnet();
  const [pA, pB] = [await freePort(), await freePort()];
  // One payload per batch, and a deadline longer than the test: every batch to the hanging
  // peer stays in flight or waiting.
  const env = { SVC_GOSSIP_BATCH_MAX: '1', SVC_GOSSIP_REQUEST_TIMEOUT_S: '60', SVC_GOSSIP_PEER_EXPIRY_S: '30' };
  const A = await startPeerNode(devnet, { name: 'backlog-a', port: pA, peers: [hangPort, pB], env });
  const B = await startPeerNode(devnet, { name: 'backlog-b', port: pB, peers: [pA], env });
  try {
    await waitStatus(A, (s) => s.peers >= 1, 'A sees B');
    const wallet = testWallet(34);
    await fund(devnet, wallet, CALLS + 2);
    await waitSynced(A, devnet);
    await waitSynced(B, devnet);
    const svc = client(A, devnet, wallet);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    await waitStatus(B, (s) => s.contracts === 1, 'the deploy reaches B');
    devnet.chain.mine(1);
    await waitSynced(A, devnet);
    await waitSynced(B, devnet);
    const txids: string[] = [];
    for (let i = 0; i < CALLS; i++) txids.push((await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 1}`], abi: counter.abi })).anchor.txid);
    // Every call reaches B while the hanging peer holds its sends.
    for (const t of txids) await waitCallKnown(B, t, 20_000);
    const s = await waitStatus(A, (x) => x.gossip.payloads_forwarded >= CALLS + 1, 'B got every payload');
    // The deploy and CALLS calls went to the hanging peer too, one batch each: at most
    // PEER_SEND_INFLIGHT in flight and PEER_SEND_BACKLOG waiting; the rest dropped.
    assert.ok(s.gossip.payloads_forward_dropped >= CALLS + 1 - PEER_SEND_INFLIGHT - PEER_SEND_BACKLOG, `dropped: ${s.gossip.payloads_forward_dropped}`);
    console.log(`# hardening/gossip-backlog: ${CALLS + 1} payloads, ${s.gossip.payloads_forwarded} forwarded to the live peer, ${s.gossip.payloads_forward_dropped} dropped for the hanging one`);
  } finally {
    await Promise.all([A.stop(), B.stop()]);
    for (const s of sockets) s.destroy();
    await new Promise((r) => hang.close(r));
    await devnet.close();
  }
});

/**
 * max_pending_calls (issue 10, RELIABILITY section 5): pending calls had no count bound.
 * With a bound of 3 on a real node: the fourth new call is refused 503 overloaded over
 * REST and over gossip, nothing of it is stored, a repeat of a held call is still
 * answered, and once a block confirms the pending ones the refused call is accepted.
 * The refusal comes early (issue 9): intake refuses before the pool and the chain, so the
 * refused calls' anchors are never asked of the chain-data endpoint (the node reaches it
 * through a recording proxy here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildCall, buildCallAnchor, type BuiltCall } from '../../src/client/sdk.js';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, urlOf } from '../helpers/gossip.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';

const BOUND = 3;

/** An HTTP proxy in front of `target` that records every request path it forwards. */
async function recordingProxy(target: string): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    const up = request(target + (req.url ?? '/'), { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    paths,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test(`max_pending_calls = ${BOUND}: the next new call answers 503 overloaded until blocks confirm some`, { timeout: 60_000 }, async () => {
  const devnet = await startDevnet();
  const proxy = await recordingProxy(devnet.url);
  const port = await freePort();
  const node = await startPeerNode(devnet, { name: 'pending-bound', port, peers: [], env: { SVC_MAX_PENDING_CALLS: String(BOUND), SVC_ESPLORA_URL: proxy.url } });
  /** Did the node ask the chain endpoint for this transaction (the anchor fetch at intake)? */
  const fetched = (txid: string): boolean => proxy.paths.some((p) => p.includes(`/tx/${txid}`));
  const peer = new PeerClient(urlOf(port), new Signer(new Uint8Array(randomBytes(32))), 10_000);
  try {
    const wallet = testWallet(35);
    await fund(devnet, wallet, BOUND + 3);
    await waitSynced(node, devnet);
    const svc = client(node, devnet, wallet);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);

    // BOUND + 2 calls, each anchored on its own confirmed output.
    const utxos = (await svc.esplora.utxos(wallet.address)).filter((u) => u.status?.confirmed !== false);
    assert.ok(utxos.length >= BOUND + 2, `enough outputs: ${utxos.length}`);
    const calls: { call: BuiltCall; txid: string; body: { txid: string; contract_id: string; payload: string } }[] = [];
    for (let i = 0; i < BOUND + 2; i++) {
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 1}`], abi: counter.abi, callerSecret: wallet.secret, outpoint: utxos[i]! });
      const anchor = buildCallAnchor(wallet, [utxos[i]!], call, 1);
      await svc.esplora.broadcast(anchor.hex);
      calls.push({ call, txid: anchor.txid, body: { txid: anchor.txid, contract_id: dep.contractId, payload: call.payload } });
    }
    const url = `${node.restUrl}/contract_call`;
    for (let i = 0; i < BOUND; i++) assert.equal((await postJson(url, calls[i]!.body)).status, 202, `call ${i} accepted`);
    assert.ok(fetched(calls[0]!.txid), 'an accepted call fetched its anchor through the proxy');

    // Full: a new call is refused, clearly, and nothing of it is stored.
    const refused = await postJson(url, calls[BOUND]!.body);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'overloaded');
    assert.match(refused.body.error.message, /max_pending_calls/);
    assert.equal((await getJson(`${node.restUrl}/contract_call/${calls[BOUND]!.txid}/status`)).status, 404);
    // A repeat of a held call is still answered as before (200, same body).
    const again = await postJson(url, calls[0]!.body);
    assert.equal(again.status, 200);
    assert.equal(again.body.status, 'pending');
    // Over gossip: the same bound, answered per payload; a transient refusal, so the
    // seen set does not remember it (see below: the same payload is accepted later).
    const viaPeer = (c: (typeof calls)[number]) => ({ kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(c.txid, 'hex'), contract_id: Buffer.from(dep.contractId, 'hex'), body: Buffer.from(c.call.bytes) });
    const g = await peer.call('SubmitPayload', { payloads: [viaPeer(calls[BOUND + 1]!)] });
    assert.deepEqual(g.results.map((r) => [r.accepted, r.error_code]), [[false, 'overloaded']]);
    assert.equal((await status(node)).pending_calls, BOUND);
    // Refused early: neither refused call's anchor was fetched (nor its signature checked).
    assert.equal(fetched(calls[BOUND]!.txid), false, 'the call refused over REST never reached the chain endpoint');
    assert.equal(fetched(calls[BOUND + 1]!.txid), false, 'the call refused over gossip never reached the chain endpoint');
    // A refused call asked again is refused again, also early.
    assert.equal((await postJson(url, calls[BOUND]!.body)).status, 503);
    assert.equal(fetched(calls[BOUND]!.txid), false);

    // A block confirms the pending calls: room again, for REST and gossip alike.
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    assert.equal((await status(node)).pending_calls, 0);
    assert.equal((await postJson(url, calls[BOUND]!.body)).status, 202, 'the refused call is accepted now');
    assert.ok(fetched(calls[BOUND]!.txid), 'and its anchor was fetched for the binding check');
    const g2 = await peer.call('SubmitPayload', { payloads: [viaPeer(calls[BOUND + 1]!)] });
    assert.deepEqual(g2.results.map((r) => [r.accepted, r.error_code]), [[true, '']]);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    for (const c of calls) assert.equal((await getJson(`${node.restUrl}/contract_call/${c.txid}/status`)).body.status, 'executed', c.txid);
  } finally {
    peer.close();
    await node.stop();
    await proxy.close();
    await devnet.close();
  }
});

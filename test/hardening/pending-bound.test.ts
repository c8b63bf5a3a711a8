/**
 * max_pending_calls (RELIABILITY section 5): with a bound of 3 on a real node, a full
 * pending set takes a new call only when its anchor pays a higher fee rate than the
 * lowest waiting (docs/STATE.md, "Coin evidence"): one paying less is refused 503
 * overloaded over REST, one without coin evidence over gossip is refused early, nothing
 * of either is stored, a repeat of a held call is still answered, and once a block
 * confirms the pending ones the refused call is accepted. Calls come with their anchor
 * and coin, so intake asks the chain-data endpoint nothing (the node reaches it through a
 * recording proxy here); a peer's payload without evidence refused at the bound is never
 * fetched either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildCall, buildCallAnchor, type BuiltCall } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced, withCoin } from '../helpers/devnet-node.js';
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

test(`max_pending_calls = ${BOUND}: a new call paying no more than the lowest waiting answers 503 overloaded until blocks confirm some; one paying more takes its place`, { timeout: 60_000 }, async () => {
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

    // BOUND + 3 calls, each anchored on its own confirmed output: the first BOUND at 4
    // sat/vB, the next at 1 (less than any waiting), the next (over gossip) at 1, the last at 20.
    const utxos = (await svc.esplora.utxos(wallet.address)).filter((u) => u.status?.confirmed !== false);
    assert.ok(utxos.length >= BOUND + 3, `enough outputs: ${utxos.length}`);
    const calls: { call: BuiltCall; txid: string; body: { txid: string; contract_id: string; payload: string; anchor_tx: string } }[] = [];
    for (let i = 0; i < BOUND + 3; i++) {
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 1}`], abi: counter.abi, callerSecret: wallet.secret, outpoint: utxos[i]! });
      const anchor = buildCallAnchor(wallet, [utxos[i]!], call, i < BOUND ? 4 : i === BOUND + 2 ? 20 : 1);
      await svc.esplora.broadcast(anchor.hex);
      calls.push({ call, txid: anchor.txid, body: await withCoin(devnet, { txid: anchor.txid, contract_id: dep.contractId, payload: call.payload, anchor_tx: anchor.hex }) });
    }
    const url = `${node.restUrl}/contract_call`;
    const asked = proxy.paths.length;
    for (let i = 0; i < BOUND; i++) assert.equal((await postJson(url, calls[i]!.body)).status, 202, `call ${i} accepted`);

    // Full: a new call is refused, clearly, and nothing of it is stored.
    const refused = await postJson(url, calls[BOUND]!.body);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'overloaded');
    assert.match(refused.body.error.message, /max_pending_calls; the lowest fee rate waiting is 4\.\d{3} sat\/vB, this anchor pays 1\.\d{3} sat\/vB/);
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
    // Neither refused call's anchor was fetched: intake asked the endpoint nothing at all.
    assert.equal(fetched(calls[BOUND + 1]!.txid), false, 'the call refused over gossip never reached the chain endpoint');
    // (The node's follower polls the tip meanwhile, and deferred checks may ask where the
    // accepted calls' outpoints went: neither is intake, which would fetch an anchor.)
    assert.deepEqual(proxy.paths.slice(asked).filter((p) => calls.some((c) => p.includes(c.txid))), [], 'no anchor fetched at intake');
    // A refused call asked again is refused again.
    assert.equal((await postJson(url, calls[BOUND]!.body)).status, 503);

    // A call paying more takes the place of the lowest (ties: the highest txid), which is gone.
    assert.equal((await postJson(url, calls[BOUND + 2]!.body)).status, 202, 'a higher fee rate is taken while the set is full');
    assert.equal((await status(node)).pending_calls, BOUND);
    const gone = (await Promise.all(calls.slice(0, BOUND).map(async (c) => (await getJson(`${node.restUrl}/contract_call/${c.txid}/status`)).status))).filter((s) => s === 404).length;
    assert.equal(gone, 1, 'exactly one waiting call was evicted');
    assert.ok(node.lines.some((l) => l.msg === 'pending payloads evicted for payloads that pay more' && l['outbid_in_a_full_set'] === 1), 'the eviction is logged');

    // A block confirms the pending calls: room again, for REST and gossip alike.
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    assert.equal((await status(node)).pending_calls, 0);
    assert.equal((await postJson(url, calls[BOUND]!.body)).status, 202, 'the refused call is accepted now');
    const g2 = await peer.call('SubmitPayload', { payloads: [viaPeer(calls[BOUND + 1]!)] });
    assert.deepEqual(g2.results.map((r) => [r.accepted, r.error_code]), [[true, '']]);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    // Every call confirmed is applied, the evicted one too (admission is never consensus): sent again, it is taken.
    for (const c of calls) {
      if ((await getJson(`${node.restUrl}/contract_call/${c.txid}/status`)).status === 404) assert.equal((await postJson(url, c.body)).status, 202);
    }
    await waitSynced(node, devnet);
    for (const c of calls) assert.equal((await getJson(`${node.restUrl}/contract_call/${c.txid}/status`)).body.status, 'executed', c.txid);
  } finally {
    peer.close();
    await node.stop();
    await proxy.close();
    await devnet.close();
  }
});

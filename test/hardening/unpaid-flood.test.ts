/**
 * A flood that costs its maker nothing costs the node nothing (docs/STATE.md, "Coin
 * evidence"; RELIABILITY, "Unpaid pending calls"): with max_pending_calls = 4, ten times
 * as many calls, each well formed, signed and bound to its anchor, whose coins do not
 * exist (a made-up transaction, unconfirmed or placed in a real block where it is not)
 * or are real but not the sender's (another wallet's output, signed with the attacker's
 * key), are all refused 422 over REST and per payload over gossip, none stored or
 * relayed, without an endpoint request; a peer sending them loses inbound budget; and an
 * honest svc call made during the flood is taken.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as bitcoin from 'bitcoinjs-lib';
import { buildCall } from '@svc-node/client/sdk';
import { callStampScript } from '@svc-node/protocol/stamp';
import { coinJson, type CoinEvidence } from '@svc-node/protocol/coin';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, urlOf, waitStatus } from '../helpers/gossip.js';
import { wallet as txWallet, spend } from '../helpers/txbuilder.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';

const BOUND = 4;

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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test(`a flood of ${10 * BOUND} calls on coins that do not exist or are not the sender's: none accepted over REST or gossip, no endpoint request, the peer slowed, an honest call taken`, { timeout: 90_000 }, async () => {
  const devnet = await startDevnet();
  const proxy = await recordingProxy(devnet.url);
  const port = await freePort();
  // An inbound budget of 10 requests a second (burst 10) and no queue: a peer's debt shows as rate_limited.
  const node = await startPeerNode(devnet, { name: 'unpaid-flood', port, peers: [], env: { SVC_MAX_PENDING_CALLS: String(BOUND), SVC_ESPLORA_URL: proxy.url, SVC_GOSSIP_INBOUND_RATE_PER_S: '10', SVC_GOSSIP_INBOUND_QUEUE: '0' } });
  const peer = new PeerClient(urlOf(port), new Signer(new Uint8Array(randomBytes(32))), 10_000);
  try {
    const honest = testWallet(44);
    const victim = testWallet(45);
    await fund(devnet, honest, 6);
    await fund(devnet, victim, 2);
    await waitSynced(node, devnet);
    const svc = client(node, devnet, honest);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);

    // The attacker's calls: envelopes signed by the attacker, anchors bound to them and signed.
    const attacker = txWallet('unpaid-flood-attacker');
    const tip = devnet.chain.blockAt(devnet.chain.height)!;
    const victimUtxo = devnet.chain.utxosOf(victim.outputScript)[0]!;
    const victimFund = devnet.chain.getTx(victimUtxo.txid)!;
    const made = (i: number) => {
      const kind = i % 3; // 0: a coin that does not exist, 1: one placed in a block where it is not, 2: the victim's real coin
      let prev: bitcoin.Transaction;
      let vout = 0;
      if (kind === 2) {
        prev = victimFund;
        vout = victimUtxo.vout;
      } else {
        prev = new bitcoin.Transaction();
        prev.version = 2;
        prev.addInput(Buffer.alloc(32, i + 1), 0);
        prev.addOutput(attacker.script, 1_000_000n);
      }
      const outpoint = { txid: prev.getId(), vout };
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 1}`], abi: counter.abi, callerSecret: new Uint8Array(randomBytes(32)), outpoint });
      const anchor = spend(attacker, [{ ...outpoint, value: prev.outs[vout]!.value }], [{ script: callStampScript(call.envelope.contractId, call.envelopeHash), value: 0n }]);
      const at = kind === 1 ? { blockHash: tip.hash, height: devnet.chain.height, txIndex: 1, branch: [new Uint8Array(32).fill(7)] } : null;
      const coin: CoinEvidence = { prevTxs: [{ tx: prev.toBuffer(), at }] };
      return { call, anchor, coin, body: { txid: anchor.getId(), contract_id: dep.contractId, payload: call.payload, anchor_tx: anchor.toHex(), coin: coinJson(coin) } };
    };
    const flood = Array.from({ length: 10 * BOUND }, (_, i) => made(i));
    const asked = proxy.paths.length;
    const url = `${node.restUrl}/contract_call`;

    // REST: half the flood, with an honest call in the middle of it.
    const codes = new Map<string, number>();
    const restHalf = flood.slice(0, 5 * BOUND);
    const answers = await Promise.all([
      ...restHalf.map((f) => postJson(url, f.body)),
      svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:99'], abi: counter.abi }).then((r) => ({ status: 202, body: { honest: r.anchor.txid } })),
    ]);
    const honestTxid = (answers.at(-1)!.body as { honest: string }).honest;
    for (const a of answers.slice(0, -1)) {
      assert.equal(a.status, 422, JSON.stringify(a.body));
      codes.set(a.body.error.code, (codes.get(a.body.error.code) ?? 0) + 1);
    }
    assert.deepEqual([...codes.keys()].sort(), ['bad_coin', 'coin_unproven']);
    // Gossip: the other half, with the coin evidence, and again without any: refused per payload.
    const wire = (f: (typeof flood)[number], withCoin: boolean) => ({
      kind: 'PAYLOAD_KIND_CALL',
      txid: Buffer.from(f.body.txid, 'hex'),
      contract_id: Buffer.from(dep.contractId, 'hex'),
      body: Buffer.from(f.call.bytes),
      evidence: { anchor_tx: f.anchor.toBuffer(), coin: withCoin ? f.coin.prevTxs.map((p) => ({ tx: Buffer.from(p.tx), at: p.at ? { block_hash: Buffer.from(p.at.blockHash, 'hex'), height: p.at.height, tx_index: p.at.txIndex, branch: p.at.branch.map((h) => Buffer.from(h)) } : null })) : [] },
    });
    const gossipHalf = flood.slice(5 * BOUND);
    const g2 = await peer.call('SubmitPayload', { payloads: gossipHalf.slice(0, 8).map((f) => wire(f, false)) });
    assert.deepEqual(g2.results.map((r) => [r.accepted, r.error_code]), Array.from({ length: 8 }, () => [false, 'coin_missing']));
    const g = await peer.call('SubmitPayload', { payloads: gossipHalf.map((f) => wire(f, true)) });
    assert.equal(g.results.filter((r) => r.accepted).length, 0);
    assert.deepEqual([...new Set(g.results.map((r) => r.error_code))].sort(), ['bad_coin', 'coin_unproven']);
    // That peer sent 28 unpaid payloads in 2 requests, each costing a request's worth: its
    // budget (10) is spent and in debt, so its next request is refused until the debt is repaid.
    await assert.rejects(peer.call('Heartbeat', { node_id: 'flooder', url: '', height: '0' }), /rate_limited/);

    // Nothing of the flood is held; the honest call is.
    const st = await status(node);
    assert.equal(st.pending_calls, 1);
    assert.equal((await getJson(`${node.restUrl}/contract_call/${honestTxid}/status`)).body.status, 'pending');
    for (const f of flood.slice(0, 6)) assert.equal((await getJson(`${node.restUrl}/contract_call/${f.body.txid}/status`)).status, 404);
    await waitStatus(node, (x) => x.gossip.payloads_unpaid === 28, 'the 28 unpaid payloads counted in node_status');
    // The node asked the chain-data endpoint nothing about any of it (its follower's tip
    // polls and the honest call's deferred check aside).
    const floodTxids = flood.flatMap((f) => [f.body.txid, bitcoin.Transaction.fromBuffer(Buffer.from(f.coin.prevTxs[0]!.tx)).getId()]);
    assert.deepEqual(proxy.paths.slice(asked).filter((p) => floodTxids.some((t) => p.includes(t))), []);
  } finally {
    peer.close();
    await node.stop();
    await proxy.close();
    await devnet.close();
  }
});

/**
 * The submitter against a real node and devnet: a bounded number of calls in flight,
 * each on its own coin (change chained into the next), every fate reported (accepted,
 * refused with the node's code, confirmed, back to pending on a rollback, dropped); a 503
 * or 429 waited out for its Retry-After and the same body posted again (the node answers
 * 200, no second call); a call the node refuses is never broadcast; an external wallet's
 * PSBT signed outside the client and submitted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as bitcoin from 'bitcoinjs-lib';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { anchorFromSignedPsbt, buildCall, buildCallAnchor, buildCallPsbt, EsploraClient, Submitter, watchOnlyWallet, type CallFate, type Utxo } from '@svc-node/client';
import type { Artifact } from '@svc-node/protocol/contract';
import { client, compileFixture, conflictingSpend, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let artifact: Artifact;
let contractId = '';
const wallet = testWallet(21);

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, testWallet(20), 2);
  await waitSynced(node, devnet);
  artifact = compileFixture('counter.svc');
  contractId = (await client(node, devnet, testWallet(20)).deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

const bump = (n: number): { contractId: string; function: string; args: string[] } => ({ contractId, function: 'bump', args: [`u64:${n}`] });

test('24 calls through 4 coins: at most 4 in flight, change chained, each accepted then confirmed; coin evidence read once per funding transaction', async () => {
  const fates: CallFate[] = [];
  const s = new Submitter({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet, maxInFlight: 4, feeRate: 1, follow: true, onFate: (f) => fates.push(f) });
  devnet.endpoint.resetCounters();
  const first: CallFate[] = [];
  for await (const f of s.submitMany(Array.from({ length: 24 }, (_, i) => ({ ...bump(i + 1), ref: `c${i}` })))) first.push(f);
  assert.deepEqual(first.map((f) => f.fate), Array(24).fill('accepted'), JSON.stringify(first.find((f) => f.fate !== 'accepted')));
  assert.equal(s.peakInFlight, 4, 'the bound is used and never passed');
  const txids = first.map((f) => (f as { txid: string }).txid);
  assert.ok(txids.every((t) => devnet.chain.inMempool(t)), 'every accepted call is broadcast');
  const hexReads = devnet.endpoint.counters().routes['/tx/:id/hex']?.all.requests ?? 0;
  assert.ok(hexReads <= 4, `prev transactions read ${hexReads} times for 24 calls on 4 funding transactions`);
  devnet.chain.mine(1);
  await s.settled();
  s.close();
  const confirmed = fates.filter((f) => f.fate === 'confirmed');
  assert.equal(confirmed.length, 24);
  assert.deepEqual(new Set(confirmed.map((f) => f.ref)), new Set(first.map((f) => f.ref)));
  assert.ok(confirmed.every((f) => f.fate === 'confirmed' && f.call.status === 'executed'));
  await waitSynced(node, devnet);
});

/** A proxy in front of the node's REST front: the first POST of each body is answered 503 (Retry-After: 1) after the node took it, the second 429 (Retry-After: 1) without reaching it. */
async function flakyProxy(target: string): Promise<{ url: string; server: Server; posts: Map<string, number> }> {
  const posts = new Map<string, number>();
  const t = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const n = req.method === 'POST' && req.url === '/contract_call' ? (posts.get(body.toString()) ?? 0) + 1 : 0;
      if (n) posts.set(body.toString(), n);
      if (n === 2) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":{"code":"rate_limited","message":"slow down"}}');
        return;
      }
      const up = httpRequest({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        const back: Buffer[] = [];
        r.on('data', (c: Buffer) => back.push(c));
        r.on('end', () => {
          if (n === 1) res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":{"code":"overloaded","message":"busy"}}');
          else res.writeHead(r.statusCode!, r.headers).end(Buffer.concat(back));
        });
      });
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, posts };
}

test('a 503 after the node took the call and a 429 are waited out for their Retry-After; the same body posted again is answered 200, one call', async () => {
  const proxy = await flakyProxy(node.restUrl);
  try {
    const s = new Submitter({ nodeUrl: proxy.url, esploraUrl: devnet.url, wallet, maxInFlight: 2, feeRate: 1 });
    const t0 = Date.now();
    const f = await s.submit(bump(7));
    const took = Date.now() - t0;
    assert.equal(f.fate, 'accepted', JSON.stringify(f));
    assert.ok(f.fate === 'accepted' && f.posts === 3 && f.answer.status === 'pending');
    assert.ok(took >= 2000, `two Retry-After waits of 1 s each (took ${took} ms)`);
    assert.deepEqual([...proxy.posts.values()], [3], 'one body, posted three times');
    assert.ok(devnet.chain.inMempool(f.txid));
    const st = (await (await fetch(`${node.restUrl}/contract_call/${f.txid}/status`)).json()) as { status: string };
    assert.equal(st.status, 'pending');
  } finally {
    proxy.server.close();
  }
});

test('refusals: a wrong argument, an unknown contract, and a coin a held call uses: each reported with its code, nothing broadcast', async () => {
  const s = new Submitter({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet, feeRate: 1 });
  const mempool = devnet.chain.mempoolTxids().length;
  const wrong = await s.submit({ contractId, function: 'bump', args: ['string:five'] });
  assert.deepEqual([wrong.fate, (wrong as { code: string }).code], ['refused', 'bad_argument']);
  const unknown = await s.submit({ contractId: 'ab'.repeat(32), function: 'bump', args: ['u64:1'], abi: artifact.abi });
  assert.deepEqual([unknown.fate, (unknown as { code: string }).code, (unknown as { retryable: boolean }).retryable], ['refused', 'unknown_contract', true]);
  assert.equal(devnet.chain.mempoolTxids().length, mempool);

  // Two calls on one coin at one fee rate: the node takes the first, refuses the second coin_in_use before its anchor goes out.
  const utxos = (await new EsploraClient(devnet.url).utxos(wallet.address)).filter((u) => u.status?.confirmed === false);
  const coin = utxos[0]!;
  const built = [1n, 2n].map((callId) => {
    const call = buildCall({ contractId, function: 'bump', args: ['u64:3'], abi: artifact.abi, callerSecret: wallet.secret, outpoint: coin, callId });
    return { call, anchor: buildCallAnchor(wallet, [coin], call, 1) };
  });
  const a = await s.submitAnchored(built[0]!.call, built[0]!.anchor);
  assert.equal(a.fate, 'accepted', JSON.stringify(a));
  const b = await s.submitAnchored(built[1]!.call, built[1]!.anchor);
  assert.deepEqual([b.fate, (b as { code: string }).code, (b as { status: number }).status], ['refused', 'coin_in_use', 422]);
  assert.ok(!devnet.chain.inMempool(built[1]!.anchor.txid), 'the refused call was not broadcast');
});

test('an external wallet signs the PSBT; the call is submitted; a PSBT signed for another call is refused anchor_mismatch before anything is sent', async () => {
  const signer = testWallet(22); // the wallet the client does not hold
  await fund(devnet, signer, 1);
  await waitSynced(node, devnet);
  const watch = watchOnlyWallet(signer.publicKey, 'p2wpkh', signer.network);
  const utxos: Utxo[] = await new EsploraClient(devnet.url).utxos(watch.address);
  const caller = testWallet(23).secret;
  const call = buildCall({ contractId, function: 'bump', args: ['u64:4'], abi: artifact.abi, callerSecret: caller, outpoint: utxos[0]! });
  const other = buildCall({ contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi, callerSecret: caller, outpoint: utxos[0]! });
  const sign = (b64: string): string => bitcoin.Psbt.fromBase64(b64, { network: signer.network }).signAllInputs(signer.signer).toBase64();
  const unsigned = buildCallPsbt(watch, utxos, call, 1);
  assert.throws(() => anchorFromSignedPsbt(sign(buildCallPsbt(watch, utxos, other, 1).psbt), call, { network: signer.network }), (e: Error & { code?: string }) => e.code === 'anchor_mismatch');
  assert.throws(() => anchorFromSignedPsbt(unsigned.psbt, call, { network: signer.network }), (e: Error & { code?: string }) => e.code === 'bad_argument', 'an unsigned PSBT');
  const anchor = anchorFromSignedPsbt(sign(unsigned.psbt), call, { network: signer.network });
  assert.equal(anchor.fee, unsigned.fee);
  const s = new Submitter({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet: testWallet(24), feeRate: 1 });
  const f = await s.submitAnchored(call, anchor, { utxos });
  assert.equal(f.fate, 'accepted', JSON.stringify(f));
  assert.ok(devnet.chain.inMempool(anchor.txid));
});

test('a followed call confirmed, then rolled back and dropped by a conflicting spend: confirmed, pending, dropped', async () => {
  const fates: CallFate[] = [];
  const s = new Submitter({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet, feeRate: 1, follow: true, onFate: (f) => fates.push(f) });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const coin = (await new EsploraClient(devnet.url).utxos(wallet.address))[0]!;
  const call = buildCall({ contractId, function: 'bump', args: ['u64:9'], abi: artifact.abi, callerSecret: wallet.secret, outpoint: coin });
  const anchor = buildCallAnchor(wallet, [coin], call, 1);
  const a = await s.submitAnchored(call, anchor, { ref: 'r' });
  assert.equal(a.fate, 'accepted', JSON.stringify(a));
  devnet.chain.mine(1, [anchor.txid]);
  await waitSynced(node, devnet);
  await s.settled();
  devnet.chain.reorg({ depth: 1, drop: [anchor.txid], txs: [conflictingSpend(wallet, coin)] });
  await waitSynced(node, devnet);
  await s.settled();
  s.close();
  assert.deepEqual(fates.map((f) => [f.fate, f.ref]), [['accepted', 'r'], ['confirmed', 'r'], ['pending', 'r'], ['dropped', 'r']]);
});

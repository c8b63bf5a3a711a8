/**
 * A hostile or broken peer against one real node (issue 8): garbage bytes, oversized
 * messages, unsigned and badly signed requests, a payload whose stamp does not match,
 * and a flood beyond the rate limit are refused; the node stays healthy and serves.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { SvcClient } from '@svc-node/client/sdk';
import { buildCall, buildCallAnchor, buildDeploy, chooseOutpoint } from '@svc-node/client/sdk';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient, RpcFailure } from '../../src/gossip/client.js';
import { loadPeerClientCtor } from '../../src/gossip/server.js';
import { encodeBody } from '../../src/gossip/codec.js';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import { coinEvidenceOf, freePort, protoCoinEvidence, startPeerNode, status, urlOf, waitStatus } from '../helpers/gossip.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let port = 0;
const wallet = testWallet(9);
let svc: SvcClient;
let contractId = '';
const peer = new Signer(new Uint8Array(randomBytes(32)));
let pc: PeerClient;
/** A raw client with no send limit of its own, to reach the server's limits. */
let raw: grpc.Client;
const RATE = 20;

type Unary = (req: object, cb: (e: grpc.ServiceError | null, r: Record<string, unknown>) => void) => void;
function rawCall(method: string, req: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => ((raw as unknown as Record<string, Unary>)[method]!).call(raw, req, (e, r) => (e ? reject(e) : resolve(r))));
}
const codeOf = async (p: Promise<unknown>): Promise<number> => p.then(() => grpc.status.OK, (e: { code?: number; grpcCode?: number }) => e.grpcCode ?? e.code ?? -1);

before(async () => {
  devnet = await startDevnet();
  port = await freePort();
  node = await startPeerNode(devnet, {
    name: 'hostile-target',
    port,
    peers: [],
    env: { SVC_GOSSIP_INBOUND_RATE_PER_S: String(RATE), SVC_GOSSIP_INBOUND_QUEUE: '5' },
  });
  pc = new PeerClient(urlOf(port), peer, 10_000);
  const Ctor = loadPeerClientCtor();
  raw = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  await fund(devnet, wallet, 8);
  svc = client(node, devnet, wallet);
  const dep = await svc.deploy(compileFixture('counter.svc'));
  contractId = dep.contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  pc?.close();
  raw?.close();
  await node?.stop();
  await devnet?.close();
});

async function healthy(): Promise<void> {
  assert.equal((await fetch(`${node.restUrl}/health`)).status, 200);
  const s = await status(node);
  assert.equal(s.halted, false);
  // A well-formed signed request is still served.
  const ids = await pc.call('GetContractIds', {});
  assert.ok(ids.contract_ids.map((b) => Buffer.from(b).toString('hex')).includes(contractId));
}

test('garbage bytes, unsigned and badly signed requests are refused', async () => {
  // Bytes that are not a protobuf message of the method.
  const garbage = await new Promise<number>((resolve) =>
    raw.makeUnaryRequest('/svc.v2.Peer/SubmitPayload', (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), (e) => resolve(e?.code ?? grpc.status.OK)),
  );
  assert.notEqual(garbage, grpc.status.OK);
  const random = await new Promise<number>((resolve) =>
    raw.makeUnaryRequest('/svc.v2.Peer/Heartbeat', (b: Buffer) => b, (b: Buffer) => b, randomBytes(300), (e) => resolve(e?.code ?? grpc.status.OK)),
  );
  assert.notEqual(random, grpc.status.OK);
  // Unsigned.
  assert.equal(await codeOf(rawCall('Heartbeat', { body: encodeBody('Heartbeat', { node_id: 'x', url: 'http://127.0.0.1:1', height: '0' }) })), grpc.status.UNAUTHENTICATED);
  // A flipped signature byte; another key claimed; a replayed request to another method.
  const { publicKey: nodeKey } = await pc.identity();
  const signed = peer.request('GetContractIds', nodeKey, {});
  const bad = Buffer.from(signed.auth.signature);
  bad[0]! ^= 1;
  assert.equal(await codeOf(rawCall('GetContractIds', { ...signed, auth: { ...signed.auth, signature: bad } })), grpc.status.UNAUTHENTICATED);
  assert.equal(await codeOf(rawCall('GetContractIds', { ...signed, auth: { ...signed.auth, public_key: new Signer(new Uint8Array(32).fill(5)).publicKey } })), grpc.status.UNAUTHENTICATED);
  assert.equal(await codeOf(rawCall('GetStateRoots', signed)), grpc.status.UNAUTHENTICATED);
  // The untouched request passes.
  assert.equal(await codeOf(rawCall('GetContractIds', signed)), grpc.status.OK);
  await waitStatus(node, (x) => x.gossip.requests_unauthenticated >= 4, 'the refusals counted');
  await healthy();
});

test('oversized: a message over the gRPC limit is refused by gRPC, a payload over 64 KiB by the same check as REST', async () => {
  const big = (n: number): object => ({ kind: 'PAYLOAD_KIND_CALL', txid: randomBytes(32), contract_id: Buffer.from(contractId, 'hex'), body: randomBytes(n) });
  // 100 KiB in one message: over the server's receive limit.
  const huge = peer.request('SubmitPayload', (await pc.identity()).publicKey, { payloads: [big(100 * 1024)] });
  assert.equal(await codeOf(rawCall('SubmitPayload', huge)), grpc.status.RESOURCE_EXHAUSTED);
  // 65,537 bytes: within the message limit, over the payload limit.
  const over = await pc.call('SubmitPayload', { payloads: [big(MAX_PAYLOAD_BYTES + 1)] });
  assert.deepEqual(over.results.map((r) => [r.accepted, r.error_code]), [[false, 'payload_too_large']]);
  const prep = await pc.call('PreparePayload', { payload: big(MAX_PAYLOAD_BYTES + 1) });
  assert.deepEqual([prep.valid, prep.error_code], [false, 'payload_too_large']);
  // Random bytes of legal size: refused by the envelope decoder (bad_request), not stored.
  const junk = await pc.call('SubmitPayload', { payloads: [big(500)] });
  assert.deepEqual(junk.results.map((r) => [r.accepted, r.error_code]), [[false, 'bad_request']]);
  await healthy();
});

test('a payload whose stamp does not match is refused; PreparePayload stores nothing; the real payload is accepted', async () => {
  const utxos = await svc.esplora.utxos(wallet.address);
  const outpoint = chooseOutpoint(utxos);
  const mk = (n: number) => buildCall({ contractId, function: 'bump', args: [`u64:${n}`], abi: compileFixture('counter.svc').abi, callerSecret: wallet.secret, outpoint });
  const real = mk(1);
  const other = mk(2);
  const anchor = buildCallAnchor(wallet, utxos, real, 1);
  await svc.esplora.broadcast(anchor.hex);
  const evidence = protoCoinEvidence(anchor.hex, await coinEvidenceOf(devnet, anchor.hex, outpoint));
  const payload = (c: typeof real): object => ({ kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(anchor.txid, 'hex'), contract_id: Buffer.from(contractId, 'hex'), body: Buffer.from(c.bytes), evidence });

  // The anchor carries the stamp of `real`, not of `other`.
  const wrong = await pc.call('SubmitPayload', { payloads: [payload(other)] });
  assert.deepEqual(wrong.results.map((r) => [r.accepted, r.error_code]), [[false, 'anchor_mismatch']]);
  const prepWrong = await pc.call('PreparePayload', { payload: payload(other) });
  assert.deepEqual([prepWrong.valid, prepWrong.error_code], [false, 'anchor_mismatch']);

  const prep = await pc.call('PreparePayload', { payload: payload(real) });
  assert.deepEqual([prep.valid, prep.error_code], [true, '']);
  assert.equal((await fetch(`${node.restUrl}/contract_call/${anchor.txid}/status`)).status, 404, 'PreparePayload stored nothing');

  const ok = await pc.call('SubmitPayload', { payloads: [payload(real)] });
  assert.deepEqual(ok.results.map((r) => [r.accepted, r.error_code]), [[true, '']]);
  const st = (await (await fetch(`${node.restUrl}/contract_call/${anchor.txid}/status`)).json()) as { status: string };
  assert.equal(st.status, 'pending');
  const s = await waitStatus(node, (x) => x.gossip.payloads_accepted === 1 && x.gossip.payloads_refused >= 3, 'the verdicts counted');
  assert.equal(s.gossip.payloads_accepted, 1);
  await healthy();
});

test('one signed batch with a call before its contract deploy: the deploy is taken first, both are accepted', async () => {
  const artifact = compileFixture('counter.svc');
  const utxos = (await svc.esplora.utxos(wallet.address)).filter((u) => u.status?.confirmed !== false).sort((a, b) => b.value - a.value);
  assert.ok(utxos.length >= 2, 'two confirmed UTXOs left');
  const dep = buildDeploy(wallet, [utxos[0]!], artifact, 1);
  await svc.esplora.broadcast(dep.anchor.hex);
  const call = buildCall({ contractId: dep.contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi, callerSecret: wallet.secret, outpoint: utxos[1]! });
  const anchor = buildCallAnchor(wallet, [utxos[1]!], call, 1);
  await svc.esplora.broadcast(anchor.hex);
  const r = await pc.call('SubmitPayload', {
    payloads: [
      { kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(anchor.txid, 'hex'), contract_id: Buffer.from(dep.contractId, 'hex'), body: Buffer.from(call.bytes), evidence: protoCoinEvidence(anchor.hex, await coinEvidenceOf(devnet, anchor.hex, utxos[1]!)) },
      { kind: 'PAYLOAD_KIND_DEPLOY', txid: Buffer.from(dep.anchor.txid, 'hex'), contract_id: Buffer.alloc(0), body: Buffer.from(JSON.stringify(dep.body)), evidence: protoCoinEvidence(dep.anchor.hex, await coinEvidenceOf(devnet, dep.anchor.hex, null)) },
    ],
  });
  assert.deepEqual(
    r.results.map((x) => [Buffer.from(x.txid).toString('hex'), x.accepted, x.error_code]),
    [[anchor.txid, true, ''], [dep.anchor.txid, true, '']],
    'answers in request order',
  );
  const ids = await pc.call('GetContractIds', {});
  assert.ok(ids.contract_ids.some((b) => Buffer.from(b).toString('hex') === dep.contractId));
  const root = await pc.call('GetContractMerkleRoot', { contract_id: Buffer.from(dep.contractId, 'hex') });
  assert.equal(root.count, 2, 'the summary holds the deploy and the call');
  const summary = await pc.call('GetContractSummary', { contract_id: Buffer.from(dep.contractId, 'hex') });
  assert.deepEqual(Buffer.from(summary.merkle_root), Buffer.from(root.merkle_root));
  assert.deepEqual(summary.payloads.map((p) => Buffer.from(p.txid).toString('hex')), [anchor.txid, dep.anchor.txid].sort());
  const txids = await pc.call('GetContractTxids', { contract_id: Buffer.from(dep.contractId, 'hex') });
  assert.deepEqual(txids.txids.map((b) => Buffer.from(b).toString('hex')), [dep.anchor.txid, anchor.txid], 'the deploy first');
  await healthy();
});

test('a flood beyond the per-peer rate limit is refused; the node keeps serving', async () => {
  await new Promise((r) => setTimeout(r, 1100)); // a fresh second of budget
  const flooder = new PeerClient(urlOf(port), new Signer(new Uint8Array(randomBytes(32))), 10_000);
  try {
    const codes = await Promise.all(Array.from({ length: 150 }, () => codeOf(flooder.call('GetContractIds', {}))));
    const ok = codes.filter((c) => c === grpc.status.OK).length;
    const limited = codes.filter((c) => c === grpc.status.RESOURCE_EXHAUSTED).length;
    assert.equal(ok + limited, codes.length, `only OK or RESOURCE_EXHAUSTED: ${[...new Set(codes)].join(',')}`);
    assert.ok(ok >= RATE && ok <= 2 * RATE + 5 + 5, `about one second of budget plus the queue passed: ${ok}`);
    assert.ok(limited >= 100, `the rest was refused: ${limited}`);
  } finally {
    flooder.close();
  }
  await waitStatus(node, (x) => x.gossip.requests_rate_limited >= 100, 'the flood counted');
  // Another peer has its own budget and is served at once.
  await healthy();
});

test('RpcFailure carries the gRPC status of a refused call', async () => {
  const e = await pc.call('GetPayloadByTxid', { txid: randomBytes(32) }).catch((x: unknown) => x);
  assert.ok(e instanceof RpcFailure);
  assert.equal(e.grpcCode, grpc.status.NOT_FOUND);
  assert.match(e.details, /^not_found: /);
});

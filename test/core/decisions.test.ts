/**
 * How each call is decided at confirmation (PROTOCOL section 4) and checked at intake:
 * failed calls leave no trace across nested frames, every invalid reason, intake errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let svc: SvcClient;
const wallet = testWallet(3);
let counter: Artifact;
let proxy: Artifact;
let counterId = '';
let proxyId = '';

const status = async (txid: string) => (await getJson(`${node.restUrl}/contract_call/${txid}/status`)).body;
/**
 * The contracts root at the node's tip (the state root's contract part, served with a
 * field proof): the state root itself also commits to the block's decisions, which a
 * failed call does change.
 */
const contractsRoot = async (): Promise<string> => (await getJson(`${node.restUrl}/v2/${counterId}/count?proof=true`)).body.proof.contracts_root as string;

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 16);
  svc = client(node, devnet, wallet);
  counter = compileFixture('counter.svc');
  proxy = compileFixture('proxy.svc');
  counterId = (await svc.deploy(counter)).contractId;
  proxyId = (await svc.deploy(proxy)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('a failed call changes no state and records its failure code', async () => {
  const base = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:5'], abi: counter.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const before = await contractsRoot();
  assert.equal((await status(base.anchor.txid)).result, '5');

  const boom = await svc.call({ contractId: counterId, function: 'boom', args: ['u64:100'], abi: counter.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const s = await status(boom.anchor.txid);
  assert.equal(s.status, 'failed');
  assert.equal(s.error.code, 'revert');
  assert.match(s.error.message, /boom/);
  assert.equal(s.result, null);
  assert.equal(await contractsRoot(), before, 'no write of the failed call reached the state');

  const next = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:1'], abi: counter.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  assert.equal((await status(next.anchor.txid)).result, '6');
});

test('nested cross-contract calls apply across frames, and a failing callee discards every frame', async () => {
  const ok = await svc.call({ contractId: proxyId, function: 'forward', args: [`key:${counterId}`, 'u64:10'], abi: proxy.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const mid = await contractsRoot();
  const s = await status(ok.anchor.txid);
  assert.equal(s.status, 'executed', JSON.stringify(s));
  assert.equal(s.result, '16', 'the callee ran on the counter: 6 + 10');

  const bad = await svc.call({ contractId: proxyId, function: 'forward_boom', args: [`key:${counterId}`, 'u64:10'], abi: proxy.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const sb = await status(bad.anchor.txid);
  assert.equal(sb.status, 'failed');
  assert.equal(sb.error.code, 'revert');
  assert.equal(await contractsRoot(), mid, "neither the proxy's nor the counter's writes survive");
});

test('duplicate (caller, call_id): the later position is invalid, decided on chain, never at intake', async () => {
  const a = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:1'], abi: counter.abi, callId: 777n });
  const b = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:2'], abi: counter.abi, callId: 777n });
  devnet.chain.mine(1, [b.anchor.txid, a.anchor.txid]);
  await waitSynced(node, devnet);
  assert.equal((await status(b.anchor.txid)).status, 'executed');
  const sa = await status(a.anchor.txid);
  assert.equal(sa.status, 'invalid');
  assert.equal(sa.error.code, 'duplicate_call_id');
  // Intake stores a third call with the pair (its outcome depends on the chain, not on
  // what this node already holds); its block decides it invalid.
  const c = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:3'], abi: counter.abi, callId: 777n });
  assert.equal((await status(c.anchor.txid)).status, 'pending');
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const sc = await status(c.anchor.txid);
  assert.equal(sc.status, 'invalid');
  assert.equal(sc.error.code, 'duplicate_call_id');
});

test('a call confirmed before its contract deploy is invalid', async () => {
  const dep = await svc.deploy(counter);
  const early = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: counter.abi });
  devnet.chain.mine(1, [early.anchor.txid, dep.anchor.txid]);
  await waitSynced(node, devnet);
  const s = await status(early.anchor.txid);
  assert.equal(s.status, 'invalid');
  assert.equal(s.error.code, 'unknown_contract');
  const late = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: counter.abi });
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  assert.equal((await status(late.anchor.txid)).status, 'executed');
});

test('intake errors: bad signature, bad base64, unknown contract, missing anchor, mismatched contract id', async () => {
  const c = await svc.call({ contractId: counterId, function: 'bump', args: ['u64:1'], abi: counter.abi });
  const raw = Buffer.from(c.call.payload, 'base64');
  raw[raw.length - 1] ^= 0x01;
  const bad = await postJson(`${node.restUrl}/contract_call`, { txid: 'ab'.repeat(32), contract_id: counterId, payload: raw.toString('base64') });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.error.code, 'bad_signature');

  const b64 = await postJson(`${node.restUrl}/contract_call`, { txid: 'ab'.repeat(32), contract_id: counterId, payload: 'not base64!' });
  assert.equal(b64.status, 400);
  assert.equal(b64.body.error.code, 'bad_request');

  const other = await postJson(`${node.restUrl}/contract_call`, { txid: c.anchor.txid, contract_id: proxyId, payload: c.call.payload });
  assert.equal(other.status, 400);
  assert.match(other.body.error.message, /contract_id/);

  const missing = await postJson(`${node.restUrl}/contract_call`, { txid: 'cd'.repeat(32), contract_id: counterId, payload: (await svc.call({ contractId: counterId, function: 'bump', args: ['u64:1'], abi: counter.abi })).call.payload });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.error.code, 'anchor_not_found');

  const hex = await postJson(`${node.restUrl}/contract_call`, { txid: 'XYZ', contract_id: counterId, payload: c.call.payload });
  assert.equal(hex.status, 400);
  assert.match(hex.body.error.message, /txid/);
});

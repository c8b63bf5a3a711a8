/**
 * The call lifecycle end to end: devnet chain over HTTP, the real node (RocksDB, writer
 * thread, worker pool, REST socket), anchoring transactions built by the SDK and mined.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
const wallet = testWallet(1);

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 8);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('deploy, call, confirm: pending then executed with result, state root moves, repeats answer 200', async () => {
  const svc = client(node, devnet, wallet);
  const artifact = compileFixture('counter.svc');
  const dep = await svc.deploy(artifact);
  assert.equal(dep.answer.status, 'pending');
  assert.equal(dep.answer.contract_id, dep.contractId);
  const before = await waitSynced(node, devnet);
  devnet.chain.mine(1);
  const afterDeploy = await waitSynced(node, devnet);
  assert.notEqual(afterDeploy.stateRoot, before.stateRoot, 'an active contract changes the state root');

  // The same registration again: 200 with the same ids, now active.
  const again = await postJson(`${node.restUrl}/deploy_contract`, dep.body);
  assert.equal(again.status, 200);
  assert.deepEqual(again.body, { contract_id: dep.contractId, txid: dep.anchor.txid, code_hash: dep.answer.code_hash, status: 'active' });

  const info = await getJson(`${node.restUrl}/contracts/${dep.contractId}`);
  assert.equal(info.status, 200);
  assert.equal(info.body.status, 'active');
  assert.equal(info.body.block_height, afterDeploy.height);
  assert.deepEqual(info.body.abi, artifact.abi);
  assert.deepEqual((await getJson(`${node.restUrl}/contracts/${dep.contractId}/abi`)).body, { contract_id: dep.contractId, abi: artifact.abi });
  assert.equal((await getJson(`${node.restUrl}/contracts/${'00'.repeat(32)}`)).status, 404);

  const c1 = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi });
  assert.equal(c1.answer.status, 'pending');
  const st1 = await getJson(`${node.restUrl}/contract_call/${c1.anchor.txid}/status`);
  assert.equal(st1.status, 200);
  assert.equal(st1.body.status, 'pending');
  assert.equal(st1.body.block_height, null);

  // Same body again: 200, same answer. Same txid, other payload: 409.
  const body = { txid: c1.anchor.txid, contract_id: dep.contractId, payload: c1.call.payload };
  const rep = await postJson(`${node.restUrl}/contract_call`, body);
  assert.equal(rep.status, 200);
  assert.deepEqual(rep.body, c1.answer);
  const c2 = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:7'], abi: artifact.abi });
  const conflict = await postJson(`${node.restUrl}/contract_call`, { ...body, payload: c2.call.payload });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error.code, 'conflict');

  devnet.chain.mine(1, [c1.anchor.txid, c2.anchor.txid]);
  const synced = await waitSynced(node, devnet);
  const s1 = (await getJson(`${node.restUrl}/contract_call/${c1.anchor.txid}/status`)).body;
  const s2 = (await getJson(`${node.restUrl}/contract_call/${c2.anchor.txid}/status`)).body;
  assert.equal(s1.status, 'executed');
  assert.equal(s1.result, '5');
  assert.equal(s1.block_height, synced.height);
  assert.equal(s1.tx_index, 1);
  assert.equal(s1.confirmations, 1);
  assert.equal(s1.error, null);
  assert.equal(s2.status, 'executed');
  assert.equal(s2.result, '12', 'executed after the first, in transaction order');
  assert.equal(s2.tx_index, 2);
  const root = await getJson(`${node.restUrl}/v2/state_root/${synced.height}`);
  assert.deepEqual(root.body, { height: synced.height, block_hash: devnet.chain.tip.hash, state_root: synced.stateRoot });
});

/**
 * Startup (anchoring at start_height, resuming after a restart with catch-up progress),
 * a late payload, and a consensus halt cleared by the operator.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { Db } from '../../src/writer/db.js';
import { undo } from '../../src/writer/store/index.js';
import { client, compileFixture, fund, getJson, nodeStatus, postJson, startDevnet, startDevnetNode, testWallet, waitReplays, waitSynced } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
const nodes: NodeProcess[] = [];
const TOKEN = 'operator-token-for-tests';

before(async () => {
  devnet = await startDevnet();
});

after(async () => {
  for (const n of nodes) await n.stop();
  await devnet?.close();
});

test('anchors at start_height, catches up with progress, resumes after a restart', async () => {
  devnet.chain.mine(20);
  const start = devnet.chain.height - 15;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  let node = await startDevnetNode(devnet, { dataDir, env: { SVC_START_HEIGHT: String(start) } });
  const anchored = await node.waitFor((l) => l.msg === 'anchored block journal');
  assert.equal(anchored['height'], start);
  await waitSynced(node, devnet);
  assert.equal((await nodeStatus(node))['caught_up'], true);
  assert.equal((await getJson(`${node.restUrl}/v2/state_root/${start}`)).body.block_hash, devnet.chain.blockAt(start)!.hash);
  await node.stop();

  devnet.chain.mine(40);
  node = await startDevnetNode(devnet, { dataDir, env: { SVC_START_HEIGHT: '0' } });
  nodes.push(node);
  const open = await node.waitFor((l) => l.msg === 'database open');
  assert.equal(open['processed_height'], start + 15, 'resumes from its last processed block, start_height only anchors a new node');
  const progress = await node.waitFor((l) => l.msg === 'catching up');
  assert.ok(Number(progress['blocks_left']) > 0);
  assert.ok('blocks_per_s' in progress && 'eta_s' in progress);
  await waitSynced(node, devnet);
  const s = await nodeStatus(node);
  assert.equal(s['caught_up'], true);
  assert.equal(s['processed_height'], devnet.chain.height);
});

test('a payload whose stamp was mined before it arrived: the node replays to the state of a node that had it in time', async () => {
  const wallet = testWallet(5);
  const a = await startDevnetNode(devnet);
  nodes.push(a);
  const anchor = await a.waitFor((l) => l.msg === 'anchored block journal');
  const b = await startDevnetNode(devnet, { env: { SVC_START_HEIGHT: String(anchor['height']) } });
  nodes.push(b);
  await fund(devnet, wallet, 4);
  const svc = client(a, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  // b places the deploy's coin by the funding block's header: it holds that block first.
  await waitSynced(b, devnet);
  assert.equal((await postJson(`${b.restUrl}/deploy_contract`, dep.body)).status, 202);
  devnet.chain.mine(1);
  const call = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:9'], abi: counter.abi });
  devnet.chain.mine(3);
  const ra = await waitSynced(a, devnet);
  const rb0 = await waitSynced(b, devnet);
  assert.notEqual(rb0.stateRoot, ra.stateRoot, 'without the payload, B cannot know the effect of the stamp');
  const late = await postJson(`${b.restUrl}/contract_call`, { txid: call.anchor.txid, contract_id: dep.contractId, payload: call.call.payload, coin: call.body.coin });
  assert.equal(late.status, 202);
  await waitReplays(b, 1);
  const rb = await waitSynced(b, devnet);
  assert.equal(rb.stateRoot, ra.stateRoot);
  const sb = (await getJson(`${b.restUrl}/contract_call/${call.anchor.txid}/status`)).body;
  assert.equal(sb.status, 'executed');
  assert.equal(sb.result, '9');
});

test('a broken invariant halts the node; writes refused, reads served; clear_halt re-derives and resumes', async () => {
  const wallet = testWallet(6);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-halt-'));
  let node = await startDevnetNode(devnet, { dataDir, env: { SVC_API_TOKEN: TOKEN } });
  await fund(devnet, wallet, 4);
  const svc = client(node, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  devnet.chain.mine(1);
  const call = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:2'], abi: counter.abi });
  devnet.chain.mine(1);
  const synced = await waitSynced(node, devnet);
  await node.stop();

  // Corrupt the journal: the tip block's undo log disappears.
  const db = await Db.open(join(dataDir, 'db'));
  await db.batch([{ type: 'del', key: undo.key(synced.height) }]);
  await db.close();

  node = await startDevnetNode(devnet, { dataDir, env: { SVC_API_TOKEN: TOKEN } });
  nodes.push(node);
  devnet.chain.reorg({ depth: 1 });
  await node.waitFor((l) => l.msg === 'consensus halt', 20_000, 'halt');
  const s = await nodeStatus(node);
  assert.equal(s['halted'], true);
  assert.match(String(s['halt_reason']), /undo log/);

  const refused = await postJson(`${node.restUrl}/contract_call`, { txid: call.anchor.txid, contract_id: dep.contractId, payload: call.call.payload, coin: call.body.coin });
  assert.equal(refused.status, 503);
  assert.equal(refused.body.error.code, 'halted');
  const refusedDeploy = await postJson(`${node.restUrl}/deploy_contract`, dep.body);
  assert.equal(refusedDeploy.status, 503);
  assert.equal((await getJson(`${node.restUrl}/v2/state_root`)).status, 200, 'reads keep working');
  assert.equal((await getJson(`${node.restUrl}/contract_call/${call.anchor.txid}/status`)).body.status, 'executed');

  const noHeader = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST' });
  assert.equal(noHeader.status, 401);
  assert.equal(noHeader.headers.get('www-authenticate'), 'Bearer');
  const cleared = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(cleared.status, 200);
  assert.deepEqual(await cleared.json(), { halted: false });
  await waitSynced(node, devnet);
  const after = await nodeStatus(node);
  assert.equal(after['halted'], false);
  const st = (await getJson(`${node.restUrl}/contract_call/${call.anchor.txid}/status`)).body;
  assert.equal(st.status, 'executed');
  assert.equal(st.block_height, devnet.chain.height - 1, 're-confirmed on the new branch');
});

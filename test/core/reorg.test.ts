/**
 * Reorganisations on the devnet: depth 1 with reordering, 6, a double-spent anchor
 * outpoint, 144 (undo logs) and 145 (re-derivation from the journal). The final state root
 * must equal that of a fresh node that only ever saw the final chain (and received every
 * payload late, so this also exercises late payloads at every depth).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, conflictingSpend, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitReplays, waitSynced, waitUntil } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let nodeA: NodeProcess;
let nodeB: NodeProcess | undefined;
const wallet = testWallet(2);
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';
let deployBody: Record<string, unknown>;
const calls = new Map<string, { txid: string; contract_id: string; payload: string; coin?: unknown; outpoint: { txid: string; vout: number; value: number } }>();

async function bump(name: string, n: number): Promise<string> {
  const r = await svc.call({ contractId, function: 'bump', args: [`u64:${n}`], abi: artifact.abi });
  const first = r.anchor.inputs[0]!;
  calls.set(name, { txid: r.anchor.txid, contract_id: contractId, payload: r.call.payload, coin: r.body.coin, outpoint: { txid: first.txid, vout: first.vout, value: first.value } });
  return r.anchor.txid;
}

async function statusOf(node: NodeProcess, name: string): Promise<{ status: string; result: unknown; block_height: number | null }> {
  return (await getJson(`${node.restUrl}/contract_call/${calls.get(name)!.txid}/status`)).body;
}

/**
 * The call's status once it is executed at `height`. A light node reads a block more than
 * six below the tip as its header alone, so a call confirmed deep in a run of blocks
 * mined at once is placed by its deferred check just after the node reaches the tip
 * (one request, then a replay from that block): wait for that rather than for the tip.
 */
async function executedAt(node: NodeProcess, name: string, height: number): Promise<{ status: string; result: unknown; block_height: number | null }> {
  await waitUntil(node, async () => {
    const s = await statusOf(node, name);
    return s.status === 'executed' && s.block_height === height;
  }, `${name} executed at ${height}`);
  return statusOf(node, name);
}

before(async () => {
  devnet = await startDevnet();
  nodeA = await startDevnetNode(devnet);
  await fund(devnet, wallet, 12);
  svc = client(nodeA, devnet, wallet);
  artifact = compileFixture('counter.svc');
  const dep = await svc.deploy(artifact);
  contractId = dep.contractId;
  deployBody = dep.body as unknown as Record<string, unknown>;
  devnet.chain.mine(1);
  await waitSynced(nodeA, devnet);
});

after(async () => {
  await nodeA?.stop();
  await nodeB?.stop();
  await devnet?.close();
});

test('depth 1 reorg that reorders two calls: decided again in the new order', async () => {
  const c1 = await bump('c1', 1);
  const c2 = await bump('c2', 2);
  devnet.chain.mine(1, [c1, c2]);
  await waitSynced(nodeA, devnet);
  assert.equal((await statusOf(nodeA, 'c1')).result, '1');
  assert.equal((await statusOf(nodeA, 'c2')).result, '3');
  devnet.chain.reorg({ depth: 1, txids: [c2, c1] });
  await waitSynced(nodeA, devnet);
  assert.equal((await statusOf(nodeA, 'c2')).result, '2', 'rolled back to 0, c2 runs first on the new branch');
  assert.equal((await statusOf(nodeA, 'c1')).result, '3');
});

test('depth 6 reorg: the call is re-confirmed at its new height', async () => {
  await bump('c3', 3);
  devnet.chain.mine(6);
  await waitSynced(nodeA, devnet);
  const before = await statusOf(nodeA, 'c3');
  assert.equal(before.status, 'executed');
  const r = devnet.chain.reorg({ depth: 6, blocks: 7 });
  await waitSynced(nodeA, devnet);
  const after = await statusOf(nodeA, 'c3');
  assert.equal(after.status, 'executed');
  assert.equal(after.result, '6');
  assert.equal(after.block_height, r.height - 6, 'mined in the first block of the new branch');
});

test('a reorg that double-spends the anchor outpoint: executed, back to pending, then dropped', async () => {
  const c4 = await bump('c4', 4);
  devnet.chain.mine(1);
  await waitSynced(nodeA, devnet);
  assert.equal((await statusOf(nodeA, 'c4')).status, 'executed');
  const conflict = conflictingSpend(wallet, calls.get('c4')!.outpoint);
  devnet.chain.reorg({ depth: 1, drop: [c4], txs: [conflict] });
  await waitSynced(nodeA, devnet);
  const s = await statusOf(nodeA, 'c4');
  assert.equal(s.status, 'dropped');
  assert.equal(s.block_height, null);
});

test('depth 144 reorg rolls back through the undo logs', async () => {
  await bump('c5', 5);
  const mined = devnet.chain.mine(144);
  await waitSynced(nodeA, devnet, 60_000);
  assert.equal((await executedAt(nodeA, 'c5', mined.height - 143)).result, '11', 'the dropped c4 left no trace: 6 + 5');
  const r = devnet.chain.reorg({ depth: 144, blocks: 145 });
  await waitSynced(nodeA, devnet, 60_000);
  assert.ok(nodeA.lines.some((l) => l.msg === 'reorganisation' && l['depth'] === 144 && l['mode'] === 'undo'));
  assert.equal((await executedAt(nodeA, 'c5', r.height - 144)).result, '11', 'mined in the first block of the new branch');
});

test('depth 145 reorg re-derives state from the journal', async () => {
  await bump('c6', 6);
  const mined = devnet.chain.mine(145);
  await waitSynced(nodeA, devnet, 60_000);
  await executedAt(nodeA, 'c6', mined.height - 144);
  const r = devnet.chain.reorg({ depth: 145, blocks: 146 });
  await waitSynced(nodeA, devnet, 90_000);
  assert.ok(nodeA.lines.some((l) => l.msg === 'reorganisation' && l['depth'] === 145 && l['mode'] === 're-derive'));
  assert.equal((await executedAt(nodeA, 'c6', r.height - 145)).result, '17');
});

test('a fresh node on the final chain, given every payload late, reaches the same state root', async () => {
  const a = await waitSynced(nodeA, devnet);
  const anchorLine = await nodeA.waitFor((l) => l.msg === 'anchored block journal');
  nodeB = await startDevnetNode(devnet, { env: { SVC_START_HEIGHT: String(anchorLine['height']) } });
  await waitSynced(nodeB, devnet, 60_000);
  let replays = 0;
  const dep = await postJson(`${nodeB.restUrl}/deploy_contract`, deployBody);
  assert.equal(dep.status, 202);
  replays++;
  for (const [name, c] of calls) {
    const r = await postJson(`${nodeB.restUrl}/contract_call`, { txid: c.txid, contract_id: c.contract_id, payload: c.payload, coin: c.coin });
    if (name === 'c4') {
      // The chain-data endpoint still serves the replaced anchor (electrs keeps stale
      // transactions), so intake accepts it; no block on B's chain names it, so it stays
      // pending there while A, which saw the conflict confirm, says dropped. Neither
      // changes state.
      assert.equal(r.status, 202);
      assert.equal(r.body.status, 'pending');
      continue;
    }
    assert.equal(r.status, 202, `${name}: ${JSON.stringify(r.body)}`);
    replays++;
  }
  // Each late payload is placed in its block (by the block read in full, or by a deferred
  // check's merkle proof when B read the block as a header) and replayed from it; late
  // payloads placed together share one replay.
  await waitUntil(nodeB, async () => {
    for (const name of ['c1', 'c2', 'c3', 'c5', 'c6']) if ((await statusOf(nodeB!, name)).status === 'pending') return false;
    return true;
  }, `the ${replays} late payloads decided`, 120_000);
  await waitReplays(nodeB, 1, 60_000);
  const b = await waitSynced(nodeB, devnet);
  assert.equal(b.height, a.height);
  assert.equal(b.stateRoot, a.stateRoot, 'same chain, same payloads, same state root');
  for (const name of ['c1', 'c2', 'c3', 'c5', 'c6']) {
    const sa = await statusOf(nodeA, name);
    const sb = await statusOf(nodeB, name);
    assert.deepEqual({ status: sb.status, result: sb.result, block_height: sb.block_height }, { status: sa.status, result: sa.result, block_height: sa.block_height }, name);
  }
});

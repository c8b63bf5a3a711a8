/**
 * A drop by a spender of 64 bytes without its witness (non-standard, mined all the same):
 * its merkle branch proves nothing, since an inner node's 64 bytes fold the same way. A
 * light node (B) and a node reading every block (C) hold a call naming one outpoint (the
 * last of four fee bumps on it) when a 64-byte transaction spends it, read that block in
 * full, and drop it; a light node started afterwards (A) learns the payload from B by
 * sync, with B's evidence, after that block. Every node must give the same records, no honest peer may be counted a liar,
 * A's checks must read the block once (within a handful of endpoint requests) and then
 * stop, and a proof of the drop from either node must verify in the SDK.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as bitcoin from 'bitcoinjs-lib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import { buildCall, buildCallAnchor, callSubmission } from '@svc-node/client/sdk';
import { verifyCallProof } from '@svc-node/client/node';
import { EsploraClient } from '@svc-node/client/esplora';
import { DevnetControl } from '../../src/devnet/control-client.js';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced, withCoin } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, waitStatus } from '../helpers/gossip.js';

let devnet: DevnetChainHandle;
const nodes: NodeProcess[] = [];
const wallet = testWallet(45);
let artifact: Artifact;

/** Endpoint routes a deferred check asks (docs/OPERATING.md, "Chain-data request budget"). */
const CHECK_ROUTE = /outspend|merkle-proof|\/txids$|^\/tx\/:id\/hex$/;

async function checkRequests(ctl: DevnetControl): Promise<Record<string, number>> {
  const k = await ctl.counters();
  const out: Record<string, number> = {};
  for (const [route, c] of Object.entries(k.routes)) if (CHECK_ROUTE.test(route)) out[route] = c.all.requests;
  return out;
}
const total = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

before(async () => {
  devnet = await startDevnet();
  artifact = compileFixture('counter.svc');
});

after(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await devnet?.close();
});

test('a 64-byte spender: the node that got the payloads after its block reads the block, answers what the nodes that read it answer, blames no one, stops asking; every proof verifies', async (t) => {
  const [portA, portB, portC] = [await freePort(), await freePort(), await freePort()];
  // B light, C reading every block; both hold the calls before the spend's block.
  const [B, C] = await Promise.all([
    startPeerNode(devnet, { name: 'tiny-b', port: portB, peers: [portA, portC] }),
    startPeerNode(devnet, { name: 'tiny-c', port: portC, peers: [portB], env: { SVC_CHAIN_MODE: 'blocks' } }),
  ]);
  nodes.push(B, C);
  await waitStatus(B, (s) => s.peers >= 1, 'B and C peered');
  await fund(devnet, wallet, 4);
  // Both hold the funding block before the deploy is gossiped: its coin is proven there (docs/STATE.md, "Coin evidence").
  await Promise.all([B, C].map((n) => waitSynced(n, devnet)));
  const svc = client(B, devnet, wallet);
  const contractId = (await svc.deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await Promise.all([B, C].map((n) => waitSynced(n, devnet)));
  await waitStatus(C, (s) => s.contracts === 1, 'the deploy on C');

  // Four calls naming one outpoint, each paying more than the one before (a wallet's fee
  // bumps): one coin backs one waiting call, so B and (gossip) C end holding the last one
  // alone; none of their anchors is broadcast.
  const esplora = new EsploraClient(devnet.url);
  const outpoint = (await esplora.utxos(wallet.address)).find((u) => u.status?.confirmed)!;
  const bumped: string[] = [];
  for (let i = 0; i < 4; i++) {
    const call = buildCall({ contractId, function: 'bump', args: [`u64:${i + 1}`], abi: artifact.abi, callerSecret: wallet.secret, outpoint, callId: BigInt(900 + i) });
    const anchor = buildCallAnchor(wallet, [outpoint], call, i + 1);
    assert.equal((await postJson(`${B.restUrl}/contract_call`, await withCoin(devnet, callSubmission(call, anchor)))).status, 202);
    bumped.push(anchor.txid);
  }
  const txids = bumped.slice(-1);
  // C holds the last bump (gossip may bring it after the others, each replacing the one before).
  for (const deadline = Date.now() + 20_000; (await getJson(`${C.restUrl}/contract_call/${txids[0]}/status`)).status !== 200; ) {
    assert.ok(Date.now() < deadline, 'the last call reaches C');
    await C.waitForNext(() => true, 200, 'a line').catch(() => undefined);
  }
  await waitStatus(C, (s) => s.pending_calls === 1, 'one call waiting on C');
  for (const n of [B, C]) for (const t of bumped.slice(0, -1)) assert.equal((await getJson(`${n.restUrl}/contract_call/${t}/status`)).status, 404, 'a replaced call is not held');
  // The 64-byte spender: the outpoint's one witness input, one output of a 4-byte script.
  const psbt = new bitcoin.Psbt({ network: wallet.network });
  psbt.addInput({ hash: outpoint.txid, index: outpoint.vout, witnessUtxo: { script: wallet.outputScript, value: BigInt(outpoint.value) } });
  psbt.addOutput({ script: bitcoin.script.compile([bitcoin.opcodes.OP_RETURN!, Uint8Array.of(4, 5)]), value: 0n });
  psbt.signAllInputs(wallet.signer);
  psbt.finalizeAllInputs();
  const tiny = psbt.extractTransaction(true); // the whole coin as its fee: one output, 4 bytes of script
  assert.equal(tiny.byteLength(false), 64);
  const ctl = new DevnetControl(devnet.url);
  const spendHeight = (await ctl.reorg({ depth: 1, blocks: 2, txs: [tiny.toHex()] })).height - 1;
  await Promise.all([B, C].map((n) => waitSynced(n, devnet))); // near the tip with calls waiting: B reads the block in full
  devnet.chain.mine(10); // far below the tip for a light node starting now: read as its header alone
  await Promise.all([B, C].map((n) => waitSynced(n, devnet)));
  for (const n of [B, C]) for (const t of txids) assert.equal((await getJson(`${n.restUrl}/contract_call/${t}/status`)).body.status, 'dropped', 'B and C read the block');

  // A starts now: it learns the payloads by sync from B, after the spend's block.
  await ctl.resetCounters();
  const A = await startPeerNode(devnet, { name: 'tiny-a', port: portA, peers: [portB] });
  nodes.push(A);
  await waitSynced(A, devnet, 60_000);
  const dropped = async (): Promise<boolean> => {
    for (const t of txids) if ((await getJson(`${A.restUrl}/contract_call/${t}/status`)).body.status !== 'dropped') return false;
    return true;
  };
  const deadline = Date.now() + 30_000;
  while (!(await dropped())) {
    assert.ok(Date.now() < deadline, `A still holds calls pending: ${JSON.stringify(await checkRequests(ctl))}`);
    await A.waitForNext(() => true, 200, 'a line').catch(() => undefined);
  }
  const used = await checkRequests(ctl);
  t.diagnostic(`A's deferred checks asked ${JSON.stringify(used)}`);
  // Per call: what spends the outpoint, the spender; the block's txids once.
  assert.ok(total(used) <= txids.length * 2 + 1, `deferred checks asked ${JSON.stringify(used)}`);
  assert.equal(used['/block/:id/txids'], 1, 'the block read once');
  // Every request a check made is one docs/OPERATING.md lists for deferred checks.
  const ops = readFileSync(join(repoRoot, 'docs/OPERATING.md'), 'utf8');
  const table = ops.slice(ops.indexOf('| payload | requests of one check |'), ops.indexOf('So a check is'));
  const norm = (p: string): string => p.replace(/:[a-z]+/g, ':x');
  const listed = new Set([...table.matchAll(/`GET ([^`]+)`/g)].map((m) => norm(m[1]!)));
  for (const route of Object.keys(used)) assert.ok(listed.has(norm(route)), `${route} is documented`);

  // No new block: nothing more is asked (a check waits for a block, never loops on time).
  await new Promise((r) => setTimeout(r, 3_000)); // 60 block-check intervals of the test's 0.05 s
  assert.deepEqual(await checkRequests(ctl), used, 'no request without a new block');

  // One answer, no liar.
  await waitSynced(C, devnet);
  for (const t of txids) {
    const [a, b, c] = await Promise.all([A, B, C].map(async (n) => (await getJson(`${n.restUrl}/contract_call/${t}/status`)).body));
    assert.deepEqual(a, b, `${t}: A answers what B answers`);
    assert.deepEqual(c, b, `${t}: C answers what B answers`);
  }
  assert.ok(!A.lines.some((l) => l.msg === 'peer sent false evidence'), 'B is not blamed');
  assert.equal((await status(A)).gossip.sync_bad_evidence, 0);

  // A proof of the drop from any node verifies, and names the spend's block.
  for (const n of [A, B, C]) {
    const r = (await getJson(`${n.restUrl}/contract_call/${txids[0]}/status?proof=true`)).body;
    const { proof, ...record } = r;
    assert.ok(proof.spent_by?.block_txids?.length > 1, `the block txids travel with ${n.restUrl}'s proof: ${JSON.stringify(proof.spent_by)}`);
    const v = await verifyCallProof(record, proof, { network: 'regtest' });
    assert.deepEqual([v.status, v.spentBy?.txid, v.spentBy?.height], ['dropped', tiny.getId(), spendHeight]);
    // Without the list the branch alone proves nothing.
    const { block_txids: _, ...bare } = proof.spent_by;
    await assert.rejects(verifyCallProof(record, { ...proof, spent_by: bare }, { network: 'regtest' }), /64 bytes without its witness/);
  }
  await waitStatus(A, (s) => s.pending_calls === 0, 'nothing pending on A');
});

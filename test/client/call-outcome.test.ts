/**
 * A call's outcome is provable from the real node's answers: the node commits the
 * decision (status, position, result or error code, events) of every call whose anchor a
 * block confirms under that block's state root and serves its branch with the call
 * proof; the SDK checks the status record against it. A drop is committed by no root and
 * proven by its spender alone. Each tamper an indexer could be lied to with (a failed
 * call relabelled executed, a changed result, error or event, another call's decision,
 * a root nobody publishes, a drop relabelled either way) is ClientError bad_proof.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { ClientError, NodeClient, verifyCallProof, type ProvenCallStatus, type SvcClient } from '@svc-node/client';
import type { Artifact } from '@svc-node/protocol/contract';
import { decodeDecision, encodeDecision } from '@svc-node/protocol/state/decisions';
import { client, compileFixture, conflictingSpend, fund, getJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let nc: NodeClient;
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';
const wallet = testWallet(3);
const txids: Record<'executed' | 'failed' | 'invalid', string> = { executed: '', failed: '', invalid: '' };

const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
const rootAt = async (h: number): Promise<string> => (await getJson(`${node.restUrl}/v2/state_root/${h}`)).body.state_root as string;
const answer = async (txid: string): Promise<ProvenCallStatus> => (await getJson(`${node.restUrl}/contract_call/${txid}/status?proof=true`)).body as ProvenCallStatus;

async function badProof(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ClientError && e.code === 'bad_proof' && re.test(e.message));
}

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 8);
  await waitSynced(node, devnet);
  svc = client(node, devnet, wallet);
  nc = new NodeClient(node.restUrl);
  artifact = compileFixture('counter.svc');
  contractId = (await svc.deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  // One block: an executed call (result and an event), a failed one, and an invalid one
  // (the executed call's (caller, call_id) again, taken earlier in the block).
  const ok = await svc.call({ contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi, callId: 77n });
  const boom = await svc.call({ contractId, function: 'boom', args: ['u64:1'], abi: artifact.abi });
  const dup = await svc.call({ contractId, function: 'bump', args: ['u64:9'], abi: artifact.abi, callId: 77n });
  devnet.chain.mine(1, [ok.anchor.txid, boom.anchor.txid, dup.anchor.txid]);
  await waitSynced(node, devnet);
  txids.executed = ok.anchor.txid;
  txids.failed = boom.anchor.txid;
  txids.invalid = dup.anchor.txid;
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('executed, failed and invalid calls verify against the root the node publishes for their block, with their events', async (t) => {
  const trustedStateRoot = rootAt;
  const e = await nc.callStatusProven(txids.executed, { network: 'regtest', trustedStateRoot });
  const size = JSON.stringify(e.proof).length;
  t.diagnostic(`executed call's proof: ${size} bytes of JSON, of which the decision ${JSON.stringify(e.proof.decision).length} (a block of 3 calls)`);
  assert.equal(e.status, 'executed');
  assert.equal(e.result, '5');
  const o = e.proven.outcome!;
  assert.deepEqual([o.status, o.height, o.txIndex, o.result, o.errorCode], ['executed', e.block_height, e.tx_index, '5', null]);
  assert.equal(o.stateRoot, await rootAt(e.block_height!));
  assert.deepEqual(o.events, [{ contract_id: contractId, name: 'Bumped', params: [{ type: 'key', value: e.caller }, { type: 'u64', value: '5' }, { type: 'u64', value: '5' }] }]);

  const f = await nc.callStatusProven(txids.failed, { network: 'regtest', trustedStateRoot });
  assert.equal(f.status, 'failed');
  assert.deepEqual([f.proven.outcome!.errorCode, f.proven.outcome!.events], [f.error!.code, []], 'a failed call commits its error code and no events');
  const i = await nc.callStatusProven(txids.invalid, { network: 'regtest', trustedStateRoot });
  assert.equal(i.status, 'invalid');
  // An invalid call is committed by no root: its proof is its position and the absence of a decision for it.
  assert.deepEqual([i.proven.outcome!.status, i.proven.outcome!.txIndex, i.proven.outcome!.errorCode], ['invalid', i.tx_index, null]);

  // The record with its proof member, as docs/STATE.md shows it, is verified as it is.
  const v = await verifyCallProof(await answer(txids.failed), undefined, { network: 'regtest' });
  assert.equal(v.outcome!.status, 'failed');
});

test('tampered outcomes are refused: relabelled status, changed result, error code, events, another call\'s decision, an untrusted root', async () => {
  const ex = await answer(txids.executed);
  const fa = await answer(txids.failed);
  const inv = await answer(txids.invalid);
  // A failed call relabelled executed (the forgery), with a result.
  await badProof(verifyCallProof({ ...fa, status: 'executed', error: null }, undefined, { network: 'regtest' }), /status "executed" is not the committed "failed"/);
  await badProof(verifyCallProof({ ...fa, status: 'executed', error: null, result: '6' }, undefined, { network: 'regtest' }), /status/);
  // An invalid call relabelled failed finds no decision; an executed one relabelled invalid finds its decision.
  await badProof(verifyCallProof({ ...inv, status: 'failed' }, undefined, { network: 'regtest' }), /commits to no decision for this call/);
  await badProof(verifyCallProof({ ...ex, status: 'invalid', result: null, error: { code: 'duplicate_call_id', message: 'x' } }, undefined, { network: 'regtest' }), /commits a executed decision for this call, not invalid/);
  await badProof(verifyCallProof({ ...ex, result: '6' }, undefined, { network: 'regtest' }), /result "6" is not the committed "5"/);
  await badProof(verifyCallProof({ ...fa, error: { code: 'out_of_instructions', message: fa.error!.message } }, undefined, { network: 'regtest' }), /error code "out_of_instructions"/);
  await badProof(verifyCallProof({ ...ex, error: { code: 'boom', message: 'x' } }, undefined, { network: 'regtest' }), /error code "boom" is not the committed null/);

  // The leaf itself changed: an event's amount, an event removed, the status byte.
  const leafOf = (a: ProvenCallStatus): Buffer => Buffer.from(a.proof.decision!.leaf!.value, 'hex');
  const withLeaf = (a: ProvenCallStatus, leaf: Uint8Array): ProvenCallStatus => {
    const b = copy(a);
    b.proof.decision!.leaf!.value = Buffer.from(leaf).toString('hex');
    return b;
  };
  const d = decodeDecision(leafOf(ex));
  const moreEvents = encodeDecision({ ...d, events: d.events.map((e) => ({ ...e, params: [e.params[0]!, { type: 'u64', value: 500n }, e.params[2]!] })) });
  await badProof(verifyCallProof(withLeaf(ex, moreEvents), undefined, { network: 'regtest' }), /root mismatch/);
  await badProof(verifyCallProof(withLeaf(ex, encodeDecision({ ...d, events: [] })), undefined, { network: 'regtest' }), /root mismatch/);
  const relabelled = leafOf(fa);
  relabelled[0] = 1;
  await badProof(verifyCallProof(withLeaf(fa, relabelled), undefined, { network: 'regtest' }), /root mismatch|decode|canonical/);

  // Another call's decision branch under this record; a made-up root with its parts.
  const swapped = copy(fa);
  swapped.proof.decision = copy(ex.proof.decision);
  await badProof(verifyCallProof(swapped, undefined, { network: 'regtest' }), /commits to no decision for this call|not on the key path|root mismatch/);
  const parts = copy(ex);
  parts.proof.decision!.contracts_root = '11'.repeat(32);
  await badProof(verifyCallProof(parts, undefined, { network: 'regtest' }), /do not fold to the state root/);
  await badProof(verifyCallProof(ex, ex.proof, { network: 'regtest', trustedStateRoot: async () => '22'.repeat(32) }), /is not the trusted root/);
  const noDecision = copy(ex);
  noDecision.proof.decision = null;
  await badProof(verifyCallProof(noDecision, undefined, { network: 'regtest' }), /carries no decision/);
});

test('a dropped call is proven by its spender alone, with no decision; relabelled executed, or carrying a decision, it is refused', async () => {
  const r = await svc.call({ contractId, function: 'bump', args: ['u64:2'], abi: artifact.abi });
  const first = r.anchor.inputs[0]!;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  devnet.chain.reorg({ depth: 1, drop: [r.anchor.txid], txs: [conflictingSpend(wallet, { txid: first.txid, vout: first.vout, value: first.value })] });
  await waitSynced(node, devnet);
  const a = await answer(r.anchor.txid);
  assert.equal(a.status, 'dropped');
  assert.equal(a.proof.decision, null, 'no root commits to a drop');
  const v = await verifyCallProof(a, a.proof, { network: 'regtest', trustedStateRoot: rootAt });
  assert.deepEqual(v.outcome, { height: v.spentBy!.height, blockHash: v.spentBy!.blockHash, stateRoot: null, status: 'dropped', txIndex: null, result: null, errorCode: null, events: [] });
  await badProof(verifyCallProof({ ...a, status: 'executed', block_height: v.spentBy!.height, tx_index: 1 }, undefined, { network: 'regtest' }), /carries no confirmation/);
  const withDecision = copy(a);
  withDecision.proof.decision = copy((await answer(txids.executed)).proof.decision);
  await badProof(verifyCallProof(withDecision, undefined, { network: 'regtest' }), /dropped call's proof carries a decision/);
  // An executed call relabelled dropped: its proof has no spend of the outpoint.
  const ex = await answer(txids.executed);
  await badProof(verifyCallProof({ ...ex, status: 'dropped', block_height: null, tx_index: null }, undefined, { network: 'regtest' }), /carries no conflicting spend/);
});

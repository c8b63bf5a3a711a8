/**
 * Issue 18 over real processes: three peered nodes with default settings on a devnet
 * chain receive the same payloads in different orders (duplicate (caller, call_id) pairs
 * sent after both anchors confirmed, in opposite orders to different nodes; a call whose
 * outpoint a conflicting transaction spends in a reorg), then a fourth node joins late
 * with default settings and only sync to learn from. Nodes of both chain modes mix: B
 * reads every block (chain_mode "blocks"), the others follow headers and learn from
 * evidence (the default, "light"); the late joiner takes its headers and payloads with
 * their evidence from a light peer. All four must agree on the state root at every
 * height from the activation anchor up, on every call's status, on the events and on
 * field reads.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import { buildCall, buildCallAnchor, type SvcClient } from '@svc-node/client/sdk';
import { toHex } from '@svc-node/protocol/hash';
import { EsploraClient } from '@svc-node/client/esplora';
import { client, compileFixture, conflictingSpend, fund, getJson, postJson, startDevnet, testWallet, waitSynced, withCoin } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, waitStatus } from '../helpers/gossip.js';

let devnet: DevnetChainHandle;
const nodes: NodeProcess[] = [];
const wallet = testWallet(18);
let svc: SvcClient;
let esplora: EsploraClient;
let artifact: Artifact;
let contractId = '';
let ports: number[] = [];

interface Prepared {
  txid: string;
  body: { txid: string; contract_id: string; payload: string };
  outpoint: { txid: string; vout: number; value: number };
}

/** A signed call and its anchoring transaction, broadcast; the payload is not sent to any node. */
async function prepare(n: number, callId: bigint): Promise<Prepared> {
  const utxos = await esplora.utxos(wallet.address);
  // A distinct outpoint per call: the largest unconfirmed change would chain them.
  const confirmed = utxos.filter((u) => u.status?.confirmed).sort((a, b) => a.txid.localeCompare(b.txid) || a.vout - b.vout);
  const used = new Set(prepared.map((p) => `${p.outpoint.txid}:${p.outpoint.vout}`));
  const outpoint = confirmed.find((u) => !used.has(`${u.txid}:${u.vout}`))!;
  const call = buildCall({ contractId, function: 'bump', args: [`u64:${n}`], abi: artifact.abi, callerSecret: wallet.secret, outpoint, callId });
  const anchor = buildCallAnchor(wallet, [outpoint], call, 1);
  await esplora.broadcast(anchor.hex);
  const p = { txid: anchor.txid, body: await withCoin(devnet, { txid: anchor.txid, contract_id: toHex(call.envelope.contractId), payload: call.payload }), outpoint: { txid: outpoint.txid, vout: outpoint.vout, value: outpoint.value } };
  prepared.push(p);
  return p;
}
const prepared: Prepared[] = [];

async function submit(node: NodeProcess, p: Prepared): Promise<number> {
  return (await postJson(`${node.restUrl}/contract_call`, p.body)).status;
}

async function statusOn(node: NodeProcess, txid: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return getJson(`${node.restUrl}/contract_call/${txid}/status`);
}

/** Every node at the chain's tip, with every call's status settled the same way. */
async function agree(all: NodeProcess[]): Promise<void> {
  await Promise.all(all.map((n) => waitSynced(n, devnet, 60_000)));
  const tip = devnet.chain.height;
  for (let h = 0; h <= tip; h++) {
    const roots = await Promise.all(all.map(async (n) => (await getJson(`${n.restUrl}/v2/state_root/${h}`)).body));
    for (const r of roots) assert.deepEqual(r, roots[0], `state root at height ${h}`);
  }
  for (const p of prepared) {
    const answers = await Promise.all(all.map((n) => statusOn(n, p.txid)));
    // `confirmations` depends on nothing but the tip, equal here too.
    for (const a of answers) assert.deepEqual(a, answers[0], `status of ${p.txid}`);
  }
  const events = await Promise.all(all.map(async (n) => (await getJson(`${n.restUrl}/events/${contractId}?limit=1000`)).body));
  for (const e of events) assert.deepEqual(e, events[0], 'events');
  const reads = await Promise.all(all.map(async (n) => (await getJson(`${n.restUrl}/v2/${contractId}/count`)).body));
  for (const r of reads) assert.deepEqual(r, reads[0], 'field read');
}

/** Waits until `node` holds `txid` with the given status. */
async function waitCallStatus(node: NodeProcess, txid: string, want: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await statusOn(node, txid);
    if (r.status === 200 && r.body['status'] === want) return r.body;
    if (Date.now() > deadline) throw new Error(`${txid} on ${node.restUrl}: ${JSON.stringify(r)} (want ${want})`);
    await node.waitForNext(() => true, 200, 'a line').catch(() => undefined);
  }
}

before(async () => {
  devnet = await startDevnet();
  ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  // No start_height: each anchors below the devnet's activation, as a new operator's would.
  nodes.push(
    ...(await Promise.all([
      startPeerNode(devnet, { name: 'conv-a', port: ports[0]!, peers: [ports[1]!, ports[2]!] }),
      startPeerNode(devnet, { name: 'conv-b', port: ports[1]!, peers: [ports[0]!, ports[2]!], env: { SVC_CHAIN_MODE: 'blocks' } }),
      startPeerNode(devnet, { name: 'conv-c', port: ports[2]!, peers: [ports[0]!, ports[1]!] }),
    ])),
  );
  await fund(devnet, wallet, 8);
  svc = client(nodes[0]!, devnet, wallet);
  esplora = new EsploraClient(devnet.url);
  artifact = compileFixture('counter.svc');
});

after(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await devnet?.close();
});

test('three nodes given payloads in different orders, and a late joiner with default settings, agree on everything', async () => {
  const [A, B, C] = nodes as [NodeProcess, NodeProcess, NodeProcess];
  await Promise.all(nodes.map((n) => waitStatus(n, (s) => s.peers >= 2, 'peers up')));
  const dep = await svc.deploy(artifact);
  contractId = dep.contractId;
  devnet.chain.mine(1);
  await Promise.all(nodes.map((n) => waitStatus(n, (s) => s.contracts === 1, 'the deploy everywhere')));

  // Two duplicate pairs, both anchors confirmed before any node sees the payloads; the
  // later position of each pair is sent first, to different nodes.
  const p1 = await prepare(1, 700n);
  const p2 = await prepare(2, 700n);
  const p3 = await prepare(3, 701n);
  const p4 = await prepare(4, 701n);
  devnet.chain.mine(1, [p2.txid, p4.txid]);
  devnet.chain.mine(1, [p1.txid, p3.txid]);
  await Promise.all(nodes.map((n) => waitSynced(n, devnet)));
  assert.equal(await submit(A, p1), 202, 'the later position first, to A');
  assert.equal(await submit(C, p3), 202, 'and to C');
  await waitCallStatus(A, p1.txid, 'executed');
  assert.equal(await submit(C, p2), 202, 'the earlier position of a claimed pair is stored, not refused');
  assert.equal(await submit(A, p4), 202);
  for (const n of nodes) {
    assert.equal((await waitCallStatus(n, p2.txid, 'executed'))['result'], '2', 'p2 runs first on the chain, and p1 never runs');
    const inv = await waitCallStatus(n, p1.txid, 'invalid');
    assert.equal((inv['error'] as { code: string }).code, 'duplicate_call_id');
    await waitCallStatus(n, p4.txid, 'executed');
    await waitCallStatus(n, p3.txid, 'invalid');
  }

  // A call every node holds while pending; a reorg replaces its anchor by a conflicting
  // spend of its outpoint: dropped everywhere.
  const p5 = await prepare(5, 702n);
  assert.equal(await submit(B, p5), 202);
  for (const n of nodes) await waitCallStatus(n, p5.txid, 'pending');
  devnet.chain.mine(1);
  await Promise.all(nodes.map((n) => waitSynced(n, devnet)));
  devnet.chain.reorg({ depth: 1, drop: [p5.txid], txs: [conflictingSpend(wallet, p5.outpoint)] });
  for (const n of nodes) await waitCallStatus(n, p5.txid, 'dropped');
  devnet.chain.mine(2);
  await agree(nodes);

  // The late joiner: default settings, one peer; it learns every payload by sync after
  // their blocks (p5 after its outpoint was spent), and must answer what the others do.
  const D = await startPeerNode(devnet, { name: 'conv-late', port: ports[3]!, peers: [ports[0]!] });
  nodes.push(D);
  await waitStatus(D, (s) => s.gossip.sync_payloads_applied >= prepared.length + 1, 'D syncs the deploy and every call', 60_000);
  await waitCallStatus(D, p5.txid, 'dropped');
  await agree(nodes);
  const sd = (await getJson(`${D.restUrl}/node_status`)).body;
  assert.equal(sd['halted'], false);
  const modes = await Promise.all(nodes.map(async (n) => (await getJson(`${n.restUrl}/node_status`)).body['chain']['mode']));
  assert.deepEqual(modes, ['light', 'blocks', 'light', 'light'], 'both chain modes among the nodes that agree');
  // Its blocks may be applied before the payloads arrive: a difference it saw meanwhile is
  // reported as repaired by sync.
  const div = sd['divergence'] as { resolved: boolean; outcome: string } | null;
  assert.ok(div === null || (div.resolved && div.outcome === 'resynced'), JSON.stringify(div));
});

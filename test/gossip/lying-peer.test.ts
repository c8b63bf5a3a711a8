/**
 * A lying peer against a real light node: its header run has the work and
 * links to the node's chain but ends in a block the chain-data endpoint does not name,
 * and the payloads it relays carry forged evidence (a branch that does not fold to the
 * block's merkle root, another block than the node's header chain holds at that height,
 * an anchoring transaction that is not the payload's). Each is refused with a clear code
 * (`bad_evidence`), counted, and changes nothing: the payloads it relayed honestly are
 * taken, the forged ones are not, and once an honest peer is beside it the node answers
 * what the honest peer answers.
 *
 * The liar is a gRPC server in this process that answers as the peer service does by
 * relaying an honest node's answers (signed requests of its own), tampering with
 * GetHeaders once and with every GetPayloads answer.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';
import { decodeBody } from '../../src/gossip/codec.js';
import { bind, loadPeerService } from '../../src/gossip/server.js';
import { PEER_METHODS, type PeerMethod } from '../../src/gossip/protocols.js';
import type { FoundPayload } from '../../src/gossip/wire-types.js';
import type { ProtoPayload } from '../../src/gossip/wire-types.js';
import { hashMeetsTarget, parseHeader80 } from '@svc-node/protocol/headers';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, getJson, nodeStatus, startDevnet, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf, waitCallKnown, waitStatus } from '../helpers/gossip.js';

const cleanup: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

const sha256d = (b: Uint8Array): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();

/**
 * Headers of heights from..to on a branch of the liar's own: each links to the one
 * before (the first to the real block at from - 1), meets regtest's target, and commits
 * to a merkle root of no real block.
 */
function forgedBranch(devnet: DevnetChainHandle, from: number, to: number): Buffer[] {
  const out: Buffer[] = [];
  let prev: Buffer = Buffer.from(devnet.chain.blockAt(from - 1)!.hash, 'hex').reverse();
  for (let h = from; h <= to; h++) {
    const b = Buffer.from(devnet.chain.blockAt(h)!.header.hex, 'hex');
    prev.copy(b, 4);
    createHash('sha256').update(`forged ${h}`).digest().copy(b, 36);
    for (let nonce = 0; ; nonce++) {
      b.writeUInt32LE(nonce, 76);
      if (hashMeetsTarget(parseHeader80(b).hash, b.readUInt32LE(72))) break;
    }
    prev = sha256d(b);
    out.push(b);
  }
  return out;
}

/** The three ways the liar forges a payload's evidence, by the payload's rank among the calls it relays. */
type Forgery = 'branch' | 'block' | 'anchor' | 'none';

test('a lying peer\'s header run and forged evidence are refused bad_evidence and change nothing; with an honest peer beside it the node answers what that peer answers', { timeout: 240_000 }, async () => {
  const devnet = await startDevnet();
  cleanup.push(() => devnet.close());
  const [pA, pV, pLiar] = await Promise.all([freePort(), freePort(), freePort()]);
  const A = await startPeerNode(devnet, { name: 'liar-honest', port: pA, peers: [], env: { SVC_CHAIN_MODE: 'blocks' } });
  cleanup.push(() => A.stop());
  const wallet = testWallet(27);
  await fund(devnet, wallet, 10);
  await waitSynced(A, devnet);
  const svc = client(A, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  devnet.chain.mine(1);
  // Calls: four confirmed (two blocks), two pending. Forged as listed (by txid rank).
  const txids: string[] = [];
  for (let i = 1; i <= 6; i++) {
    await waitSynced(A, devnet);
    txids.push((await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${i}`], abi: counter.abi })).anchor.txid);
    if (i === 2 || i === 4) devnet.chain.mine(1);
  }
  devnet.chain.mine(2, []);
  await waitSynced(A, devnet);
  await waitStatus(A, (s) => s.pending_calls === 2, 'two calls pending on the honest node');
  const confirmed = txids.slice(0, 4);
  const pending = txids.slice(4);
  const forgery = new Map<string, Forgery>([
    [confirmed[0]!, 'branch'],
    [confirmed[1]!, 'block'],
    [confirmed[2]!, 'anchor'],
    [confirmed[3]!, 'none'],
    [pending[0]!, 'anchor'],
    [pending[1]!, 'none'],
  ]);
  const anchorOf = new Map<string, Buffer>();
  for (const t of txids) anchorOf.set(t, Buffer.from(devnet.chain.getTx(t)!.toBuffer()));

  // ---- the liar: relays A, forges
  const liarKey = new Signer(new Uint8Array(32).fill(91));
  const toA = new PeerClient(urlOf(pA), liarKey, 10_000);
  cleanup.push(async () => toA.close());
  let headersForged = 0;
  /**
   * The liar lists no contract until the node holds the header chain to the tip: evidence
   * naming a block above a node's header tip is kept and checked when the node reaches
   * that block (docs/STATE.md), so the forgeries are refused at once only below it.
   */
  let listContracts = false;
  const tamper = (f: FoundPayload): FoundPayload => {
    const p = f.payload as ProtoPayload;
    const txid = Buffer.from(p.txid).toString('hex');
    const how = forgery.get(txid) ?? 'none';
    const ev = p.evidence!;
    if (how === 'branch') {
      const branch = ev.confirmed!.branch.map((h) => Buffer.from(h));
      branch[0]![0]! ^= 1;
      return { ...f, payload: { ...p, evidence: { ...ev, confirmed: { ...ev.confirmed!, branch } } } };
    }
    if (how === 'block') {
      const other = devnet.chain.blockAt(ev.confirmed!.height - 1)!.hash;
      return { ...f, payload: { ...p, evidence: { ...ev, confirmed: { ...ev.confirmed!, block_hash: Buffer.from(other, 'hex') } } } };
    }
    if (how === 'anchor') {
      // Another call's anchoring transaction: real, confirmed, but not this payload's.
      const other = txids.find((t) => t !== txid)!;
      return { ...f, payload: { ...p, evidence: { ...ev, anchor_tx: anchorOf.get(other)! } } };
    }
    return f;
  };
  const answer = async (m: PeerMethod, req: Record<string, unknown>): Promise<unknown> => {
    if (m === 'GetHeaders' && headersForged === 0) {
      // A branch of its own from the node's first missing height up to six blocks below
      // the tip (so the whole run is submitted), with the tip claimed as its own.
      headersForged++;
      const from = Number(req['from_height']);
      const top = devnet.chain.height - 6;
      return { from_height: from, headers: Buffer.concat(forgedBranch(devnet, from, top)), tip_height: devnet.chain.height };
    }
    if (m === 'GetContractIds' && !listContracts) return { contract_ids: [], more: false };
    // The victim's heartbeat is relayed without its URL: A learning it would sync with
    // the victim directly and push the honest copies the forgeries stand in for.
    if (m === 'Heartbeat') req = { ...req, url: '' };
    const r = (await toA.call(m as never, req as never)) as Record<string, unknown>;
    if (m === 'GetPayloads') return { ...r, payloads: (r['payloads'] as FoundPayload[]).map(tamper) };
    return r;
  };
  const impl: grpc.UntypedServiceImplementation = {
    GetIdentity: (call: grpc.ServerUnaryCall<{ challenge: Buffer }, object>, cb: grpc.sendUnaryData<object>) =>
      cb(null, { public_key: liarKey.publicKey, node_id: 'liar', signature: liarKey.proveIdentity(call.request.challenge) }),
  };
  for (const m of PEER_METHODS) {
    impl[m] = (call: grpc.ServerUnaryCall<{ body: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      answer(m, decodeBody(m, call.request.body) as unknown as Record<string, unknown>).then(
        (r) => cb(null, r as object),
        (e: Error) => cb({ code: grpc.status.UNAVAILABLE, details: e.message }),
      );
    };
  }
  const server = new grpc.Server();
  server.addService(loadPeerService(), impl);
  await bind(server, '127.0.0.1', pLiar);
  cleanup.push(() => new Promise<void>((r) => server.tryShutdown(() => r())));

  // ---- a fresh light node whose only peer is the liar
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-liar-victim-'));
  const env = { SVC_PEER_SYNC_INTERVAL_S: '1' };
  let V: NodeProcess = await startPeerNode(devnet, { name: 'liar-victim', port: pV, peers: [pLiar], dataDir, env });
  cleanup.push(() => V.stop());
  await waitUntil(V, async () => ((await nodeStatus(V))['chain'] as { header_height: number | null }).header_height === devnet.chain.height, 'the header chain to the tip', 60_000);
  listContracts = true;
  // Honest payloads arrive; each forged one is refused (and again, after its backoff).
  await waitCallKnown(V, confirmed[3]!, 60_000);
  await waitCallKnown(V, pending[1]!, 60_000);
  const forged = [...forgery].filter(([, how]) => how !== 'none').map(([t]) => t);
  const st = await waitStatus(V, (s) => s.gossip.sync_bad_evidence >= 1 + forged.length, 'every forgery refused', 60_000);
  for (const t of forged) assert.equal((await getJson(`${V.restUrl}/contract_call/${t}/status`)).status, 404, `${forgery.get(t)} forgery of ${t} not taken`);
  assert.equal(st.halted, false);
  await waitSynced(V, devnet, 60_000);
  // The clear codes: what each refusal said.
  const reasons = V.lines.filter((l) => l.msg === 'peer sent false evidence').map((l) => `${String(l['what'])}: ${String(l['reason'])}`);
  const said = (re: RegExp): boolean => reasons.some((r) => re.test(r));
  assert.ok(said(/^headers .*names block [0-9a-f]{64} at height \d+, not the peer's/), `the header run: ${reasons.join(' | ')}`);
  assert.ok(said(new RegExp(`^evidence of ${confirmed[0]}: .*branch does not place`)), 'the wrong branch');
  assert.ok(said(new RegExp(`^evidence of ${confirmed[1]}: .*header chain holds`)), 'the wrong block');
  assert.ok(said(new RegExp(`^evidence of ${confirmed[2]}: bad evidence \\(anchor`)), 'the anchor that is not the payload\'s');
  assert.ok(said(new RegExp(`^evidence of ${pending[0]}: bad evidence \\(anchor`)), 'the pending call\'s anchor');

  // ---- an honest peer beside the liar (the liar first): the node answers what it answers
  await V.stop();
  V = await startPeerNode(devnet, { name: 'liar-victim', port: pV, peers: [pLiar, pA], dataDir, env });
  for (const t of txids) await waitCallKnown(V, t, 60_000);
  devnet.chain.mine(1, []);
  await Promise.all([waitSynced(A, devnet), waitSynced(V, devnet, 60_000)]);
  await waitStatus(V, (s) => s.pending_calls === 2, 'the two pending calls pending here too');
  const tip = devnet.chain.height;
  for (let h = 0; h <= tip; h++) {
    const [ra, rv] = await Promise.all([A, V].map(async (n) => (await getJson(`${n.restUrl}/v2/state_root/${h}`)).body));
    assert.deepEqual(rv, ra, `state root at ${h}`);
  }
  for (const t of txids) {
    const [sa, sv] = await Promise.all([A, V].map(async (n) => getJson(`${n.restUrl}/contract_call/${t}/status`)));
    assert.deepEqual(sv, sa, `status of ${t}`);
  }
});

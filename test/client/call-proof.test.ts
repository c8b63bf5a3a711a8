/**
 * The SDK's call-proof verifier (verifyCallProof, NodeClient.callStatusProven) on proofs
 * built from real devnet blocks: an executed call and a dropped one verify; every
 * mismatch between the status record and the proof, and every forged part, is
 * ClientError bad_proof.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import type { AddressInfo } from 'node:net';
import { ClientError, NodeClient, verifyCallProof, type CallStatus } from '@svc-node/client';
import { callProofJson, type CallProofJson, type Evidence } from '@svc-node/protocol/evidence';
import { envelopeHash, toHex } from '@svc-node/protocol';
import { headerHash } from '@svc-node/protocol/headers';
import { SpecChecker } from '../helpers/openapi-check.js';
import { evidenceWorld, headerOf, inclusionIn, type EvidenceWorld } from '../helpers/evidence-chain.js';
import { decisionsRoot, encodeDecision, proveDecision, stateRootOf, type Decision } from '@svc-node/protocol/state/decisions';
import { sha256 } from '@svc-node/protocol/hash';
import type { DecisionProofJson } from '@svc-node/protocol/evidence';

/**
 * The decision branch a node would serve for `txid` decided `d` in block (height, hash),
 * among two other decisions of the block, under a made-up contracts root.
 */
function decisionProof(txid: string, d: Decision, height: number, blockHash: string): DecisionProofJson {
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  const others: [Uint8Array, Uint8Array][] = [1, 2].map((i) => [sha256(Uint8Array.of(i)), encodeDecision({ status: 'failed', txIndex: 100 + i, result: null, errorCode: 'boom', events: [] })]);
  const leaves: [Uint8Array, Uint8Array][] = [[Buffer.from(txid, 'hex'), encodeDecision(d)], ...others];
  const contracts = sha256(Uint8Array.of(9));
  const decided = decisionsRoot(leaves);
  const p = proveDecision(leaves, Buffer.from(txid, 'hex'));
  return {
    height,
    block_hash: blockHash,
    state_root: hex(stateRootOf(contracts, decided)),
    contracts_root: hex(contracts),
    decisions_root: hex(decided),
    siblings: p.siblings.map(hex),
    leaf: p.leaf && { path: hex(p.leaf.path), value: hex(p.leaf.value) },
  };
}

let world: EvidenceWorld;
let executed: { status: CallStatus; proof: CallProofJson };
let dropped: { status: CallStatus; proof: CallProofJson };

before(() => {
  world = evidenceWorld();
  const e = world.executed;
  const ev: Evidence = { anchorTx: Buffer.from(e.anchor.hex, 'hex'), confirmed: inclusionIn(e.block, e.anchor.txid), spentBy: null };
  const at = world.chain.txPosition(e.anchor.txid)!;
  const decision = decisionProof(e.anchor.txid, { status: 'executed', txIndex: at.index, result: null, errorCode: null, events: [] }, e.block.height, e.block.hash);
  executed = { status: e.status, proof: callProofJson(ev, e.call.bytes, { confirmed: headerOf(e.block), spentBy: null }, decision) };
  const d = world.dropped;
  const dv: Evidence = { anchorTx: Buffer.from(d.anchor.hex, 'hex'), confirmed: null, spentBy: { tx: d.spender.toBuffer(), vin: d.vin, at: inclusionIn(d.block, d.spender.getId()) } };
  // A drop is committed by no root: its proof is the spend alone.
  dropped = { status: d.status, proof: callProofJson(dv, d.call.bytes, { confirmed: null, spentBy: headerOf(d.block) }, null) };
});

const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

async function badProof(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ClientError && e.code === 'bad_proof' && re.test(e.message));
}

test('an executed call verifies: its position is the record\'s, and the block is the one the client trusts', async () => {
  const v = await verifyCallProof(executed.status, executed.proof, { network: 'regtest' });
  const at = world.chain.txPosition(world.executed.anchor.txid)!;
  const outcome = { height: at.height, blockHash: world.executed.block.hash, stateRoot: executed.proof.decision!.state_root, status: 'executed', txIndex: at.index, result: null, errorCode: null, events: [] };
  assert.deepEqual(v, { txid: world.executed.anchor.txid, status: 'executed', confirmed: { blockHash: world.executed.block.hash, height: at.height, txIndex: at.index }, spentBy: null, outcome });
  const trusted = (h: number) => world.chain.blockAt(h)!.hash;
  assert.deepEqual(await verifyCallProof(executed.status, executed.proof, { trustedBlockHash: trusted }), v);
  assert.deepEqual(await verifyCallProof(executed.status, executed.proof, { trustedBlockHash: async (h) => trusted(h) }), v);
  await badProof(verifyCallProof(executed.status, executed.proof, { trustedBlockHash: (h) => world.chain.blockAt(h - 1)!.hash }), /is not the trusted block/);
});

test('a call proof is never checked against no network: without network or a trusted block hash it is refused before any check', async () => {
  for (const opts of [undefined, {}, { trustedStateRoot: () => '00'.repeat(32) }]) {
    // A JavaScript caller (or a cast) gets past the type that requires one of the two.
    await assert.rejects(verifyCallProof(executed.status, executed.proof, opts as never), (e: unknown) => e instanceof ClientError && e.code === 'bad_argument' && /network/.test(e.message));
  }
});

test('a dropped call verifies by the confirmed spend of its outpoint', async () => {
  const v = await verifyCallProof(dropped.status, dropped.proof, { trustedBlockHash: (h) => world.chain.blockAt(h)!.hash });
  assert.equal(v.status, 'dropped');
  assert.equal(v.confirmed, null);
  assert.equal(v.spentBy!.txid, world.dropped.spender.getId());
  assert.equal(v.spentBy!.height, world.dropped.block.height);
  assert.deepEqual(v.outcome, { height: world.dropped.block.height, blockHash: world.dropped.block.hash, stateRoot: null, status: 'dropped', txIndex: null, result: null, errorCode: null, events: [] });
});

test('a pending call verifies its anchor and binding alone; it cannot carry a conflicting spend', async () => {
  const status = { ...executed.status, status: 'pending', block_height: null, tx_index: null };
  const v = await verifyCallProof(status, { ...executed.proof, confirmed: null, decision: null }, { network: 'regtest' });
  assert.equal(v.confirmed, null);
  await badProof(verifyCallProof({ ...dropped.status, status: 'pending' }, dropped.proof, { network: 'regtest' }), /pending call's proof carries a conflicting spend/);
});

test('every field of the record must be the proven envelope\'s, and the position the proven one', async () => {
  const cases: [Partial<CallStatus>, RegExp][] = [
    [{ function: 'mint' }, /function "mint"/],
    [{ contract_id: '00'.repeat(32) }, /contract_id/],
    [{ caller: '00'.repeat(32) }, /caller/],
    [{ call_id: '12' }, /call_id "12"/],
    [{ envelope_hash: '00'.repeat(32) }, /envelope_hash/],
    [{ tx_index: executed.status.tx_index! + 1 }, /position/],
    [{ block_height: executed.status.block_height! + 1 }, /position/],
    [{ status: 'bogus' }, /unknown status/],
    [{ txid: world.dropped.anchor.txid }, /hashes to/],
  ];
  for (const [change, re] of cases) await badProof(verifyCallProof({ ...executed.status, ...change }, executed.proof, { network: 'regtest' }), re);
});

test('forged proofs are refused: branch, header, block hash, proof of work, anchor, payload, signature, binding', async () => {
  const forge = async (mutate: (p: CallProofJson) => void, re: RegExp, status = executed.status): Promise<void> => {
    const p = copy(executed.proof);
    mutate(p);
    await badProof(verifyCallProof(status, p, { network: 'regtest' }), re);
  };
  await forge((p) => (p.confirmed!.branch[2] = 'ff' + p.confirmed!.branch[2]!.slice(2)), /does not lead to the merkle root/);
  await forge((p) => (p.confirmed!.branch = p.confirmed!.branch.slice(1)), /does not lead to the merkle root|does not fit/);
  await forge((p) => (p.confirmed!.tx_index = p.confirmed!.tx_index ^ 1), /position|duplicated|merkle root/);
  const prev = world.chain.blockAt(world.executed.block.height - 1)!;
  await forge((p) => (p.confirmed!.header = Buffer.from(headerOf(prev)).toString('hex')), /is block .* not/);
  await forge((p) => ((p.confirmed!.header = Buffer.from(headerOf(prev)).toString('hex')), (p.confirmed!.block_hash = prev.hash)), /does not lead to the merkle root/);
  // A header that commits to the right root but lacks its own work.
  await forge((p) => {
    const h = Buffer.from(p.confirmed!.header, 'hex');
    h.writeUInt32LE(0x03000001, 72);
    p.confirmed!.header = h.toString('hex');
    p.confirmed!.block_hash = headerHash(h);
    p.decision!.block_hash = p.confirmed!.block_hash;
  }, /is above the target of its bits/);
  await forge((p) => (p.anchor_tx = Buffer.from(world.dropped.anchor.hex, 'hex').toString('hex')), /hashes to/);
  await forge((p) => (p.anchor_tx = p.anchor_tx + '00'), /does not parse/);
  await forge((p) => (p.payload = dropped.proof.payload), /call_id|envelope_hash/);
  await forge((p) => (p.confirmed = null), /carries no confirmation/);
  await forge((p) => (p.spent_by = copy(dropped.proof.spent_by)), /carries a conflicting spend|does not spend/);
  await forge((p) => ((p as unknown as Record<string, unknown>)['confirmed'] = 'x'), /confirmed is not an object/);

  // A signature that does not verify, under a record that names the tampered envelope's hash.
  const bytes = Buffer.from(executed.proof.payload, 'base64');
  bytes[bytes.length - 1]! ^= 1;
  await forge((p) => (p.payload = bytes.toString('base64')), /signature does not verify/, { ...executed.status, envelope_hash: toHex(envelopeHash(bytes)) });

  // The dropped call's envelope under the executed call's anchor: the stamp names another envelope.
  const d = world.dropped.status;
  const unbound = { ...executed.status, envelope_hash: d.envelope_hash, call_id: d.call_id };
  await forge((p) => (p.payload = dropped.proof.payload), /does not bind the envelope \(stamp_mismatch\)/, unbound);
});

test('a made-up header whose bits ask less work than the network allows (0x2100ffff: any hash meets it) is refused without trustedBlockHash', async () => {
  const zeroWork = (p: CallProofJson, bits: number): void => {
    const h = Buffer.from(p.confirmed!.header, 'hex');
    h.writeUInt32LE(bits, 72);
    p.confirmed!.header = h.toString('hex');
    p.confirmed!.block_hash = headerHash(h);
    p.decision!.block_hash = p.confirmed!.block_hash;
  };
  for (const bits of [0x2100ffff, 0x207fffff + 1, 0x1d00ffff]) {
    const p = copy(executed.proof);
    zeroWork(p, bits);
    // 0x207fffff + 1 (0x20800000) is negative; 0x1d00ffff is mainnet's limit, which the devnet's block does not meet.
    await badProof(verifyCallProof(executed.status, p, { network: 'regtest' }), /ask less work than the network's minimum|do not decode to a positive target|is above the target/);
  }
  // Regtest's own limit is taken by default, and the devnet's real header passes it; under
  // mainnet's limit the devnet's easy header is refused.
  await verifyCallProof(executed.status, executed.proof, { network: 'regtest' });
  await badProof(verifyCallProof(executed.status, executed.proof, { network: 'bitcoin' }), /ask less work than the network's minimum/);
  await assert.rejects(verifyCallProof(executed.status, executed.proof, { network: 'nowhere' as never }), (e: unknown) => e instanceof ClientError && e.code === 'bad_argument');
});

test("forged drops are refused: the spender's input, the spender being the anchor, a 64-byte spender, a confirmation beside it", async () => {
  const forge = async (mutate: (p: CallProofJson) => void, re: RegExp): Promise<void> => {
    const p = copy(dropped.proof);
    mutate(p);
    await badProof(verifyCallProof(dropped.status, p, { network: 'regtest' }), re);
  };
  await forge((p) => (p.spent_by!.vin = 1), /no input 1/);
  await forge((p) => (p.spent_by!.tx = p.anchor_tx), /anchoring transaction itself/);
  await forge((p) => (p.spent_by!.tx = world.tiny.tx.toHex()), /does not spend|64 bytes/);
  await forge((p) => (p.confirmed = copy(executed.proof.confirmed)), /carries a confirmation of its anchor/);
  await forge((p) => (p.spent_by = null), /carries no conflicting spend/);
  await forge((p) => (p.decision = copy(executed.proof.decision)), /dropped call's proof carries a decision/);
});


test('NodeClient.callStatusProven asks for the proof and verifies it before answering', async () => {
  let answer: unknown = { ...executed.status, proof: executed.proof };
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const nc = new NodeClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const txid = executed.status.txid;
    const a = await nc.callStatusProven(txid, { trustedBlockHash: (h) => world.chain.blockAt(h)!.hash });
    assert.equal(paths[0], `/contract_call/${txid}/status?proof=true`);
    assert.equal(a.status, 'executed');
    assert.equal(a.proven.confirmed!.txIndex, executed.status.tx_index);
    answer = { ...executed.status, tx_index: 0, proof: executed.proof };
    await badProof(nc.callStatusProven(txid, { network: 'regtest' }), /position/);
    answer = { ...dropped.status, proof: dropped.proof };
    await badProof(nc.callStatusProven(txid, { network: 'regtest' }), /the node answered/);
    answer = { ...executed.status };
    await badProof(nc.callStatusProven(txid, { network: 'regtest' }), /proof is not an object/);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('the proofs the node serves match docs/openapi.yaml (CallStatus.proof), executed and dropped', () => {
  const spec = new SpecChecker();
  for (const { status, proof } of [executed, dropped]) {
    const text = JSON.stringify({ ...status, confirmations: status.block_height === null ? null : 1, proof });
    assert.deepEqual(spec.check({ method: 'GET', path: `/contract_call/${status.txid}/status`, status: 200, requestId: 'r', contentType: 'application/json', text }), []);
  }
  const bad = JSON.stringify({ ...executed.status, confirmations: 1, proof: { ...executed.proof, confirmed: { ...executed.proof.confirmed, header: 'ab' } } });
  assert.notDeepEqual(spec.check({ method: 'GET', path: `/contract_call/${executed.status.txid}/status`, status: 200, requestId: 'r', contentType: 'application/json', text: bad }), []);
});

test('the build ships type declarations for the SDK: verifyCallProof and its options are typed', () => {
  const dts = readFileSync(join(repoRoot, 'packages/client/dist/node.d.ts'), 'utf8');
  assert.match(dts, /export declare function verifyCallProof\(status: CallStatus & \{\s*proof\?: unknown;\s*\}, proof: unknown \| undefined, opts: CallProofOptions\): Promise<VerifiedCall>;/);
  // The options require a network or a trusted block hash (a proof held to no network's limit is refused at compile time).
  assert.match(dts, /export type CallProofOptions = CallProofTrust & \(\{\s*network: ProofNetwork;\s*\} \| \{\s*trustedBlockHash: /);
  assert.match(dts, /trustedStateRoot\?: \(height: number\) => string \| Promise<string>;/);
  assert.match(readFileSync(join(repoRoot, 'packages/client/dist/index.d.ts'), 'utf8'), /export \* from '\.\/node\.js';/);
});

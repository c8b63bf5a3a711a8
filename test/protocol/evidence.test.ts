/**
 * Payload evidence (packages/protocol/src/evidence.ts): the stateless check accepts real evidence
 * (mainnet and devnet) and refuses every forgery with bad_evidence naming the part; the
 * header match; the storage codec round-trips and refuses malformed bytes; the REST
 * call-proof JSON round-trips.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as bitcoin from 'bitcoinjs-lib';
import {
  callProofJson,
  checkEvidence,
  coinbaseDepth,
  decodeEvidence,
  encodeEvidence,
  evidenceError,
  foldInclusion,
  inclusionFromMerkleProof,
  inclusionMatchesHeader,
  MAX_EVIDENCE_TX_BYTES,
  parseCallProof,
  stripWitness,
  type EndpointMerkleProof,
  type Evidence,
  type Inclusion,
} from '@svc-node/protocol/evidence';
import { MAX_BRANCH_DEPTH, merkleBranch } from '@svc-node/protocol/merkle-branch';
import { checkCallBinding } from '@svc-node/protocol/binding';
import { internalBytes } from '@svc-node/protocol/bitcoin';
import { NodeError } from '@svc-node/protocol/errors';
import { fixtureText } from '../helpers/chain-servers.js';
import { evidenceWorld, headerOf, inclusionIn, type EvidenceWorld } from '../helpers/evidence-chain.js';
import { bytesAsHex, evidenceArb } from '../helpers/evidence-arb.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const txBytes = (txid: string): Uint8Array => new Uint8Array(Buffer.from(fixtureText(`bodies/tx/${txid}.hex.txt`).trim(), 'hex'));

// Mainnet: f2957c19 (block 728,418, index 919) spends dca87fe2:1 at input 0.
const SPENDER = 'f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b';
const SPENT = { txid: 'dca87fe24dfe3f308014ed4b6a91ad39ae06c7ee279eb14b1b78645f90cef36d', vout: 1 };
const BLOCK = '00000000000000000006aa48d85e9229454621c0addbd2bbda4e3d280eade466';
const OTHER_TX = '3bbb2f597e714257d4a2f573e9ebfff4ab631277186a40875dbbf4140e90b748';
const header728418 = new Uint8Array(Buffer.from(fixtureText(`bodies/block/${BLOCK}.header.txt`).trim(), 'hex'));
/** The spender's inclusion from the endpoint's recorded merkle proof (the node's and the SDK's one reading of it). */
const inclusion728418: Inclusion = inclusionFromMerkleProof(JSON.parse(fixtureText(`bodies/tx/${SPENDER}.merkle-proof.json`)) as EndpointMerkleProof, BLOCK);

test("an endpoint's merkle proof reads as the inclusion that places the transaction under its block's header", () => {
  assert.deepEqual([inclusion728418.height, inclusion728418.txIndex, inclusion728418.branch.length], [728418, 919, 11]);
  const f = foldInclusion(SPENDER, inclusion728418);
  assert.ok(f.ok);
  assert.equal(inclusionMatchesHeader(inclusion728418, f.root, header728418), true);
});

function refused(r: ReturnType<typeof checkEvidence>, field: string, re: RegExp): void {
  assert.ok(!r.ok, 'expected a refusal');
  assert.equal(r.code, 'bad_evidence');
  assert.equal(r.field, field);
  assert.match(r.reason, re);
}

let world: EvidenceWorld;
before(() => {
  world = evidenceWorld();
});

test('mainnet: a confirmed transaction and a conflicting spend check, and match the recorded header', () => {
  const r = checkEvidence(SPENDER, null, { anchorTx: txBytes(SPENDER), confirmed: inclusion728418, spentBy: null });
  assert.ok(r.ok);
  assert.equal(r.anchor.getId(), SPENDER);
  assert.equal(inclusionMatchesHeader(inclusion728418, r.confirmedRoot!, header728418), true);
  assert.equal(r.spenderRoot, null);

  const s = checkEvidence(OTHER_TX, SPENT, { anchorTx: txBytes(OTHER_TX), confirmed: null, spentBy: { tx: txBytes(SPENDER), vin: 0, at: inclusion728418 } });
  assert.ok(s.ok);
  assert.equal(s.spenderTxid, SPENDER);
  assert.equal(inclusionMatchesHeader(inclusion728418, s.spenderRoot!, header728418), true);

  // Another block's header, or another hash claimed for this one.
  const genesis = new Uint8Array(Buffer.from(fixtureText('bodies/block/000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f.header.txt').trim(), 'hex'));
  assert.match(inclusionMatchesHeader(inclusion728418, r.confirmedRoot!, genesis) as string, /is block 000000000019d6/);
  assert.match(inclusionMatchesHeader({ ...inclusion728418, blockHash: '00'.repeat(32) }, r.confirmedRoot!, header728418) as string, /not 0000/);
  assert.match(inclusionMatchesHeader(inclusion728418, new Uint8Array(32), header728418) as string, /does not lead to the merkle root/);
  assert.match(inclusionMatchesHeader(inclusion728418, r.confirmedRoot!, header728418.subarray(0, 79)) as string, /not 80 bytes/);
});

test('mainnet: forged anchors and spenders are refused, naming the part', () => {
  const anchorTx = txBytes(SPENDER);
  refused(checkEvidence(OTHER_TX, null, { anchorTx, confirmed: null, spentBy: null }), 'anchor_tx', /hashes to f2957c19.*not 3bbb2f59/);
  refused(checkEvidence(SPENDER, null, { anchorTx: Buffer.concat([anchorTx, Buffer.of(0)]), confirmed: null, spentBy: null }), 'anchor_tx', /does not parse/);
  refused(checkEvidence(SPENDER, null, { anchorTx: anchorTx.subarray(0, anchorTx.length - 1), confirmed: null, spentBy: null }), 'anchor_tx', /does not parse/);
  refused(checkEvidence(SPENDER, null, { anchorTx: new Uint8Array(0), confirmed: null, spentBy: null }), 'anchor_tx', /empty/);
  refused(checkEvidence(SPENDER, null, { anchorTx: new Uint8Array(MAX_EVIDENCE_TX_BYTES + 1), confirmed: null, spentBy: null }), 'anchor_tx', /more than any transaction/);
  // The input count 0x01 written as 0xfd 0x01 0x00: the same transaction to a lax parser, not Bitcoin's serialization.
  const stripped = stripWitness(anchorTx);
  const loose = Buffer.concat([stripped.subarray(0, 4), Buffer.of(0xfd, 0x01, 0x00), stripped.subarray(5)]);
  refused(checkEvidence(SPENDER, null, { anchorTx: loose, confirmed: null, spentBy: null }), 'anchor_tx', /canonical|does not parse/);

  const wrongIndex = { ...inclusion728418, txIndex: 918 };
  const r = checkEvidence(SPENDER, null, { anchorTx, confirmed: wrongIndex, spentBy: null });
  // Index 918 folds to some other root: the header match is what refuses it.
  assert.ok(r.ok);
  assert.notEqual(inclusionMatchesHeader(wrongIndex, r.confirmedRoot!, header728418), true);
  refused(checkEvidence(SPENDER, null, { anchorTx, confirmed: { ...inclusion728418, txIndex: 4096 }, spentBy: null }), 'confirmed', /does not fit/);
  refused(checkEvidence(SPENDER, null, { anchorTx, confirmed: { ...inclusion728418, blockHash: BLOCK.toUpperCase() }, spentBy: null }), 'confirmed', /64 lowercase hex/);
  refused(checkEvidence(SPENDER, null, { anchorTx, confirmed: { ...inclusion728418, height: -1 }, spentBy: null }), 'confirmed', /height/);

  const anchor = txBytes(OTHER_TX);
  const spentBy = { tx: anchorTx, vin: 0, at: inclusion728418 };
  refused(checkEvidence(OTHER_TX, null, { anchorTx: anchor, confirmed: null, spentBy }), 'spent_by', /only a call/);
  refused(checkEvidence(OTHER_TX, { ...SPENT, vout: 0 }, { anchorTx: anchor, confirmed: null, spentBy }), 'spent_by', /does not spend dca87fe2.*:0/);
  refused(checkEvidence(OTHER_TX, SPENT, { anchorTx: anchor, confirmed: null, spentBy: { ...spentBy, vin: 1 } }), 'spent_by', /no input 1/);
  refused(checkEvidence(SPENDER, SPENT, { anchorTx, confirmed: null, spentBy }), 'spent_by', /anchoring transaction itself/);
  refused(checkEvidence(OTHER_TX, SPENT, { anchorTx: anchor, confirmed: null, spentBy: { ...spentBy, at: { ...inclusion728418, branch: [...inclusion728418.branch, new Uint8Array(31)] } } }), 'spent_by', /32 bytes/);
  const e = evidenceError({ field: 'spent_by', reason: 'x' });
  assert.ok(e instanceof NodeError && e.code === 'bad_evidence' && e.httpStatus === 422 && e.grpcStatus === 3);
});

test('devnet: a call anchor mined among 41 transactions checks, binds its envelope, and matches its header', () => {
  const { call, anchor, block } = world.executed;
  const inc = inclusionIn(block, anchor.txid);
  assert.ok(inc.branch.length >= 5);
  const outpoint = { txid: hex(call.envelope.outpointTxid), vout: call.envelope.outpointVout };
  const r = checkEvidence(anchor.txid, outpoint, { anchorTx: Buffer.from(anchor.hex, 'hex'), confirmed: inc, spentBy: null });
  assert.ok(r.ok);
  assert.deepEqual(checkCallBinding(r.anchor, call.envelope, call.envelopeHash), { ok: true, stampVout: 0 });
  assert.equal(inclusionMatchesHeader(inc, r.confirmedRoot!, headerOf(block)), true);
  // The same branch from the block before (its header) does not match.
  assert.notEqual(inclusionMatchesHeader(inc, r.confirmedRoot!, headerOf(world.chain.blockAt(block.height - 1)!)), true);
  // Stripped of its witness, the anchor is the same transaction.
  const stripped = stripWitness(Buffer.from(anchor.hex, 'hex'));
  assert.ok(stripped.length < anchor.hex.length / 2);
  assert.ok(checkEvidence(anchor.txid, outpoint, { anchorTx: stripped, confirmed: inc, spentBy: null }).ok);
});

test('devnet: a dropped call\'s conflicting spend checks against its block; the unbroadcast anchor still binds', () => {
  const { call, anchor, spender, vin, block } = world.dropped;
  const outpoint = { txid: hex(call.envelope.outpointTxid), vout: call.envelope.outpointVout };
  const at = inclusionIn(block, spender.getId());
  const r = checkEvidence(anchor.txid, outpoint, { anchorTx: Buffer.from(anchor.hex, 'hex'), confirmed: null, spentBy: { tx: spender.toBuffer(), vin, at } });
  assert.ok(r.ok);
  assert.equal(r.spenderTxid, spender.getId());
  assert.equal(inclusionMatchesHeader(at, r.spenderRoot!, headerOf(block)), true);
  assert.ok(checkCallBinding(r.anchor, call.envelope, call.envelopeHash).ok);
});

test('a 64-byte anchor is refused; a 64-byte spender proves nothing by its branch: left out alone, placed by its block\'s txid list, refused with a list that does not hold', () => {
  const { tx, outpoint, block } = world.tiny;
  assert.equal(tx.byteLength(false), 64);
  const at = inclusionIn(block, tx.getId());
  refused(checkEvidence(tx.getId(), null, { anchorTx: tx.toBuffer(), confirmed: at, spentBy: null }), 'anchor_tx', /64 bytes without its witness/);
  const { anchor } = world.executed;
  const anchorTx = Buffer.from(anchor.hex, 'hex');
  // Its branch folds to the real header, yet an inner node's 64 bytes would too: not a
  // refusal (an honest peer sends what it read), but not taken either.
  const alone = checkEvidence(anchor.txid, outpoint, { anchorTx, confirmed: null, spentBy: { tx: tx.toBuffer(), vin: 0, at } });
  assert.ok(alone.ok);
  assert.equal(alone.spenderUnproven, true);
  assert.equal(alone.spenderRoot, null);
  assert.equal(alone.proven.spentBy, null, 'the spend is left out of what the writer sees');
  // With the block's whole txid list it is placed: the list is the tree's leaf level.
  const list = block.txids.map(internalBytes);
  const listed = checkEvidence(anchor.txid, outpoint, { anchorTx, confirmed: null, spentBy: { tx: tx.toBuffer(), vin: 0, at, blockTxids: list } });
  assert.ok(listed.ok && !listed.spenderUnproven);
  assert.equal(listed.spenderTxid, tx.getId());
  assert.equal(hex(listed.spenderRoot!), hex(Buffer.from(headerOf(block).subarray(36, 68))));
  // Lists that do not hold: another block's, one short, the spender at another index, a mutated tree.
  const other = world.executed.block.txids.map(internalBytes);
  const withList = (blockTxids: Uint8Array[], inc = at) => checkEvidence(anchor.txid, outpoint, { anchorTx, confirmed: null, spentBy: { tx: tx.toBuffer(), vin: 0, at: inc, blockTxids } });
  refused(withList(other), 'spent_by', /does not fold to the root/);
  refused(withList(list.slice(0, -1)), 'spent_by', /does not fold to the root|does not hold/);
  const i = at.txIndex;
  const j = (i ^ 1) < list.length ? i ^ 1 : i - 1;
  const swapped = list.slice();
  [swapped[i], swapped[j]] = [swapped[j]!, swapped[i]!];
  refused(withList(swapped, { ...at, branch: merkleBranch(swapped, i) }), 'spent_by', /does not fold to the root|does not hold/);
  if (list.length % 2 === 1) refused(withList([...list, list[list.length - 1]!]), 'spent_by', /mutated|does not fold/);
  // The stored form keeps the list.
  const ev: Evidence = { anchorTx, confirmed: null, spentBy: { tx: tx.toBuffer(), vin: 0, at, blockTxids: list } };
  assert.deepEqual(bytesAsHex(decodeEvidence(encodeEvidence(ev))), bytesAsHex(ev));
});

test("the coinbase's branch proves the tree's depth; a branch of another length then shows itself", () => {
  const block = world.executed.block;
  const cb = block.txs[0]!;
  const d = coinbaseDepth(cb.toBuffer(), merkleBranch(block.txids.map(internalBytes), 0), headerOf(block));
  assert.ok(d.ok);
  assert.equal(d.depth, inclusionIn(block, world.executed.anchor.txid).branch.length);
  assert.equal(d.depth, Math.ceil(Math.log2(block.txids.length)));
  const notCoinbase = coinbaseDepth(block.txs[1]!.toBuffer(), merkleBranch(block.txids.map(internalBytes), 1), headerOf(block));
  assert.ok(!notCoinbase.ok && /not a coinbase/.test(notCoinbase.reason));
  const otherHeader = coinbaseDepth(cb.toBuffer(), merkleBranch(block.txids.map(internalBytes), 0), headerOf(world.chain.blockAt(1)!));
  assert.ok(!otherHeader.ok && /merkle root/.test(otherHeader.reason));
});

// ------------------------------------------------------------------ storage codec

test('the storage codec round-trips any evidence, and refuses every truncation and every trailing byte', () => {
  fc.assert(
    fc.property(evidenceArb, (ev) => {
      const b = encodeEvidence(ev);
      assert.deepEqual(bytesAsHex(decodeEvidence(b)), bytesAsHex(ev));
      for (const cut of [0, 1, 5, b.length >> 1, b.length - 1]) assert.throws(() => decodeEvidence(b.subarray(0, cut)), (e: NodeError) => e.code === 'bad_request');
      assert.throws(() => decodeEvidence(Buffer.concat([b, Buffer.of(0)])), (e: NodeError) => e.code === 'bad_request' && /trailing/.test(e.message));
    }),
    { numRuns: 200 },
  );
});

test('the storage codec refuses unknown formats and parts, empty or absurd lengths, and over-deep branches', () => {
  const ev: Evidence = { anchorTx: Uint8Array.of(1, 2, 3), confirmed: { blockHash: 'ab'.repeat(32), height: 5, txIndex: 1, branch: [new Uint8Array(32)] }, spentBy: null };
  const b = encodeEvidence(ev);
  const bad = (mutate: (c: Buffer) => Buffer, re: RegExp): void => {
    assert.throws(() => decodeEvidence(mutate(Buffer.from(b))), (e: NodeError) => e instanceof NodeError && e.code === 'bad_request' && re.test(e.message));
  };
  bad((c) => ((c[0] = 2), c), /unknown format 2/);
  bad((c) => ((c[8] = 16), c), /unknown part bits/); // parts byte after 1 + 4 + 3
  bad((c) => ((c[8] = 1 | 8), c), /block txids without a spender/);
  bad((c) => (c.writeUInt32BE(0, 1), c), /length 0/);
  bad((c) => (c.writeUInt32BE(MAX_EVIDENCE_TX_BYTES + 1, 1), c), /length 1000001/);
  bad((c) => ((c[9 + 40] = MAX_BRANCH_DEPTH + 1), c), /18 levels/);
  assert.throws(() => encodeEvidence({ ...ev, anchorTx: new Uint8Array(0) }), (e: NodeError) => e.code === 'bad_request');
  assert.throws(() => encodeEvidence({ ...ev, confirmed: { ...ev.confirmed!, branch: Array(MAX_BRANCH_DEPTH + 1).fill(new Uint8Array(32)) } }), (e: NodeError) => /confirmed/.test(e.message));
});

// ------------------------------------------------------------------ REST call-proof JSON

test('the call-proof JSON round-trips, and every malformed member is refused by name', () => {
  const { call, anchor, block } = world.executed;
  const ev: Evidence = { anchorTx: Buffer.from(anchor.hex, 'hex'), confirmed: inclusionIn(block, anchor.txid), spentBy: null };
  const j = callProofJson(ev, call.bytes, { confirmed: headerOf(block), spentBy: null });
  assert.equal(j.anchor_tx, anchor.hex);
  assert.equal(j.payload, call.payload);
  assert.equal(j.confirmed!.header, hex(headerOf(block)));
  assert.equal(j.confirmed!.branch[0], hex(ev.confirmed!.branch[0]!));
  const back = parseCallProof(JSON.parse(JSON.stringify(j)));
  assert.deepEqual(bytesAsHex(back.evidence), bytesAsHex(ev));
  assert.equal(hex(back.payload), hex(call.bytes));
  assert.equal(hex(back.headers.confirmed!), hex(headerOf(block)));
  assert.throws(() => callProofJson(ev, call.bytes, { confirmed: null, spentBy: null }), (e: NodeError) => e.code === 'internal');

  const cases: [(p: Record<string, JsonAnswer>) => void, string][] = [
    [(p) => delete p['confirmed'], 'confirmed'],
    [(p) => (p['anchor_tx'] = 'ABCD'), 'anchor_tx'],
    [(p) => (p['anchor_tx'] = ''), 'anchor_tx'],
    [(p) => (p['payload'] = 'not base64!'), 'payload'],
    [(p) => (p['confirmed'].header = 'ab'.repeat(79)), 'confirmed.header'],
    [(p) => (p['confirmed'].block_hash = 'AB'.repeat(32)), 'confirmed.block_hash'],
    [(p) => (p['confirmed'].height = '5'), 'confirmed.height'],
    [(p) => (p['confirmed'].tx_index = -1), 'confirmed.tx_index'],
    [(p) => (p['confirmed'].branch = [...p['confirmed'].branch, 'ab']), 'confirmed.branch'],
    [(p) => (p['confirmed'].branch = Array(MAX_BRANCH_DEPTH + 1).fill('00'.repeat(32))), 'confirmed.branch'],
    [(p) => (p['spent_by'] = { ...p['confirmed'], vin: 0 }), 'spent_by.tx'],
    [(p) => (p['spent_by'] = 7), 'spent_by'],
  ];
  for (const [mutate, field] of cases) {
    const p = JSON.parse(JSON.stringify(j));
    mutate(p);
    assert.throws(() => parseCallProof(p), (e: NodeError) => e.code === 'bad_request' && e.detail?.['field'] === field, field);
  }
  assert.throws(() => parseCallProof(null), (e: NodeError) => e.detail?.['field'] === 'proof');
});

test('stripWitness keeps the txid and drops only the witness', () => {
  const raw = Buffer.from(world.executed.anchor.hex, 'hex');
  const s = stripWitness(raw);
  assert.equal(bitcoin.Transaction.fromBuffer(s).getId(), world.executed.anchor.txid);
  assert.equal(bitcoin.Transaction.fromBuffer(s).hasWitnesses(), false);
  const legacy = txBytes(OTHER_TX);
  assert.equal(stripWitness(legacy), legacy);
});

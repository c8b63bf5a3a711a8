/**
 * Evidence on the peer wire (proto/svc.proto section 6, src/gossip/wire.ts): a payload's
 * evidence survives the proto encoding byte for byte, an absent one stays absent, and
 * every malformed field is a bad_request naming it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeBody, encodeBody } from '../../src/gossip/codec.js';
import { encodedSize, fromProtoPayload, toProtoPayload } from '../../src/gossip/wire.js';
import { NodeError } from '@svc-node/protocol/errors';
import { MAX_BRANCH_DEPTH } from '@svc-node/protocol/merkle-branch';
import { callProofJson, decodeInclusion, MAX_EVIDENCE_TX_BYTES, parseCallProof, type InclusionFault } from '@svc-node/protocol/evidence';
import { parseCoinJson } from '@svc-node/protocol/coin';
import type { WirePayload } from '../../src/messages/gossip.js';
import { bytesAsHex, evidenceArb } from '../helpers/evidence-arb.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

/** A payload through SubmitPayload's bytes and back, as a receiving peer sees it. */
function overTheWire(p: WirePayload): WirePayload {
  const body = encodeBody('SubmitPayload', { payloads: [toProtoPayload(p)] });
  return fromProtoPayload((decodeBody('SubmitPayload', body)['payloads'] as unknown[])[0]);
}

const base: WirePayload = { kind: 'call', txid: 'ab'.repeat(32), contract_id: 'cd'.repeat(32), body: Uint8Array.of(1, 2, 3), evidence: null };

test('evidence crosses the wire byte for byte; none stays none; the batch size counts it', () => {
  assert.equal(overTheWire(base).evidence, null);
  fc.assert(
    fc.property(evidenceArb, (ev) => {
      const p = { ...base, evidence: ev };
      assert.deepEqual(bytesAsHex(overTheWire(p)), bytesAsHex(p));
      const exact = encodeBody('SubmitPayload', { payloads: [toProtoPayload(p)] }).length;
      assert.ok(encodedSize(p) >= exact, `estimate ${encodedSize(p)} under ${exact}`);
    }),
    { numRuns: 150 },
  );
});

test('every malformed evidence field is a bad_request naming it', () => {
  const good = toProtoPayload({
    ...base,
    evidence: {
      anchorTx: Uint8Array.of(1),
      confirmed: { blockHash: '11'.repeat(32), height: 3, txIndex: 1, branch: [new Uint8Array(32)] },
      spentBy: { tx: Uint8Array.of(2), vin: 0, at: { blockHash: '22'.repeat(32), height: 4, txIndex: 0, branch: [] } },
    },
  });
  const cases: [(e: Record<string, JsonAnswer>) => void, string][] = [
    [(e) => (e['anchor_tx'] = Buffer.alloc(0)), 'evidence.anchor_tx'],
    [(e) => (e['anchor_tx'] = Buffer.alloc(MAX_EVIDENCE_TX_BYTES + 1)), 'evidence.anchor_tx'],
    [(e) => (e['confirmed'].block_hash = Buffer.alloc(31)), 'evidence.confirmed.block_hash'],
    [(e) => (e['confirmed'].branch = [Buffer.alloc(33)]), 'evidence.confirmed.branch'],
    [(e) => (e['confirmed'].branch = Array(MAX_BRANCH_DEPTH + 1).fill(Buffer.alloc(32))), 'evidence.confirmed.branch'],
    [(e) => (e['confirmed'].height = -1), 'evidence.confirmed.height'],
    [(e) => (e['spent_by'].tx = Buffer.alloc(0)), 'evidence.spent_by.tx'],
    [(e) => (e['spent_by'].vin = 2 ** 32), 'evidence.spent_by.vin'],
    [(e) => (e['spent_by'].at = null), 'evidence.spent_by.at'],
    [(e) => (e['spent_by'].at.tx_index = 1.5), 'evidence.spent_by.at.tx_index'],
  ];
  for (const [mutate, field] of cases) {
    const p = structuredClone({ ...good, evidence: { ...good.evidence! } }) as unknown as Record<string, JsonAnswer>;
    mutate(p['evidence']);
    assert.throws(() => fromProtoPayload(p), (e: NodeError) => e instanceof NodeError && e.code === 'bad_request' && e.detail?.['field'] === field, field);
  }
  // A spent_by without its inclusion, as decoded from real bytes (proto3 leaves the message out).
  const noAt = { ...good, evidence: { ...good.evidence!, spent_by: { ...good.evidence!.spent_by!, at: null } } };
  const bytes = encodeBody('SubmitPayload', { payloads: [noAt] });
  assert.throws(() => fromProtoPayload((decodeBody('SubmitPayload', bytes)['payloads'] as unknown[])[0]), (e: NodeError) => e.detail?.['field'] === 'evidence.spent_by.at');
});

test('one inclusion decoder: the peer wire, a REST coin and a call proof refuse the same fault in the same member, each with its own code and field path', () => {
  const hash = (b: number): Uint8Array => new Uint8Array(32).fill(b);
  const inclusion = { blockHash: '11'.repeat(32), height: 3, txIndex: 1, branch: [hash(7)] };
  const hexAt = { block_hash: inclusion.blockHash, height: 3, tx_index: 1, branch: ['07'.repeat(32)] };
  const bytesAt = { block_hash: hash(0x11), height: 3, tx_index: 1, branch: [hash(7)] };
  assert.deepEqual(bytesAsHex(decodeInclusion(hexAt, 'hex')), bytesAsHex({ ok: true, inclusion }));
  assert.deepEqual(bytesAsHex(decodeInclusion(bytesAt, 'bytes')), bytesAsHex({ ok: true, inclusion }));
  // proto3 leaves an empty list off the wire; JSON writes every member.
  assert.deepEqual(decodeInclusion({ ...bytesAt, branch: undefined }, 'bytes'), { ok: true, inclusion: { ...inclusion, branch: [] } });
  assert.equal(decodeInclusion({ ...hexAt, branch: undefined }, 'hex').ok, false);
  // Each fault, written in both forms; several faults at once: the first member in the decoder's order.
  const faults: [Record<string, unknown>, Record<string, unknown>, InclusionFault['member']][] = [
    [{ block_hash: hash(1).subarray(1) }, { block_hash: 'AB'.repeat(32) }, 'block_hash'],
    [{ branch: Array(MAX_BRANCH_DEPTH + 1).fill(hash(0)) }, { branch: Array(MAX_BRANCH_DEPTH + 1).fill('00'.repeat(32)) }, 'branch'],
    [{ height: -1 }, { height: '5' }, 'height'],
    [{ tx_index: 2 ** 32 }, { tx_index: 1.5 }, 'tx_index'],
    [{ branch: [new Uint8Array(33)] }, { branch: ['ab'] }, 'branch'],
    [{ height: -1, branch: 7 }, { height: -1, branch: 7 }, 'branch'],
    [{ tx_index: -1, block_hash: null }, { tx_index: -1, block_hash: null }, 'block_hash'],
  ];
  const proof = callProofJson({ anchorTx: Uint8Array.of(1), confirmed: inclusion, spentBy: null }, Uint8Array.of(1, 2, 3), { confirmed: new Uint8Array(80), spentBy: null });
  const fieldOf = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof NodeError && e.code === 'bad_request', String(e));
      return e.detail?.['field'];
    }
    return 'accepted';
  };
  for (const [bytesEdit, hexEdit, member] of faults) {
    const d = decodeInclusion({ ...bytesAt, ...bytesEdit }, 'bytes');
    assert.equal(d.ok ? 'accepted' : d.fault.member, member, `bytes ${member}`);
    const h = decodeInclusion({ ...hexAt, ...hexEdit }, 'hex');
    assert.equal(h.ok ? 'accepted' : h.fault.member, member, `hex ${member}`);
    const wire = toProtoPayload({ ...base, evidence: { anchorTx: Uint8Array.of(1), confirmed: inclusion, spentBy: null } });
    assert.equal(fieldOf(() => fromProtoPayload({ ...wire, evidence: { ...wire.evidence, confirmed: { ...bytesAt, ...bytesEdit } } })), `evidence.confirmed.${member}`);
    assert.equal(fieldOf(() => parseCoinJson({ prev_txs: [{ tx: '00', at: { ...hexAt, ...hexEdit } }] })), `coin.prev_txs[0].at.${member}`);
    assert.equal(fieldOf(() => parseCallProof({ ...proof, confirmed: { ...proof.confirmed, ...hexEdit } })), `confirmed.${member}`);
  }
  // Not an object: each caller names the inclusion itself.
  assert.equal(fieldOf(() => parseCoinJson({ prev_txs: [{ tx: '00', at: [] }] })), 'coin.prev_txs[0].at');
  assert.equal(fieldOf(() => parseCallProof({ ...proof, confirmed: 'x' })), 'confirmed');
  assert.equal(fieldOf(() => fromProtoPayload({ ...toProtoPayload({ ...base, evidence: { anchorTx: Uint8Array.of(1), confirmed: null, spentBy: { tx: Uint8Array.of(2), vin: 0, at: inclusion } } }), evidence: { anchor_tx: Uint8Array.of(1), spent_by: { tx: Uint8Array.of(2), vin: 0, at: 5 } } })), 'evidence.spent_by.at');
});

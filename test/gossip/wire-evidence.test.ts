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
import { MAX_EVIDENCE_TX_BYTES } from '@svc-node/protocol/evidence';
import type { WirePayload } from '../../src/messages.js';
import { bytesAsHex, evidenceArb } from '../helpers/evidence-arb.js';

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
  const cases: [(e: Record<string, any>) => void, string][] = [
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
    const p = structuredClone({ ...good, evidence: { ...good.evidence! } }) as unknown as Record<string, any>;
    mutate(p['evidence']);
    assert.throws(() => fromProtoPayload(p), (e: NodeError) => e instanceof NodeError && e.code === 'bad_request' && e.detail?.['field'] === field, field);
  }
  // A spent_by without its inclusion, as decoded from real bytes (proto3 leaves the message out).
  const noAt = { ...good, evidence: { ...good.evidence!, spent_by: { ...good.evidence!.spent_by!, at: null } } };
  const bytes = encodeBody('SubmitPayload', { payloads: [noAt] });
  assert.throws(() => fromProtoPayload((decodeBody('SubmitPayload', bytes)['payloads'] as unknown[])[0]), (e: NodeError) => e.detail?.['field'] === 'evidence.spent_by.at');
});

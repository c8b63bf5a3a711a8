/**
 * A peer's payload taken in from a sync batch (src/core/peer-handlers.ts, compactPayload):
 * its bytes move into one buffer of its own, so a message that carries it to the writer
 * or the pool clones that payload alone, never the batch it arrived in; what it says is
 * unchanged, and a malformed payload is left for intake's checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactPayload } from '../../src/core/peer-handlers.js';
import type { WirePayload } from '../../src/messages.js';

test('a synced payload keeps its bytes in one buffer of exactly their size; its content is what arrived', () => {
  // As a batch frame gives them: every array a view into one large buffer.
  const frame = new Uint8Array(256 * 1024);
  let at = 0;
  const view = (n: number, v: number): Uint8Array => {
    const b = frame.subarray(at, at + n).fill(v);
    at += n;
    return b;
  };
  const sent: WirePayload = {
    kind: 'call',
    txid: 'aa'.repeat(32),
    contract_id: 'bb'.repeat(32),
    body: view(180, 1),
    evidence: {
      anchorTx: view(250, 2),
      confirmed: { blockHash: 'cc'.repeat(32), height: 7, txIndex: 3, branch: [view(32, 3), view(32, 4)] },
      spentBy: { tx: view(120, 5), vin: 1, at: { blockHash: 'dd'.repeat(32), height: 9, txIndex: 1, branch: [view(32, 6)] } },
    },
  };
  const p = compactPayload(sent);
  const arrays = [p.body, p.evidence!.anchorTx, ...p.evidence!.confirmed!.branch, p.evidence!.spentBy!.tx, ...p.evidence!.spentBy!.at.branch];
  const size = 180 + 250 + 64 + 120 + 32;
  for (const a of arrays) assert.equal(a.buffer.byteLength, size);
  assert.equal(new Set(arrays.map((a) => a.buffer)).size, 1);
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  assert.deepEqual(
    arrays.map(hex),
    [sent.body, sent.evidence!.anchorTx, ...sent.evidence!.confirmed!.branch, sent.evidence!.spentBy!.tx, ...sent.evidence!.spentBy!.at.branch].map(hex),
  );
  assert.deepEqual({ ...p, body: null, evidence: null }, { ...sent, body: null, evidence: null });
  assert.equal(p.evidence!.confirmed!.height, 7);
  assert.equal(p.evidence!.spentBy!.vin, 1);
  // Without evidence, and with a body alone.
  const bare = compactPayload({ ...sent, evidence: null });
  assert.equal(bare.evidence, null);
  assert.equal(bare.body.buffer.byteLength, 180);
});

test("a malformed payload is passed on as it came, for intake's checks to refuse", () => {
  const odd = { kind: 'call', txid: 'x', contract_id: '', body: 'not bytes', evidence: { anchorTx: 5, confirmed: { branch: 'no' }, spentBy: null } } as unknown as WirePayload;
  const p = compactPayload(odd);
  assert.equal(p.body as unknown, 'not bytes');
  assert.equal(p.evidence!.anchorTx as unknown, 5);
  assert.equal(p.evidence!.confirmed!.branch as unknown, 'no');
  assert.equal(compactPayload(null as unknown as WirePayload), null);
});

/**
 * A payload packed into one byte array (src/packed-payload.ts), the form it takes
 * between the gossip process, the core and the writer: unpacked it says exactly what was
 * packed; the copy the core takes from a batch frame holds that payload's bytes alone,
 * so the messages that carry it on to the pool or the writer clone nothing more; bytes
 * that are not a packed payload are refused bad_request, never read past their end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packPayload, unpackOwn, unpackPayload } from '../src/packed-payload.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { WirePayload } from '../src/messages.js';

const fill = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v);
const call: WirePayload = {
  kind: 'call',
  txid: 'aa'.repeat(32),
  contract_id: 'bb'.repeat(32),
  body: fill(180, 1),
  evidence: {
    anchorTx: fill(250, 2),
    confirmed: { blockHash: 'cc'.repeat(32), height: 7, txIndex: 3, branch: [fill(32, 3), fill(32, 4)] },
    spentBy: { tx: fill(120, 5), vin: 1, at: { blockHash: 'dd'.repeat(32), height: 9, txIndex: 1, branch: [fill(32, 6)] } },
  },
};
const deploy: WirePayload = { kind: 'deploy', txid: 'ee'.repeat(32), contract_id: '', body: new TextEncoder().encode('{"txid":"x"}'), evidence: { anchorTx: fill(90, 7), confirmed: null, spentBy: null } };
/** A payload as plain data (arrays as hex), for comparisons that ignore where bytes live. */
const plain = (p: WirePayload): unknown => JSON.parse(JSON.stringify(p, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)));

test('a packed payload unpacks to what was packed: a call with both inclusions, a deploy, a payload without evidence', () => {
  for (const p of [call, deploy, { ...call, evidence: null }, { ...call, evidence: { ...call.evidence!, spentBy: null } }]) {
    assert.deepEqual(plain(unpackPayload(packPayload(p))), plain(p));
  }
});

test("unpacked from a batch frame, a payload's arrays share one buffer holding that payload alone", () => {
  const packed = packPayload(call);
  // As a batch frame gives them: the packed payloads views into one large buffer.
  const frame = new Uint8Array(256 * 1024);
  frame.set(packed, 1000);
  const p = unpackOwn(frame.subarray(1000, 1000 + packed.length));
  const arrays = [p.body, p.evidence!.anchorTx, ...p.evidence!.confirmed!.branch, p.evidence!.spentBy!.tx, ...p.evidence!.spentBy!.at.branch];
  assert.equal(new Set(arrays.map((a) => a.buffer)).size, 1);
  assert.equal(arrays[0]!.buffer.byteLength, packed.length);
  assert.deepEqual(plain(p), plain(call));
  // packPayload's own array is its own buffer too.
  assert.equal(packed.buffer.byteLength, packed.length);
});

test('bytes that are not a packed payload are refused bad_request: cut anywhere, an unknown kind, a body length past the end, trailing bytes', () => {
  const packed = packPayload(call);
  const refused = (b: Uint8Array, what: string): void =>
    assert.throws(() => unpackPayload(b), (e: unknown) => e instanceof NodeError && e.code === 'bad_request', what);
  for (let n = 0; n < packed.length; n++) {
    // A cut that ends exactly after the body leaves a payload without evidence, which is one.
    if (n === 1 + 32 + 32 + 4 + 180) continue;
    refused(packed.subarray(0, n), `cut at ${n}`);
  }
  refused(Uint8Array.from([9, ...packed.subarray(1)]), 'kind 9');
  const long = packed.slice();
  Buffer.from(long.buffer).writeUInt32BE(70_000, 65);
  refused(long, 'a body of 70,000 bytes in a shorter array');
  refused(Uint8Array.from([...packed, 0]), 'a trailing byte');
  refused('not bytes' as unknown as Uint8Array, 'a string');
});

test('a payload that cannot be packed is refused bad_request: an id that is not 64 lowercase hex, an unknown kind', () => {
  for (const p of [{ ...call, txid: 'AA'.repeat(32) }, { ...call, contract_id: 'b' }, { ...call, kind: 'other' }] as WirePayload[]) {
    assert.throws(() => packPayload(p), (e: unknown) => e instanceof NodeError && e.code === 'bad_request');
  }
});

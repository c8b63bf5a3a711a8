/** Stamp parsing edge cases (PROTOCOL section 3 "exactly one ... well formed"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { script as bscript, opcodes } from 'bitcoinjs-lib';
import { findStampInOutputs, deployStampScript, callStampScript } from '@svc-node/protocol';

const h = new Uint8Array(32).fill(1);
const push = (b: number[] | Uint8Array) => new Uint8Array(bscript.compile([opcodes.OP_RETURN, Uint8Array.from(b)]));
const p2wpkh = Uint8Array.from([0x00, 0x14, ...new Uint8Array(20)]);
const svc = (kind: number, len: number) => [0x53, 0x56, 0x43, kind, ...new Array(len - 4).fill(7)];

test('one deploy or call stamp among ordinary outputs is found with its vout', () => {
  const r = findStampInOutputs([p2wpkh, push([1, 2, 3]), deployStampScript(h)]);
  assert.ok(r.ok && r.stamp.kind === 'deploy' && r.stamp.vout === 2);
  const c = findStampInOutputs([callStampScript(h, h), p2wpkh]);
  assert.ok(c.ok && c.stamp.kind === 'call' && c.stamp.vout === 0);
});

test('malformed: wrong kind, wrong length, extra chunks after the push', () => {
  assert.deepEqual(findStampInOutputs([push(svc(3, 36))]), { ok: false, reason: 'malformed_stamp' });
  assert.deepEqual(findStampInOutputs([push(svc(1, 68))]), { ok: false, reason: 'malformed_stamp' });
  assert.deepEqual(findStampInOutputs([push(svc(2, 36))]), { ok: false, reason: 'malformed_stamp' });
  assert.deepEqual(findStampInOutputs([push([0x53, 0x56, 0x43])]), { ok: false, reason: 'malformed_stamp' });
  const extra = new Uint8Array([...deployStampScript(h), opcodes.OP_1]);
  assert.deepEqual(findStampInOutputs([extra]), { ok: false, reason: 'malformed_stamp' });
});

test('several SVC pushes are multiple_stamps even when one is malformed; none is no_stamp', () => {
  assert.deepEqual(findStampInOutputs([deployStampScript(h), push(svc(9, 10))]), { ok: false, reason: 'multiple_stamps' });
  assert.deepEqual(findStampInOutputs([callStampScript(h, h), callStampScript(h, h)]), { ok: false, reason: 'multiple_stamps' });
  assert.deepEqual(findStampInOutputs([p2wpkh, push([0x53, 0x56])]), { ok: false, reason: 'no_stamp' });
  assert.deepEqual(findStampInOutputs([]), { ok: false, reason: 'no_stamp' });
  // an SVC push not behind OP_RETURN is not a stamp
  assert.deepEqual(findStampInOutputs([new Uint8Array(bscript.compile([Uint8Array.from(svc(1, 36))]))]), { ok: false, reason: 'no_stamp' });
});

/**
 * The field checks every edge runs (packages/protocol/src/fields.ts): one wording per rule,
 * `bad_request` naming the field, so a REST body, a stream request and a peer message with
 * the same mistake get the same answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureBytes32, ensureHex32 } from '@svc-node/protocol/fields';
import { NodeError } from '@svc-node/protocol/errors';

const refusal = (f: () => unknown): { code: string; message: string; detail: unknown } => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof NodeError);
    return { code: e.code, message: e.message, detail: e.detail };
  }
  assert.fail('expected a refusal');
};

test('a 32-byte hex field: 64 lowercase hex characters, else bad_request naming the field', () => {
  const ok = 'ab'.repeat(32);
  assert.equal(ensureHex32('txid', ok), ok);
  for (const bad of ['AB'.repeat(32), 'ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32), 42, null, undefined]) {
    assert.deepEqual(refusal(() => ensureHex32('txid', bad)), { code: 'bad_request', message: 'txid must be 64 lowercase hex characters', detail: { field: 'txid' } });
  }
  assert.equal(refusal(() => ensureHex32('block hash', 'x', null)).detail, undefined, 'an argument, not an input field: no field detail');
});

test('a 32-byte field: exactly 32 bytes, else bad_request naming the field', () => {
  const ok = new Uint8Array(32);
  assert.equal(ensureBytes32('contract_id', ok), ok);
  for (const bad of [new Uint8Array(31), new Uint8Array(33), 'ab'.repeat(32), null]) {
    assert.deepEqual(refusal(() => ensureBytes32('contract_id', bad)), { code: 'bad_request', message: 'contract_id must be 32 bytes', detail: { field: 'contract_id' } });
  }
});

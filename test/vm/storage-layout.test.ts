/** storage-layout.ts: the exact bytes the REST layer and the state root depend on. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldKey, encodeStorageValue, decodeStorageValue, defaultValue, isDefaultValue } from '@svc-node/protocol/vm/storage-layout';
import type { AbiEntry } from '@svc-node/protocol/vm/types';
import type { Value } from '@svc-node/protocol/value';
import { hex } from '../helpers/vm.js';

const abi: AbiEntry[] = [
  { type: 'field', name: 'supply', key: null, value: 'u128' },
  { type: 'field', name: 'bal', key: 'bytes', value: 'u64' },
  { type: 'field', name: 'flag', key: 'i64', value: 'bool' },
];

test('field keys: name for scalars, name || 0x00 || enc(key) for map entries', () => {
  assert.equal(hex(fieldKey(abi, 'supply', null)), Buffer.from('supply').toString('hex'));
  assert.equal(hex(fieldKey(abi, 'bal', { type: 'bytes', value: Uint8Array.of(1, 2) })), Buffer.from('bal').toString('hex') + '00' + '0102');
  assert.equal(hex(fieldKey(abi, 'flag', { type: 'i64', value: -1n })), Buffer.from('flag').toString('hex') + '00' + 'ffffffffffffffff');
  assert.throws(() => fieldKey(abi, 'nope', null), TypeError);
  assert.throws(() => fieldKey(abi, 'supply', { type: 'u64', value: 1n }), TypeError);
  assert.throws(() => fieldKey(abi, 'bal', null), TypeError);
  assert.throws(() => fieldKey(abi, 'bal', { type: 'u64', value: 1n }), TypeError);
});

test('value encoding is canonical and decoding is strict', () => {
  const cases: [Value, string][] = [
    [{ type: 'u64', value: 258n }, '0000000000000102'],
    [{ type: 'u64', value: (1n << 64n) - 1n }, 'ffffffffffffffff'],
    [{ type: 'i64', value: -(1n << 63n) }, '8000000000000000'],
    [{ type: 'i64', value: -2n }, 'fffffffffffffffe'],
    [{ type: 'u128', value: (1n << 128n) - 1n }, 'ff'.repeat(16)],
    [{ type: 'u128', value: 1n << 64n }, '00000000000000010000000000000000'],
    [{ type: 'bool', value: true }, '01'],
    [{ type: 'string', value: 'hé' }, '68c3a9'],
    [{ type: 'bytes', value: Uint8Array.of(0, 255) }, '00ff'],
    [{ type: 'key', value: new Uint8Array(32).fill(7) }, '07'.repeat(32)],
  ];
  for (const [v, h] of cases) {
    assert.equal(hex(encodeStorageValue(v)), h);
    assert.deepEqual(decodeStorageValue(v.type, Buffer.from(h, 'hex')), v);
  }
  assert.throws(() => encodeStorageValue({ type: 'u64', value: -1n }), TypeError);
  assert.throws(() => encodeStorageValue({ type: 'i64', value: 1n << 63n }), TypeError);
  assert.throws(() => encodeStorageValue({ type: 'key', value: new Uint8Array(31) }), TypeError);
  assert.throws(() => decodeStorageValue('u64', new Uint8Array(7)), TypeError);
  assert.throws(() => decodeStorageValue('bool', Uint8Array.of(2)), TypeError);
  assert.throws(() => decodeStorageValue('string', Uint8Array.of(0xc3)), TypeError);
  assert.throws(() => decodeStorageValue('key', new Uint8Array(33)), TypeError);
  for (const t of ['u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'] as const) assert.ok(isDefaultValue(defaultValue(t)));
  assert.ok(!isDefaultValue({ type: 'key', value: new Uint8Array(32).fill(1) }));
});

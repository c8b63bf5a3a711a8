/**
 * Storage layout (docs/LANGUAGE.md, "Storage layout"). The state root hashes these exact bytes.
 *
 * Key of a scalar field:  UTF8(field name)
 * Key of a map entry:     UTF8(field name) || 0x00 || enc(map key)
 * Field names are identifiers ([A-Za-z_][A-Za-z0-9_]*), so they never contain 0x00 and no
 * scalar key is a prefix-collision of a map entry key.
 *
 * enc(value): u64 8 bytes big-endian; i64 8 bytes big-endian two's complement; u128 16 bytes
 * big-endian; bool 1 byte 0x00/0x01; string UTF-8; bytes raw; key its 32 bytes. An entry
 * holding its type's default value (0, false, "", empty bytes, 32 zero bytes) is absent:
 * writing the default deletes the entry, and a missing entry reads as the default.
 */
import type { Value, ValueType } from '../protocol/value.js';
import type { AbiEntry, AbiField } from './types.js';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });
const U64_MAX = (1n << 64n) - 1n;
const U128_MAX = (1n << 128n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

export function fieldEntry(abi: readonly AbiEntry[], fieldName: string): AbiField | undefined {
  for (const e of abi) if (e.type === 'field' && e.name === fieldName) return e;
  return undefined;
}

export function fieldPrefix(fieldName: string, isMap: boolean): Uint8Array {
  const n = enc.encode(fieldName);
  if (!isMap) return n;
  const out = new Uint8Array(n.length + 1);
  out.set(n, 0);
  return out;
}

/** Storage key of a scalar field (key null) or of a map entry. Throws TypeError on misuse. */
export function fieldKey(abi: readonly AbiEntry[], fieldName: string, key: Value | null): Uint8Array {
  const f = fieldEntry(abi, fieldName);
  if (!f) throw new TypeError(`unknown field ${fieldName}`);
  if (f.key === null) {
    if (key !== null) throw new TypeError(`field ${fieldName} is a scalar`);
    return fieldPrefix(fieldName, false);
  }
  if (key === null || key.type !== f.key) throw new TypeError(`field ${fieldName} needs a ${f.key} key`);
  const p = fieldPrefix(fieldName, true);
  const k = encodeStorageValue(key);
  const out = new Uint8Array(p.length + k.length);
  out.set(p, 0);
  out.set(k, p.length);
  return out;
}

function beBytes(v: bigint, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = v;
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function beRead(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = 0; i < b.length; i++) x = (x << 8n) | BigInt(b[i]!);
  return x;
}

/** Canonical storage bytes of a value. Throws TypeError when the value is out of its type's range. */
export function encodeStorageValue(v: Value): Uint8Array {
  switch (v.type) {
    case 'u64':
      if (v.value < 0n || v.value > U64_MAX) throw new TypeError('u64 out of range');
      return beBytes(v.value, 8);
    case 'i64':
      if (v.value < I64_MIN || v.value > I64_MAX) throw new TypeError('i64 out of range');
      return beBytes(BigInt.asUintN(64, v.value), 8);
    case 'u128':
      if (v.value < 0n || v.value > U128_MAX) throw new TypeError('u128 out of range');
      return beBytes(v.value, 16);
    case 'bool':
      return Uint8Array.of(v.value ? 1 : 0);
    case 'string':
      return enc.encode(v.value);
    case 'bytes':
      return new Uint8Array(v.value);
    case 'key':
      if (v.value.length !== 32) throw new TypeError('key must be 32 bytes');
      return new Uint8Array(v.value);
  }
}

/** Decode storage bytes. Throws TypeError when the bytes are not a canonical encoding. */
export function decodeStorageValue(type: ValueType, bytes: Uint8Array): Value {
  switch (type) {
    case 'u64':
      if (bytes.length !== 8) throw new TypeError('u64 needs 8 bytes');
      return { type, value: beRead(bytes) };
    case 'i64':
      if (bytes.length !== 8) throw new TypeError('i64 needs 8 bytes');
      return { type, value: BigInt.asIntN(64, beRead(bytes)) };
    case 'u128':
      if (bytes.length !== 16) throw new TypeError('u128 needs 16 bytes');
      return { type, value: beRead(bytes) };
    case 'bool':
      if (bytes.length !== 1 || bytes[0]! > 1) throw new TypeError('bool needs one byte 0 or 1');
      return { type, value: bytes[0] === 1 };
    case 'string':
      return { type, value: dec.decode(bytes) };
    case 'bytes':
      return { type, value: new Uint8Array(bytes) };
    case 'key':
      if (bytes.length !== 32) throw new TypeError('key needs 32 bytes');
      return { type, value: new Uint8Array(bytes) };
  }
}

export function defaultValue(type: ValueType): Value {
  switch (type) {
    case 'u64':
    case 'i64':
    case 'u128':
      return { type, value: 0n };
    case 'bool':
      return { type, value: false };
    case 'string':
      return { type, value: '' };
    case 'bytes':
      return { type, value: new Uint8Array(0) };
    case 'key':
      return { type, value: new Uint8Array(32) };
  }
}

/** True when v is its type's default (such an entry is stored as absent). */
export function isDefaultValue(v: Value): boolean {
  switch (v.type) {
    case 'u64':
    case 'i64':
    case 'u128':
      return v.value === 0n;
    case 'bool':
      return v.value === false;
    case 'string':
      return v.value.length === 0;
    case 'bytes':
      return v.value.length === 0;
    case 'key':
      return v.value.every((b) => b === 0);
  }
}

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
import { I64_MAX, I64_MIN, U128_MAX, U64_MAX, type Value, type ValueType } from '../value.js';
import type { AbiEntry, AbiField } from './types.js';
import { TY } from './isa.js';
import { decodeRt, encodeRt, norm, toValue } from './values.js';

const enc = new TextEncoder();

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

/** Why storage bytes are not a canonical encoding of each type (the TypeError decodeStorageValue throws). */
const NOT_CANONICAL: Readonly<Record<ValueType, string>> = {
  u64: 'u64 needs 8 bytes',
  i64: 'i64 needs 8 bytes',
  u128: 'u128 needs 16 bytes',
  bool: 'bool needs one byte 0 or 1',
  string: 'string is not valid UTF-8',
  bytes: 'bytes cannot fail',
  key: 'key needs 32 bytes',
};

/**
 * Canonical storage bytes of a value: the VM's own codec (encodeRt), so the bytes a
 * contract stores and the keys and values read or proven through this API are one
 * encoding. Throws TypeError when the value is out of its type's range.
 */
export function encodeStorageValue(v: Value): Uint8Array {
  switch (v.type) {
    case 'u64':
      if (v.value < 0n || v.value > U64_MAX) throw new TypeError('u64 out of range');
      break;
    case 'i64':
      if (v.value < I64_MIN || v.value > I64_MAX) throw new TypeError('i64 out of range');
      break;
    case 'u128':
      if (v.value < 0n || v.value > U128_MAX) throw new TypeError('u128 out of range');
      break;
    case 'key':
      if (v.value.length !== 32) throw new TypeError('key must be 32 bytes');
      break;
  }
  const code = TY[v.type];
  // A plain Uint8Array of its own: encodeRt answers a Buffer, and bytes values as given.
  return new Uint8Array(encodeRt(v.type === 'u64' || v.type === 'i64' || v.type === 'u128' ? norm(v.value) : v.value, code));
}

/** Decode storage bytes (the VM's decodeRt). Throws TypeError when the bytes are not a canonical encoding. */
export function decodeStorageValue(type: ValueType, bytes: Uint8Array): Value {
  const code = TY[type];
  const x = decodeRt(bytes, code);
  if (x === undefined) throw new TypeError(NOT_CANONICAL[type]);
  return toValue(x, code);
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

export type ValueType = 'u64' | 'i64' | 'u128' | 'bool' | 'string' | 'bytes' | 'key';
export type Value =
  | { type: 'u64'; value: bigint } | { type: 'i64'; value: bigint } | { type: 'u128'; value: bigint }
  | { type: 'bool'; value: boolean } | { type: 'string'; value: string }
  | { type: 'bytes'; value: Uint8Array } | { type: 'key'; value: Uint8Array };

// ---------------------------------------------------------------------------------------
// Helpers (protocol codec). Everything above this line is shared verbatim with src/vm.
// ---------------------------------------------------------------------------------------

import { NodeError } from './errors.js';

/** Borsh enum tags of PROTOCOL section 3, in tag order. */
export const VALUE_TYPES: readonly ValueType[] = ['u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'];

export const VALUE_TAG: Readonly<Record<ValueType, number>> = {
  u64: 0,
  i64: 1,
  u128: 2,
  bool: 3,
  string: 4,
  bytes: 5,
  key: 6,
};

export const U64_MAX = (1n << 64n) - 1n;
export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

/** The inclusive range [min, max] of each integer type. */
export const INT_RANGE: Readonly<Record<string, readonly [bigint, bigint]>> = {
  u64: [0n, U64_MAX],
  i64: [I64_MIN, I64_MAX],
  u128: [0n, U128_MAX],
};

export function isValueType(x: unknown): x is ValueType {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(VALUE_TAG, x);
}

/** True when `s` has no lone UTF-16 surrogate, i.e. it has an exact UTF-8 encoding. */
export function isWellFormedString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return false; // low surrogate without a high one
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false; // high surrogate without a low one
    i++;
  }
  return true;
}

/**
 * Checks one in-memory Value against its type (range, length, well-formed string).
 * Returns an error text naming what is wrong, or null when it is valid.
 */
export function valueProblem(v: Value): string | null {
  if (v === null || typeof v !== 'object') return 'not a value object';
  switch (v.type) {
    case 'u64':
      if (typeof v.value !== 'bigint') return 'u64 value must be a bigint';
      return v.value < 0n || v.value > U64_MAX ? 'u64 out of range' : null;
    case 'i64':
      if (typeof v.value !== 'bigint') return 'i64 value must be a bigint';
      return v.value < I64_MIN || v.value > I64_MAX ? 'i64 out of range' : null;
    case 'u128':
      if (typeof v.value !== 'bigint') return 'u128 value must be a bigint';
      return v.value < 0n || v.value > U128_MAX ? 'u128 out of range' : null;
    case 'bool':
      return typeof v.value === 'boolean' ? null : 'bool value must be a boolean';
    case 'string':
      if (typeof v.value !== 'string') return 'string value must be a string';
      return isWellFormedString(v.value) ? null : 'string has a lone UTF-16 surrogate (no UTF-8 form)';
    case 'bytes':
      return v.value instanceof Uint8Array ? null : 'bytes value must be a Uint8Array';
    case 'key':
      if (!(v.value instanceof Uint8Array)) return 'key value must be a Uint8Array';
      return v.value.length === 32 ? null : `key must be 32 bytes, got ${v.value.length}`;
    default:
      return `unknown value type ${JSON.stringify((v as { type: unknown }).type)}`;
  }
}

/** JSON form of PROTOCOL section 6: u64/i64/u128 as decimal strings, bytes/key as lowercase hex. */
export type JsonValue = string | boolean;

export function valueToJson(v: Value): JsonValue {
  switch (v.type) {
    case 'u64':
    case 'i64':
    case 'u128':
      return v.value.toString(10);
    case 'bool':
      return v.value;
    case 'string':
      return v.value;
    case 'bytes':
    case 'key':
      return Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString('hex');
  }
}

const UNSIGNED_DEC = /^(?:0|[1-9][0-9]*)$/;
const SIGNED_DEC = /^(?:0|-?[1-9][0-9]*)$/;
const HEX = /^(?:[0-9a-f]{2})*$/;

function badValue(what: string, field?: string): NodeError {
  const where = field ? `${field}: ` : '';
  return new NodeError('bad_request', `${where}${what}`, field ? { field } : undefined);
}

/**
 * Parses the JSON form of a value of type `type` (strict: canonical decimal without
 * leading zeros or '+', lowercase hex of even length). Throws NodeError bad_request.
 * `field` names the value in the error message.
 */
export function valueFromJson(type: ValueType, json: unknown, field?: string): Value {
  switch (type) {
    case 'u64':
    case 'u128': {
      if (typeof json !== 'string' || !UNSIGNED_DEC.test(json) || json.length > 40) {
        throw badValue(`${type} must be a decimal string`, field);
      }
      const n = BigInt(json);
      if (n > (type === 'u64' ? U64_MAX : U128_MAX)) throw badValue(`${type} out of range`, field);
      return { type, value: n };
    }
    case 'i64': {
      if (typeof json !== 'string' || !SIGNED_DEC.test(json) || json.length > 21) {
        throw badValue('i64 must be a decimal string', field);
      }
      const n = BigInt(json);
      if (n < I64_MIN || n > I64_MAX) throw badValue('i64 out of range', field);
      return { type, value: n };
    }
    case 'bool':
      if (typeof json !== 'boolean') throw badValue('bool must be true or false', field);
      return { type, value: json };
    case 'string':
      if (typeof json !== 'string') throw badValue('string must be a JSON string', field);
      if (!isWellFormedString(json)) throw badValue('string has a lone surrogate', field);
      return { type, value: json };
    case 'bytes':
    case 'key': {
      if (typeof json !== 'string' || !HEX.test(json)) throw badValue(`${type} must be lowercase hex`, field);
      if (type === 'key' && json.length !== 64) throw badValue('key must be 32 bytes (64 hex characters)', field);
      return { type, value: new Uint8Array(Buffer.from(json, 'hex')) };
    }
    default:
      throw badValue(`unknown value type ${JSON.stringify(type)}`, field);
  }
}

/** `{type, value}` JSON object (as in the vectors) -> Value. */
export function typedValueFromJson(json: unknown, field?: string): Value {
  if (json === null || typeof json !== 'object') throw badValue('value must be an object {type, value}', field);
  const o = json as { type?: unknown; value?: unknown };
  if (!isValueType(o.type)) throw badValue(`unknown value type ${JSON.stringify(o.type)}`, field);
  return valueFromJson(o.type, o.value, field);
}

export function typedValueToJson(v: Value): { type: ValueType; value: JsonValue } {
  return { type: v.type, value: valueToJson(v) };
}

export function valuesEqual(a: Value, b: Value): boolean {
  if (a.type !== b.type) return false;
  if (a.value instanceof Uint8Array && b.value instanceof Uint8Array) {
    return Buffer.from(a.value.buffer, a.value.byteOffset, a.value.byteLength).equals(b.value);
  }
  return a.value === b.value;
}

/**
 * A field-read key from its URL path segment (PROTOCOL section 6, GET /v2/{id}/{field}/{arg}):
 * integers in decimal, bytes/key in lowercase hex, string percent-encoded UTF-8, bool
 * true/false. `raw` is the segment as received (still percent-encoded). Throws bad_request.
 */
export function valueFromPathArg(type: ValueType, raw: string, field = 'arg'): Value {
  if (type === 'bool') {
    if (raw !== 'true' && raw !== 'false') throw badValue('bool must be true or false', field);
    return { type, value: raw === 'true' };
  }
  if (type === 'string') {
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      throw badValue('string is not valid percent-encoded UTF-8', field);
    }
    return valueFromJson('string', s, field);
  }
  return valueFromJson(type, raw, field);
}

/** Inverse of valueFromPathArg. */
export function valueToPathArg(v: Value): string {
  if (v.type === 'string') return encodeURIComponent(v.value);
  if (v.type === 'bool') return v.value ? 'true' : 'false';
  return valueToJson(v) as string;
}

// ------------------------------------------------------------------ binary form

/**
 * The binary form of a typed value (event runs and call decisions in the store, a
 * block's decision leaves, packages/protocol/src/state/decisions.ts): u8 tag (VALUE_TAG), then
 * u64 and i64 8 bytes big-endian (i64 two's complement), u128 16 bytes, bool 1 byte,
 * key 32 bytes, string (utf8) and bytes u32be length then the bytes.
 */
export function valueBytes(v: Value): number {
  switch (v.type) {
    case 'u64':
    case 'i64':
      return 9;
    case 'u128':
      return 17;
    case 'bool':
      return 2;
    case 'key':
      return 33;
    case 'string':
      return 5 + Buffer.byteLength(v.value, 'utf8');
    case 'bytes':
      return 5 + v.value.length;
  }
}

/** Writes `v` at `o`; returns the offset after it. `out` has valueBytes(v) bytes there. */
export function writeValue(out: Buffer, o: number, v: Value): number {
  out[o++] = VALUE_TAG[v.type];
  switch (v.type) {
    case 'u64':
      return out.writeBigUInt64BE(v.value, o);
    case 'i64':
      return out.writeBigInt64BE(v.value, o);
    case 'u128':
      o = out.writeBigUInt64BE(v.value >> 64n, o);
      return out.writeBigUInt64BE(v.value & 0xffffffffffffffffn, o);
    case 'bool':
      out[o] = v.value ? 1 : 0;
      return o + 1;
    case 'key':
      out.set(v.value, o);
      return o + 32;
    case 'string': {
      const n = out.write(v.value, o + 4, 'utf8');
      out.writeUInt32BE(n, o);
      return o + 4 + n;
    }
    case 'bytes':
      o = out.writeUInt32BE(v.value.length, o);
      out.set(v.value, o);
      return o + v.value.length;
  }
}

/** The value at `o` and the offset after it. */
export function readValue(b: Buffer, o: number): [Value, number] {
  const tag = b[o++]!;
  switch (VALUE_TYPES[tag]) {
    case 'u64':
      return [{ type: 'u64', value: b.readBigUInt64BE(o) }, o + 8];
    case 'i64':
      return [{ type: 'i64', value: b.readBigInt64BE(o) }, o + 8];
    case 'u128':
      return [{ type: 'u128', value: (b.readBigUInt64BE(o) << 64n) | b.readBigUInt64BE(o + 8) }, o + 16];
    case 'bool':
      return [{ type: 'bool', value: b[o] === 1 }, o + 1];
    case 'key':
      return [{ type: 'key', value: b.subarray(o, o + 32) }, o + 32];
    case 'string': {
      const n = b.readUInt32BE(o);
      return [{ type: 'string', value: b.toString('utf8', o + 4, o + 4 + n) }, o + 4 + n];
    }
    case 'bytes': {
      const n = b.readUInt32BE(o);
      return [{ type: 'bytes', value: b.subarray(o + 4, o + 4 + n) }, o + 4 + n];
    }
    default:
      throw new Error(`stored value has an unknown tag ${tag}`);
  }
}

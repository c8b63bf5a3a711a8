/**
 * Runtime value representation and exact conversions. Integers are JS numbers when
 * |v| <= 2^53-1 and bigints otherwise — canonical, so a value has exactly one representation
 * and === compares integers correctly. Everything crossing the API goes through here.
 */
import { I64_MAX, I64_MIN, U128_MAX, U64_MAX, valueProblem, type Value, type ValueType } from '../value.js';
import { LIMITS, TY, TYPE_NAMES } from './isa.js';
import type { RtValue } from './types.js';

// The integer ranges are the protocol's (packages/protocol/src/value.ts); re-exported for the VM's modules.
export { I64_MAX, I64_MIN, U128_MAX, U64_MAX };
export const MAX_SAFE = 9007199254740991; // 2^53 - 1
const MAX_SAFE_N = 9007199254740991n;

/** Canonical runtime integer of a bigint. */
export function norm(x: bigint): number | bigint {
  return x >= -MAX_SAFE_N && x <= MAX_SAFE_N ? Number(x) : x;
}

export function big(x: number | bigint): bigint {
  return typeof x === 'number' ? BigInt(x) : x;
}

export function inRange(code: number, x: number | bigint): boolean {
  switch (code) {
    case TY.u64: return x >= 0 && x <= U64_MAX;
    case TY.u128: return x >= 0 && x <= U128_MAX;
    case TY.i64: return x >= I64_MIN && x <= I64_MAX;
    default: return false;
  }
}

const dec = new TextDecoder('utf-8', { fatal: true });

export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * Value -> runtime value of the expected type code: a valid value of the protocol
 * (valueProblem: range, well-formed string, 32-byte key) that is also within the VM's
 * LIMITS.valueBytes (a string or bytes no contract could build or store).
 */
export function toRuntime(v: Value, code: number): RtValue | undefined {
  if (valueProblem(v) !== null || TYPE_NAMES[code] !== v.type) return undefined;
  switch (v.type) {
    case 'u64': case 'i64': case 'u128': return norm(v.value);
    case 'bool': return v.value;
    case 'string': return utf8Length(v.value) <= LIMITS.valueBytes ? v.value : undefined;
    case 'bytes': return v.value.length <= LIMITS.valueBytes ? new Uint8Array(v.value) : undefined;
    case 'key': return new Uint8Array(v.value);
  }
  return undefined;
}

/** Does runtime value x belong to type code (value-level check used on cross-contract calls)? */
export function rtHasType(x: RtValue, code: number): boolean {
  switch (code) {
    case TY.u64: case TY.i64: case TY.u128:
      return (typeof x === 'number' || typeof x === 'bigint') && inRange(code, x);
    case TY.bool: return typeof x === 'boolean';
    case TY.string: return typeof x === 'string';
    case TY.bytes: return x instanceof Uint8Array;
    case TY.key: return x instanceof Uint8Array && x.length === 32;
  }
  return false;
}

export function toValue(x: RtValue, code: number): Value {
  const type = TYPE_NAMES[code] as ValueType;
  switch (type) {
    case 'u64': case 'i64': case 'u128':
      return { type, value: big(x as number | bigint) };
    case 'bool': return { type, value: x as boolean };
    case 'string': return { type, value: x as string };
    case 'bytes': case 'key': return { type, value: new Uint8Array(x as Uint8Array) };
  }
}

export function defaultRt(code: number): RtValue {
  switch (code) {
    case TY.bool: return false;
    case TY.string: return '';
    case TY.bytes: return new Uint8Array(0);
    case TY.key: return new Uint8Array(32);
    default: return 0;
  }
}

export function isDefaultRt(x: RtValue, code: number): boolean {
  switch (code) {
    case TY.bool: return x === false;
    case TY.string: return x === '';
    case TY.bytes: return (x as Uint8Array).length === 0;
    case TY.key: { const b = x as Uint8Array; for (let i = 0; i < 32; i++) if (b[i] !== 0) return false; return true; }
    default: return x === 0;
  }
}

/**
 * Storage encoding of a runtime value (same bytes as storage-layout encodeStorageValue).
 * Integers, bools and strings are encoded into a new Buffer of its own (no shared pool
 * slab that one long-lived stored value would keep alive): the writer hands it to RocksDB
 * as is, where a Uint8Array would first need a Buffer view (about 1 us for a small array,
 * whose ArrayBuffer V8 must then create). Integers start zeroed (Buffer.alloc, as fast as
 * allocUnsafeSlow at 8 and 16 bytes; allocUnsafeSlow's memory is zero at these sizes only
 * because V8 keeps typed arrays of up to 64 bytes on its own heap): the u128 number path
 * writes only the low 8 bytes, so no stored byte depends on what the memory held before.
 */
export function encodeRt(x: RtValue, code: number): Uint8Array {
  switch (code) {
    case TY.u64: case TY.i64: {
      const out = Buffer.alloc(8);
      if (typeof x === 'number' && x >= 0) {
        const hi = Math.floor(x / 4294967296);
        const lo = x - hi * 4294967296;
        out[0] = hi >>> 24; out[1] = hi >>> 16; out[2] = hi >>> 8; out[3] = hi;
        out[4] = lo >>> 24; out[5] = lo >>> 16; out[6] = lo >>> 8; out[7] = lo;
        return out;
      }
      let v = BigInt.asUintN(64, big(x as number | bigint));
      for (let i = 7; i >= 0; i--) { out[i] = Number(v & 0xffn); v >>= 8n; }
      return out;
    }
    case TY.u128: {
      const out = Buffer.alloc(16);
      if (typeof x === 'number') {
        const hi = Math.floor(x / 4294967296);
        const lo = x - hi * 4294967296;
        out[8] = hi >>> 24; out[9] = hi >>> 16; out[10] = hi >>> 8; out[11] = hi;
        out[12] = lo >>> 24; out[13] = lo >>> 16; out[14] = lo >>> 8; out[15] = lo;
        return out;
      }
      let v = big(x as number | bigint);
      for (let i = 12; i >= 0; i -= 4) {
        const w = Number(v & 0xffffffffn);
        out[i] = w >>> 24; out[i + 1] = w >>> 16; out[i + 2] = w >>> 8; out[i + 3] = w;
        v >>= 32n;
      }
      return out;
    }
    case TY.bool: { const out = Buffer.allocUnsafeSlow(1); out[0] = x ? 1 : 0; return out; }
    case TY.string: { const s = x as string; const out = Buffer.allocUnsafeSlow(Buffer.byteLength(s, 'utf8')); out.write(s, 0, 'utf8'); return out; }
    default: return x as Uint8Array;
  }
}

/** Decode storage bytes into a runtime value; undefined when not canonical for the type. */
export function decodeRt(b: Uint8Array, code: number): RtValue | undefined {
  switch (code) {
    case TY.u64: case TY.i64: {
      if (b.length !== 8) return undefined;
      const hi = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
      const lo = ((b[4]! << 24) | (b[5]! << 16) | (b[6]! << 8) | b[7]!) >>> 0;
      if (hi < 0x200000) return hi * 4294967296 + lo;
      const u = (BigInt(hi) << 32n) | BigInt(lo);
      return norm(code === TY.i64 ? BigInt.asIntN(64, u) : u);
    }
    case TY.u128: {
      if (b.length !== 16) return undefined;
      if ((b[0]! | b[1]! | b[2]! | b[3]! | b[4]! | b[5]! | b[6]! | b[7]! | b[8]!) === 0 && b[9]! < 0x20) {
        const hi = ((b[9]! << 16) | (b[10]! << 8) | b[11]!) >>> 0;
        const lo = ((b[12]! << 24) | (b[13]! << 16) | (b[14]! << 8) | b[15]!) >>> 0;
        return hi * 4294967296 + lo;
      }
      const w = (i: number): bigint => BigInt(((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0);
      return norm((w(0) << 96n) | (w(4) << 64n) | (w(8) << 32n) | w(12));
    }
    case TY.bool:
      if (b.length !== 1 || b[0]! > 1) return undefined;
      return b[0] === 1;
    case TY.string:
      try { return dec.decode(b); } catch { return undefined; }
    case TY.bytes: return new Uint8Array(b);
    case TY.key: return b.length === 32 ? new Uint8Array(b) : undefined;
  }
  return undefined;
}

export { bytesEqual } from '../bytes.js';

/**
 * Typed values as stored in event runs (events.ts) and call decisions (call-decisions.ts),
 * binary. Not the contract storage encoding (that is the VM's, src/vm/storage-layout.ts).
 */
import { VALUE_TAG, VALUE_TYPES, type Value } from '../../protocol/value.js';

/**
 * A typed value as stored in event runs and call decisions: u8 tag (VALUE_TAG), then
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

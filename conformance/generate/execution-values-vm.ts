/**
 * Execution: the VM's values at the edges of its two integer forms and of its storage codec.
 * - Storage bytes written and read for integers at 2^32-1, 2^32, 2^53-1 and 2^53 (the
 *   VM's number path ends at 2^53-1), negative i64s on both sides of -(2^53-1), the largest
 *   u128 and the smallest i64; a u128 whose tenth byte is 0x1f or 0x20.
 * - Unset fields read as their type's default; writing a default value deletes the entry
 *   (value null), a key with one non-zero last byte is no default; a map<bool, _> keeps its
 *   false and true keys apart.
 * - An integer result computed exactly (past 2^53 and back) equals the same value given as
 *   an argument.
 * - Arguments at the value limit (65,536 UTF-8 bytes, bytes) and one past: bad_arguments.
 * - A cross-contract call's arguments are checked against the callee's parameter types: a
 *   u64 of 0 and 5 for a u64 and an i64; a u64 past the i64 range, bytes or a 32-character
 *   string for a key, a bool for a u64: bad_arguments.
 * The rules are docs/LANGUAGE.md's (sections 11 and 13) and docs/CODEC.md's storage layout.
 */
import { compileSource } from '../../src/compiler/index.js';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import { encodeStorageValue, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import type { Value } from '@svc-node/protocol/value';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import { hex, type CaseInput } from './kit.js';

const VALS_SRC = `contract Vals {
  field fu: u64;
  field fi: i64;
  field fw: u128;
  field fb: bool;
  field fs: string;
  field fx: bytes;
  field fk: key;
  field mb: map<bool, u64>;
  pub fn put(u: u64, i: i64, w: u128) { fu = u; fi = i; fw = w; }
  pub fn putk(k: key) { fk = k; }
  pub fn puts(s: string, x: bytes) { fs = s; fx = x; }
  pub fn putb(b: bool) { fb = b; }
  pub fn boolkeys() { mb[false] = 1; mb[true] = 2; }
  pub readonly fn gu() -> u64 { return fu; }
  pub readonly fn gi() -> i64 { return fi; }
  pub readonly fn gw() -> u128 { return fw; }
  pub readonly fn gb() -> bool { return fb; }
  pub readonly fn gs() -> string { return fs; }
  pub readonly fn gx() -> bytes { return fx; }
  pub readonly fn gk() -> key { return fk; }
  pub readonly fn eqsub(a: u64, b: u64, c: u64) -> bool { return a - b == c; }
  pub readonly fn eqaddi(a: i64, b: i64, c: i64) -> bool { return a + b == c; }
  pub readonly fn eqneg(a: i64, b: i64, c: i64) -> bool { return a + b == 0 - c; }
  pub readonly fn eqsub2(a: u64, b: u64, c: u64) -> bool { return a - b == c + 1; }
  pub readonly fn equ(c: u64) -> bool { return fu == c; }
  pub readonly fn eqw(c: u128) -> bool { return fw == c; }
  pub fn takes_u128(v: u128) -> u64 { return 4; }
  pub fn takes_bool(b: bool) -> u64 { return 5; }
  pub fn takes_string(s: string) -> u64 { return 6; }
  pub fn pass_u64_as_bool(o: key, v: u64) -> u64 { return call<u64>(o, "takes_bool", v); }
  pub fn pass_u64_as_string(o: key, v: u64) -> u64 { return call<u64>(o, "takes_string", v); }
  pub fn pass_u128(o: key, v: u128) -> u64 { return call<u64>(o, "takes_u128", v); }
  pub readonly fn slen(s: string) -> u64 { return len(s); }
  pub readonly fn xlen(x: bytes) -> u64 { return len(x); }
  pub fn takes_key(k: key) -> u64 { return 1; }
  pub fn takes_i64(v: i64) -> u64 { return 2; }
  pub fn takes_u64(v: u64) -> u64 { return 3; }
  pub fn pass_bytes_as_key(o: key, x: bytes) -> u64 { return call<u64>(o, "takes_key", x); }
  pub fn pass_string_as_key(o: key, s: string) -> u64 { return call<u64>(o, "takes_key", s); }
  pub fn pass_u64_as_i64(o: key, v: u64) -> u64 { return call<u64>(o, "takes_i64", v); }
  pub fn pass_u64(o: key, v: u64) -> u64 { return call<u64>(o, "takes_u64", v); }
  pub fn pass_bool_as_u64(o: key, b: bool) -> u64 { return call<u64>(o, "takes_u64", b); }
}`;

const ID = 'c2' + '00'.repeat(30) + '01';
const OTHER = 'c2' + '00'.repeat(30) + '02';
const CONTEXT = { height: 812_345, txid: 'ab'.repeat(32), caller: 'cd'.repeat(32), call_id: '9', inputs: [], outputs: [] };

type ValueJson = { type: string; value: string | boolean };
const j = (type: string, value: bigint | string | boolean): ValueJson => ({ type, value: typeof value === 'boolean' ? value : String(value) });

export function executionValueEdgeCases(): CaseInput[] {
  const r = compileSource(VALS_SRC, 'vals.svc');
  if (!r.ok) throw new Error(`execution-values-vm: vals.svc does not compile: ${r.errors.map((e) => e.message).join('; ')}`);
  const { metadata: _m, ...core } = r.artifact;
  const art = core as ArtifactCore;
  const entry = (field: string, value: Value): [string, string] => [hex(fieldKey(art.abi as never, field, null)), hex(encodeStorageValue(value))];
  const raw = (field: string, bytesHex: string): [string, string] => [hex(fieldKey(art.abi as never, field, null)), bytesHex];
  const call = (id: string, pins: string, storage: [string, string][], fn: string, args: ValueJson[], other = false): CaseInput => ({
    id: `vals-${id}`, pins,
    input: { contracts: other ? [{ contract_id: ID, artifact: art, storage }, { contract_id: OTHER, artifact: art, storage: [] }] : [{ contract_id: ID, artifact: art, storage }], call: { contract_id: ID, function: fn, args }, context: CONTEXT },
  });
  const P32 = 2n ** 32n;
  const P53 = 2n ** 53n;
  const I64_MIN = -(2n ** 63n);
  const U128_MAX = 2n ** 128n - 1n;
  const cases: CaseInput[] = [];

  // Writes: integers on both sides of 2^32 and 2^53.
  const writes: [string, bigint, bigint, bigint][] = [
    ['2-32-minus-1', P32 - 1n, -1n, P32 - 1n],
    ['2-32', P32, -(P53 - 1n), P32],
    ['2-53-minus-1', P53 - 1n, -P53, P53 - 1n],
    ['2-53', P53, I64_MIN, U128_MAX],
  ];
  for (const [name, u, i, w] of writes) {
    cases.push(call(`write-${name}`, `storage bytes of u64 ${u}, i64 ${i} and u128 ${w}: big-endian, i64 two's complement`, [], 'put', [j('u64', u), j('i64', i), j('u128', w)]));
  }
  // Reads: the same edges, and u128s whose tenth byte is 0x1f or 0x20.
  const reads: [string, string, string, string][] = [
    ['u64-2-53-minus-1', 'fu', 'gu', '001fffffffffffff'],
    ['u64-2-53', 'fu', 'gu', '0020000000000000'],
    ['u64-2-32', 'fu', 'gu', '0000000100000000'],
    ['i64-minus-1', 'fi', 'gi', 'ffffffffffffffff'],
    ['i64-minus-2-53-plus-1', 'fi', 'gi', 'ffe0000000000001'],
    ['u128-byte9-1f', 'fw', 'gw', '000000000000000000' + '1fffffffffffff'],
    ['u128-byte9-20', 'fw', 'gw', '000000000000000000' + '20000000000000'],
    ['u128-byte8-1', 'fw', 'gw', '000000000000000001' + '00000000000000'],
    ['u128-max', 'fw', 'gw', 'ff'.repeat(16)],
    ['u128-high-bits', 'fw', 'gw', '80000001' + '80000002' + '80000003' + '80000004'],
    ['u64-max', 'fu', 'gu', 'ff'.repeat(8)],
    ['i64-min', 'fi', 'gi', '8000000000000000'],
    ['i64-2-62', 'fi', 'gi', '4000000000000000'],
    ...Array.from({ length: 9 }, (_, i): [string, string, string, string] => [`u128-byte${i}-only`, 'fw', 'gw', '00'.repeat(i) + '01' + '00'.repeat(15 - i)]),
  ];
  for (const [name, field, fn, bytesHex] of reads) {
    cases.push(call(`read-${name}`, `a ${field === 'fi' ? 'i64' : field === 'fu' ? 'u64' : 'u128'} field read from its storage bytes ${bytesHex}`, [raw(field, bytesHex)], fn, []));
  }
  // Defaults and deletes.
  for (const [fn, type] of [['gu', 'u64'], ['gb', 'bool'], ['gs', 'string'], ['gx', 'bytes'], ['gk', 'key']] as const) {
    cases.push(call(`default-${type}`, `an unset ${type} field reads as its type's default`, [], fn, []));
  }
  const someKey = 'ee'.repeat(32);
  cases.push(
    call('delete-key', 'writing the zero key over a key field deletes the entry (value null)', [entry('fk', { type: 'key', value: Buffer.from(someKey, 'hex') })], 'putk', [j('key', '00'.repeat(32))]),
    call('key-last-byte', 'a key of 31 zero bytes and a last byte 1 is no default: written', [], 'putk', [j('key', '00'.repeat(31) + '01')]),
    call('key-first-byte', 'a key of a first byte 1 and 31 zero bytes is no default: written', [], 'putk', [j('key', '01' + '00'.repeat(31))]),
    call('delete-string-bytes', 'writing the empty string and empty bytes over set fields deletes both entries', [entry('fs', { type: 'string', value: 'a' }), entry('fx', { type: 'bytes', value: Uint8Array.of(1) })], 'puts', [j('string', ''), j('bytes', '')]),
    call('delete-bool', 'writing false over a true bool field deletes the entry', [entry('fb', { type: 'bool', value: true })], 'putb', [j('bool', false)]),
    call('delete-integers', 'writing 0 over set integer fields deletes the entries', [entry('fu', { type: 'u64', value: 5n }), entry('fi', { type: 'i64', value: -5n }), entry('fw', { type: 'u128', value: 5n })], 'put', [j('u64', 0n), j('i64', 0n), j('u128', 0n)]),
    call('bool-map-keys', 'a map<bool, u64> keeps its false and true keys apart (key bytes 00 and 01)', [], 'boolkeys', []),
  );
  // Exact results meet arguments.
  cases.push(
    call('exact-u64-equals-argument', 'u64 2^53 - 1 computed exactly equals 2^53-1 given as an argument', [], 'eqsub', [j('u64', P53), j('u64', 1n), j('u64', P53 - 1n)]),
    call('exact-u64-equals-number', 'u64 2^53 - 1 computed exactly equals (2^53-2) + 1 computed in numbers', [], 'eqsub2', [j('u64', P53), j('u64', 1n), j('u64', P53 - 2n)]),
    call('exact-i64-equals-number', 'i64 -2^53 + 1 computed exactly equals 0 - (2^53-1) computed in numbers', [], 'eqneg', [j('i64', -P53), j('i64', 1n), j('i64', P53 - 1n)]),
    call('stored-u64-2-53-equals-argument', 'a u64 of 2^53 read from storage equals 2^53 given as an argument', [raw('fu', '0020000000000000')], 'equ', [j('u64', P53)]),
    call('stored-u128-2-53-equals-argument', 'a u128 of 2^53 read from storage equals 2^53 given as an argument', [raw('fw', '00'.repeat(9) + '20000000000000')], 'eqw', [j('u128', P53)]),
    call('exact-i64-equals-argument', 'i64 -2^53 + 1 computed exactly equals -(2^53-1) given as an argument', [], 'eqaddi', [j('i64', -P53), j('i64', 1n), j('i64', -(P53 - 1n))]),
  );
  // Arguments at the value limit.
  const half = LIMITS.valueBytes / 2;
  cases.push(
    call('string-argument-at-limit', `a string argument of ${LIMITS.valueBytes} UTF-8 bytes (${half} two-byte characters) is accepted`, [], 'slen', [j('string', '\u00e9'.repeat(half))]),
    call('string-argument-past-limit', `a string argument of ${LIMITS.valueBytes + 1} UTF-8 bytes (fewer characters) fails: bad_arguments`, [], 'slen', [j('string', `${'\u00e9'.repeat(half)}a`)]),
    call('bytes-argument-at-limit', `a bytes argument of ${LIMITS.valueBytes} bytes is accepted`, [], 'xlen', [j('bytes', '5a'.repeat(LIMITS.valueBytes))]),
    call('bytes-argument-past-limit', `a bytes argument of ${LIMITS.valueBytes + 1} bytes fails: bad_arguments`, [], 'xlen', [j('bytes', '5a'.repeat(LIMITS.valueBytes + 1))]),
  );
  // The entry function's argument count.
  cases.push(
    call('one-argument-too-many', 'a call with one argument more than the function takes fails: bad_arguments', [], 'gu', [j('u64', 1n)]),
    call('one-argument-too-few', 'a call with one argument fewer than the function takes fails: bad_arguments', [], 'put', [j('u64', 1n), j('i64', 1n)]),
  );
  // A cross-contract call's arguments against the callee's types.
  const o = j('key', OTHER);
  cases.push(
    call('xcall-u64-zero', 'a u64 of 0 passed to a callee taking a u64 is accepted', [], 'pass_u64', [o, j('u64', 0n)], true),
    call('xcall-u64-as-bool', 'a u64 passed to a callee taking a bool fails: bad_arguments', [], 'pass_u64_as_bool', [o, j('u64', 1n)], true),
    call('xcall-u64-as-string', 'a u64 passed to a callee taking a string fails: bad_arguments', [], 'pass_u64_as_string', [o, j('u64', 1n)], true),
    call('xcall-u128-zero', 'a u128 of 0 passed to a callee taking a u128 is accepted', [], 'pass_u128', [o, j('u128', 0n)], true),
    call('xcall-u64-as-i64', 'a u64 of 5 passed to a callee taking an i64 is accepted (in range)', [], 'pass_u64_as_i64', [o, j('u64', 5n)], true),
    call('xcall-u64-past-i64', 'a u64 of 2^63 passed to a callee taking an i64 fails: bad_arguments', [], 'pass_u64_as_i64', [o, j('u64', 2n ** 63n)], true),
    call('xcall-bytes-as-key', 'bytes of 32 bytes passed to a callee taking a key are accepted (bytes of 32 bytes are a key)', [], 'pass_bytes_as_key', [o, j('bytes', '11'.repeat(32))], true),
    call('xcall-short-bytes-as-key', 'bytes of 31 bytes passed to a callee taking a key fail: bad_arguments', [], 'pass_bytes_as_key', [o, j('bytes', '11'.repeat(31))], true),
    call('xcall-string-as-key', 'a string of 32 characters passed to a callee taking a key fails: bad_arguments', [], 'pass_string_as_key', [o, j('string', 'k'.repeat(32))], true),
    call('xcall-bool-as-u64', 'a bool passed to a callee taking a u64 fails: bad_arguments', [], 'pass_bool_as_u64', [o, j('bool', true)], true),
  );
  return cases;
}

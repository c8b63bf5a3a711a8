/**
 * Execution: the storage bytes of every value type, both ways. One call writes a field and
 * a map entry of each type (so `writes` shows the VM's encoding of each value and of each
 * map key), and readonly calls read each one back from storage laid out by the node's own
 * encoder (so a result shows the VM's decoding). The values fill every byte with a
 * different one, on both sides of 2^53 (the VM holds integers as numbers below it and
 * bigints above), so a byte placed or read one position off changes an answer; and once
 * with the high bit of every low byte set.
 */
import { compileSource } from '../../src/compiler/index.js';
import { encodeStorageValue, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import type { Value } from '@svc-node/protocol/value';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import { hex, type CaseInput } from './kit.js';

const VALUES_SRC = `contract Values {
  field fu: u64;
  field fi: i64;
  field fw: u128;
  field fb: bool;
  field fs: string;
  field fx: bytes;
  field fk: key;
  field mu: map<u64, u64>;
  field mi: map<i64, i64>;
  field mw: map<u128, u128>;
  field mb: map<bool, bool>;
  field ms: map<string, string>;
  field mx: map<bytes, bytes>;
  field mk: map<key, key>;
  pub fn put(u: u64, i: i64, w: u128, b: bool, s: string, x: bytes, k: key) {
    fu = u; fi = i; fw = w; fb = b; fs = s; fx = x; fk = k;
    mu[u] = u; mi[i] = i; mw[w] = w; mb[b] = b; ms[s] = s; mx[x] = x; mk[k] = k;
  }
  pub readonly fn gu() -> u64 { return fu; }
  pub readonly fn gi() -> i64 { return fi; }
  pub readonly fn gw() -> u128 { return fw; }
  pub readonly fn gb() -> bool { return fb; }
  pub readonly fn gs() -> string { return fs; }
  pub readonly fn gx() -> bytes { return fx; }
  pub readonly fn gk() -> key { return fk; }
  pub readonly fn hu(u: u64) -> u64 { return mu[u]; }
  pub readonly fn hi(i: i64) -> i64 { return mi[i]; }
  pub readonly fn hw(w: u128) -> u128 { return mw[w]; }
}`;

const ID = 'c0' + '00'.repeat(30) + '07';
const CONTEXT = {
  height: 812_345,
  txid: 'ab'.repeat(32),
  caller: 'cd'.repeat(32),
  call_id: '1',
  inputs: [{ txid: '01'.repeat(32), vout: 0 }],
  outputs: [{ value: '1000', script: '6a' }],
};

/** One value set: each integer with a different byte in every position. */
interface ValueSet { name: string; u: bigint; i: bigint; w: bigint; b: boolean; s: string; x: string; k: string }

const SETS: ValueSet[] = [
  // Below 2^53: the VM's number path (the top bytes zero, every other byte distinct).
  { name: 'small', u: 0x001f2e3d4c5b6a79n, i: 0x001e2d3c4b5a6978n, w: 0x001d2c3b4a596877n, b: true, s: 'a', x: '01', k: '0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20' },
  // Above 2^53 (and a negative i64): the bigint path; a u128 with all 16 bytes distinct; two-byte UTF-8.
  // Below 2^53 again, every byte under the top two with its high bit set (and a negative i64
  // the VM holds as a number): a byte read as signed, or a word shifted arithmetically, shows.
  { name: 'high-bits', u: 0x0019f8e9dacbbcadn, i: -0x0017e6d5c4b3a291n, w: 0x0016f5e4d3c2b1a0n, b: true, s: '\u20ac\u{1f600}', x: '80ff7f', k: 'ff'.repeat(31) + '80' },
  { name: 'large', u: 0xf1e2d3c4b5a69788n, i: -0x0102030405060708n, w: 0x0102030405060708090a0b0c0d0e0f10n, b: false, s: 'h\u00e9llo', x: 'a1b2c3d4e5', k: 'f0e0d0c0b0a090807060504030201000ffeeddccbbaa99887766554433221100' },
];

export function executionValueCases(): CaseInput[] {
  const r = compileSource(VALUES_SRC, 'values.svc');
  if (!r.ok) throw new Error(`execution: values.svc does not compile: ${r.errors.map((e) => e.message).join('; ')}`);
  const { metadata: _m, ...artifact } = r.artifact;
  const core = artifact as ArtifactCore;
  const entry = (field: string, mapKey: Value | null, value: Value): [string, string] => [hex(fieldKey(core.abi as never, field, mapKey)), hex(encodeStorageValue(value))];
  const call = (id: string, pins: string, storage: [string, string][], fn: string, args: { type: string; value: string | boolean }[]): CaseInput => ({
    id, pins, input: { contracts: [{ contract_id: ID, artifact: core, storage }], call: { contract_id: ID, function: fn, args }, context: CONTEXT },
  });
  const cases: CaseInput[] = [];
  for (const v of SETS) {
    const u: Value = { type: 'u64', value: v.u };
    const i: Value = { type: 'i64', value: v.i };
    const w: Value = { type: 'u128', value: v.w };
    const storage = [
      entry('fu', null, u), entry('fi', null, i), entry('fw', null, w),
      entry('fb', null, { type: 'bool', value: v.b }), entry('fs', null, { type: 'string', value: v.s }),
      entry('fx', null, { type: 'bytes', value: Buffer.from(v.x, 'hex') }), entry('fk', null, { type: 'key', value: Buffer.from(v.k, 'hex') }),
      entry('mu', u, u), entry('mi', i, i), entry('mw', w, w),
    ];
    const args = [
      { type: 'u64', value: String(v.u) }, { type: 'i64', value: String(v.i) }, { type: 'u128', value: String(v.w) }, { type: 'bool', value: v.b },
      { type: 'string', value: v.s }, { type: 'bytes', value: v.x }, { type: 'key', value: v.k },
    ];
    cases.push(call(`values-${v.name}-write`, `storage bytes of a field and a map entry (key and value) of every type, ${v.name} values: integers big-endian, bool one byte, string UTF-8, bytes and key as they are`, [], 'put', args));
    for (const [fn, type] of [['gu', 'u64'], ['gi', 'i64'], ['gw', 'u128'], ['gb', 'bool'], ['gs', 'string'], ['gx', 'bytes'], ['gk', 'key']] as const) {
      cases.push(call(`values-${v.name}-read-${type}`, `a ${type} field is read back from its storage bytes (${v.name} value)`, storage, fn, []));
    }
    cases.push(
      call(`values-${v.name}-read-map-u64`, `a map<u64, u64> entry is found by its key's bytes and read back (${v.name} value)`, storage, 'hu', [args[0]!]),
      call(`values-${v.name}-read-map-i64`, `a map<i64, i64> entry is found by its key's bytes and read back (${v.name} value)`, storage, 'hi', [args[1]!]),
      call(`values-${v.name}-read-map-u128`, `a map<u128, u128> entry is found by its key's bytes and read back (${v.name} value)`, storage, 'hw', [args[2]!]),
    );
  }
  return cases;
}

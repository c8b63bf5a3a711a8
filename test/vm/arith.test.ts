/** Exactness of the number/bigint integer representation at every boundary, against a BigInt model. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '@svc-node/protocol/value';
import { encodeStorageValue, decodeStorageValue, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import { MemHost, call, compile, hex, id, serialize } from '../helpers/vm.js';

type T = 'u64' | 'i64' | 'u128';
const RANGE: Record<T, [bigint, bigint]> = {
  u64: [0n, (1n << 64n) - 1n],
  i64: [-(1n << 63n), (1n << 63n) - 1n],
  u128: [0n, (1n << 128n) - 1n],
};
const OPS = { add: '+', sub: '-', mul: '*', div: '/', mod: '%' } as const;

let src = 'contract Arith {\n field s64: u64; field si64: i64; field s128: u128;\n';
for (const t of ['u64', 'i64', 'u128'] as T[]) {
  for (const [n, o] of Object.entries(OPS)) src += ` pub readonly fn ${n}_${t}(a: ${t}, b: ${t}) -> ${t} { return a ${o} b; }\n`;
  src += ` pub readonly fn lt_${t}(a: ${t}, b: ${t}) -> bool { return a < b; }\n`;
  src += ` pub readonly fn eq_${t}(a: ${t}, b: ${t}) -> bool { return a == b; }\n`;
  for (const u of ['u64', 'i64', 'u128'] as T[]) src += ` pub readonly fn cast_${t}_${u}(a: ${t}) -> ${u} { return a as ${u}; }\n`;
}
src += ' pub readonly fn neg(a: i64) -> i64 { return -a; }\n';
src += ' pub fn put(a: u64, b: i64, c: u128) { s64 = a; si64 = b; s128 = c; }\n';
src += ' pub readonly fn get64() -> u64 { return s64; }\n pub readonly fn geti() -> i64 { return si64; }\n pub readonly fn get128() -> u128 { return s128; }\n}';

const host = new MemHost();
const art = compile(src);
const C = host.deploy(id(1), art);

const P53 = 1n << 53n;
const EDGES: Record<T, bigint[]> = {
  u64: [0n, 1n, 2n, 3n, P53 - 2n, P53 - 1n, P53, P53 + 1n, (1n << 32n) - 1n, 1n << 32n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 2n, (1n << 64n) - 1n],
  i64: [0n, 1n, -1n, 2n, -2n, P53 - 1n, -(P53 - 1n), P53, -P53, P53 + 1n, -(P53 + 1n), 3037000499n, -3037000500n, (1n << 63n) - 1n, -(1n << 63n), -(1n << 63n) + 1n],
  u128: [0n, 1n, 2n, P53 - 1n, P53, P53 + 1n, (1n << 64n) - 1n, 1n << 64n, (1n << 127n), (1n << 128n) - 2n, (1n << 128n) - 1n, (1n << 64n) + 1n],
};

function model(op: string, t: T, a: bigint, b: bigint): bigint | 'arithmetic_overflow' | 'division_by_zero' {
  let r: bigint;
  switch (op) {
    case 'add': r = a + b; break;
    case 'sub': r = a - b; break;
    case 'mul': r = a * b; break;
    case 'div': if (b === 0n) return 'division_by_zero'; r = a / b; break;
    default: if (b === 0n) return 'division_by_zero'; r = a % b; break;
  }
  const [lo, hi] = RANGE[t];
  return r < lo || r > hi ? 'arithmetic_overflow' : r;
}

function run(fn: string, args: Value[]): bigint | boolean | string {
  const r = call(host, C, fn, args);
  if (r.status === 'failed') return r.code;
  return r.result!.value as bigint | boolean;
}

test('arithmetic at every boundary matches the BigInt model (2^53±1, u64 max, i64 min/max, u128 max)', () => {
  let n = 0;
  for (const t of ['u64', 'i64', 'u128'] as T[]) {
    for (const a of EDGES[t]) {
      for (const b of EDGES[t]) {
        const args: Value[] = [{ type: t, value: a }, { type: t, value: b }];
        for (const op of Object.keys(OPS)) {
          const want = model(op, t, a, b);
          assert.equal(run(`${op}_${t}`, args), want, `${a} ${op} ${b} : ${t}`);
          n++;
        }
        assert.equal(run(`lt_${t}`, args), a < b);
        assert.equal(run(`eq_${t}`, args), a === b);
      }
      for (const u of ['u64', 'i64', 'u128'] as T[]) {
        const [lo, hi] = RANGE[u];
        assert.equal(run(`cast_${t}_${u}`, [{ type: t, value: a }]), a < lo || a > hi ? 'arithmetic_overflow' : a, `${a} as ${u}`);
      }
    }
  }
  assert.ok(n > 1500);
  for (const a of EDGES.i64) assert.equal(run('neg', [{ type: 'i64', value: a }]), a === RANGE.i64[0] ? 'arithmetic_overflow' : -a);
});

test('overflow by exactly one', () => {
  assert.equal(run('add_u64', [{ type: 'u64', value: (1n << 64n) - 1n }, { type: 'u64', value: 1n }]), 'arithmetic_overflow');
  assert.equal(run('add_u64', [{ type: 'u64', value: (1n << 64n) - 2n }, { type: 'u64', value: 1n }]), (1n << 64n) - 1n);
  assert.equal(run('sub_u64', [{ type: 'u64', value: 0n }, { type: 'u64', value: 1n }]), 'arithmetic_overflow');
  assert.equal(run('add_i64', [{ type: 'i64', value: (1n << 63n) - 1n }, { type: 'i64', value: 1n }]), 'arithmetic_overflow');
  assert.equal(run('sub_i64', [{ type: 'i64', value: -(1n << 63n) }, { type: 'i64', value: 1n }]), 'arithmetic_overflow');
  assert.equal(run('div_i64', [{ type: 'i64', value: -(1n << 63n) }, { type: 'i64', value: -1n }]), 'arithmetic_overflow');
  assert.equal(run('add_u128', [{ type: 'u128', value: (1n << 128n) - 1n }, { type: 'u128', value: 1n }]), 'arithmetic_overflow');
  assert.equal(run('mul_u64', [{ type: 'u64', value: 1n << 32n }, { type: 'u64', value: 1n << 32n }]), 'arithmetic_overflow');
  assert.equal(run('mul_u64', [{ type: 'u64', value: (1n << 32n) - 1n }, { type: 'u64', value: (1n << 32n) + 1n }]), (1n << 64n) - 1n);
  assert.equal(run('div_u64', [{ type: 'u64', value: 5n }, { type: 'u64', value: 0n }]), 'division_by_zero');
  assert.equal(run('mod_u128', [{ type: 'u128', value: 5n }, { type: 'u128', value: 0n }]), 'division_by_zero');
  assert.equal(run('div_i64', [{ type: 'i64', value: -7n }, { type: 'i64', value: 2n }]), -3n); // truncation toward zero
  assert.equal(run('mod_i64', [{ type: 'i64', value: -7n }, { type: 'i64', value: 2n }]), -1n);
});

test('random operands (fast-check) match the model in all three types', () => {
  for (const t of ['u64', 'i64', 'u128'] as T[]) {
    const [lo, hi] = RANGE[t];
    const arb = fc.oneof(fc.bigInt({ min: lo, max: hi }), fc.bigInt({ min: lo > -P53 * 2n ? lo : -P53 * 2n, max: P53 * 2n }).filter((x) => x >= lo && x <= hi), fc.constantFrom(...EDGES[t]));
    fc.assert(
      fc.property(arb, arb, fc.constantFrom(...Object.keys(OPS)), (a, b, op) => {
        assert.equal(run(`${op}_${t}`, [{ type: t, value: a }, { type: t, value: b }]), model(op, t, a, b));
      }),
      { numRuns: 400, seed: 42 },
    );
  }
});

test('boundary values round-trip through storage with the canonical encoding', () => {
  for (let i = 0; i < EDGES.u64.length; i++) {
    const a = EDGES.u64[i]!, b = EDGES.i64[i % EDGES.i64.length]!, c = EDGES.u128[i % EDGES.u128.length]!;
    const r = call(host, C, 'put', [{ type: 'u64', value: a }, { type: 'i64', value: b }, { type: 'u128', value: c }]);
    assert.equal(r.status, 'executed', serialize(r));
    assert.equal(run('get64', []), a);
    assert.equal(run('geti', []), b);
    assert.equal(run('get128', []), c);
    const stored = host.storageGet(C, fieldKey(art.abi, 's128', null));
    if (c === 0n) assert.equal(stored, undefined, 'default value is stored as absent');
    else {
      assert.equal(hex(stored!), hex(encodeStorageValue({ type: 'u128', value: c })));
      assert.deepEqual(decodeStorageValue('u128', stored!), { type: 'u128', value: c });
    }
  }
});

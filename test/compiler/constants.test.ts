/**
 * Module-level constants (`const NAME: TYPE = EXPR;`, src/compiler/fold.ts): folded at
 * compile time with the VM's checked arithmetic, each use emitting exactly what the literal
 * would (so replacing literals by constants leaves the artifact byte-identical), and every
 * mistake a positioned error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSource } from '../../src/compiler/index.js';
import { MemHost, call, compile, id, u64, i64, u128, key, bytes, str } from '../helpers/vm.js';

function errorsOf(src: string): string[] {
  const r = compileSource(src, 'e.svc');
  assert.equal(r.ok, false, 'expected a compile error');
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col}: ${e.message}`);
}
const core = (src: string): string => {
  const { metadata: _m, ...rest } = compile(src);
  return JSON.stringify(rest);
};

const K = '0x' + 'ab'.repeat(32);

test('a constant compiles to what its literal compiles to: the same artifact, byte for byte', () => {
  const literal = `contract C {
    field owner: key;
    field total: u128;
    pub fn f(x: u64, k: key) -> u128 {
      require(k != ${K}, "reserved key");
      require(owner == 0x${'00'.repeat(32)}, "already owned");
      owner = ${K};
      let s: u64 = 0;
      for i in 0..64 { if i >= x { break; } s = s + 3; }
      for j in 2..10 { s += j; }
      let neg = -5;
      let t = "tag";
      let b = 0x0102;
      require(neg < 0 && t != "" && len(b) == 2 && true, "never");
      total = 340282366920938463463374607431768211455 - 1 - s as u128;
      return total;
    }
  }`;
  const constants = `const OWNER: key = ${K};
  const LIMIT: u64 = 64;
  contract C {
    const NOBODY: key = 0x${'00'.repeat(32)};
    const FROM: u64 = 2;
    const TO: u64 = 10;
    const NEG: i64 = -5;
    const TAG: string = "tag";
    const B: bytes = 0x0102;
    const YES: bool = true;
    const MAX: u128 = 340282366920938463463374607431768211455;
    field owner: key;
    field total: u128;
    pub fn f(x: u64, k: key) -> u128 {
      require(k != OWNER, "reserved key");
      require(owner == NOBODY, "already owned");
      owner = OWNER;
      let s: u64 = 0;
      for i in 0..LIMIT { if i >= x { break; } s = s + 3; }
      for j in FROM..TO { s += j; }
      let neg = NEG;
      let t = TAG;
      let b = B;
      require(neg < 0 && t != "" && len(b) == 2 && YES, "never");
      total = MAX - 1 - s as u128;
      return total;
    }
  }
  const AFTER: u64 = 1;`;
  assert.equal(core(constants), core(literal));
});

test('constants are folded at compile time, from literals and earlier constants', () => {
  const host = new MemHost();
  const C = host.deploy(id(1), compile(`
    const BASE: u64 = 1_000;
    const DOUBLE: u64 = BASE * 2 + 1;
    const BIG: u128 = (DOUBLE as u128) * 1_000_000_000_000_000_000u128;
    const HALF: i64 = -7 / 2;
    const REM: i64 = -7 % 2;
    const SMALL: bool = DOUBLE < 5_000 && !(HALF == -4);
    const ID: key = 0x${'cd'.repeat(32)};
    const SAME: bool = ID == 0x${'cd'.repeat(32)};
    contract C {
      pub readonly fn a() -> u64 { return DOUBLE; }
      pub readonly fn b() -> u128 { return BIG; }
      pub readonly fn c() -> i64 { return HALF * 10 + REM; }
      pub readonly fn d() -> bool { return SMALL && SAME; }
      pub readonly fn e() -> key { return ID; }
    }`));
  const result = (fn: string) => {
    const r = call(host, C, fn, []);
    assert.equal(r.status, 'executed');
    return r.status === 'executed' ? r.result : null;
  };
  assert.deepEqual(result('a'), u64(2001));
  assert.deepEqual(result('b'), u128(2001n * 10n ** 18n));
  assert.deepEqual(result('c'), i64(-31)); // -3 * 10 + -1: truncation toward zero, remainder takes the dividend's sign
  assert.deepEqual(result('d'), { type: 'bool', value: true });
  assert.deepEqual(result('e'), key(new Uint8Array(32).fill(0xcd)));
});

test('folding agrees with the VM: the same expression as a constant and computed at run time', () => {
  const RANGES = { u64: [0n, (1n << 64n) - 1n], i64: [-(1n << 63n) + 1n, (1n << 63n) - 1n], u128: [0n, (1n << 128n) - 1n] } as const;
  // operands at the edges, near zero and anywhere, so overflows and divisions by zero happen
  const operand = fc.oneof(fc.constantFrom(0n, 1n, 2n, -1n, -2n, 1n << 63n, 1n << 64n, 1n << 127n, 1n << 128n), fc.bigInt({ min: -(1n << 130n), max: 1n << 130n }), fc.bigInt({ min: -5n, max: 5n }));
  fc.assert(
    fc.property(fc.constantFrom('u64', 'i64', 'u128'), fc.constantFrom('+', '-', '*', '/', '%'), fc.integer({ min: 0, max: 2 }), operand, operand, (t, op, shape, x, y) => {
      const [lo, hi] = RANGES[t];
      const fit = (v: bigint): bigint => lo + (((v - lo) % (hi - lo + 1n)) + (hi - lo + 1n)) % (hi - lo + 1n);
      const lit = (v: bigint): string => (v < 0n ? `(-${-v}${t})` : `${v}${t}`);
      const [a, b] = [fit(x), fit(y)];
      const expr = shape === 0 ? `${lit(a)} ${op} ${lit(b)}` : shape === 1 ? `${lit(a)} ${op} ${lit(b)} ${op} ${lit(1n)}` : `(${lit(a)} ${op} ${lit(b)}) as u128`;
      const rt = shape === 2 ? 'u128' : t;
      const folded = compileSource(`const X: ${rt} = ${expr}; contract C { pub readonly fn f() -> ${rt} { return X; } }`, 'c.svc');
      const host = new MemHost();
      const r = call(host, host.deploy(id(2), compile(`contract C { pub readonly fn f() -> ${rt} { return ${expr}; } }`)), 'f', []);
      if (r.status === 'failed') {
        assert.ok(['arithmetic_overflow', 'division_by_zero'].includes(r.code), r.code);
        assert.equal(folded.ok, false, `${expr}: the VM fails with ${r.code}, the constant folded`);
        return;
      }
      assert.ok(folded.ok, `${expr}: the VM gives ${String(r.result?.value)}, the constant fails: ${folded.ok ? '' : folded.errors[0]!.message}`);
      const h2 = new MemHost();
      const c = call(h2, h2.deploy(id(3), folded.artifact), 'f', []);
      assert.deepEqual(c.status === 'executed' && c.result, r.result, expr);
    }),
    { numRuns: 400 },
  );
});

test('folding agrees with the VM on every edge: overflow, division by zero, signed min / -1, negation, casts', () => {
  const MIN = '(-9223372036854775807i64 - 1i64)';
  const edges: [string, string][] = [
    ['u64', '18446744073709551615u64 + 1u64'], ['u64', '0u64 - 1u64'], ['u64', '4294967296u64 * 4294967296u64'],
    ['u64', '4294967295u64 * 4294967297u64'], ['u64', '1u64 / 0u64'], ['u64', '1u64 % 0u64'], ['u64', '18446744073709551615u64 / 18446744073709551615u64'],
    ['i64', '9223372036854775807i64 + 1i64'], ['i64', `${MIN} - 1i64`], ['i64', `${MIN} / -1i64`], ['i64', `${MIN} % -1i64`],
    ['i64', `${MIN} * -1i64`], ['i64', `-${MIN}`], ['i64', `${MIN} / 1i64`], ['i64', '-7i64 / 2i64'], ['i64', '-7i64 % 2i64'],
    ['i64', '7i64 % -2i64'], ['i64', '-7i64 / -2i64'], ['i64', '0i64 / -5i64'], ['i64', '5i64 % 0i64'], ['i64', '-5i64 / 0i64'],
    ['i64', '-(0i64 - 9007199254740992i64)'],
    ['u128', '340282366920938463463374607431768211455u128 + 1u128'], ['u128', '0u128 - 1u128'],
    ['u128', '18446744073709551616u128 * 18446744073709551616u128'], ['u128', '1u128 % 0u128'], ['u128', '340282366920938463463374607431768211455u128 / 2u128'],
    ['u64', '(0i64 - 1i64) as u64'], ['i64', '9223372036854775808u64 as i64'], ['u64', '18446744073709551616u128 as u64'], ['i64', `${MIN} as i64`],
  ];
  const codeOf = (message: string): string => (message.includes('division by zero') ? 'division_by_zero' : message.includes('out of range') ? 'arithmetic_overflow' : message);
  for (const [t, expr] of edges) {
    const folded = compileSource(`const X: ${t} = ${expr}; contract C { pub readonly fn f() -> ${t} { return X; } }`, 'c.svc');
    const host = new MemHost();
    const run = call(host, host.deploy(id(2), compile(`contract C { pub readonly fn f() -> ${t} { return ${expr}; } }`)), 'f', []);
    if (!folded.ok) {
      assert.equal(run.status, 'failed', `${expr}: the constant fails (${folded.errors[0]!.message}), the VM gives ${run.status === 'executed' ? String(run.result?.value) : ''}`);
      assert.equal(run.status === 'failed' && run.code, codeOf(folded.errors[0]!.message), expr);
      continue;
    }
    const h2 = new MemHost();
    const c = call(h2, h2.deploy(id(3), folded.artifact), 'f', []);
    assert.equal(run.status, 'executed', `${expr}: the constant folds, the VM fails with ${run.status === 'failed' ? run.code : ''}`);
    assert.deepEqual(c.status === 'executed' && c.result, run.result, expr);
  }
});

test('every mistake in a constant is a positioned error', () => {
  const cases: [string, string][] = [
    ['const A: u64 = 18446744073709551615 + 1;\ncontract C { pub fn f() { } }', "1:37: '+' gives 18446744073709551616, out of range for u64"],
    ['const A: u64 = 5 / 0;\ncontract C { pub fn f() { } }', '1:18: division by zero in a constant'],
    ['const A: u64 = (-1i64) as u64;\ncontract C { pub fn f() { } }', '1:24: cast to u64 of -1, out of range for u64'],
    ['const A: u64 = (-1) as u64;\ncontract C { pub fn f() { } }', '1:17: negative literal for unsigned type u64'],
    ['const A: u64 = -1 as u64;\ncontract C { pub fn f() { } }', "1:16: unary '-' needs an i64, found u64"],
    ['const A: i64 = -9223372036854775808 / -1;\ncontract C { pub fn f() { } }', "1:37: '/' gives 9223372036854775808, out of range for i64"],
    ['const A: u64 = 300u128;\ncontract C { pub fn f() { } }', "1:16: constant 'A' is declared u64, its value is u128"],
    ['const A: key = 0x01;\ncontract C { pub fn f() { } }', '1:16: a key literal needs 32 bytes, this one has 1'],
    ['const A: u64 = B;\nconst B: u64 = 1;\ncontract C { pub fn f() { } }', "1:16: constant 'B' is used before its declaration"],
    ['contract C { field f: u64; const A: u64 = f + 1; pub fn g() { } }', "1:43: 'f' is a field: a constant's value must be known at compile time (literals, other constants, operators, casts)"],
    ['contract C { const A: u64 = height(); pub fn g() { } }', "1:29: a constant's value must be known at compile time: a call runs only in a call (use literals, other constants, operators, casts)"],
    ['contract C { const A: u64 = nope; pub fn g() { } }', "1:29: unknown name 'nope'"],
    ['contract C { const A: bool = 1 < 2 < 3; pub fn g() { } }', '1:36: comparisons cannot be chained: write a < b && b < c'],
    ['contract C { field A: u64; const A: u64 = 1; pub fn g() { } }', "1:34: 'A' is already declared as a field"],
    ['contract C { const A: u64 = 1; pub fn g() { A = 2; } }', "1:45: cannot assign to constant 'A'"],
    ['contract C { const A: u64 = 1; pub fn g() { A += 2; } }', "1:45: cannot assign to constant 'A'"],
    ['contract C { const A: u64 = 1; pub fn g(A: u64) { } }', "1:41: 'A' shadows a constant"],
    ['contract C { const A: u64 = 1; pub fn g() { let A = 2; } }', "1:49: 'A' shadows a constant"],
    ['contract C { const A: u64 = 1; pub fn g() -> u64 { return A[1]; } }', "1:59: 'A' is a constant, not a map"],
    ['contract C { const N: i64 = 3; pub fn g() { for i in 0..N { } } }', "1:57: loop bound 'N' is a constant of type i64; bounds are u64"],
    ['contract C { const A: u64 = 1; pub fn g() -> u128 { return A; } }', '1:60: return value: expected u128, found u64'],
    ['contract C { pub fn g() { } } contract D { }', '1:31: only one contract per file'],
    ['contract C { pub fn g() { } } field x: u64;', "1:31: expected 'const' or the end of the file after the contract, found 'field'"],
  ];
  for (const [src, want] of cases) assert.ok(errorsOf(src).includes(want), `${src}\n  expected ${want}\n  got ${JSON.stringify(errorsOf(src))}`);
});

test('a constant with a bad value reports once: its uses are not errors of their own', () => {
  const errs = errorsOf('const A: u64 = 1 / 0;\ncontract C { pub fn g() -> u64 { return A + A; } }');
  assert.deepEqual(errs, ['1:18: division by zero in a constant']);
});

test('constants of every type reach the VM as their values', () => {
  const host = new MemHost();
  const C = host.deploy(id(4), compile(`const S: string = "hi"; const B: bytes = 0xbeef; contract C {
    pub readonly fn s() -> string { return S; }
    pub readonly fn b() -> bytes { return concat(B, 0x00); }
  }`));
  const s = call(host, C, 's', []);
  const b = call(host, C, 'b', []);
  assert.deepEqual(s.status === 'executed' && s.result, str('hi'));
  assert.deepEqual(b.status === 'executed' && b.result, bytes(Uint8Array.of(0xbe, 0xef, 0)));
});

/** Every VM limit exactly at the limit (passes) and one past it (fails with its code). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import type { ExecResult } from '@svc-node/protocol/vm/types';
import { MemHost, bytes, call, compile, id, key, serialize, u64 } from '../helpers/vm.js';

const SRC = `
contract Limits {
  field data: map<u64, bytes>;
  pub fn burn(n1: u64, n2: u64) {
    for i in 0..100000 { if i >= n1 { break; } }
    for j in 0..100000 { if j >= n2 { break; } let x = j + 1; }
  }
  pub fn nested(n1: u64, other: key, m1: u64, m2: u64) {
    burn(n1, 0);
    call(other, "burn", m1, m2);
  }
  pub fn dive(n: u64) -> u64 {
    if n == 0 { return 0; }
    return call<u64>(self_id(), "dive", n - 1) + 1;
  }
  pub fn put(k: u64, v: bytes) { data[k] = v; }
}`;

function setup(): { host: MemHost; L: Uint8Array; M: Uint8Array } {
  const host = new MemHost();
  const a = compile(SRC);
  return { host, L: host.deploy(id(1), a), M: host.deploy(id(2), a) };
}
const ins = (r: ExecResult): number => r.instructions;
const failed = (r: ExecResult, code: string): void => {
  assert.equal(r.status, 'failed', serialize(r));
  assert.equal(r.status === 'failed' && r.code, code, serialize(r));
};

/** Find x, y >= 0 with base + x*kx + y*ky === target. */
function solve(base: number, kx: number, ky: number, target: number): [number, number] {
  for (let y = 0; y <= kx; y++) {
    const rest = target - base - y * ky;
    if (rest >= 0 && rest % kx === 0) return [rest / kx, y];
  }
  throw new Error('no solution');
}

test('instruction budget: exactly 100,000 passes, 100,001 fails', () => {
  const { host, L } = setup();
  const cost = (a: number, b: number): number => {
    const r = call(host, L, 'burn', [u64(a), u64(b)]);
    assert.equal(r.status, 'executed');
    return ins(r);
  };
  const base = cost(0, 0), k1 = cost(1, 0) - base, k2 = cost(0, 1) - base;
  assert.equal(cost(7, 3), base + 7 * k1 + 3 * k2, 'cost is linear');
  const [a, b] = solve(base, k1, k2, LIMITS.instructions);
  const ok = call(host, L, 'burn', [u64(a), u64(b)]);
  assert.equal(ok.status, 'executed');
  assert.equal(ins(ok), 100_000);
  const [c, d] = solve(base, k1, k2, LIMITS.instructions + 1);
  const bad = call(host, L, 'burn', [u64(c), u64(d)]);
  failed(bad, 'out_of_instructions');
  assert.equal(ins(bad), 100_000);
});

test('instruction budget is shared by nested cross-contract frames', () => {
  const { host, L, M } = setup();
  const cost = (m1: number, m2: number): number => ins(call(host, L, 'nested', [u64(5000), key(M), u64(m1), u64(m2)]));
  const base = cost(0, 0), k1 = cost(1, 0) - base, k2 = cost(0, 1) - base;
  const [a, b] = solve(base, k1, k2, LIMITS.instructions);
  assert.ok(a > 1000, 'the callee does a large share of the work');
  const ok = call(host, L, 'nested', [u64(5000), key(M), u64(a), u64(b)]);
  assert.equal(ok.status, 'executed', serialize(ok));
  assert.equal(ins(ok), 100_000);
  const [c, d] = solve(base, k1, k2, LIMITS.instructions + 1);
  failed(call(host, L, 'nested', [u64(5000), key(M), u64(c), u64(d)]), 'out_of_instructions');
  // each frame alone is well within the budget
  assert.equal(call(host, M, 'burn', [u64(c), u64(d)]).status, 'executed');
});

test('call depth: 64 frames pass, 65 fail (entry is depth 1; cross-contract calls add one)', () => {
  const { host, L } = setup();
  const ok = call(host, L, 'dive', [u64(63)]);
  assert.equal(ok.status, 'executed', serialize(ok));
  assert.deepEqual(ok.status === 'executed' && ok.result, u64(63));
  failed(call(host, L, 'dive', [u64(64)]), 'call_depth_exceeded');
});

test('call depth counts internal calls too', () => {
  // a chain of 63 internal helpers under the entry = depth 64
  const mk = (n: number): string => {
    let s = 'contract Chain {\n pub fn go() -> u64 { return h1(); }\n';
    for (let i = 1; i < n; i++) s += ` fn h${i}() -> u64 { return h${i + 1}() + 1; }\n`;
    s += ` fn h${n}() -> u64 { return 1; }\n`;
    s += ' pub fn deeper() -> u64 { return call<u64>(self_id(), "go") + 0; }\n}';
    return s;
  };
  const host = new MemHost();
  const A = host.deploy(id(1), compile(mk(63)));
  const r = call(host, A, 'go', []);
  assert.equal(r.status, 'executed', serialize(r));
  assert.deepEqual(r.status === 'executed' && r.result, u64(63));
  failed(call(host, A, 'deeper', []), 'call_depth_exceeded');
});

test('value stack: 1,024 slots pass, 1,025 fail (locals + operands of all frames)', () => {
  // entry -> a, b, c, d (255 locals each) -> e (x locals, max operand depth 1)
  const mk = (x: number): string => {
    const lets = (n: number): string => Array.from({ length: n }, (_, i) => `let v${i} = 0;`).join(' ');
    return `contract S {
      pub fn go() { a(); }
      fn a() { ${lets(255)} b(); }
      fn b() { ${lets(255)} c(); }
      fn c() { ${lets(255)} d(); }
      fn d() { ${lets(255)} e(); }
      fn e() { ${lets(x)} }
    }`;
  };
  const host = new MemHost();
  const ok = host.deploy(id(1), compile(mk(3)));
  // 255 * 4 + 3 locals + 1 operand = 1024
  const r = call(host, ok, 'go', []);
  assert.equal(r.status, 'executed', serialize(r));
  const bad = host.deploy(id(2), compile(mk(4)));
  failed(call(host, bad, 'go', []), 'stack_overflow');
});

test('storage: 65,536 bytes after the call pass, 65,537 fail; failed calls apply nothing', () => {
  const { host, L } = setup();
  // key = "data" || 0x00 || u64 BE (13 bytes)
  const r1 = call(host, L, 'put', [u64(1), bytes(new Uint8Array(65_536 - 13 - 20 - 13))]);
  assert.equal(r1.status, 'executed');
  const r2 = call(host, L, 'put', [u64(2), bytes(new Uint8Array(20))]);
  assert.equal(r2.status, 'executed');
  assert.equal(host.storageSize(L), 65_536);
  const r3 = call(host, L, 'put', [u64(2), bytes(new Uint8Array(21))]);
  failed(r3, 'storage_limit_exceeded');
  assert.equal(host.storageSize(L), 65_536);
  // shrinking and deleting (writing the default) frees space
  assert.equal(call(host, L, 'put', [u64(2), bytes(new Uint8Array(0))]).status, 'executed');
  assert.equal(host.storageSize(L), 65_536 - 33);
  assert.equal(call(host, L, 'put', [u64(3), bytes(new Uint8Array(20))]).status, 'executed');
  failed(call(host, L, 'put', [u64(4), bytes(new Uint8Array(1))]), 'storage_limit_exceeded');
});

test('unknown function, bad arguments, unknown contract', () => {
  const { host, L } = setup();
  failed(call(host, L, 'nope', []), 'unknown_function');
  failed(call(host, L, 'burn', [u64(1)]), 'bad_arguments');
  failed(call(host, L, 'burn', [u64(1), { type: 'i64', value: 1n }]), 'bad_arguments');
  failed(call(host, L, 'burn', [u64(1), u64(1n << 64n)]), 'bad_arguments');
  failed(call(host, L, 'put', [u64(1), key(new Uint8Array(32))]), 'bad_arguments');
  failed(call(host, L, 'nested', [u64(1), key(id(99)), u64(1), u64(1)]), 'unknown_contract');
  failed(call(host, id(77), 'burn', [u64(1), u64(1)]), 'unknown_contract');
});

test('values: 65,536 bytes pass, 65,537 fail with value_too_large; loop bounds 100,000 compile, 100,001 do not', () => {
  const host = new MemHost();
  const C = host.deploy(id(5), compile(`contract V {
    pub readonly fn grow(b: bytes, extra: bytes) -> u64 { return len(concat(b, extra)); }
    pub readonly fn grows(s: string, t: string) -> u64 { return len(concat(s, t)); }
    pub readonly fn spin() -> u64 { let n: u64 = 0; for i in 0..100000 { if i == 10 { break; } n = n + 1; } return n; }
  }`));
  const r = call(host, C, 'grow', [bytes(new Uint8Array(65_000)), bytes(new Uint8Array(536))]);
  assert.equal(r.status === 'executed' && r.result?.value, 65_536n);
  failed(call(host, C, 'grow', [bytes(new Uint8Array(65_000)), bytes(new Uint8Array(537))]), 'value_too_large');
  const s = call(host, C, 'grows', [{ type: 'string', value: 'é'.repeat(32_000) }, { type: 'string', value: 'x'.repeat(1536) }]);
  assert.equal(s.status === 'executed' && s.result?.value, 65_536n);
  failed(call(host, C, 'grows', [{ type: 'string', value: 'é'.repeat(32_000) }, { type: 'string', value: 'x'.repeat(1537) }]), 'value_too_large');
  assert.equal(call(host, C, 'spin', []).status, 'executed');
  assert.throws(() => compile('contract W { pub fn f() { for i in 0..100001 { } } }'), /at most 100000/);
});

test('many storage slots in one call (overlay switches from linear search to an index)', () => {
  const src = `contract Many {
    field m: map<u64, u64>;
    pub fn fill(n: u64) -> u64 {
      for i in 0..200 { if i >= n { break; } m[i] = i * 3 + 1; }
      let s: u64 = 0;
      for i in 0..200 { if i >= n { break; } s = s + m[i]; m[i] = m[i] + 1; }
      return s;
    }
    pub readonly fn get(k: u64) -> u64 { return m[k]; }
  }`;
  const art = compile(src);
  let host = new MemHost();
  let C = id(6);
  for (const n of [5, 16, 17, 150]) {
    host = new MemHost();
    C = host.deploy(id(6), art);
    const r = call(host, C, 'fill', [u64(n)]);
    assert.equal(r.status, 'executed', serialize(r));
    let want = 0n;
    for (let i = 0n; i < BigInt(n); i++) want += i * 3n + 1n;
    assert.equal(r.status === 'executed' && r.result?.value, want);
    assert.equal(r.status === 'executed' && r.writes.length, n);
    const keys = r.status === 'executed' ? r.writes.map((w) => Buffer.from(w.key)) : [];
    assert.deepEqual(keys, [...keys].sort(Buffer.compare));
  }
  const g = call(host, C, 'get', [u64(149)]);
  assert.equal(g.status === 'executed' && g.result?.value, 149n * 3n + 2n);
});

test('map keys: 1,024 bytes pass, 1,025 fail; events: 65,536 bytes per call pass, 65,537 fail', () => {
  const host = new MemHost();
  const C = host.deploy(id(7), compile(`contract K {
    field m: map<bytes, u64>;
    field s: map<string, u64>;
    event E(b: bytes);
    pub fn put(k: bytes) { m[k] = 1; }
    pub readonly fn get(k: string) -> u64 { return s[k]; }
    pub fn emits(b: bytes, n: u64) { for i in 0..100 { if i >= n { break; } emit E(b); } }
  }`));
  assert.equal(call(host, C, 'put', [bytes(new Uint8Array(1024))]).status, 'executed');
  failed(call(host, C, 'put', [bytes(new Uint8Array(1025))]), 'value_too_large');
  assert.equal(call(host, C, 'get', [{ type: 'string', value: 'é'.repeat(512) }]).status, 'executed');
  failed(call(host, C, 'get', [{ type: 'string', value: 'é'.repeat(512) + 'x' }]), 'value_too_large');
  // event size = name (1) + bytes length
  assert.equal(call(host, C, 'emits', [bytes(new Uint8Array(65_535)), u64(1)]).status, 'executed');
  failed(call(host, C, 'emits', [bytes(new Uint8Array(65_536)), u64(1)]), 'event_limit_exceeded');
  const two = call(host, C, 'emits', [bytes(new Uint8Array(32_767)), u64(2)]);
  assert.equal(two.status === 'executed' && two.events.length, 2);
  failed(call(host, C, 'emits', [bytes(new Uint8Array(32_768)), u64(2)]), 'event_limit_exceeded');
});

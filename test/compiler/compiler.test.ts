/** Compiler: golden artifacts, determinism, code_hash, every error message, call-graph cycles, CLI. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import canonicalize from 'canonicalize';
import { compileSource, formatCompileError } from '../../src/compiler/index.js';
import { codeHash } from '@svc-node/protocol/contract';
import { taggedHash, toHex } from '@svc-node/protocol/hash';
import { repoRoot } from '../helpers/paths.js';
import { MemHost, call, compile, id, u64, i64, serialize } from '../helpers/vm.js';

const EX = ['token', 'nft', 'market', 'swap'];

test('golden artifacts of the examples are byte-identical', () => {
  for (const name of EX) {
    const src = readFileSync(join(repoRoot, 'examples', `${name}.svc`), 'utf8');
    const r = compileSource(src, `examples/${name}.svc`);
    assert.ok(r.ok);
    const golden = readFileSync(join(repoRoot, 'test', 'fixtures', 'golden', `${name}.json`), 'utf8');
    if (r.ok) assert.equal(JSON.stringify(r.artifact, null, 2) + '\n', golden, `${name} drifted from its golden artifact`);
  }
});

test('same source gives the same bytes; code_hash is TH("SVC/code", JCS(core))', () => {
  const src = readFileSync(join(repoRoot, 'examples', 'swap.svc'), 'utf8');
  const a = compileSource(src, 'a.svc'), b = compileSource(src, 'b.svc');
  assert.ok(a.ok && b.ok);
  if (!a.ok || !b.ok) return;
  assert.equal(JSON.stringify(a.artifact), JSON.stringify(b.artifact));
  const { bytecode, abi, function_offsets, function_offset_to_locals, constants } = a.artifact;
  const json = (canonicalize as unknown as (x: unknown) => string)({ bytecode, abi, function_offsets, function_offset_to_locals, constants });
  assert.equal(a.artifact.metadata.code_hash, toHex(taggedHash('SVC/code', new TextEncoder().encode(json))));
  assert.equal(toHex(codeHash(a.artifact)), a.artifact.metadata.code_hash);
  assert.deepEqual(Object.keys(a.artifact).sort(), ['abi', 'bytecode', 'constants', 'function_offset_to_locals', 'function_offsets', 'metadata']);
  assert.deepEqual(a.artifact.metadata.interfaces, []);
  const t = compileSource(readFileSync(join(repoRoot, 'examples', 'token.svc'), 'utf8'), 't.svc');
  assert.ok(t.ok && t.artifact.metadata.interfaces[0] === 'utxo_token_v1');
  for (const [k, v] of Object.entries(a.artifact.function_offset_to_locals)) { assert.match(k, /^\d+$/); assert.equal(typeof v, "number"); }
});

test('large integer constants appear as decimal strings', () => {
  const a = compile('contract C { pub fn f() -> u128 { return 340282366920938463463374607431768211455 + 0; } pub fn g() -> u64 { return 9007199254740991; } }');
  assert.deepEqual(a.constants, [{ type: 'u128', value: '340282366920938463463374607431768211455' }, { type: 'u128', value: 0 }, { type: 'u64', value: 9007199254740991 }]);
});

function errorsOf(src: string): string[] {
  const r = compileSource(src, 'e.svc');
  assert.equal(r.ok, false, 'expected a compile error');
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col}: ${e.message}`);
}
const wrap = (body: string): string => `contract C {\n field f: u64;\n field m: map<key, u128>;\n event E(a: u64);\n${body}\n}`;

test('every error message, with line and column', () => {
  const cases: [string, RegExp][] = [
    ['contract C { pub fn f() { let x = ; } }', /1:35: expected an expression, found ';'/],
    ['contract C { pub fn f() { while true { } } }', /'while' is not supported: loops need compile-time constant bounds/],
    ['contract C { pub fn f() { for i in 0..n { } } }', /1:39: loop bound 'n' is not a constant \(bounds are integer literals or u64 constants\)/],
    ['contract C { pub fn f() { for i in 0..3u64 { } } }', /1:39: loop bounds must be integer literals without suffix or u64 constants/],
    ['contract C { pub fn f() { for i in 0..100001 { } } }', /at most 100000 allowed/],
    ['contract C { pub fn f() { for i in 5..2 { } } }', /loop range must be a..b with a <= b/],
    ['contract C { pub fn f() -> u64 { } }', /may end without returning a u64/],
    ['contract C { pub fn f() { return 1; } }', /returns no value/],
    ['contract C { pub fn f() -> u64 { return; } }', /must return a u64/],
    ['contract C { pub fn f() { let x: u64 = true; } }', /cannot assign bool to 'x' of type u64/],
    ['contract C { pub fn f() { let x = 1; let x = 2; } }', /variable 'x' is already declared/],
    ['contract C { pub fn f() { y = 2; } }', /unknown variable or field 'y'/],
    ['contract C { pub fn f() -> u64 { return z; } }', /unknown name 'z'/],
    ['contract C { pub fn f() { g(); } }', /unknown function 'g'/],
    ['contract C { pub fn f() { let a: u64 = 1; let b: i64 = 2; let c = a + b; } }', /operands of '\+' have different types: u64 and i64/],
    ['contract C { pub fn f() -> u64 { return 18446744073709551616; } }', /out of range for u64/],
    ['contract C { pub fn f() -> u64 { return -1; } }', /negative literal for unsigned type u64/],
    ['contract C { pub fn f() -> bool { return "a" < "b"; } }', /'<' needs integers, found string/],
    ['contract C { pub fn f() { require(1, "x"); } }', /require condition: expected bool, found u64/],
    ['contract C { pub fn f() { require(true, 5); } }', /require needs a string literal message/],
    ['contract C { pub fn f() { emit Nope(1); } }', /unknown event 'Nope'/],
    ['contract C { pub fn f() { break; } }', /'break' outside a loop/],
    ['contract C { pub fn f() { for i in 0..3 { i = 2; } } }', /cannot assign to loop variable 'i'/],
    ['contract C { pub fn f() { return; let x = 1; } }', /unreachable statement/],
    ['contract C { pub fn f() { 1 + 2; } }', /expression statement has no effect/],
    ['contract C { pub fn f() -> bool { return 1 as bool; } }', /expected a type|cannot cast/],
    ['contract C { pub fn f() -> u64 { return "s" as u64; } }', /only integers can be cast/],
    ['contract C { pub fn f() -> key { return 0x0102; } }', /a key literal needs 32 bytes/],
    ['contract C { pub fn f() { let s = "abc; } }', /unterminated string literal/],
    ['contract C { pub fn f() { let s = "\\q"; } }', /unknown escape/],
    ['contract C { pub fn f() { let x = 1 # 2; } }', /unexpected character '#'/],
    ['contract C { pub fn f() { let x = 12abc; } }', /bad integer literal suffix/],
    ['contract C { } contract D { }', /only one contract per file|a contract needs at least one function/],
    ['contract C { }', /a contract needs at least one function/],
    ['contract C implements erc20 { pub fn f() { } }', /unknown interface 'erc20'/],
    ['contract C implements utxo_token_v1 { pub fn f() { } }', /utxo_token_v1 requires function fn init\(u128, u64\)/],
    ['contract C { field f: u64; field f: bool; pub fn g() { } }', /'f' is already declared as a field/],
    ['contract C { pub fn height() { } }', /'height' is a built-in function/],
    ['contract C { pub fn f() { let x = len(5); } }', /len needs bytes or a string, found u64/],
    ['contract C { pub fn f() { let x = outpoint(1, 2); } }', /argument 1 of outpoint: expected key, found u64/],
    ['contract C { pub fn f() { let x = concat("a", 0x01); } }', /concat needs two bytes or two strings/],
    ['contract C { pub fn f() { let x = height(1); } }', /height takes 0 argument\(s\), got 1/],
    ['contract C { pub fn f() { let x = call<u64>(1, "g"); } }', /contract id of call: expected key, found u64/],
    ['contract C { pub fn f() { let x = call(self_id(), "g"); } }', /expression has no value/],
    ['contract C { pub fn f() { let x = y; /* unterminated', /unterminated comment/],
    ['contract C { pub fn f() { let x: float = 1; } }', /expected a type \(u64, i64, u128, bool, string, bytes, key\), found 'float'/],
    [wrap('pub readonly fn r() { f = 1; }'), /readonly function 'r' cannot write field 'f'/],
    [wrap('pub readonly fn r() { emit E(1); }'), /readonly function 'r' cannot emit events/],
    [wrap('pub fn w() { } pub readonly fn r() { w(); }'), /readonly function 'r' cannot call non-readonly 'w'/],
    [wrap('pub fn w() -> u128 { return m; }'), /'m' is a map: use m\[key\]/],
    [wrap('pub fn w() { m = 1; }'), /'m' is a map: assign m\[key\]/],
    [wrap('pub fn w() -> u64 { return f[1]; }'), /'f' is not a map/],
    [wrap('pub fn w() { m[1] = 1; }'), /key of m: expected key, found u64/],
    [wrap('pub fn w() { emit E(1, 2); }'), /event E takes 1 argument\(s\), got 2/],
    [wrap('pub fn w(f: u64) { }'), /'f' shadows a field/],
    [wrap('pub fn w() -> bool { return !1; }'), /operand of '!': expected bool, found u64/],
    [wrap('pub fn w() -> u64 { let a: u64 = 1; return -a; }'), /unary '-' needs an i64, found u64/],
    [wrap('pub fn w() { let x = 1; x(); }'), /unknown function 'x'/],
    [wrap('pub fn w() { for i in 0..3 { for i in 0..3 { } } }'), /variable 'i' is already declared/],
    [wrap('pub fn w(i: u64) { for i in 1..3 { } }'), /variable 'i' is already declared/],
  ];
  for (const [src, re] of cases) {
    const errs = errorsOf(src);
    assert.ok(errs.some((e) => re.test(e)), `${src}\n  expected ${re}\n  got ${JSON.stringify(errs)}`);
  }
});

test('interface conformance errors name the mismatch', () => {
  const src = readFileSync(join(repoRoot, 'examples', 'token.svc'), 'utf8');
  const e1 = errorsOf(src.replace('pub fn transfer(to_vout: u64, amount: u128, change_vout: u64) -> u128', 'pub fn transfer(to_vout: u64, amount: u64, change_vout: u64) -> u128'));
  assert.ok(e1.some((e) => /function 'transfer' does not match utxo_token_v1: expected pub fn transfer\(u64, u128, u64\) -> u128/.test(e)), e1.join('\n'));
  const e2 = errorsOf(src.replace('event Credit(outpoint: bytes, amount: u128);', 'event Credit(outpoint: bytes, amount: u64);'));
  assert.ok(e2.some((e) => /event 'Credit' does not match utxo_token_v1/.test(e)));
  const e3 = errorsOf(src.replace('field total_supply: u128;', 'field total_supply: u64;'));
  assert.ok(e3.some((e) => /field 'total_supply' does not match utxo_token_v1: expected u128/.test(e)));
  const e4 = errorsOf(src.replace('pub readonly fn supply()', 'pub fn supply()'));
  assert.ok(e4.some((e) => /function 'supply' does not match/.test(e)));
});

test('call-graph cycles are rejected, including through helpers', () => {
  const direct = errorsOf('contract C { pub fn f() { f(); } }');
  assert.ok(direct.some((e) => /recursive call cycle: f -> f/.test(e)), direct.join('\n'));
  const indirect = errorsOf('contract C { pub fn a() { b(); }\n fn b() { c(); }\n fn c() -> u64 { a(); return 1; } }');
  assert.ok(indirect.some((e) => /3:18: recursive call cycle: a -> b -> c -> a/.test(e)), indirect.join('\n'));
  const viaExpr = errorsOf('contract C { pub fn a(x: u64) -> u64 { if x > 0 { return h(x); } return 0; }\n fn h(x: u64) -> u64 { return a(x - 1) + 1; } }');
  assert.ok(viaExpr.some((e) => /recursive call cycle: a -> h -> a/.test(e)));
  // a diamond is not a cycle
  assert.ok(compileSource('contract C { pub fn a() { b(); c(); } fn b() { d(); } fn c() { d(); } fn d() { } }', 'x').ok);
});

test('all errors of a file are reported in one run: every syntax error, else every type error', () => {
  const syntax = errorsOf('contract C {\n pub fn f() { let x = ; }\n pub fn g() -> u64 { return true }\n pub fn h() { nope(; }\n}');
  assert.equal(syntax.length, 3, syntax.join('\n'));
  assert.match(syntax[0]!, /^2:/);
  assert.match(syntax[1]!, /^3:/);
  assert.match(syntax[2]!, /^4:/);
  const types = errorsOf('contract C {\n pub fn f() { let x: bool = 1; }\n pub fn g() -> u64 { return true; }\n pub fn h() { nope(); }\n}');
  assert.equal(types.length, 3, types.join('\n'));
  assert.match(types[0]!, /^2:/);
  assert.match(types[1]!, /^3:/);
  assert.match(types[2]!, /^4:/);
});

test('a syntax error is reported once, without consequences such as an empty contract', () => {
  assert.deepEqual(errorsOf('contract C {\n pub fn f( -> u64 { return 1; }\n}'), ["2:12: expected a parameter name, found '->'"]);
  assert.deepEqual(errorsOf('contract C implements utxo_token_v1 {\n pub fn init(s: u128, v: u64 {\n }\n}').length, 1);
});

test('formatCompileError: file:line:col, the line and a caret', () => {
  const src = 'contract C {\n  pub fn f() -> u64 { return x; }\n}';
  const r = compileSource(src, 'dir/c.svc');
  assert.ok(!r.ok);
  if (!r.ok) assert.equal(formatCompileError(r.errors[0]!, src), "dir/c.svc:2:30: unknown name 'x'\n  pub fn f() -> u64 { return x; }\n                             ^");
});

test('language features run: loops with break/continue, else-if, i64, strings, bytes, helpers', () => {
  const host = new MemHost();
  const C = host.deploy(id(1), compile(`contract F {
    pub fn sum_odd(n: u64) -> u64 {
      let s: u64 = 0;
      for i in 1..50 { if i > n { break; } if i % 2 == 0 { continue; } s = s + i; }
      return s;
    }
    pub fn sign(x: i64) -> i64 { if x < 0 { return -1; } else if x == 0 { return 0; } else { return 1; } }
    pub fn greet(name: string) -> string { return concat(concat("hello, ", name), "!"); }
    pub fn size(b: bytes) -> u64 { return len(concat(b, 0xff)) * 2; }
    pub fn logic(a: bool, b: bool) -> bool { return a && !b || !a && b; }
    pub fn hash_len() -> u64 { return len(to_bytes(sha256(0x00))); }
    pub fn nested() -> u64 { let c: u64 = 0; for i in 0..10 { for j in 0..10 { if j > i { break; } c = c + 1; } } return c; }
    pub fn idle(n: u64) -> u64 { for i in 0..3 { } for i in 0..5 { for j in 0..0 { } } return n; }
  }`));
  const r = (fn: string, args: Parameters<typeof call>[3]): unknown => {
    const x = call(host, C, fn, args);
    assert.equal(x.status, 'executed', serialize(x));
    return x.status === 'executed' ? x.result?.value : undefined;
  };
  assert.equal(r('sum_odd', [u64(10)]), 25n);
  assert.equal(r('idle', [u64(7)]), 7n, 'loops whose bodies compile to no code compile (to nothing) and run');
  assert.equal(r('sign', [i64(-5)]), -1n);
  assert.equal(r('sign', [i64(0)]), 0n);
  assert.equal(r('sign', [i64(7)]), 1n);
  assert.equal(r('greet', [{ type: 'string', value: 'sätoshi' }]), 'hello, sätoshi!');
  assert.equal(r('size', [{ type: 'bytes', value: new Uint8Array(3) }]), 8n);
  assert.equal(r('logic', [{ type: 'bool', value: true }, { type: 'bool', value: false }]), true);
  assert.equal(r('logic', [{ type: 'bool', value: true }, { type: 'bool', value: true }]), false);
  assert.equal(r('hash_len', []), 32n);
  assert.equal(r('nested', []), 55n);
});

test('CLI: --json, -o, human summary, errors with exit code 1 and no stack trace', () => {
  const cli = join(repoRoot, 'dist', 'src', 'compiler', 'cli.js');
  const ex = join(repoRoot, 'examples', 'token.svc');
  const j = spawnSync(process.execPath, [cli, ex, '--json'], { encoding: 'utf8' });
  assert.equal(j.status, 0, j.stderr);
  assert.equal(JSON.parse(j.stdout).metadata.name, 'Token');
  const dir = mkdtempSync(join(tmpdir(), 'svc-'));
  try {
    const out = join(dir, 'a.json');
    const o = spawnSync(process.execPath, [cli, ex, '--json', '-o', out], { encoding: 'utf8' });
    assert.equal(o.status, 0);
    assert.equal(readFileSync(out, 'utf8'), j.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const h = spawnSync(process.execPath, [cli, ex], { encoding: 'utf8' });
  assert.equal(h.status, 0);
  assert.match(h.stdout, /code_hash {3}[0-9a-f]{64}/);
  assert.match(h.stdout, /00000 {2}FUNC/);
  const bad = join(repoRoot, 'test', 'fixtures', 'golden', 'token.json');
  const e = spawnSync(process.execPath, [cli, bad], { encoding: 'utf8' });
  assert.equal(e.status, 1);
  assert.match(e.stderr, /token\.json:1:1: expected 'contract', found '\{'\n\{\n\^/);
  assert.doesNotMatch(e.stderr, /at .*\.js:\d+/);
  const missing = spawnSync(process.execPath, [cli, '/nonexistent.svc'], { encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /cannot read/);
  assert.equal(spawnSync(process.execPath, [cli], { encoding: 'utf8' }).status, 2);
});

test('names that collide with Object.prototype keys are ordinary names', () => {
  const a = compile('contract P { field toString: u64; pub fn __proto__() -> u64 { return 1; } pub fn constructor() -> u64 { return __proto__() + toString; } }');
  assert.deepEqual(Object.keys(a.function_offsets), ['__proto__', 'constructor']);
  const host = new MemHost();
  const P = host.deploy(id(1), a);
  const r = call(host, P, 'constructor', []);
  assert.equal(r.status === 'executed' && r.result?.value, 1n);
  assert.equal(call(host, P, 'hasOwnProperty', []).status === 'failed', true);
});

/**
 * The compiler never ends in an internal error: deep nesting and oversized literals get one
 * positioned error each, long flat programs compile and run, and a fuzzer building deep and
 * wide programs from the grammar finds no crash. Also compound assignment and to_bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSource } from '../../src/compiler/index.js';
import { MAX_NESTING } from '../../src/compiler/parser.js';
import { MAX_NAME_CHARS } from '@svc-node/protocol/identifiers';
import { deployableBodyBytes } from '@svc-node/protocol/contract';
import { MAX_BODY_BYTES, postedBytes } from '@svc-node/protocol/limits';
import { buildDeploy, walletFromSecret, networkOf } from '@svc-node/client';
import { MemHost, call, compile, id, u64, i64, u128, key, hex, fromHex } from '../helpers/vm.js';

function errorsOf(src: string): string[] {
  const r = compileSource(src, 'e.svc');
  assert.equal(r.ok, false, 'expected a compile error');
  return r.ok ? [] : r.errors.map((e) => `${e.line}:${e.col}: ${e.message}`);
}
/** Column (1-based, one-line source) of the n-th occurrence (0-based) of `needle` in f's body. */
function colOf(src: string, needle: string, n: number): number {
  let at = src.indexOf('pub fn f()') + 'pub fn f() -> T'.length;
  for (let k = 0; k <= n; k++) at = src.indexOf(needle, at + 1);
  return at + 1;
}
const fn = (ret: string, body: string): string => `contract A { pub fn f() -> ${ret} { ${body} } }`;
const NEST = `nesting deeper than ${MAX_NESTING} levels`;

test('deep nesting gets one error at the first construct past the bound', () => {
  const cases: { src: string; needle: string }[] = [
    { src: fn('u64', `return ${'('.repeat(1000)}1${')'.repeat(1000)};`), needle: '(' },
    { src: fn('bool', `return ${'!'.repeat(20000)}true;`), needle: '!' },
    { src: fn('i64', `return ${'-'.repeat(5000)}1;`), needle: '-' },
    { src: fn('u64', `${'if true { '.repeat(2000)}${'} '.repeat(2000)}return 1;`), needle: '{' },
    { src: fn('u64', `return 1${' as u64'.repeat(5000)};`), needle: 'as' },
    { src: `contract A { fn g(x: u64) -> u64 { return x; } pub fn f() -> u64 { return ${'g('.repeat(600)}1${')'.repeat(600)}; } }`, needle: '(' },
  ];
  for (const { src, needle } of cases) {
    const errs = errorsOf(src);
    assert.equal(errs.length, 1, errs.slice(0, 3).join('\n'));
    assert.ok(errs[0]!.includes(NEST), errs[0]);
    // levels 1..MAX_NESTING are allowed; the function body's block is level 1 (occurrence 0 of '{')
    const first = needle === '{' ? MAX_NESTING : MAX_NESTING - 1;
    assert.equal(errs[0], `1:${colOf(src, needle, first)}: ${NEST} (split the expression or the function)`);
  }
});

test('nesting up to the bound compiles and runs', () => {
  const host = new MemHost();
  const A = host.deploy(id(1), compile(fn('u64', `return ${'('.repeat(MAX_NESTING - 1)}7${')'.repeat(MAX_NESTING - 1)};`)));
  const r = call(host, A, 'f', []);
  assert.equal(r.status, 'executed');
  if (r.status === 'executed') assert.deepEqual(r.result, u64(7));
});

test('long flat programs compile and run: 5,000-term sums, && chains, else-if chains of 1,500 arms', () => {
  const host = new MemHost();
  const sum = host.deploy(id(1), compile(fn('u64', `return ${Array(5000).fill('1').join(' + ')};`)));
  const r1 = call(host, sum, 'f', []);
  assert.ok(r1.status === 'executed' && r1.result?.value === 5000n, JSON.stringify(r1.status));
  const and = host.deploy(id(2), compile(fn('bool', `return ${Array(2000).fill('true').join(' && ')} && false;`)));
  const r2 = call(host, and, 'f', []);
  assert.ok(r2.status === 'executed' && r2.result?.value === false);
  // arms of two shapes share their constants: the chain's length, not its constant pool, is under test
  const arms = (n: number): string => Array.from({ length: n }, (_, i) => `if x == ${i % 2 === 0 ? 7 : 8} { return ${i % 2 === 0 ? 14 : 16}; }`).join(' else ');
  const elif = host.deploy(id(3), compile(`contract A { pub fn f(x: u64) -> u64 { ${arms(1500)} else { return 1; } } }`));
  const r3 = call(host, elif, 'f', [u64(8)]);
  assert.ok(r3.status === 'executed' && r3.result?.value === 16n);
  const r4 = call(host, elif, 'f', [u64(5000)]);
  assert.ok(r4.status === 'executed' && r4.result?.value === 1n);
});

test('chains too long to register get through every stage to the one registration-bound error, never a crash', () => {
  for (const src of [
    `contract A { pub fn f(x: u64) -> u64 { ${Array.from({ length: 3000 }, () => 'if x == 7 { return 14; }').join(' else ')} else { return 1; } } }`,
    fn('bool', `return ${Array(6000).fill('true').join(' && ')};`),
  ]) {
    const errs = errorsOf(src);
    assert.equal(errs.length, 1, errs.join('\n'));
    assert.match(errs[0]!, /^1:1: the registration body \(POST \/deploy_contract\) would be \d+ bytes, over the 65536 a node reads, so no node could register this contract: bytecode \d+ bytes/);
  }
});

test('literals: the largest deployable one compiles, one byte more is the registration bound at the literal; past 65,536 bytes the literal bound', () => {
  // the registration body grows by one byte per character of a string constant
  const withString = (n: number): string => fn('string', `return "${'a'.repeat(n)}";`);
  const small = compileSource(withString(1000), 'x');
  assert.ok(small.ok);
  const largest = 1000 + MAX_BODY_BYTES - deployableBodyBytes(small.artifact);
  const fits = compileSource(withString(largest), 'x');
  assert.ok(fits.ok, 'the largest string that leaves the body at 65,536 bytes compiles');
  assert.equal(deployableBodyBytes(fits.artifact), MAX_BODY_BYTES);
  const over = withString(largest + 1);
  const [e] = errorsOf(over);
  assert.ok(e!.startsWith(`1:${colOf(over, '"', 0)}: this literal takes ${largest + 3} bytes of the registration body: the registration body (POST /deploy_contract) would be 65537 bytes, over the 65536 a node reads`), e);
  // bytes count as hex, at the literal too
  const hexLit = fn('bytes', `return 0x${'ab'.repeat(40000)};`);
  assert.ok(errorsOf(hexLit)[0]!.startsWith(`1:${colOf(hexLit, '0x', 0)}: this literal takes 80002 bytes of the registration body`));
  const long = fn('string', `return "${'a'.repeat(65537)}";`);
  assert.deepEqual(errorsOf(long), [`1:${colOf(long, '"', 0)}: string literal is 65537 bytes (UTF-8), at most 65536 allowed`]);
  const wide = fn('string', `return "${'é'.repeat(40000)}";`);
  assert.deepEqual(errorsOf(wide), [`1:${colOf(wide, '"', 0)}: string literal is 80000 bytes (UTF-8), at most 65536 allowed`]);
  const hexTooLong = fn('bytes', `return 0x${'ab'.repeat(65537)};`);
  assert.deepEqual(errorsOf(hexTooLong), [`1:${colOf(hexTooLong, '0x', 0)}: hex literal is 65537 bytes, at most 65536 allowed`]);
  const intLit = fn('u128', `return ${'9'.repeat(100000)};`);
  const big = errorsOf(intLit);
  assert.equal(big.length, 1);
  assert.ok(big[0]!.startsWith(`1:${colOf(intLit, '9', 0)}: integer literal has more than 39 digits`), big[0]);
  // leading zeros do not count
  assert.ok(compileSource(fn('u64', `return ${'0'.repeat(100)}5;`), 'x').ok);
});

test('what compiles, svc can deploy: the largest artifact passes the registration check with a real anchoring transaction', () => {
  const withString = (n: number): string => fn('string', `return "${'a'.repeat(n)}";`);
  const small = compileSource(withString(1000), 'x');
  assert.ok(small.ok);
  const fits = compileSource(withString(1000 + MAX_BODY_BYTES - deployableBodyBytes(small.artifact)), 'x');
  assert.ok(fits.ok);
  const wallet = walletFromSecret(new Uint8Array(32).fill(7), 'p2wpkh', networkOf('regtest'));
  // one wallet output pays for the anchor, the usual case
  const built = buildDeploy(wallet, [{ txid: '11'.repeat(32), vout: 0, value: 100_000, status: { confirmed: true } }], fits.artifact, 2);
  assert.ok(postedBytes(built.body) <= MAX_BODY_BYTES, `posted ${postedBytes(built.body)}`);
  assert.equal(built.body.anchor_tx, built.anchor.hex);
});

test('one error per cause: 300 locals, a chained comparison, conversion hints that exist', () => {
  const locals = errorsOf(`contract A { pub fn f() { ${Array.from({ length: 300 }, (_, i) => `let v${i} = ${i};`).join(' ')} } }`);
  assert.equal(locals.length, 1, locals.join('\n'));
  assert.match(locals[0]!, /too many local variables in one function \(at most 255\)/);
  const chain = fn('bool', `return ${Array(3000).fill('1').join(' < ')};`);
  // at the second '<': the first one compares two integers
  assert.deepEqual(errorsOf(chain), [`1:${colOf(chain, '<', 1)}: comparisons cannot be chained: write a < b && b < c`]);
  const [keyInt] = errorsOf('contract A { field owner: key; pub fn f() -> bool { return owner == 5; } }');
  assert.equal(keyInt, "1:66: operands of '==' have different types: key and u64");
  const [intInt] = errorsOf('contract A { pub fn f(a: u64, b: i64) -> bool { return a == b; } }');
  assert.match(intInt!, /u64 and i64 \(use 'as' to convert\)$/);
  const [keyBytes] = errorsOf('contract A { pub fn f(a: key, b: bytes) -> bool { return a == b; } }');
  assert.match(keyBytes!, /key and bytes \(use to_bytes or to_key to convert\)$/);
});

test('compound assignment on locals, fields and map entries; the map key is evaluated once', () => {
  const host = new MemHost();
  const A = host.deploy(id(1), compile(`contract A {
    field total: u128;
    field counts: map<u64, u64>;
    field calls: u64;
    event Keyed(n: u64);
    fn next_key() -> u64 { calls += 1; emit Keyed(calls); return 7; }
    pub fn f(x: i64) -> i64 {
      let a = x;
      a += 10; a -= 3; a *= 2; a /= 4; a %= 5;
      total += 100; total *= 3; total -= 1;
      counts[next_key()] += 5;
      counts[next_key()] *= 3;
      return a;
    }
    pub readonly fn get(k: u64) -> u64 { return counts[k]; }
    pub readonly fn t() -> u128 { return total; }
    pub readonly fn n() -> u64 { return calls; }
  }`));
  const r = call(host, A, 'f', [i64(-1)]);
  assert.equal(r.status, 'executed');
  // ((((-1 + 10) - 3) * 2) / 4) % 5 = (12 / 4) % 5 = 3
  if (r.status === 'executed') {
    assert.deepEqual(r.result, i64(3));
    assert.equal(r.events.length, 2, 'the key expression runs once per statement');
  }
  const get = call(host, A, 'get', [u64(7)]);
  assert.ok(get.status === 'executed' && get.result?.value === 15n);
  const t = call(host, A, 't', []);
  assert.ok(t.status === 'executed' && t.result?.value === 299n);
  const n = call(host, A, 'n', []);
  assert.ok(n.status === 'executed' && n.result?.value === 2n);
  // checked arithmetic applies as for `x = x - y`
  const B = host.deploy(id(2), compile('contract B { field s: u64; pub fn f() { s -= 1; } }'));
  const under = call(host, B, 'f', []);
  assert.ok(under.status === 'failed' && under.code === 'arithmetic_overflow');
});

test('compound assignment errors', () => {
  const cases: [string, RegExp][] = [
    ['contract C { pub fn f() { let s = "a"; s += "b"; } }', /1:42: '\+=' needs an integer, 's' is string/],
    ['contract C { field m: map<key, u64>; pub fn f() { m += 1; } }', /'m' is a map: use m\[key\] \+= \.\.\./],
    ['contract C { field b: bool; pub fn f() { b *= true; } }', /'\*=' needs an integer, 'b' holds bool/],
    ['contract C { field s: u64; pub readonly fn f() { s += 1; } }', /readonly function 'f' cannot write field 's'/],
    ['contract C { pub fn f() { for i in 0..3 { i += 1; } } }', /cannot assign to loop variable 'i'/],
    ['contract C { pub fn f() { let a: u64 = 1; let b: i64 = 2; a += b; } }', /right of '\+=': expected u64, found i64/],
    ['contract C { pub fn f() { nope -= 1; } }', /unknown variable or field 'nope'/],
    ['contract C { pub fn f() { 1 += 1; } }', /left side of \+= must be a variable, a field or a map entry/],
  ];
  for (const [src, re] of cases) {
    const errs = errorsOf(src);
    assert.ok(errs.some((e) => re.test(e)), `${src}\n  expected ${re}\n  got ${JSON.stringify(errs)}`);
  }
});

test('to_bytes of an integer is the storage encoding: big-endian, 8 or 16 bytes, i64 two\'s complement', () => {
  const host = new MemHost();
  const A = host.deploy(id(1), compile(`contract A {
    field seen: map<bytes, bool>;
    pub readonly fn a(x: u64) -> bytes { return to_bytes(x); }
    pub readonly fn b(x: i64) -> bytes { return to_bytes(x); }
    pub readonly fn c(x: u128) -> bytes { return to_bytes(x); }
    pub readonly fn k(x: key) -> bytes { return to_bytes(x); }
    pub readonly fn lit() -> bytes { return to_bytes(258); }
    pub fn mark(owner: key, n: u64) { seen[concat(to_bytes(owner), to_bytes(n))] = true; }
    pub readonly fn marked(owner: key, n: u64) -> bool { return seen[concat(to_bytes(owner), to_bytes(n))]; }
  }`));
  const bytesOf = (fnName: string, args: Parameters<typeof call>[3]): string => {
    const r = call(host, A, fnName, args);
    assert.equal(r.status, 'executed', JSON.stringify(r));
    return r.status === 'executed' && r.result?.type === 'bytes' ? hex(r.result.value) : 'none';
  };
  assert.equal(bytesOf('a', [u64(0x0102030405060708n)]), '0102030405060708');
  assert.equal(bytesOf('a', [u64((1n << 64n) - 1n)]), 'ffffffffffffffff');
  assert.equal(bytesOf('a', [u64(0)]), '0000000000000000');
  assert.equal(bytesOf('b', [i64(-1)]), 'ffffffffffffffff');
  assert.equal(bytesOf('b', [i64(-(1n << 63n))]), '8000000000000000');
  assert.equal(bytesOf('c', [u128((1n << 127n) + 5n)]), '80000000000000000000000000000005');
  assert.equal(bytesOf('k', [key(fromHex('ab'.repeat(32)))]), 'ab'.repeat(32));
  assert.equal(bytesOf('lit', []), '0000000000000102');
  const owner = key(fromHex('11'.repeat(32)));
  assert.equal(call(host, A, 'mark', [owner, u64(3)]).status, 'executed');
  const yes = call(host, A, 'marked', [owner, u64(3)]);
  const no = call(host, A, 'marked', [owner, u64(4)]);
  assert.ok(yes.status === 'executed' && yes.result?.value === true);
  assert.ok(no.status === 'executed' && no.result?.value === false);
  assert.match(errorsOf('contract C { pub fn f() -> bytes { return to_bytes(true); } }')[0]!, /to_bytes needs a key or an integer, found bool/);
});

// ---- fuzz: programs built from the grammar, deep and wide ----

const atom = fc.constantFrom('1', 'x', 'true', '"s"', '0x01', 'height()', 'm[x]', 'total', '(1 as u128)', '-1', 'y', 'g(x)');
const binop = fc.constantFrom('+', '-', '*', '/', '%', '==', '!=', '<', '<=', '>', '>=', '&&', '||');
/** An expression: a flat chain (wide) or a wrapper around a smaller one (deep). */
const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('e'), binop, tie('e')).map(([l, o, r]) => `${l} ${o} ${r}`),
    tie('e').map((e) => `(${e})`),
    tie('e').map((e) => `!${e}`),
    tie('e').map((e) => `${e} as u64`),
    fc.tuple(fc.constantFrom('(', '!', '-', 'g('), fc.integer({ min: 1, max: 300 }), atom).map(([w, n, a]) => {
      const close = w === '(' || w === 'g(' ? ')'.repeat(n) : '';
      return `${w.repeat(n)}${a}${close}`;
    }),
    fc.tuple(atom, binop, fc.integer({ min: 1, max: 2000 })).map(([a, o, n]) => Array(n).fill(a).join(` ${o} `)),
  ),
})).e;
const stmt: fc.Arbitrary<string> = fc.letrec<{ s: string }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    expr.map((e) => `let v = ${e};`),
    expr.map((e) => `x = ${e};`),
    fc.tuple(fc.constantFrom('+=', '-=', '*=', '/=', '%='), expr).map(([o, e]) => `total ${o} ${e};`),
    expr.map((e) => `m[x] += ${e};`),
    expr.map((e) => `require(${e}, "r");`),
    expr.map((e) => `return ${e};`),
    fc.tuple(expr, tie('s'), tie('s')).map(([c, a, b]) => `if ${c} { ${a} } else { ${b} }`),
    fc.tuple(fc.integer({ min: 1, max: 300 }), tie('s')).map(([n, s]) => `${'if true { '.repeat(n)}${s}${' }'.repeat(n)}`),
    // the arms hold atoms: thousands of arms around a wide expression would only test patience
    fc.tuple(fc.integer({ min: 1, max: 2000 }), atom).map(([n, a]) => Array.from({ length: n }, (_, i) => `if x == ${i} { x = ${a}; }`).join(' else ')),
    tie('s').map((s) => `for i in 0..3 { ${s} }`),
  ),
})).s;
/** Garbage: the grammar's tokens in any order. */
const tokens = fc.array(fc.constantFrom('contract', 'A', '{', '}', '(', ')', 'fn', 'pub', 'let', 'x', '=', '+=', ';', 'if', 'else', '1', '"s"', 'as', 'u64', '!', '[', ']', ',', '->', 'for', 'in', '..', 'map', '<', '>', 'field', ':'), { maxLength: 400 });

function checkNoInternalError(src: string): void {
  const r = compileSource(src, 'fuzz.svc');
  if (r.ok) return;
  assert.ok(r.errors.length > 0);
  for (const e of r.errors) {
    assert.ok(e.line >= 1 && e.col >= 1, `unpositioned error ${JSON.stringify(e)}`);
    assert.doesNotMatch(e.message, /internal|Maximum call stack|undefined|NaN/, `${e.line}:${e.col}: ${e.message}\nin ${src.slice(0, 300)}`);
  }
}

test('fuzz: deep and wide programs from the grammar never end in an internal error', () => {
  const program = fc.array(stmt, { minLength: 1, maxLength: 4 }).map((ss) =>
    `contract A { field total: u64; field m: map<u64, u64>; fn g(a: u64) -> u64 { return a; }\n pub fn f(x: u64, y: i64) -> u64 { ${ss.join('\n')} return 0; } }`);
  fc.assert(fc.property(program, checkNoInternalError), { numRuns: 150 });
  fc.assert(fc.property(tokens, (ts) => checkNoInternalError(ts.join(' '))), { numRuns: 300 });
});

test('a declared name longer than the verifier takes gets an error at the name, not an internal error', () => {
  const long = 'n'.repeat(MAX_NAME_CHARS + 1), ok = 'n'.repeat(MAX_NAME_CHARS);
  const cases: { src: (name: string) => string; what: string }[] = [
    { src: (n) => `contract A { pub fn ${n}() -> u64 { return 1; } }`, what: 'a function name' },
    { src: (n) => `contract A { fn ${n}() -> u64 { return 1; } pub fn f() -> u64 { return ${n}(); } }`, what: 'a function name' },
    { src: (n) => `contract A { pub fn f(${n}: u64) -> u64 { return ${n}; } }`, what: 'a parameter name' },
    { src: (n) => `contract A { field ${n}: u64; pub fn f() -> u64 { return ${n}; } }`, what: 'a field name' },
    { src: (n) => `contract A { event ${n}(x: u64); pub fn f() { emit ${n}(1); } }`, what: 'an event name' },
  ];
  for (const c of cases) {
    const src = c.src(long);
    assert.deepEqual(errorsOf(src), [`1:${src.indexOf(long) + 1}: ${c.what} is longer than ${MAX_NAME_CHARS} characters`], src);
    assert.ok(compileSource(c.src(ok), 'ok.svc').ok, c.src(ok));
  }
  // Names that never reach the artifact (locals) keep the language's unbounded identifiers.
  assert.ok(compileSource(fn('u64', `let ${long} = 1; return ${long};`), 'l.svc').ok);
});

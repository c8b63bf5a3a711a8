/**
 * Execution: contracts (verified artifacts and their storage before), a call and its
 * Bitcoin context -> status, result, events, storage written, instructions used, error
 * code. Every VM limit at its value and one past it (instructions, shared by nested
 * frames; value stack; call depth; storage bytes; value size), the failure codes, the
 * context built-ins. Contracts are compiled from source by the project's compiler.
 */
import { compileSource } from '../../src/compiler/index.js';
import { execute } from '../../src/vm/execute.js';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import { MemHost } from '../../src/vm/mem-host.js';
import { encodeStorageValue, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import type { Value } from '@svc-node/protocol/value';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import type { ExecContext } from '@svc-node/protocol/vm/types';
import { hex, type Area, type CaseInput } from './kit.js';
import { fixtureArtifact } from './codec.js';

function core(source: string, name: string): ArtifactCore {
  const r = compileSource(source, name);
  if (!r.ok) throw new Error(`execution: ${name} does not compile: ${r.errors.map((e) => e.message).join('; ')}`);
  const { metadata: _m, ...c } = r.artifact;
  return c;
}

const LIMITS_SRC = `contract Limits {
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
  pub readonly fn grow(b: bytes, extra: bytes) -> u64 { return len(concat(b, extra)); }
}`;

/** Map keys at their size limit, the event-bytes limit, and calls across contracts (writes, events, caller(), readonly). */
const EDGES_SRC = `contract Edges {
  field m: map<bytes, u64>;
  field ms: map<string, u64>;
  field n: u64;
  event S(t: string);
  event N(v: u64);
  pub fn mk(k: bytes) { m[k] = 1; }
  pub fn mks(k: string) { ms[k] = 1; }
  pub fn ev(tail: string) {
    let t = "${'a'.repeat(128)}";
    for i in 0..9 { emit S(t); t = concat(t, t); }
    emit S(tail);
  }
  pub fn bumpn() -> u64 { n = n + 1; emit N(n); return n; }
  pub fn poke(other: key) -> u64 { n = n + 10; emit N(n); let r = call<u64>(other, "bumpn"); emit N(r); return r; }
  pub fn fails() { n = n + 1; emit N(n); require(false, "callee"); }
  pub fn pokefail(other: key) { n = n + 10; emit N(n); call(other, "fails"); }
  pub readonly fn who() -> key { return caller(); }
  pub readonly fn whovia(other: key) -> key { return call<key>(other, "who"); }
  pub readonly fn peek(other: key) -> u64 { return call<u64>(other, "bumpn"); }
}`;

/** One operator per function, for its edges (each at its bound and one past); each compiled alone, so a case carries a small artifact. */
const EDGE_ARITH_FNS: Record<string, string> = {
  idiv: 'pub readonly fn idiv(a: i64, b: i64) -> i64 { return a / b; }',
  imod: 'pub readonly fn imod(a: i64, b: i64) -> i64 { return a % b; }',
  ineg: 'pub readonly fn ineg(a: i64) -> i64 { return -a; }',
  imul: 'pub readonly fn imul(a: i64, b: i64) -> i64 { return a * b; }',
  isub: 'pub readonly fn isub(a: i64, b: i64) -> i64 { return a - b; }',
  umod: 'pub readonly fn umod(a: u64, b: u64) -> u64 { return a % b; }',
  umul: 'pub readonly fn umul(a: u64, b: u64) -> u64 { return a * b; }',
  wsub: 'pub readonly fn wsub(a: u128, b: u128) -> u128 { return a - b; }',
  wadd: 'pub readonly fn wadd(a: u128, b: u128) -> u128 { return a + b; }',
  wdiv: 'pub readonly fn wdiv(a: u128, b: u128) -> u128 { return a / b; }',
  i2u: 'pub readonly fn i2u(a: i64) -> u64 { return a as u64; }',
  u2i: 'pub readonly fn u2i(a: u64) -> i64 { return a as i64; }',
  w2i: 'pub readonly fn w2i(a: u128) -> i64 { return a as i64; }',
  i2w: 'pub readonly fn i2w(a: i64) -> u128 { return a as u128; }',
  ibytes: 'pub readonly fn ibytes(a: i64) -> bytes { return to_bytes(a); }',
  ilt: 'pub readonly fn ilt(a: i64, b: i64) -> bool { return a < b; }',
  wle: 'pub readonly fn wle(a: u128, b: u128) -> bool { return a <= b; }',
  beq: 'pub readonly fn beq(a: bytes, b: bytes) -> bool { return a == b; }',
  seq: 'pub readonly fn seq(a: string, b: string) -> bool { return a == b; }',
  keq: 'pub readonly fn keq(a: key, b: key) -> bool { return a != b; }',
  slen: 'pub readonly fn slen(a: string) -> u64 { return len(a); }',
  uadd: 'pub readonly fn uadd(a: u64, b: u64) -> u64 { return a + b; }',
  usub: 'pub readonly fn usub(a: u64, b: u64) -> u64 { return a - b; }',
  wmul: 'pub readonly fn wmul(a: u128, b: u128) -> u128 { return a * b; }',
  ult: 'pub readonly fn ult(a: u64, b: u64) -> bool { return a < b; }',
  ule: 'pub readonly fn ule(a: u64, b: u64) -> bool { return a <= b; }',
  ugt: 'pub readonly fn ugt(a: u64, b: u64) -> bool { return a > b; }',
  uge: 'pub readonly fn uge(a: u64, b: u64) -> bool { return a >= b; }',
  umac: 'pub readonly fn umac(a: u64, b: u64, c: u64) -> u64 { return c + a * b; }',
};

const ARITH_SRC = `contract Arith {
  pub readonly fn add(a: u64, b: u64) -> u64 { return a + b; }
  pub readonly fn sub(a: u64, b: u64) -> u64 { return a - b; }
  pub readonly fn div(a: u64, b: u64) -> u64 { return a / b; }
  pub readonly fn addi(a: i64, b: i64) -> i64 { return a + b; }
  pub readonly fn mul128(a: u128, b: u128) -> u128 { return a * b; }
}`;

const CTX_SRC = `contract Ctx {
  pub readonly fn h() -> u64 { return height(); }
  pub readonly fn t() -> key { return txid(); }
  pub readonly fn who() -> key { return caller(); }
  pub readonly fn cid() -> u64 { return call_id(); }
  pub readonly fn me() -> key { return self_id(); }
  pub readonly fn counts() -> u64 { return input_count() * 1000 + output_count(); }
  pub readonly fn inp(i: u64) -> bytes { return outpoint(input_txid(i), input_vout(i)); }
  pub readonly fn outv(i: u64) -> u64 { return output_value(i); }
  pub readonly fn outs(i: u64) -> bytes { return output_script(i); }
  pub readonly fn hash(b: bytes) -> key { return sha256(b); }
}`;

/** The opcodes no other contract here runs: u128 and i64 arithmetic, comparisons, NOT, TRUE, casts, to_bytes, to_key, a discarded result. */
const OPS_SRC = `contract Ops {
  pub readonly fn run(a: u64, b: u64, x: i64, y: i64, p: u128, q: u128, k: bytes) -> bytes {
    let r = concat(to_bytes(a % b), to_bytes(x - y));
    r = concat(r, to_bytes(x * y));
    r = concat(r, to_bytes(x / y));
    r = concat(r, to_bytes(x % y));
    r = concat(r, to_bytes(-x));
    r = concat(r, to_bytes(p + q));
    r = concat(r, to_bytes(p - q));
    r = concat(r, to_bytes(p / q));
    r = concat(r, to_bytes(p % q));
    let flags: u64 = 0;
    if a < b { flags = flags + 1; }
    if a <= b { flags = flags + 2; }
    if a != b { flags = flags + 4; }
    let t = true;
    if !t { flags = flags + 8; }
    r = concat(r, to_bytes(flags));
    r = concat(r, to_bytes(to_key(concat(k, k))));
    r = concat(r, to_bytes(a as u128));
    r = concat(r, to_bytes(p as u64));
    one();
    return r;
  }
  readonly fn one() -> u64 { return 1; }
}`;

/** Stack: entry -> a, b, c, d (255 locals each) -> e (x locals, one operand). */
function stackSrc(x: number): string {
  const lets = (n: number): string => Array.from({ length: n }, (_, i) => `let v${i} = 0;`).join(' ');
  return `contract S { pub fn go() { a(); } fn a() { ${lets(255)} b(); } fn b() { ${lets(255)} c(); } fn c() { ${lets(255)} d(); } fn d() { ${lets(255)} e(); } fn e() { ${lets(x)} } }`;
}

const cid = (n: number) => 'c0' + '00'.repeat(30) + n.toString(16).padStart(2, '0');
const L = cid(1);
const M = cid(2);

const CONTEXT = {
  height: 812_345,
  txid: 'ab'.repeat(32),
  caller: 'cd'.repeat(32),
  call_id: '18446744073709551615',
  inputs: [{ txid: '01'.repeat(32), vout: 7 }, { txid: '02'.repeat(32), vout: 4294967295 }],
  outputs: [{ value: '2100000000000000', script: '6a' }, { value: '18446744073709551615', script: '5120' }],
};

type ValueJson = { type: string; value: string | boolean };
const u64 = (n: number | bigint): ValueJson => ({ type: 'u64', value: String(n) });
const bytesOf = (n: number): ValueJson => ({ type: 'bytes', value: '00'.repeat(n) });

interface ContractJson { contract_id: string; artifact: ArtifactCore; storage: [string, string][] }

function contextOf(c: typeof CONTEXT): ExecContext {
  return {
    height: c.height,
    txid: Buffer.from(c.txid, 'hex'),
    caller: Buffer.from(c.caller, 'hex'),
    callId: BigInt(c.call_id),
    inputs: c.inputs.map((i) => ({ txid: Buffer.from(i.txid, 'hex'), vout: i.vout })),
    outputs: c.outputs.map((o) => ({ value: BigInt(o.value), script: Buffer.from(o.script, 'hex') })),
  };
}

/** Instructions a call uses, to place the budget's edge exactly (inputs only: `expected` comes from the adapter). */
function instructionsOf(contracts: ContractJson[], to: string, fn: string, args: Value[]): number {
  const host = new MemHost();
  for (const c of contracts) host.deploy(Buffer.from(c.contract_id, 'hex'), c.artifact);
  return execute({ contractId: Buffer.from(to, 'hex'), function: fn, args, context: contextOf(CONTEXT), host }).instructions;
}

/** One storage entry [key, value] (hex) of a field, as the VM lays it out (packages/protocol/src/vm/storage-layout.ts). */
function stored(artifact: ArtifactCore, field: string, mapKey: Value | null, value: Value): [string, string] {
  return [hex(fieldKey(artifact.abi as never, field, mapKey)), hex(encodeStorageValue(value))];
}

/** x, y >= 0 with base + x*kx + y*ky === target. */
function solve(base: number, kx: number, ky: number, target: number): [number, number] {
  for (let y = 0; y <= kx; y++) {
    const rest = target - base - y * ky;
    if (rest >= 0 && rest % kx === 0) return [rest / kx, y];
  }
  throw new Error('execution: no call uses exactly that many instructions');
}

export function executionArea(): Area {
  const limits = core(LIMITS_SRC, 'limits.svc');
  const arith = core(ARITH_SRC, 'arith.svc');
  const ctx = core(CTX_SRC, 'ctx.svc');
  const { metadata: _m, ...counter } = fixtureArtifact('counter.svc') as unknown as ArtifactCore & { metadata: unknown };
  const one = (id: string, artifact: ArtifactCore, storage: [string, string][] = []): ContractJson => ({ contract_id: id, artifact, storage });
  const c = (id: string, pins: string, contracts: ContractJson[], to: string, fn: string, args: ValueJson[], context = CONTEXT): CaseInput => ({
    id, pins, input: { contracts, call: { contract_id: to, function: fn, args }, context },
  });
  const lim = [one(L, limits), one(M, limits)];
  const cases: CaseInput[] = [];

  // Counter (test/fixtures/contracts/counter.svc): results, writes, events, reverts.
  const counterOnly = [one(L, counter)];
  cases.push(
    c('counter-bump', 'an executed call returns its result, writes its fields and emits its events in order', counterOnly, L, 'bump', [u64(5)]),
    c('counter-bump-again', 'storage before is read: a count of 10 bumped by 5 returns 15', [one(L, counter, [stored(counter, 'count', null, { type: 'u64', value: 10n })])], L, 'bump', [u64(5)]),
    c('counter-require', 'a failed require reverts with code revert', counterOnly, L, 'bump', [u64(0)]),
    c('counter-boom', 'a call that writes and emits, then reverts, reports only the failure', counterOnly, L, 'boom', [u64(1)]),
    c('counter-get', 'a readonly call writes nothing', counterOnly, L, 'get', []),
    c('unknown-function', 'a function the abi does not list: unknown_function', counterOnly, L, 'nope', []),
    c('too-few-args', 'one argument short: bad_arguments', counterOnly, L, 'bump', []),
    c('wrong-arg-type', 'an argument of another type: bad_arguments', counterOnly, L, 'bump', [{ type: 'i64', value: '5' }]),
    c('unknown-contract', 'a call to a contract that does not exist: unknown_contract', counterOnly, M, 'bump', [u64(1)]),
  );

  // Arithmetic.
  const ar = [one(L, arith)];
  const U64_MAX = (1n << 64n) - 1n;
  cases.push(
    c('add-max', 'u64 addition up to 2^64-1', ar, L, 'add', [u64(U64_MAX - 1n), u64(1)]),
    c('add-overflow', 'u64 addition past 2^64-1: arithmetic_overflow', ar, L, 'add', [u64(U64_MAX), u64(1)]),
    c('sub-underflow', 'u64 subtraction below 0: arithmetic_overflow', ar, L, 'sub', [u64(0), u64(1)]),
    c('div-zero', 'division by zero: division_by_zero', ar, L, 'div', [u64(1), u64(0)]),
    c('div-truncates', 'u64 division truncates', ar, L, 'div', [u64(7), u64(2)]),
    c('i64-overflow', 'i64 addition past 2^63-1: arithmetic_overflow', ar, L, 'addi', [{ type: 'i64', value: '9223372036854775807' }, { type: 'i64', value: '1' }]),
    c('i64-negative', 'i64 addition of negatives', ar, L, 'addi', [{ type: 'i64', value: '-9223372036854775807' }, { type: 'i64', value: '-1' }]),
    c('u128-overflow', 'u128 multiplication past 2^128-1: arithmetic_overflow', ar, L, 'mul128', [{ type: 'u128', value: String(1n << 64n) }, { type: 'u128', value: String(1n << 64n) }]),
    c('u128-max', 'u128 multiplication up to 2^128-1', ar, L, 'mul128', [{ type: 'u128', value: String(U64_MAX + 2n) }, { type: 'u128', value: String(U64_MAX) }]),
  );

  // The Bitcoin context.
  const cx = [one(L, ctx)];
  cases.push(
    c('ctx-height', 'height() is the height of the block applying the call', cx, L, 'h', []),
    c('ctx-txid', 'txid() is the anchoring transaction\'s id (display order)', cx, L, 't', []),
    c('ctx-caller', 'caller() is the envelope\'s caller key', cx, L, 'who', []),
    c('ctx-call-id', 'call_id() is the envelope\'s call_id, up to 2^64-1', cx, L, 'cid', []),
    c('ctx-self', 'self_id() is the called contract\'s id', cx, L, 'me', []),
    c('ctx-counts', 'input_count() and output_count() of the anchoring transaction', cx, L, 'counts', []),
    c('ctx-input', 'outpoint(input_txid(i), input_vout(i)) of input 1 (vout 2^32-1)', cx, L, 'inp', [u64(1)]),
    c('ctx-input-missing', 'an input index past the inputs fails', cx, L, 'inp', [u64(2)]),
    c('ctx-output-value', 'output_value(i) up to 2^64-1', cx, L, 'outv', [u64(1)]),
    c('ctx-output-script', 'output_script(i) is the output\'s script bytes', cx, L, 'outs', [u64(0)]),
    c('ctx-sha256', 'sha256() of bytes', cx, L, 'hash', [{ type: 'bytes', value: '616263' }]),
  );

  // The remaining opcodes, each run once (the generator's opcode census checks it).
  const ops = [one(L, core(OPS_SRC, 'ops.svc'))];
  const opsArgs = (p: bigint, k: string): ValueJson[] => [u64(7), u64(3), { type: 'i64', value: '-7' }, { type: 'i64', value: '2' }, { type: 'u128', value: String(p) }, { type: 'u128', value: '3' }, { type: 'bytes', value: k }];
  cases.push(
    c('ops-every-remaining', 'u64 %, i64 - * / % and negation (truncating toward zero), u128 + - / %, < <= != !, casts, to_bytes of integers and keys, to_key, a discarded result', ops, L, 'run', opsArgs(10n, '11'.repeat(16))),
    c('ops-cast-overflow', 'a cast of a u128 above 2^64-1 to u64 fails: arithmetic_overflow', ops, L, 'run', opsArgs(1n << 64n, '11'.repeat(16))),
    c('ops-to-key-short', 'to_key of 30 bytes fails: revert', ops, L, 'run', opsArgs(10n, '11'.repeat(15))),
  );

  // Instructions: one call at exactly the budget and one instruction past it.
  const cost = (a: number, b: number) => instructionsOf(lim, L, 'burn', [{ type: 'u64', value: BigInt(a) }, { type: 'u64', value: BigInt(b) }]);
  const base = cost(0, 0);
  const [a, b] = solve(base, cost(1, 0) - base, cost(0, 1) - base, LIMITS.instructions);
  const [a2, b2] = solve(base, cost(1, 0) - base, cost(0, 1) - base, LIMITS.instructions + 1);
  cases.push(
    c('instructions-at-limit', `a call of exactly ${LIMITS.instructions} instructions executes`, lim, L, 'burn', [u64(a), u64(b)]),
    c('instructions-past-limit', `a call of ${LIMITS.instructions + 1} instructions fails: out_of_instructions`, lim, L, 'burn', [u64(a2), u64(b2)]),
  );
  const nested = (m1: number, m2: number) => instructionsOf(lim, L, 'nested', [{ type: 'u64', value: 5000n }, { type: 'key', value: Buffer.from(M, 'hex') }, { type: 'u64', value: BigInt(m1) }, { type: 'u64', value: BigInt(m2) }]);
  const nb = nested(0, 0);
  const [n1, n2] = solve(nb, nested(1, 0) - nb, nested(0, 1) - nb, LIMITS.instructions);
  const [n3, n4] = solve(nb, nested(1, 0) - nb, nested(0, 1) - nb, LIMITS.instructions + 1);
  const keyM = { type: 'key', value: M };
  cases.push(
    c('instructions-nested-at-limit', 'the budget is shared by a cross-contract callee: exactly the limit executes', lim, L, 'nested', [u64(5000), keyM, u64(n1), u64(n2)]),
    c('instructions-nested-past-limit', 'the budget is shared by a cross-contract callee: one past fails', lim, L, 'nested', [u64(5000), keyM, u64(n3), u64(n4)]),
  );

  // Call depth, value stack, storage, value size.
  cases.push(
    c('depth-at-limit', `${LIMITS.callDepth} frames (the entry is depth 1) execute`, lim, L, 'dive', [u64(LIMITS.callDepth - 1)]),
    c('depth-past-limit', `${LIMITS.callDepth + 1} frames fail: call_depth_exceeded`, lim, L, 'dive', [u64(LIMITS.callDepth)]),
    c('stack-at-limit', `${LIMITS.stack} value slots (locals and operands of all frames) execute`, [one(L, core(stackSrc(3), 's3.svc'))], L, 'go', []),
    c('stack-past-limit', `${LIMITS.stack + 1} value slots fail: stack_overflow`, [one(L, core(stackSrc(4), 's4.svc'))], L, 'go', []),
    c('value-at-limit', `a bytes value of ${LIMITS.valueBytes} bytes can be built`, lim, L, 'grow', [bytesOf(65_000), bytesOf(LIMITS.valueBytes - 65_000)]),
    c('value-past-limit', `a bytes value of ${LIMITS.valueBytes + 1} bytes fails: value_too_large`, lim, L, 'grow', [bytesOf(65_000), bytesOf(LIMITS.valueBytes - 65_000 + 1)]),
  );
  // Storage: key + value bytes of a contract after the call, at most the limit. Storage
  // before holds one entry of data[1]; put(2, v) adds a 13-byte key and v.
  const dataKey = (k: number): Value => ({ type: 'u64', value: BigInt(k) });
  const keyBytes = fieldKey(limits.abi as never, 'data', dataKey(1)).length;
  const room = 20;
  const big = stored(limits, 'data', dataKey(1), { type: 'bytes', value: new Uint8Array(LIMITS.storageBytes - keyBytes - keyBytes - room) });
  const full = [one(L, limits, [big])];
  cases.push(
    c('storage-at-limit', `a call leaving exactly ${LIMITS.storageBytes} bytes of storage executes`, full, L, 'put', [u64(2), bytesOf(room)]),
    c('storage-past-limit', `a call leaving ${LIMITS.storageBytes + 1} bytes of storage fails: storage_limit_exceeded`, full, L, 'put', [u64(2), bytesOf(room + 1)]),
    c('storage-shrink', 'writing a field\'s default value deletes its entry (a write of null)', full, L, 'put', [u64(1), bytesOf(0)]),
  );
  cases.push(...edgeCases(one, c), ...arithEdgeCases(one, c));
  return { 'execution.call': cases };
}

/** Map keys and events at their limits, and what a cross-contract call writes, emits and may do. */
function edgeCases(one: (id: string, artifact: ArtifactCore, storage?: [string, string][]) => ContractJson, c: (id: string, pins: string, contracts: ContractJson[], to: string, fn: string, args: ValueJson[]) => CaseInput): CaseInput[] {
  const edges = core(EDGES_SRC, 'edges.svc');
  const pair = [one(L, edges), one(M, edges)];
  const str = (n: number): ValueJson => ({ type: 'string', value: 'b'.repeat(n) });
  // ev emits 9 strings of 128 * 2^i bytes (i < 9) and the tail: names 1 byte each, strings their UTF-8 bytes.
  const tailAtLimit = LIMITS.eventBytes - 128 * (2 ** 9 - 1) - 10;
  const keyM = { type: 'key', value: M };
  return [
    c('map-key-at-limit', `a bytes map key of ${LIMITS.mapKeyBytes} bytes is stored`, pair, L, 'mk', [bytesOf(LIMITS.mapKeyBytes)]),
    c('map-key-past-limit', `a bytes map key of ${LIMITS.mapKeyBytes + 1} bytes fails: value_too_large`, pair, L, 'mk', [bytesOf(LIMITS.mapKeyBytes + 1)]),
    c('map-string-key-at-limit', `a string map key of ${LIMITS.mapKeyBytes} UTF-8 bytes is stored`, pair, L, 'mks', [str(LIMITS.mapKeyBytes)]),
    c('map-string-key-past-limit', `a string map key of ${LIMITS.mapKeyBytes + 1} UTF-8 bytes fails: value_too_large`, pair, L, 'mks', [str(LIMITS.mapKeyBytes + 1)]),
    c('events-at-limit', `events of exactly ${LIMITS.eventBytes} bytes in one call (names plus string bytes) execute`, pair, L, 'ev', [str(tailAtLimit)]),
    c('events-past-limit', `events of ${LIMITS.eventBytes + 1} bytes fail: event_limit_exceeded`, pair, L, 'ev', [str(tailAtLimit + 1)]),
    c('cross-contract-writes-events', 'a callee writes its own storage and emits under its own id; events in log order across frames, writes sorted by contract', pair, L, 'poke', [keyM]),
    c('cross-contract-callee-fails', 'a callee that fails fails the whole call: nothing of either frame applied', pair, L, 'pokefail', [keyM]),
    c('cross-contract-caller', 'caller() in a callee is the calling contract\'s id', pair, L, 'whovia', [keyM]),
    c('readonly-calls-writer', 'a readonly function calling a non-readonly one in another contract fails: readonly_violation', pair, L, 'peek', [keyM]),
  ];
}

/** Each arithmetic operator and cast at its bound and one past (two's complement i64, u64, u128). */
function arithEdgeCases(one: (id: string, artifact: ArtifactCore, storage?: [string, string][]) => ContractJson, c: (id: string, pins: string, contracts: ContractJson[], to: string, fn: string, args: ValueJson[]) => CaseInput): CaseInput[] {
  const compiled = new Map<string, ContractJson[]>();
  const ea = (fn: string): ContractJson[] => {
    if (!compiled.has(fn)) compiled.set(fn, [one(L, core(`contract EdgeArith { ${EDGE_ARITH_FNS[fn]} }`, `edge-${fn}.svc`))]);
    return compiled.get(fn)!;
  };
  const I64_MIN = '-9223372036854775808';
  const I64_MAX = '9223372036854775807';
  const U64_MAX = '18446744073709551615';
  const U128_MAX = String((1n << 128n) - 1n);
  const SAFE = (1n << 53n) - 1n;
  const i64 = (v: string): ValueJson => ({ type: 'i64', value: v });
  const u128 = (v: string): ValueJson => ({ type: 'u128', value: v });
  const x = (id: string, pins: string, fn: string, args: ValueJson[]) => c(id, pins, ea(fn), L, fn, args);
  return [
    x('i64-div-min-by-minus-one', 'i64 MIN / -1 (2^63 does not fit): arithmetic_overflow', 'idiv', [i64(I64_MIN), i64('-1')]),
    x('i64-div-min-by-one', 'i64 MIN / 1 is MIN', 'idiv', [i64(I64_MIN), i64('1')]),
    x('i64-div-truncates-toward-zero', 'i64 -7 / 2 is -3 (toward zero)', 'idiv', [i64('-7'), i64('2')]),
    x('i64-div-zero', 'i64 division by zero: division_by_zero', 'idiv', [i64('5'), i64('0')]),
    x('i64-mod-sign', 'i64 -7 % 2 is -1 (the dividend\'s sign)', 'imod', [i64('-7'), i64('2')]),
    x('i64-mod-min-by-minus-one', 'i64 MIN % -1 is 0', 'imod', [i64(I64_MIN), i64('-1')]),
    x('i64-mod-zero', 'i64 remainder by zero: division_by_zero', 'imod', [i64('5'), i64('0')]),
    x('i64-neg-max', 'i64 -MAX is MIN + 1', 'ineg', [i64(I64_MAX)]),
    x('i64-neg-min', 'i64 -MIN (2^63 does not fit): arithmetic_overflow', 'ineg', [i64(I64_MIN)]),
    x('i64-mul-at-min', 'i64 -2^62 * 2 is MIN', 'imul', [i64(String(-(1n << 62n))), i64('2')]),
    x('i64-mul-past-max', 'i64 2^62 * 2 (2^63): arithmetic_overflow', 'imul', [i64(String(1n << 62n)), i64('2')]),
    x('i64-sub-at-min', 'i64 -MAX - 1 is MIN', 'isub', [i64('-' + I64_MAX), i64('1')]),
    x('i64-sub-past-min', 'i64 MIN - 1: arithmetic_overflow', 'isub', [i64(I64_MIN), i64('1')]),
    x('u64-mod-zero', 'u64 remainder by zero: division_by_zero', 'umod', [u64(5), u64(0)]),
    x('u64-mul-at-max', 'u64 (2^32+1) * (2^32-1) is 2^64-1', 'umul', [u64((1n << 32n) + 1n), u64((1n << 32n) - 1n)]),
    x('u64-mul-past-max', 'u64 2^32 * 2^32: arithmetic_overflow', 'umul', [u64(1n << 32n), u64(1n << 32n)]),
    x('u128-sub-to-zero', 'u128 subtraction down to 0', 'wsub', [u128('1'), u128('1')]),
    x('u128-sub-underflow', 'u128 0 - 1: arithmetic_overflow', 'wsub', [u128('0'), u128('1')]),
    x('u128-add-at-max', 'u128 addition up to 2^128-1', 'wadd', [u128(String((1n << 127n) - 1n)), u128(String(1n << 127n))]),
    x('u128-add-past-max', 'u128 addition past 2^128-1: arithmetic_overflow', 'wadd', [u128(U128_MAX), u128('1')]),
    x('u128-div-zero', 'u128 division by zero: division_by_zero', 'wdiv', [u128('1'), u128('0')]),
    x('cast-i64-zero-to-u64', '0 as u64 from i64', 'i2u', [i64('0')]),
    x('cast-i64-negative-to-u64', '-1 as u64: arithmetic_overflow', 'i2u', [i64('-1')]),
    x('cast-u64-at-i64-max', '2^63-1 as i64', 'u2i', [u64(BigInt(I64_MAX))]),
    x('cast-u64-past-i64-max', '2^63 as i64: arithmetic_overflow', 'u2i', [u64(1n << 63n)]),
    x('cast-u128-at-i64-max', 'u128 2^63-1 as i64', 'w2i', [u128(I64_MAX)]),
    x('cast-u128-past-i64-max', 'u128 2^63 as i64: arithmetic_overflow', 'w2i', [u128(String(1n << 63n))]),
    x('cast-i64-negative-to-u128', '-1 as u128: arithmetic_overflow', 'i2w', [i64('-1')]),
    x('cast-i64-max-to-u128', 'i64 MAX as u128 (widening)', 'i2w', [i64(I64_MAX)]),
    x('to-bytes-i64-min', 'to_bytes of i64 MIN: 8 bytes two\'s complement big-endian (80 00 .. 00)', 'ibytes', [i64(I64_MIN)]),
    x('to-bytes-i64-minus-one', 'to_bytes of i64 -1: ff x 8', 'ibytes', [i64('-1')]),
    x('u64-max-arg', 'a u64 argument of 2^64-1 reaches the contract', 'umod', [u64(BigInt(U64_MAX)), u64(BigInt(U64_MAX))]),
    x('i64-less-signed', 'i64 < compares signed: MIN < -1 < 0', 'ilt', [i64(I64_MIN), i64('-1')]),
    x('i64-less-not', 'i64 0 < -1 is false', 'ilt', [i64('0'), i64('-1')]),
    x('u128-le-at-max', 'u128 2^128-1 <= 2^128-1', 'wle', [u128(U128_MAX), u128(U128_MAX)]),
    x('bytes-eq-content', 'bytes compare by content: equal bytes are equal', 'beq', [{ type: 'bytes', value: '00ff' }, { type: 'bytes', value: '00ff' }]),
    x('bytes-eq-prefix', 'a bytes value and its prefix are not equal', 'beq', [{ type: 'bytes', value: '00ff' }, { type: 'bytes', value: '00' }]),
    x('string-eq-utf8', 'strings compare by their UTF-8: "é" precomposed is not "e" with a combining accent', 'seq', [{ type: 'string', value: '\u00e9' }, { type: 'string', value: 'e\u0301' }]),
    x('key-ne', 'keys differing in their last byte are not equal', 'keq', [{ type: 'key', value: '00'.repeat(31) + '01' }, { type: 'key', value: '00'.repeat(32) }]),
    // Across 2^53, where the VM holds an integer as a number below and a bigint above
    // (its fast paths take numbers only): results just below, at and above, and one
    // operand of each kind. Added because the mutation run's survivors showed the edges unpinned.
    x('u64-add-to-2p53-minus-1', 'u64 (2^53-2) + 1 is 2^53-1 (the largest integer the VM holds as a number)', 'uadd', [u64(SAFE - 1n), u64(1n)]),
    x('u64-add-to-2p53', 'u64 (2^53-1) + 1 is 2^53', 'uadd', [u64(SAFE), u64(1n)]),
    x('u64-add-past-2p53-odd', 'u64 (2^53-1) + 2 is 2^53+1 (exact: no rounding to a neighbour)', 'uadd', [u64(SAFE), u64(2n)]),
    x('u64-add-small-to-large', 'u64 1 + 2^60 (a small and a large operand)', 'uadd', [u64(1n), u64(1n << 60n)]),
    x('u64-add-large-to-small', 'u64 2^60 + 1 (a large and a small operand)', 'uadd', [u64(1n << 60n), u64(1n)]),
    x('u64-sub-from-past-2p53', 'u64 (2^53+1) - 2 is 2^53-1', 'usub', [u64(SAFE + 2n), u64(2n)]),
    x('u64-sub-to-zero', 'u64 5 - 5 is 0', 'usub', [u64(5n), u64(5n)]),
    x('u64-sub-small-minus-large', 'u64 1 - 2^60: arithmetic_overflow', 'usub', [u64(1n), u64(1n << 60n)]),
    x('u64-mul-at-2p53-minus-1', 'u64 6361 * 1416003655831 is 2^53-1', 'umul', [u64(6361n), u64(1416003655831n)]),
    x('u64-mul-past-2p53-odd', 'u64 94906267 * 94906267 is 9007199515875289 (odd, past 2^53: exact)', 'umul', [u64(94906267n), u64(94906267n)]),
    x('u128-mul-past-2p53-odd', 'u128 94906267 * 94906267 is 9007199515875289 (exact)', 'wmul', [u128('94906267'), u128('94906267')]),
    x('u128-add-past-2p53-odd', 'u128 (2^53-1) + 2 is 2^53+1 (exact)', 'wadd', [u128(String(SAFE)), u128('2')]),
    x('u64-mul-large-by-small', 'u64 2^60 * 2 (a large and a small operand)', 'umul', [u64(1n << 60n), u64(2n)]),
    x('u64-mul-small-by-large', 'u64 2 * 2^60 (a small and a large operand)', 'umul', [u64(2n), u64(1n << 60n)]),
    x('u64-mul-under-an-operand', 'u64 7 + 3 * 5 is 22 (a product with another value below it on the stack)', 'umac', [u64(3n), u64(5n), u64(7n)]),
    x('u64-less-equal-operands', 'u64 5 < 5 is false', 'ult', [u64(5n), u64(5n)]),
    x('u64-less-small-large', 'u64 1 < 2^60 is true (a small and a large operand)', 'ult', [u64(1n), u64(1n << 60n)]),
    x('u64-less-or-equal-equal-operands', 'u64 5 <= 5 is true', 'ule', [u64(5n), u64(5n)]),
    x('u64-less-or-equal-large-small', 'u64 2^60 <= 1 is false', 'ule', [u64(1n << 60n), u64(1n)]),
    x('u64-greater-equal-operands', 'u64 5 > 5 is false', 'ugt', [u64(5n), u64(5n)]),
    x('u64-greater-large-small', 'u64 2^60 > 1 is true', 'ugt', [u64(1n << 60n), u64(1n)]),
    x('u64-greater-or-equal-equal-operands', 'u64 5 >= 5 is true', 'uge', [u64(5n), u64(5n)]),
    x('u64-greater-or-equal-small-large', 'u64 1 >= 2^60 is false', 'uge', [u64(1n), u64(1n << 60n)]),
    x('string-len-utf8', 'len of a string is its UTF-8 byte length (4 for one emoji)', 'slen', [{ type: 'string', value: '\u{1F600}' }]),
  ];
}

/**
 * The opcode table (src/vm/handlers.ts): one handler per opcode of the ISA, single handlers'
 * semantics and traps on a bare machine, and the interpreter loop's fast paths proven equal
 * to the handlers they stand in for (a traced call runs every step through its handler).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '@svc-node/protocol/value';
import { execute, type Machine } from '../../src/vm/execute.js';
import { Halt } from '../../src/vm/halt.js';
import { HANDLERS, STACK, unverified } from '../../src/vm/handlers.js';
import { OP, OPINFO } from '@svc-node/protocol/vm/isa';
import type { RtValue } from '@svc-node/protocol/vm/types';
import { MemHost, compile, ctx, id, serialize } from '../helpers/vm.js';

test('every opcode of the ISA has exactly one handler; every other byte reaches only the bug handler', () => {
  assert.equal(HANDLERS.length, 256);
  const codes = Object.values(OP);
  assert.equal(new Set(codes).size, codes.length, 'no two opcode names share a byte');
  for (let b = 0; b < 256; b++) {
    const h = HANDLERS[b];
    assert.equal(typeof h, 'function', `byte ${b}`);
    if (OPINFO[b] === undefined) assert.equal(h, unverified, `byte ${b} is no opcode`);
    else assert.notEqual(h, unverified, `${OPINFO[b]!.name} has its handler`);
  }
  assert.throws(() => HANDLERS[0xff]!(bare(), 7, 0xff), /^Error: VM bug: unverified opcode 255 at 7$/);
});

// ---- single handlers on a bare machine --------------------------------------------------------
/** The registers a handler reads, with the stack set to `stack` and operands a/b/c at offset 0. */
function bare(stack: RtValue[] = [], operands: { a?: number; b?: number; c?: number; consts?: RtValue[] } = {}, over: Partial<Machine> = {}): Machine {
  for (let i = 0; i < stack.length; i++) STACK[i] = stack[i]!;
  const prog = { a: Int32Array.of(operands.a ?? 0), b: Int32Array.of(operands.b ?? 0), c: Int32Array.of(operands.c ?? 0), consts: operands.consts ?? [] };
  return { sp: stack.length, pc: 1, base: 0, prog, fProg: [], ...over } as unknown as Machine;
}
function step(op: number, m: Machine): RtValue[] {
  HANDLERS[op]!(m, 0, op);
  return STACK.slice(0, m.sp);
}
function trap(op: number, m: Machine): string {
  try {
    HANDLERS[op]!(m, 0, op);
  } catch (e) {
    if (e instanceof Halt) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'no trap';
}

test('integer handlers: numbers while exact, bigint past 2^53-1, one zero, overflow traps', () => {
  const MAX = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(step(OP.ADD_U64, bare([MAX - 1, 1])), [MAX]);
  assert.deepEqual(step(OP.ADD_U64, bare([MAX, 1])), [2n ** 53n]);
  assert.deepEqual(step(OP.MUL_U128, bare([2 ** 32, 2 ** 32])), [2n ** 64n]);
  assert.equal(trap(OP.MUL_U64, bare([2 ** 32, 2 ** 32])), 'arithmetic_overflow: u64 overflow');
  assert.equal(trap(OP.SUB_U64, bare([0, 1])), 'arithmetic_overflow: u64 overflow');
  assert.equal(trap(OP.MOD_U128, bare([5, 0])), 'division_by_zero: division by zero');
  // i64: truncating division, remainder with the dividend's sign, never a -0
  assert.deepEqual(step(OP.DIV_I64, bare([-7, 2])), [-3]);
  assert.deepEqual(step(OP.MOD_I64, bare([-7, 2])), [-1]);
  assert.ok(Object.is(step(OP.MUL_I64, bare([0, -5]))[0], 0), '0 * -5 is 0, not -0');
  assert.ok(Object.is(step(OP.DIV_I64, bare([0, -5]))[0], 0), '0 / -5 is 0, not -0');
  assert.equal(trap(OP.NEG_I64, bare([-(2n ** 63n)])), 'arithmetic_overflow: i64 overflow');
  assert.equal(trap(OP.CAST, bare([-1], { a: 1 })), 'arithmetic_overflow: value does not fit u64');
  assert.deepEqual(step(OP.CAST, bare([-1], { a: 2 })), [-1]);
});

test('control handlers: JMPF jumps on false only, LOOP counts (as u64 arithmetic) then falls through, REQUIRE reverts with its message', () => {
  const m1 = bare([false], { a: 40 });
  assert.deepEqual(step(OP.JMPF, m1), []);
  assert.equal(m1.pc, 40);
  const m2 = bare([true], { a: 40 });
  step(OP.JMPF, m2);
  assert.equal(m2.pc, 1);
  // LOOP local=0 bound=3 target=9: counter 1 -> 2 jumps back, 2 -> 3 falls through
  const m3 = bare([1], { a: 0, b: 3, c: 9 });
  assert.deepEqual(step(OP.LOOP, m3), [2]);
  assert.equal(m3.pc, 9);
  const m4 = bare([2], { a: 0, b: 3, c: 9 });
  assert.deepEqual(step(OP.LOOP, m4), [3]);
  assert.equal(m4.pc, 1);
  // counter += 1 is u64 arithmetic: 2^53 - 1 + 1 is held as the bigint every integer past
  // MAX_SAFE is (so EQ finds it equal to a u64 2^53), a bigint counter counts on, u64 max traps
  const MAX = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(step(OP.LOOP, bare([MAX - 1], { a: 0, b: 3, c: 9 })), [MAX]);
  assert.deepEqual(step(OP.LOOP, bare([MAX], { a: 0, b: 3, c: 9 })), [2n ** 53n]);
  assert.deepEqual(step(OP.LOOP, bare([2n ** 53n], { a: 0, b: 3, c: 9 })), [2n ** 53n + 1n]);
  assert.deepEqual(step(OP.EQ, bare([2n ** 53n, 2n ** 53n])), [true]);
  assert.equal(trap(OP.LOOP, bare([2n ** 64n - 1n], { a: 0, b: 3, c: 9 })), 'arithmetic_overflow: u64 overflow');
  assert.equal(trap(OP.REQUIRE, bare([false], { a: 0, consts: ['not enough'] })), 'revert: not enough');
  const m5 = bare([7], {}, { fn: { ret: 1 } as Machine['fn'] });
  step(OP.RET, m5);
  assert.equal(m5.pc, -1, 'RET from the entry frame ends the call');
  assert.equal(m5.result, 7);
});

test('bytes handlers: EQ by content, OUTPOINT big-endian vout, TOKEY and CONCAT limits', () => {
  assert.deepEqual(step(OP.EQ, bare([Uint8Array.of(1, 2), Uint8Array.of(1, 2)])), [true]);
  assert.deepEqual(step(OP.NE, bare([Uint8Array.of(1, 2), Uint8Array.of(1, 3)])), [true]);
  const txid = new Uint8Array(32).fill(0xab);
  const [op] = step(OP.OUTPOINT, bare([txid, 0x01020304]));
  assert.equal(Buffer.from(op as Uint8Array).toString('hex'), 'ab'.repeat(32) + '01020304');
  assert.equal(trap(OP.OUTPOINT, bare([txid, 2 ** 32])), 'arithmetic_overflow: vout does not fit u32');
  assert.equal(trap(OP.TOKEY, bare([new Uint8Array(31)])), 'revert: to_key needs exactly 32 bytes');
  assert.equal(trap(OP.TOKEY, bare([new Uint8Array(32)])), 'no trap');
  assert.deepEqual(step(OP.LEN, bare(['é'])), [2], 'a string length is its UTF-8 bytes');
  assert.equal(trap(OP.CONCAT, bare([new Uint8Array(65_536), new Uint8Array(1)])), 'value_too_large: bytes longer than 65536');
  assert.equal(trap(OP.CONCAT, bare(['x'.repeat(65_535), 'é'])), 'value_too_large: string longer than 65536 bytes');
});

// ---- the loop's fast paths against the handlers ----------------------------------------------
const FAST_PATH_OPS = ['CONST', 'LOAD', 'STORE', 'JMP', 'JMPF', 'LOOP', 'ADD_U64', 'SUB_U64', 'MUL_U64', 'ADD_U128', 'SUB_U128', 'MUL_U128', 'LT', 'LE', 'GT', 'GE'];

const P53 = 2n ** 53n;
const EDGES: Record<'u64' | 'u128', bigint[]> = {
  u64: [0n, 1n, 2n, 3n, 2n ** 26n, 2n ** 27n, P53 - 2n, P53 - 1n, P53, P53 + 1n, 2n ** 32n, 2n ** 63n, 2n ** 64n - 1n],
  u128: [0n, 1n, 3n, P53 - 1n, P53, 2n ** 64n, 2n ** 127n, 2n ** 128n - 1n],
};
const SRC = `contract Fast {
  ${(['u64', 'u128'] as const).map((t) => `pub readonly fn ops_${t}(a: ${t}, b: ${t}) -> ${t} { return (a + b) - (a * b) + b; }
  pub readonly fn add_${t}(a: ${t}, b: ${t}) -> ${t} { return a + b; }
  pub readonly fn sub_${t}(a: ${t}, b: ${t}) -> ${t} { return a - b; }
  pub readonly fn mul_${t}(a: ${t}, b: ${t}) -> ${t} { return a * b; }
  pub readonly fn same_${t}(a: ${t}, b: ${t}, sum: ${t}, product: ${t}) -> bool { return a + b == sum && a * b == product; }
  pub readonly fn cmp_${t}(a: ${t}, b: ${t}) -> u64 {
    let r: u64 = 0;
    if a < b { r = r + 1; } if a <= b { r = r + 2; } if a > b { r = r + 4; } if a >= b { r = r + 8; }
    return r;
  }`).join('\n  ')}
  pub readonly fn count() -> u64 { let s: u64 = 0; for i in 0..7 { s = s + 1; } return s; }
  pub readonly fn spin(n: u64, limit: u64) -> u64 {
    let s: u64 = 0;
    for i in 0..100000 { if i >= n { break; } if s > limit { s = 0; } else { s = s + i * 3 + 1; } }
    return s;
  }
}`;

test('the fast paths give the handlers\' results, codes and instruction counts, past every boundary', () => {
  const host = new MemHost();
  const C = host.deploy(id(1), compile(SRC));
  const seen = new Set<string>();
  const both = (fn: string, args: Value[]): string => {
    const req = { contractId: C, function: fn, args, context: ctx(), host };
    const traced = execute(req, { trace: (s) => seen.add(s.op) });
    const plain = execute(req);
    assert.equal(serialize(plain), serialize(traced), `${fn}(${args.map((a) => a.value).join(', ')})`);
    return plain.status === 'executed' ? String(plain.result!.value) : plain.code;
  };
  for (const t of ['u64', 'u128'] as const) {
    const max = t === 'u64' ? 2n ** 64n - 1n : 2n ** 128n - 1n;
    const fits = (r: bigint): string => (r < 0n || r > max ? 'arithmetic_overflow' : String(r));
    for (const a of EDGES[t]) {
      for (const b of EDGES[t]) {
        const args: Value[] = [{ type: t, value: a }, { type: t, value: b }];
        assert.equal(both(`add_${t}`, args), fits(a + b));
        assert.equal(both(`sub_${t}`, args), fits(a - b));
        assert.equal(both(`mul_${t}`, args), fits(a * b));
        both(`ops_${t}`, args);
        const order = (a < b ? 1 : 0) + (a <= b ? 2 : 0) + (a > b ? 4 : 0) + (a >= b ? 8 : 0);
        assert.equal(both(`cmp_${t}`, args), String(order), `${a} against ${b}`);
        // a result is canonical (a bigint exactly when past 2^53-1), so == against the exact value holds
        if (a + b <= max && a * b <= max) assert.equal(both(`same_${t}`, [...args, { type: t, value: a + b }, { type: t, value: a * b }]), 'true');
      }
    }
  }
  const u = (v: bigint): Value => ({ type: 'u64', value: v });
  assert.equal(both('count', []), '7');
  assert.equal(both('spin', [u(10n), u(1000n)]), '145');
  assert.equal(both('spin', [u(100_000n), u(2n ** 62n)]), 'out_of_instructions');
  both('spin', [u(5_000n), u(10_000n)]);
  for (const name of FAST_PATH_OPS) assert.ok(seen.has(name), `${name} ran`);
});

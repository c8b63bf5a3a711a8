/**
 * The verifier's data-flow rules, each refusal on its own and the accepted case at its edge:
 * joins (stack heights, stack types, a local's type reset where two paths disagree), bounded
 * loops (target, bound, counter, nesting, the back edge's stack and locals), the operand
 * types of each opcode family, internal and cross-contract calls, readonly functions,
 * unreachable code, and the limits on functions, ABI entries and operand depth at their value
 * and one past. Where a rule's refusal names a later instruction than the one a removed rule
 * would reach, the offset tells them apart; the rules are packages/protocol/src/vm/verifier.ts's,
 * docs/LANGUAGE.md (section 12, "Verifier") states them.
 */
import { LIMITS, OP, TY } from '@svc-node/protocol/vm/isa';
import { hex, type CaseInput } from './kit.js';

const u16 = (x: number): number[] => [x & 0xff, x >> 8];
const u32 = (x: number): number[] => [x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, (x >>> 24) & 0xff];
/** FUNC header: flags, nparams, nlocals, ret, param types. */
const FUNC = (nlocals: number, ret = 0, params: number[] = [], flags = 0): number[] => [OP.FUNC, flags, params.length, nlocals, ret, ...params];
const MAIN = { type: 'function', name: 'main', inputs: [], outputs: [], readonly: false };
const U64_0 = { type: 'u64', value: 0 };
const LOOP = (counter: number, bound: number, target: number): number[] => [OP.LOOP, counter, ...u32(bound), ...u32(target)];

interface Opts {
  abi?: unknown[];
  offsets?: Record<string, number>;
  locals?: Record<string, number>;
  constants?: unknown[];
}

/** An artifact of one function `main` at 0 (or the functions `offsets` names) whose locals counts are read from the FUNC headers. */
function art(code: number[], o: Opts = {}): Record<string, unknown> {
  const offsets = o.offsets ?? { main: 0 };
  const locals = o.locals ?? Object.fromEntries(Object.values(offsets).map((off) => [String(off), code[off + 3]!]));
  return { bytecode: hex(Uint8Array.from(code)), abi: o.abi ?? [MAIN], function_offsets: offsets, function_offset_to_locals: locals, constants: o.constants ?? [] };
}

export function verifierFlowCases(): CaseInput[] {
  const c = (id: string, artifact: unknown, pins: string): CaseInput => ({ id: `flow-${id}`, pins, input: { artifact } });
  const k0 = { constants: [U64_0] };
  const counter0 = [OP.CONST, ...u16(0), OP.STORE, 0]; // local 0 := 0u64 (5 bytes)
  const field = (name: string, key: string | null, value = 'u64') => ({ type: 'field', name, key, value });
  const event = (name: string, types: string[] = []) => ({ type: 'event', name, inputs: types.map((t, i) => ({ name: `p${i}`, type: t })) });
  const ro = { ...MAIN, readonly: true };

  // Many functions: FUNC(0) RET each (6 bytes), main at 0, the rest internal.
  const manyFunctions = (count: number) => {
    const code: number[] = [];
    const offsets: Record<string, number> = {};
    for (let i = 0; i < count; i++) {
      offsets[i === 0 ? 'main' : `f${i}`] = code.length;
      code.push(...FUNC(0), OP.RET);
    }
    return art(code, { offsets });
  };
  // An abi of `count` entries: main and fields.
  const abiOf = (count: number) => [MAIN, ...Array.from({ length: count - 1 }, (_, i) => field(`f${i}`, null))];
  // `depth` TRUEs then as many POPs.
  const deep = (depth: number) => art([...FUNC(0), ...Array(depth).fill(OP.TRUE), ...Array(depth).fill(OP.POP), OP.RET]);

  return [
    // Functions and offsets.
    c('code-not-at-func', art([OP.RET, ...FUNC(0), OP.RET], { offsets: { main: 1 } }), 'the code must start with a FUNC header (refused at offset 0 even when the listed function is well formed)'),
    c('abi-function-without-offset', art([...FUNC(0), OP.RET], { abi: [MAIN, { ...MAIN, name: 'other' }] }), 'every abi function needs its entry in function_offsets'),
    c('functions-at-limit', manyFunctions(1024), 'an artifact of 1,024 functions (the most) is accepted'),
    c('functions-past-limit', manyFunctions(1025), 'an artifact of 1,025 functions is refused'),
    c('abi-entries-at-limit', art([...FUNC(0), OP.RET], { abi: abiOf(4096) }), 'an abi of 4,096 entries (the most) is accepted'),
    c('abi-entries-past-limit', art([...FUNC(0), OP.RET], { abi: abiOf(4097) }), 'an abi of 4,097 entries is refused'),
    c('abi-unknown-type-field-keys', art([...FUNC(0), OP.RET], { abi: [MAIN, { type: 'struct', name: 's', key: null, value: 'u64' }] }), 'an abi entry of an unknown type is refused even with a field\'s keys'),
    c('constant-integer-in-array', art([...FUNC(0), OP.RET], { constants: [{ type: 'u64', value: [9007199254740992] }] }), 'an integer constant is a JSON number or a decimal string, not an array'),
    c('constant-integer-not-decimal', art([...FUNC(0), OP.RET], { constants: [{ type: 'u64', value: '12a' }] }), 'an integer constant string is decimal digits only'),
    c('constant-bool-hex', art([...FUNC(0), OP.RET], { constants: [{ type: 'bool', value: '01' }] }), 'a bool constant is refused whatever its value'),
    c('constant-bytes-used', art([...FUNC(0), OP.CONST, ...u16(0), OP.POP, OP.RET], { constants: [{ type: 'bytes', value: '00' }] }), 'CONST of a bytes constant is accepted'),
    c('constant-index-at-count', art([...FUNC(0), OP.CONST, ...u16(1), OP.POP, OP.RET], k0), 'CONST of the index equal to the constant count is refused'),
    c('call-target-code-length', art([...FUNC(0), OP.CALL, ...u32(11), OP.RET]), 'a CALL target equal to the code length is refused at the CALL'),
    c('bytecode-empty-no-functions', { bytecode: '', abi: [], function_offsets: {}, function_offset_to_locals: {}, constants: [] }, 'empty bytecode is refused as the artifact\'s shape (offset -1) even with no functions listed'),
    c('func-header-cut-at-end', art([...FUNC(0), OP.RET, OP.FUNC], { offsets: { main: 0 }, locals: { '0': 0 } }), 'a FUNC header cut after its opcode by the end of the code is refused at that header'),
    c('func-header-at-end', art([...FUNC(0), OP.RET, ...FUNC(0)], { offsets: { main: 0, f: 6 }, locals: { '0': 0, '6': 0 } }), 'a complete FUNC header that ends the code is decoded; its empty function falls off the end (refused at the code\'s length)'),
    c('offsets-more-than-headers', art([...FUNC(0), OP.RET], { offsets: { main: 0, other: 0 }, locals: { '0': 0 } }), 'function_offsets listing more functions than the bytecode has FUNC headers is refused as the artifact\'s shape'),
    c('internal-name-not-identifier', art([...FUNC(0), OP.RET, ...FUNC(0), OP.RET], { offsets: { main: 0, 'f-1': 6 } }), 'an internal function\'s name in function_offsets is an identifier'),
    c('offset-fraction', art([...FUNC(0), OP.RET], { offsets: { main: 1.5 }, locals: { '0': 0 } }), 'a function offset must be an integer'),
    c('offset-minus-two', art([...FUNC(0), OP.RET], { offsets: { main: -2 }, locals: { '0': 0 } }), 'a negative function offset is refused as the artifact\'s shape'),
    c('offset-code-length', art([...FUNC(0), OP.RET], { offsets: { main: 6 }, locals: { '0': 0 } }), 'a function offset equal to the code length is refused as the artifact\'s shape'),
    c('internal-ret-type-8', art([...FUNC(0), OP.RET, ...FUNC(0, 8), OP.RET], { offsets: { main: 0, f: 6 } }), 'an internal function\'s FUNC header with return type 8 is refused at the header'),
    c('internal-param-type-0', art([...FUNC(0), OP.RET, ...FUNC(1, 0, [0]), OP.RET], { offsets: { main: 0, f: 6 } }), 'an internal function\'s FUNC header with a parameter of type 0 is refused at the header'),
    c('internal-param-type-8', art([...FUNC(0), OP.RET, ...FUNC(1, 0, [8]), OP.RET], { offsets: { main: 0, f: 6 } }), 'an internal function\'s FUNC header with a parameter of type 8 is refused at the header'),
    c('load-local-out-of-range', art([...FUNC(1), OP.TRUE, OP.STORE, 0, OP.LOAD, 1, OP.POP, OP.RET]), 'LOAD of a local past the count is refused'),
    c('jump-far-forward', art([...FUNC(0), ...Array(51).fill([OP.JMP, ...u32(260)]).flat(), OP.RET]), 'JMP targets of two bytes (260 = 0x0104): 51 forward JMPs to the RET at 260 are accepted (read as 4, 132 or 516 they would land inside an instruction or outside the code)'),
    c('jump-target-top-byte', art([...FUNC(0), OP.JMP, ...u32(0x8000000a), OP.RET]), 'a JMP target is all four bytes: 2^31 + 10 is outside the code, not 10'),
    c('constant-u128-max', art([...FUNC(0), OP.RET], { constants: [{ type: 'u128', value: '340282366920938463463374607431768211455' }] }), 'a u128 constant of 2^128-1 (the largest) is accepted'),
    c('constant-i64-min', art([...FUNC(0), OP.RET], { constants: [{ type: 'i64', value: '-9223372036854775808' }] }), 'an i64 constant of -2^63 (the smallest) is accepted'),
    c('constant-u64-zero', art([...FUNC(0), OP.RET], { constants: [{ type: 'u64', value: 0 }] }), 'a u64 constant of 0 is accepted'),
    c('constant-index-two-bytes', art([...FUNC(0), OP.CONST, ...u16(256), OP.LEN, OP.POP, OP.RET], { constants: [...Array(256).fill(U64_0), { type: 'string', value: 's' }] }), 'a constant index is both bytes (256 = 0x0100: the string, not constant 0, a u64, or 128 or 512)'),
    // Jumps.
    c('jump-to-last-byte', art([...FUNC(0), OP.JMP, ...u32(10), OP.RET]), 'a forward JMP to the code\'s last byte (a RET) is accepted'),
    c('jump-to-next-function', art([...FUNC(0), OP.JMP, ...u32(10), ...FUNC(0), OP.RET], { offsets: { main: 0, f: 10 } }), 'a JMP to the next function\'s header is refused at the jump'),
    c('jump-skips-dead-code', art([...FUNC(0), OP.JMP, ...u32(11), OP.POP, OP.RET]), 'code after a JMP that nothing jumps to is not checked (a POP of an empty stack there is accepted)'),
    c('jump-target-checked', art([...FUNC(0), OP.JMP, ...u32(11), OP.RET, OP.POP, OP.RET]), 'the code at a JMP\'s target is checked with the jump\'s stack (a POP of an empty stack is refused there)'),
    c('dead-code-after-ret', art([...FUNC(0), OP.RET, OP.POP, OP.RET]), 'unreachable code after RET is accepted'),
    // Joins.
    c('join-fallthrough-shorter', art([...FUNC(0), OP.TRUE, OP.TRUE, OP.JMPF, ...u32(13), OP.POP, OP.POP, OP.RET]), 'a join where the jump brings more values than the fall-through is refused at the join'),
    c('join-types-differ', art([...FUNC(0), OP.TRUE, OP.JMPF, ...u32(17), OP.TRUE, OP.JMP, ...u32(20), OP.CONST, ...u16(0), OP.POP, OP.RET], k0), 'a join of a bool and a u64 in one stack slot is refused at the join'),
    c('join-types-agree', art([...FUNC(0), OP.TRUE, OP.JMPF, ...u32(17), OP.TRUE, OP.JMP, ...u32(18), OP.FALSE, OP.POP, OP.RET]), 'a join of two bools in one stack slot is accepted'),
    c('join-local-types-differ', art([...FUNC(1), OP.TRUE, OP.STORE, 0, OP.TRUE, OP.JMPF, ...u32(19), ...counter0, OP.LOAD, 0, OP.POP, OP.RET], k0), 'a local written as bool on one path and u64 on the other is unwritten after the join (LOAD refused)'),
    c('join-local-types-agree', art([...FUNC(1), OP.TRUE, OP.STORE, 0, OP.TRUE, OP.JMPF, ...u32(17), OP.FALSE, OP.STORE, 0, OP.LOAD, 0, OP.POP, OP.RET]), 'a local written as bool on both paths is readable after the join'),
    // Loops.
    c('loop-bound-one', art([...FUNC(1), ...counter0, OP.TRUE, OP.POP, ...LOOP(0, 1, 10), OP.RET], k0), 'a loop bound of 1 is accepted'),
    c('loop-target-function-body', art([...FUNC(1, 0, [TY.u64]), OP.TRUE, OP.POP, ...LOOP(0, 3, 6), OP.RET], { abi: [{ ...MAIN, inputs: [{ name: 'n', type: 'u64' }] }] }), 'a loop may start at the function\'s first instruction (its counter a u64 parameter)'),
    c('loop-target-header', art([...FUNC(1, 0, [TY.u64]), OP.TRUE, OP.POP, ...LOOP(0, 3, 0), OP.RET], { abi: [{ ...MAIN, inputs: [{ name: 'n', type: 'u64' }] }] }), 'a loop target before the function\'s body (its FUNC header) is refused at the LOOP'),
    c('loop-target-self', art([...FUNC(1), ...counter0, ...LOOP(0, 3, 10), OP.RET], k0), 'a LOOP targeting itself is refused'),
    c('loop-target-inside-instruction', art([...FUNC(1), ...counter0, OP.TRUE, OP.POP, ...LOOP(0, 3, 6), OP.RET], k0), 'a loop target inside an instruction is refused at the LOOP'),
    c('loop-target-past-code', art([...FUNC(1), ...counter0, ...LOOP(0, 3, 100), OP.RET], k0), 'a loop target past the code is refused at the LOOP'),
    c('loop-counter-stored-at-head', art([...FUNC(1), ...counter0, OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), ...LOOP(0, 3, 13), OP.POP, OP.RET], k0), 'a STORE to the counter that is the loop\'s first instruction is refused at that STORE'),
    c('loop-counter-stored-before-and-after', art([...FUNC(1), ...counter0, OP.CONST, ...u16(0), OP.STORE, 0, ...LOOP(0, 3, 10), ...counter0, OP.RET], k0), 'a STORE to the counter inside the loop is refused even when another STORE to it follows the loop'),
    c('loops-nested', art([...FUNC(2), ...counter0, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP, ...LOOP(1, 2, 15), ...LOOP(0, 2, 15), OP.RET], k0), 'two loops with one head (an inner loop ending first) nest and are accepted'),
    c('loops-nested-apart', art([...FUNC(2), ...counter0, OP.TRUE, OP.POP, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP, ...LOOP(1, 2, 17), ...LOOP(0, 2, 10), OP.RET], k0), 'an inner loop starting after the outer loop\'s head nests and is accepted'),
    c('loops-overlap-at-back-edge', art([...FUNC(2), ...counter0, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP, ...LOOP(0, 2, 15), ...LOOP(1, 2, 17), OP.RET], k0), 'a loop whose head is another loop\'s LOOP instruction overlaps it and is refused at the second LOOP'),
    c('loop-head-unreachable', art([...FUNC(1), ...counter0, OP.JMP, ...u32(17), OP.TRUE, OP.POP, ...LOOP(0, 2, 15), OP.RET], k0), 'a loop whose head is unreachable code is refused at the LOOP'),
    c('loop-back-edge-height', art([...FUNC(1), ...counter0, OP.TRUE, ...LOOP(0, 2, 10), OP.POP, OP.RET], k0), 'a loop whose body leaves a value on the stack is refused at the LOOP'),
    c('loop-back-edge-types', art([...FUNC(1), ...counter0, OP.CONST, ...u16(0), OP.POP, OP.TRUE, ...LOOP(0, 2, 13), OP.POP, OP.RET], k0), 'a loop whose body replaces a u64 by a bool on the stack is refused at the LOOP'),
    c('loop-back-edge-types-agree', art([...FUNC(1), ...counter0, OP.CONST, ...u16(0), OP.POP, OP.CONST, ...u16(0), ...LOOP(0, 2, 13), OP.POP, OP.RET], k0), 'a loop whose body replaces a u64 by a u64 on the stack is accepted'),
    c('loop-local-changes-type', art([...FUNC(2), ...counter0, ...counter0.slice(0, 3), OP.STORE, 1, OP.TRUE, OP.STORE, 1, ...LOOP(0, 2, 15), OP.RET], k0), 'a local whose type changes around a loop is refused at the LOOP'),
    c('loop-local-first-written-inside', art([...FUNC(2), ...counter0, OP.TRUE, OP.STORE, 1, ...LOOP(0, 2, 10), OP.RET], k0), 'a local first written inside a loop is accepted'),
    // Returns and calls.
    c('ret-two-values', art([...FUNC(0, TY.u64), OP.CONST, ...u16(0), OP.CONST, ...u16(0), OP.RET], { abi: [{ ...MAIN, outputs: [{ type: 'u64' }] }], ...k0 }), 'RET of a u64 function with two values on the stack is refused'),
    c('ret-wrong-type', art([...FUNC(0, TY.u64), OP.TRUE, OP.RET], { abi: [{ ...MAIN, outputs: [{ type: 'u64' }] }] }), 'RET of a u64 function with a bool on the stack is refused'),
    c('readonly-calls-writer', art([...FUNC(0, 0, [], 1), OP.CALL, ...u32(11), OP.RET, ...FUNC(0), OP.RET], { abi: [ro], offsets: { main: 0, w: 11 } }), 'a readonly function may not call a non-readonly function'),
    c('readonly-calls-readonly', art([...FUNC(0, 0, [], 1), OP.CALL, ...u32(11), OP.RET, ...FUNC(0, 0, [], 1), OP.RET], { abi: [ro], offsets: { main: 0, r: 11 } }), 'a readonly function may call a readonly function'),
    c('call-cycle-two', art([...FUNC(0), OP.CALL, ...u32(11), OP.RET, ...FUNC(0), OP.CALL, ...u32(0), OP.RET], { offsets: { main: 0, f: 11 } }), 'two functions calling each other (a call cycle) are refused'),
    c('call-diamond', art([...FUNC(0), OP.CALL, ...u32(16), OP.CALL, ...u32(27), OP.RET, ...FUNC(0), OP.CALL, ...u32(38), OP.RET, ...FUNC(0), OP.CALL, ...u32(38), OP.RET, ...FUNC(0), OP.RET], { offsets: { main: 0, a: 16, b: 27, d: 38 } }), 'two functions calling one shared helper is no cycle and is accepted'),
    c('xcall-name-not-string', art([...FUNC(0), OP.CALLER, OP.XCALL, ...u16(0), 0, 0, OP.RET], k0), 'XCALL\'s function name must be a string constant'),
    c('xcall-ret-type-8', art([...FUNC(0), OP.CALLER, OP.XCALL, ...u16(0), 0, 8, OP.RET], { constants: [{ type: 'string', value: 'f' }] }), 'XCALL\'s return type past the seven is refused'),
    c('xcall-ret-type-7', art([...FUNC(0), OP.CALLER, OP.XCALL, ...u16(0), 0, 7, OP.POP, OP.RET], { constants: [{ type: 'string', value: 'f' }] }), 'XCALL returning a key is accepted'),
    c('require-number-message', art([...FUNC(0), OP.TRUE, OP.REQUIRE, ...u16(0), OP.RET], k0), 'REQUIRE\'s message must be a string constant (a u64 constant is refused)'),
    // Operand types per opcode family.
    c('compare-bools', art([...FUNC(0), OP.TRUE, OP.TRUE, OP.LT, OP.POP, OP.RET]), 'LT of two bools is refused'),
    c('compare-mixed-ints', art([...FUNC(0), OP.CONST, ...u16(0), OP.CONST, ...u16(1), OP.LT, OP.POP, OP.RET], { constants: [U64_0, { type: 'i64', value: 0 }] }), 'LT of a u64 and an i64 is refused'),
    c('cast-to-bool', art([...FUNC(0), OP.CONST, ...u16(0), OP.CAST, TY.bool, OP.POP, OP.RET], k0), 'CAST to bool is refused'),
    c('cast-bool', art([...FUNC(0), OP.TRUE, OP.CAST, TY.u64, OP.POP, OP.RET]), 'CAST of a bool is refused'),
    c('sload-map-field', art([...FUNC(0), OP.SLOAD, ...u16(0), OP.POP, OP.RET], { abi: [MAIN, field('m', 'key')] }), 'SLOAD of a map field is refused'),
    c('mload-scalar-field', art([...FUNC(0), OP.CALLER, OP.MLOAD, ...u16(0), OP.POP, OP.RET], { abi: [MAIN, field('s', null)] }), 'MLOAD of a scalar field is refused'),
    c('readonly-emits', art([...FUNC(0, 0, [], 1), OP.EMIT, ...u16(0), OP.RET], { abi: [ro, event('e')] }), 'a readonly function may not emit an event'),
    c('emit-param-types', art([...FUNC(0), OP.TRUE, OP.EMIT, ...u16(0), OP.RET], { abi: [MAIN, event('e', ['u64'])] }), 'EMIT checks each parameter\'s type (a bool for a u64 is refused)'),
    c('len-of-u64', art([...FUNC(0), OP.CONST, ...u16(0), OP.LEN, OP.POP, OP.RET], k0), 'LEN of a u64 is refused'),
    c('concat-u64s', art([...FUNC(0), OP.CONST, ...u16(0), OP.CONST, ...u16(0), OP.CONCAT, OP.POP, OP.RET], k0), 'CONCAT of two u64s is refused'),
    c('concat-string-bytes', art([...FUNC(0), OP.CONST, ...u16(0), OP.CONST, ...u16(1), OP.CONCAT, OP.POP, OP.RET], { constants: [{ type: 'string', value: 'a' }, { type: 'bytes', value: '00' }] }), 'CONCAT of a string and bytes is refused'),
    c('intbytes-bool', art([...FUNC(0), OP.TRUE, OP.INTBYTES, TY.bool, OP.POP, OP.RET]), 'INTBYTES of type bool is refused'),
    c('arith-i64-of-u64', art([...FUNC(0), OP.CONST, ...u16(0), OP.CONST, ...u16(0), OP.ADD_I64, OP.POP, OP.RET], k0), 'ADD_I64 of two u64s is refused'),
    c('arith-u128-of-i64', art([...FUNC(0), OP.CONST, ...u16(0), OP.CONST, ...u16(0), OP.MOD_U128, OP.POP, OP.RET], { constants: [{ type: 'i64', value: 1 }] }), 'MOD_U128 of two i64s is refused'),
    c('neg-u64', art([...FUNC(0), OP.CONST, ...u16(0), OP.NEG_I64, OP.POP, OP.RET], k0), 'NEG_I64 of a u64 is refused'),
    // Operand depth.
    c('operand-depth-at-limit', deep(LIMITS.stack), `an operand stack of ${LIMITS.stack} values (the limit) is accepted`),
    c('operand-depth-past-limit', deep(LIMITS.stack + 1), `an operand stack of ${LIMITS.stack + 1} values is refused at the push past the limit`),
  ];
}

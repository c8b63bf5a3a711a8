/**
 * The bytecode verifier: artifact -> accepted, or refused at a byte offset (-1: the
 * artifact's JSON shape). Each rule of packages/protocol/src/vm/verifier.ts once, its limits at their value
 * and one past, and the compiled fixture contracts.
 */
import { LIMITS, OP, TY } from '@svc-node/protocol/vm/isa';
import { hex, type Area, type CaseInput } from './kit.js';
import { FIXTURE_CONTRACTS, fixtureArtifact } from './codec.js';

const u16 = (x: number): number[] => [x & 0xff, x >> 8];
const u32 = (x: number): number[] => [x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, (x >>> 24) & 0xff];
/** FUNC header: flags, nparams, nlocals, ret, param types. */
const FUNC = (nlocals: number, ret = 0, params: number[] = [], flags = 0): number[] => [OP.FUNC, flags, params.length, nlocals, ret, ...params];
const MAIN = { type: 'function', name: 'main', inputs: [], outputs: [], readonly: false };

interface Opts {
  abi?: unknown[];
  function_offsets?: unknown;
  function_offset_to_locals?: unknown;
  constants?: unknown[];
  locals?: number;
}

function art(code: number[], o: Opts = {}): Record<string, unknown> {
  return {
    bytecode: hex(Uint8Array.from(code)),
    abi: o.abi ?? [MAIN],
    function_offsets: o.function_offsets ?? { main: 0 },
    function_offset_to_locals: o.function_offset_to_locals ?? { '0': o.locals ?? 0 },
    constants: o.constants ?? [],
  };
}

function bytecodeCases(): CaseInput[] {
  const c = (id: string, a: unknown, pins: string): CaseInput => ({ id, pins, input: { artifact: a } });
  const k0 = [{ type: 'u64', value: 0 }];
  const loop = (bound: number) => [...FUNC(1), OP.CONST, ...u16(0), OP.STORE, 0, OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(bound), ...u32(10), OP.RET];
  const roAbi = [{ type: 'field', name: 'x', key: null, value: 'u64' }, { ...MAIN, readonly: true }];
  // Code of exactly `total` bytes that verifies: CONST 0 / POP pairs (4 bytes), then TRUE / POP (2) to even out, then RET.
  const sized = (total: number) => {
    const code = [...FUNC(0)];
    while (code.length + 4 + 1 <= total) code.push(OP.CONST, ...u16(0), OP.POP);
    while (code.length + 2 + 1 <= total) code.push(OP.TRUE, OP.POP);
    code.push(OP.RET);
    if (code.length !== total) throw new Error(`verifier: cannot size code to ${total} bytes`);
    return code;
  };
  const limitSize = LIMITS.bytecodeBytes;
  const atLimit = sized(limitSize);
  return [
    c('minimal', art([...FUNC(0), OP.RET]), 'FUNC header and RET: accepted'),
    c('unknown-opcode', art([...FUNC(0), 0xee, OP.RET]), 'an unknown opcode is refused at its offset'),
    c('jump-outside-code', art([...FUNC(0), OP.JMP, ...u32(1000)]), 'a jump past the code is refused'),
    c('jump-inside-instruction', art([...FUNC(0), OP.JMP, ...u32(7), OP.RET, OP.RET]), 'a jump into the middle of an instruction is refused'),
    c('backward-jump', art([...FUNC(0), OP.RET, OP.JMP, ...u32(5)]), 'a backward JMP (not LOOP) is refused'),
    c('jump-to-self', art([...FUNC(0), OP.JMP, ...u32(5)]), 'a JMP to itself is a backward jump'),
    c('jump-2-31', art([...FUNC(0), OP.JMP, ...u32(0x80000000), OP.RET]), 'a jump target of 2^31 is outside the code (u32, not i32)'),
    c('call-target-high', art([...FUNC(0), OP.CALL, ...u32(0xffffffff), OP.RET]), 'a CALL target of 2^32-1 is not a function start'),
    c('call-not-function-start', art([...FUNC(0), OP.CALL, ...u32(3), OP.RET]), 'a CALL into a FUNC header\'s bytes is refused'),
    c('recursion', art([...FUNC(0), OP.CALL, ...u32(0), OP.RET]), 'a function calling itself (a call cycle) is refused'),
    c('constant-out-of-range', art([...FUNC(0), OP.CONST, ...u16(3), OP.POP, OP.RET]), 'CONST of an index past the constant pool is refused'),
    c('local-out-of-range', art([...FUNC(1), OP.TRUE, OP.STORE, 1, OP.RET], { locals: 1 }), 'STORE to a local past the count is refused'),
    c('read-before-write', art([...FUNC(1), OP.LOAD, 0, OP.POP, OP.RET], { locals: 1 }), 'LOAD of a local never written is refused'),
    c('locals-mismatch', art([...FUNC(2), OP.RET], { locals: 3 }), 'function_offset_to_locals must match the FUNC header'),
    c('offset-not-function-start', art([...FUNC(0), OP.RET, OP.RET], { function_offsets: { main: 5 } }), 'a function offset that is not a FUNC header is refused'),
    c('unlisted-function', art([...FUNC(0), OP.RET, ...FUNC(0), OP.RET], { function_offsets: { main: 0 }, function_offset_to_locals: { '0': 0 } }), 'every FUNC header must be listed in function_offsets'),
    c('join-height', art([...FUNC(0), OP.TRUE, OP.JMPF, ...u32(12), OP.TRUE, OP.POP, OP.RET]), 'two paths reaching one instruction with different stack heights are refused'),
    c('type-mismatch', art([...FUNC(0), OP.CONST, ...u16(0), OP.TRUE, OP.ADD_U64, OP.POP, OP.RET], { constants: [{ type: 'u64', value: 1 }] }), 'ADD_U64 of a u64 and a bool is refused'),
    c('stack-underflow', art([...FUNC(0), OP.POP, OP.RET]), 'POP of an empty stack is refused'),
    c('falls-off-end', art([...FUNC(0), OP.TRUE, OP.POP]), 'code that runs past the end of its function is refused'),
    c('ret-with-values', art([...FUNC(0), OP.TRUE, OP.RET]), 'RET of a function returning nothing, with a value on the stack, is refused'),
    c('truncated-instruction', art([...FUNC(0), OP.CALL]), 'an instruction cut by the end of the code is refused'),
    c('truncated-func-header', art([OP.FUNC, 0, 0]), 'a FUNC header cut by the end of the code is refused'),
    c('loop-counter-stored', art([...FUNC(1), OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), OP.STORE, 0, OP.LOOP, 0, ...u32(10), ...u32(10), OP.RET], { locals: 1, constants: k0 }), 'a STORE to the loop counter inside the loop is refused'),
    c('loop-ok', art(loop(10), { locals: 1, constants: k0 }), 'a LOOP with a u64 counter and a constant bound is accepted'),
    c('loop-counter-bool', art([...FUNC(1), OP.TRUE, OP.STORE, 0, OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(10), ...u32(8), OP.RET], { locals: 1 }), 'a loop counter must be a u64 local'),
    c('loop-bound-zero', art(loop(0), { locals: 1, constants: k0 }), 'a loop bound of 0 is refused'),
    c('loop-bound-at-limit', art(loop(LIMITS.loopBound), { locals: 1, constants: k0 }), `a loop bound of ${LIMITS.loopBound} (the limit) is accepted`),
    c('loop-bound-past-limit', art(loop(LIMITS.loopBound + 1), { locals: 1, constants: k0 }), `a loop bound of ${LIMITS.loopBound + 1} is refused`),
    c('field-out-of-range', art([...FUNC(0), OP.SLOAD, ...u16(0), OP.POP, OP.RET]), 'SLOAD of a field the abi does not declare is refused'),
    c('event-out-of-range', art([...FUNC(0), OP.EMIT, ...u16(0), OP.RET]), 'EMIT of an event the abi does not declare is refused'),
    c('require-non-string', art([...FUNC(0), OP.REQUIRE, ...u16(0), OP.RET], { constants: [{ type: 'u64', value: 1 }] }), 'REQUIRE\'s message must be a string constant'),
    c('readonly-writes', art([...FUNC(0, 0, [], 1), OP.CONST, ...u16(0), OP.SSTORE, ...u16(0), OP.RET], { abi: roAbi, constants: [{ type: 'u64', value: 1 }] }), 'a readonly function may not write storage'),
    c('header-abi-mismatch', art([...FUNC(0, TY.u64), OP.CONST, ...u16(0), OP.RET], { constants: [{ type: 'u64', value: 1 }] }), 'a FUNC header whose return type differs from its abi entry is refused'),
    c('bytecode-at-limit', art(atLimit, { constants: k0 }), `bytecode of exactly ${limitSize} bytes is accepted`),
    // One byte past: the odd byte from a 3-byte TRUE / NOT / POP (the fillers above are even).
    c('bytecode-past-limit', art([...sized(limitSize - 2).slice(0, -1), OP.TRUE, OP.NOT, OP.POP, OP.RET], { constants: k0 }), `bytecode of ${limitSize + 1} bytes is refused`),
  ];
}

function shapeCases(): CaseInput[] {
  const good = art([...FUNC(0), OP.RET]);
  const c = (id: string, patch: Record<string, unknown>, pins: string): CaseInput => ({ id, pins, input: { artifact: { ...good, ...patch } } });
  return [
    c('bytecode-uppercase', { bytecode: 'ABCD' }, 'bytecode must be lowercase hex'),
    c('bytecode-empty', { bytecode: '' }, 'bytecode may not be empty'),
    c('abi-entry-extra-key', { abi: [{ ...MAIN, extra: 1 }] }, 'an abi entry must have exactly its keys'),
    c('abi-bad-name', { abi: [{ ...MAIN, name: 'main!' }] }, 'abi names are identifiers'),
    c('abi-unknown-type', { abi: [{ ...MAIN, inputs: [{ name: 'a', type: 'float' }] }] }, 'abi types are the seven value types'),
    c('abi-two-outputs', { abi: [{ ...MAIN, outputs: [{ type: 'u64' }, { type: 'u64' }] }] }, 'a function has at most one output'),
    c('abi-duplicate-function', { abi: [MAIN, MAIN] }, 'function names are unique'),
    c('constant-float', { constants: [{ type: 'u64', value: 1.5 }] }, 'an integer constant may not be a fraction'),
    c('constant-negative-u64', { constants: [{ type: 'u64', value: -1 }] }, 'a u64 constant may not be negative'),
    c('constant-small-as-string', { constants: [{ type: 'u64', value: '5' }] }, 'an integer within 2^53 must be a JSON number'),
    c('constant-u64-max-string', { constants: [{ type: 'u64', value: '18446744073709551615' }] }, 'an integer beyond 2^53 is a decimal string; 2^64-1 is a u64'),
    c('constant-u128-past-max', { constants: [{ type: 'u128', value: '340282366920938463463374607431768211456' }] }, 'a u128 constant of 2^128 is refused'),
    c('constant-key-short', { constants: [{ type: 'key', value: 'ab' }] }, 'a key constant must be 32 bytes'),
    c('constant-lone-surrogate', { constants: [{ type: 'string', value: '\ud800' }] }, 'a string constant must have a UTF-8 form'),
    c('constant-bool', { constants: [{ type: 'bool', value: true }] }, 'bool constants are not allowed (TRUE/FALSE are opcodes)'),
    c('offsets-negative', { function_offsets: { main: -1 } }, 'a function offset must be inside the code'),
    c('offsets-string', { function_offsets: { main: '0' } }, 'a function offset must be a number'),
    c('locals-key-leading-zero', { function_offset_to_locals: { '00': 0 } }, 'function_offset_to_locals keys are canonical decimal offsets'),
    c('locals-empty', { function_offset_to_locals: {} }, 'every function offset has a locals count'),
  ];
}

function fixtureCases(): CaseInput[] {
  return FIXTURE_CONTRACTS.map((f) => {
    const { metadata: _m, ...core } = fixtureArtifact(f);
    return { id: `fixture-${f.replace('.svc', '')}`, pins: `${f} as compiled is accepted`, input: { artifact: core } };
  });
}

export function verifierArea(): Area {
  return { 'verifier.artifact': [...fixtureCases(), ...bytecodeCases(), ...shapeCases()] };
}

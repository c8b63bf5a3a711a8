/**
 * The verifier's refusals of an artifact's JSON shape and of FUNC headers, each on its
 * own (offset -1: the JSON; a FUNC header's offset: that header), and the bounds of the
 * constants (the largest integer a JSON number may hold, the largest string and bytes
 * value) at their value and one past. The rules are packages/protocol/src/vm/verifier.ts's; docs/CODEC.md
 * states the artifact's JSON.
 */
import { LIMITS, OP, TY } from '@svc-node/protocol/vm/isa';
import { hex, type CaseInput } from './kit.js';

const MAIN = { type: 'function', name: 'main', inputs: [], outputs: [], readonly: false };
const FUNC = (nlocals: number, ret = 0, params: number[] = [], flags = 0): number[] => [OP.FUNC, flags, params.length, nlocals, ret, ...params];

function art(code: number[], patch: Record<string, unknown> = {}): Record<string, unknown> {
  return { bytecode: hex(Uint8Array.from(code)), abi: [MAIN], function_offsets: { main: 0 }, function_offset_to_locals: { '0': 0 }, constants: [], ...patch };
}

export function verifierEdgeCases(): CaseInput[] {
  const good = [...FUNC(0), OP.RET];
  const c = (id: string, artifact: unknown, pins: string): CaseInput => ({ id, pins, input: { artifact } });
  const shape = (id: string, patch: Record<string, unknown>, pins: string): CaseInput => c(id, art(good, patch), pins);
  const ev = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'event', name, inputs: [], ...extra });
  const field = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'field', name, key: null, value: 'u64', ...extra });
  const inputs = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `a${i}`, type: 'u64' }));
  const k = (type: string, value: unknown) => ({ constants: [{ type, value }] });
  const maxSafe = 9007199254740991;
  return [
    c('artifact-not-object', 5, 'an artifact that is not a JSON object is refused'),
    // JSON null where an object is expected: refused by the check of that place (a later
    // check reading into null would fail otherwise, not refuse).
    c('artifact-null', null, 'an artifact that is JSON null is refused'),
    shape('function-offsets-null', { function_offsets: null }, 'function_offsets null is refused'),
    shape('function-offset-to-locals-null', { function_offset_to_locals: null }, 'function_offset_to_locals null is refused'),
    shape('abi-entry-null', { abi: [MAIN, null] }, 'an abi entry that is null is refused'),
    shape('output-null', { abi: [{ ...MAIN, outputs: [null] }] }, 'a function\'s output that is null is refused'),
    shape('input-null', { abi: [{ ...MAIN, inputs: [null] }] }, 'a function\'s input that is null is refused'),
    shape('constant-null', { constants: [null] }, 'a constant that is null is refused'),
    shape('abi-null', { abi: null }, 'abi null is refused'),
    shape('constants-null', { constants: null }, 'constants null is refused'),
    shape('abi-not-array', { abi: {} }, 'abi must be an array'),
    shape('abi-entry-not-object', { abi: [MAIN, 5] }, 'every abi entry is an object'),
    shape('abi-entry-unknown-type', { abi: [MAIN, { type: 'struct', name: 's' }] }, 'an abi entry is a function, an event or a field'),
    shape('output-not-object', { abi: [{ ...MAIN, outputs: ['u64'] }] }, 'a function\'s output is an object'),
    shape('output-extra-key', { abi: [{ ...MAIN, outputs: [{ type: 'u64', name: 'r' }] }] }, 'a function\'s output has only its type'),
    shape('readonly-not-boolean', { abi: [{ ...MAIN, readonly: 1 }] }, 'readonly is a JSON boolean'),
    shape('input-not-object', { abi: [{ ...MAIN, inputs: [5] }] }, 'a function\'s input is an object'),
    shape('input-extra-key', { abi: [{ ...MAIN, inputs: [{ name: 'a', type: 'u64', x: 1 }] }] }, 'a function\'s input has exactly name and type'),
    shape('input-duplicate-name', { abi: [{ ...MAIN, inputs: [{ name: 'a', type: 'u64' }, { name: 'a', type: 'u64' }] }] }, 'a function\'s input names are unique'),
    c('inputs-255', art([...FUNC(255, 0, Array(255).fill(TY.u64)), OP.RET], { abi: [{ ...MAIN, inputs: inputs(255) }], function_offset_to_locals: { '0': 255 } }), 'a function of 255 inputs (the most) is accepted'),
    shape('inputs-256', { abi: [{ ...MAIN, inputs: inputs(256) }] }, 'a function of 256 inputs is refused'),
    shape('event-extra-key', { abi: [MAIN, ev('e', { x: 1 })] }, 'an event has exactly type, name and inputs'),
    shape('event-duplicate', { abi: [MAIN, ev('e'), ev('e')] }, 'event names are unique'),
    shape('event-bad-name', { abi: [MAIN, ev('e-1')] }, 'an event\'s name is an identifier'),
    shape('field-extra-key', { abi: [MAIN, field('f', { x: 1 })] }, 'a field has exactly type, name, key and value'),
    shape('field-duplicate', { abi: [MAIN, field('f'), field('f')] }, 'field names are unique'),
    shape('constants-not-array', { constants: {} }, 'constants must be an array'),
    shape('constant-not-object', { constants: [5] }, 'a constant is an object'),
    shape('constant-extra-key', { constants: [{ type: 'u64', value: 1, x: 1 }] }, 'a constant has exactly type and value'),
    shape('constant-max-safe-number', k('u64', maxSafe), 'a u64 constant of 2^53-1 is a JSON number'),
    shape('constant-min-safe-number', k('i64', -maxSafe), 'an i64 constant of -(2^53-1) is a JSON number'),
    shape('constant-max-safe-as-string', k('u64', String(maxSafe)), 'a u64 constant of 2^53-1 written as a string is refused (it must be a number)'),
    shape('constant-min-safe-as-string', k('i64', String(-maxSafe)), 'an i64 constant of -(2^53-1) written as a string is refused'),
    shape('constant-2-53-string', k('u64', String(maxSafe + 1)), 'a u64 constant of 2^53 is a decimal string'),
    shape('constant-minus-2-53-string', k('i64', `-${maxSafe + 1}`), 'an i64 constant of -2^53 is a decimal string'),
    shape('constant-minus-zero-string', k('i64', '-0'), 'an integer constant "-0" is refused'),
    shape('constant-string-at-limit', k('string', 'a'.repeat(LIMITS.valueBytes)), `a string constant of ${LIMITS.valueBytes} UTF-8 bytes is accepted`),
    shape('constant-string-past-limit', k('string', 'a'.repeat(LIMITS.valueBytes + 1)), `a string constant of ${LIMITS.valueBytes + 1} UTF-8 bytes is refused`),
    shape('constant-bytes-at-limit', k('bytes', '00'.repeat(LIMITS.valueBytes)), `a bytes constant of ${LIMITS.valueBytes} bytes is accepted`),
    shape('constant-bytes-past-limit', k('bytes', '00'.repeat(LIMITS.valueBytes + 1)), `a bytes constant of ${LIMITS.valueBytes + 1} bytes is refused`),
    // The count of constants at its bound (a CONST operand is a u16: 65,535 constants, indexes 0 to 65,534) and one past; each a valid constant, so only the count can refuse.
    shape('constants-count-at-limit', { constants: Array.from({ length: 65_535 }, () => ({ type: 'u64', value: 0 })) }, 'an artifact of 65,535 constants (the most) is accepted'),
    shape('constants-count-past-limit', { constants: Array.from({ length: 65_536 }, () => ({ type: 'u64', value: 0 })) }, 'an artifact of 65,536 constants is refused'),
    shape('constant-bytes-uppercase', k('bytes', 'AB'), 'a bytes constant is lowercase hex'),
    shape('constant-bytes-number', k('bytes', 5), 'a bytes constant is a hex string'),
    shape('constant-key-32', k('key', 'ab'.repeat(32)), 'a key constant of 32 bytes is accepted'),
    shape('constant-key-33', k('key', 'ab'.repeat(33)), 'a key constant of 33 bytes is refused'),
    shape('offsets-not-object', { function_offsets: [] }, 'function_offsets is a JSON object'),
    shape('locals-not-object', { function_offset_to_locals: [] }, 'function_offset_to_locals is a JSON object'),
    c('two-names-one-offset', art([...good, ...good], { abi: [MAIN, { ...MAIN, name: 'other' }], function_offsets: { main: 0, other: 0 }, function_offset_to_locals: { '0': 0, '6': 0 } }), 'two functions may not share one offset'),
    c('func-flags-unknown', art([...FUNC(0, 0, [], 2), OP.RET]), 'a FUNC header with a flag other than readonly is refused at the header'),
    c('func-params-past-locals', art([OP.FUNC, 0, 1, 0, 0, TY.u64, OP.RET], { abi: [{ ...MAIN, inputs: inputs(1) }] }), 'a FUNC header with more parameters than locals is refused at the header'),
    c('func-ret-type-8', art([...FUNC(0, 8), OP.RET]), 'a FUNC header whose return type is past the seven is refused at the header'),
    c('func-param-type-0', art([...FUNC(1, 0, [0]), OP.RET], { abi: [{ ...MAIN, inputs: inputs(1) }], function_offset_to_locals: { '0': 1 } }), 'a FUNC header with a parameter of type 0 is refused at the header'),
    c('func-param-type-8', art([...FUNC(1, 0, [8]), OP.RET], { abi: [{ ...MAIN, inputs: inputs(1) }], function_offset_to_locals: { '0': 1 } }), 'a FUNC header with a parameter of type 8 is refused at the header'),
    c('func-param-type-7', art([...FUNC(1, 0, [7]), OP.RET], { abi: [{ ...MAIN, inputs: [{ name: 'a', type: 'key' }] }], function_offset_to_locals: { '0': 1 } }), 'a FUNC header with a parameter of type 7 (key) is accepted'),
  ];
}

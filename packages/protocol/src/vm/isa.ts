/**
 * Instruction set of the SVC VM. One table per concern keyed by opcode byte (STYLE.md,
 * ethereumjs): name and operand layout here; typing rules in verifier.ts; handlers in
 * handlers.ts (run by the loop in execute.ts). Every byte not listed is an unknown opcode and
 * is rejected by the verifier.
 *
 * Encoding: one opcode byte, then little-endian operands. FUNC is the only
 * variable-length instruction: FUNC flags:u8 nparams:u8 nlocals:u8 ret:u8 param_types:u8*nparams.
 */
import type { ValueType } from '../value.js';

/** Type codes used in bytecode operands and the verifier's abstract state. 0 = none/void. */
export const TY = { none: 0, u64: 1, i64: 2, u128: 3, bool: 4, string: 5, bytes: 6, key: 7 } as const;
export const TYPE_NAMES: readonly (ValueType | 'none')[] = ['none', 'u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'];
export function typeCode(t: ValueType): number {
  return TY[t];
}
export function isIntCode(c: number): boolean {
  return c === 1 || c === 2 || c === 3;
}

export const OP = {
  FUNC: 0x01, RET: 0x02, CALL: 0x03, XCALL: 0x04, JMP: 0x05, JMPF: 0x06, LOOP: 0x07, REQUIRE: 0x08, POP: 0x09,
  CONST: 0x10, TRUE: 0x11, FALSE: 0x12, LOAD: 0x13, STORE: 0x14,
  ADD_U64: 0x20, SUB_U64: 0x21, MUL_U64: 0x22, DIV_U64: 0x23, MOD_U64: 0x24,
  ADD_I64: 0x25, SUB_I64: 0x26, MUL_I64: 0x27, DIV_I64: 0x28, MOD_I64: 0x29,
  ADD_U128: 0x2a, SUB_U128: 0x2b, MUL_U128: 0x2c, DIV_U128: 0x2d, MOD_U128: 0x2e,
  NEG_I64: 0x2f,
  LT: 0x30, LE: 0x31, GT: 0x32, GE: 0x33, EQ: 0x34, NE: 0x35, NOT: 0x36, CAST: 0x37,
  SLOAD: 0x40, SSTORE: 0x41, MLOAD: 0x42, MSTORE: 0x43, EMIT: 0x44,
  HEIGHT: 0x50, TXID: 0x51, CALLER: 0x52, CALLID: 0x53, SELF: 0x54, NIN: 0x55, NOUT: 0x56,
  INTXID: 0x57, INVOUT: 0x58, OUTVAL: 0x59, OUTSCRIPT: 0x5a,
  LEN: 0x60, CONCAT: 0x61, OUTPOINT: 0x62, TOBYTES: 0x63, TOKEY: 0x64, SHA256: 0x65, INTBYTES: 0x66,
} as const;

/** Operand kinds: 1 = u8, 2 = u16, 4 = u32. */
export type Operands = readonly (1 | 2 | 4)[];

export interface OpInfo { name: string; operands: Operands }

/** Metadata table: every defined opcode with its fixed operand layout (FUNC handled apart). */
export const OPINFO: (OpInfo | undefined)[] = new Array(256).fill(undefined);
const layout: Record<string, Operands> = {
  FUNC: [1, 1, 1, 1], CALL: [4], XCALL: [2, 1, 1], JMP: [4], JMPF: [4], LOOP: [1, 4, 4], REQUIRE: [2],
  CONST: [2], LOAD: [1], STORE: [1], CAST: [1], INTBYTES: [1], SLOAD: [2], SSTORE: [2], MLOAD: [2], MSTORE: [2], EMIT: [2],
};
for (const [name, code] of Object.entries(OP)) OPINFO[code] = { name, operands: layout[name] ?? [] };

/** Byte length of an instruction with a fixed layout. */
export function fixedLength(op: number): number {
  const info = OPINFO[op];
  if (!info) return 0;
  let n = 1;
  for (const k of info.operands) n += k;
  return n;
}

/** FUNC flag bits. */
export const FUNC_READONLY = 1;
/** FUNC ret byte for "no return value". */
export const RET_NONE = 0;

/** Limits (PROTOCOL.md section 4, SERVICE-SPEC section 8). */
export const LIMITS = {
  /** Instructions per call, shared by all frames of a call. */
  instructions: 100_000,
  /** Value stack (locals + operands of every frame of a call). */
  stack: 1024,
  /** Call depth; the entry function is depth 1. */
  callDepth: 64,
  /** Encoded key + value bytes per contract after the call. */
  storageBytes: 65_536,
  /** Largest bytes or string value (UTF-8 bytes) a contract can build: the storage limit, so any
   *  value that could ever be stored fits, and hostile concat loops cannot exhaust memory. */
  valueBytes: 65_536,
  /** Largest encoded map key (bytes or string keys): a call touching many distinct huge keys
   *  would otherwise hold gigabytes in its overlay before the storage limit is checked. */
  mapKeyBytes: 1024,
  /** Event data per call, all frames: names plus parameters (integers count 16, bool 16,
   *  strings their UTF-8 bytes, bytes their length). Bounds what one call can make the node store. */
  eventBytes: 65_536,
  /** Largest bytecode accepted by the verifier (a deploy body is limited in size anyway). */
  bytecodeBytes: 65_536,
  /** Largest loop bound the verifier accepts; larger loops cannot finish within the budget. */
  loopBound: 100_000,
} as const;

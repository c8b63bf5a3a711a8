/** Shared types of the VM: artifact core, ABI entries, the verified Program, execution API. */
import type { Value } from '../value.js';
import type { AbiEntry } from '../contract.js';

// The artifact and ABI types are the protocol's (packages/protocol/src/contract.ts); the ABI entry
// types are re-exported for the VM's modules.
export type { AbiParam, AbiFunction, AbiEvent, AbiField, AbiEntry } from '../contract.js';

/** Runtime representation of a value: integers as number when |v| <= 2^53-1, else bigint
 *  (canonical: never a bigint that fits a number); bool as boolean; string; bytes/key as Uint8Array. */
export type RtValue = number | bigint | boolean | string | Uint8Array;

export interface FunctionInfo {
  name: string;
  offset: number;
  /** First instruction after the FUNC header. */
  body: number;
  params: number[]; // type codes
  ret: number; // type code, 0 = none
  readonly: boolean;
  nlocals: number;
  /** Largest operand-stack depth the verifier proved for this function. */
  maxStack: number;
  /** True when the ABI lists it (callable from outside); false for internal helpers. */
  public: boolean;
}

/** `prefix`: the scalar key, or the map-entry key prefix (name || 0x00). */
export interface FieldInfo { name: string; keyType: number /* 0 = scalar */; valueType: number; prefix: Uint8Array }
export interface EventInfo { name: string; types: number[] }

/**
 * Decoded, verified, immutable program. Plain data (typed arrays, arrays, strings, bigints,
 * plain objects): structured-cloneable, so it can be posted to a worker as is; it can also be
 * rebuilt from the artifact core with verifyArtifact (about as cheap as cloning for small code).
 */
export interface Program {
  code: Uint8Array;
  /** Opcode at each instruction start, 0 elsewhere. */
  ops: Uint8Array;
  /** First, second and third operand of the instruction starting at each offset. */
  a: Int32Array;
  b: Int32Array;
  c: Int32Array;
  /** Offset of the next instruction. */
  next: Int32Array;
  consts: RtValue[];
  constTypes: number[];
  functions: FunctionInfo[];
  /** function index by FUNC offset (-1 elsewhere) */
  funcAt: Int32Array;
  /** Public (ABI) function index by name (a Map: survives structured clone, no prototype keys). */
  byName: Map<string, number>;
  fields: FieldInfo[];
  events: EventInfo[];
  abi: AbiEntry[];
}

export interface ExecContext {
  height: number;
  txid: Uint8Array; // 32, display order
  inputs: { txid: Uint8Array; vout: number }[];
  outputs: { value: bigint; script: Uint8Array }[];
  caller: Uint8Array; // 32
  callId: bigint;
}

export interface Host {
  /** undefined => callee unknown */
  program(contractId: Uint8Array): Program | undefined;
  /** committed state before this call */
  storageGet(contractId: Uint8Array, key: Uint8Array): Uint8Array | undefined;
  /** committed encoded size (sum of key + value bytes) before this call */
  storageSize(contractId: Uint8Array): number;
}

export interface ExecRequest { contractId: Uint8Array; function: string; args: Value[]; context: ExecContext; host: Host }
export interface StorageWrite { contractId: Uint8Array; key: Uint8Array; value: Uint8Array | null /* null = delete */ }
export interface EmittedEvent { contractId: Uint8Array; name: string; params: Value[] }
export type ExecResult =
  | { status: 'executed'; result: Value | null; writes: StorageWrite[]; events: EmittedEvent[]; instructions: number }
  | { status: 'failed'; code: string; message: string; instructions: number };

/** Called before each instruction when tracing; absent => no cost. */
export type TraceHook = (step: { depth: number; contractId: Uint8Array; pc: number; op: string; stack: readonly RtValue[] }) => void;

/** Failure codes (PROTOCOL section 4 plus the VM's own, documented in docs/LANGUAGE.md). */
export const FailureCode = {
  revert: 'revert',
  unknown_function: 'unknown_function',
  bad_arguments: 'bad_arguments',
  out_of_instructions: 'out_of_instructions',
  stack_overflow: 'stack_overflow',
  call_depth_exceeded: 'call_depth_exceeded',
  storage_limit_exceeded: 'storage_limit_exceeded',
  arithmetic_overflow: 'arithmetic_overflow',
  division_by_zero: 'division_by_zero',
  /** cross-contract call to a contract id the host does not know */
  unknown_contract: 'unknown_contract',
  /** a readonly function tried to call a non-readonly function of another contract */
  readonly_violation: 'readonly_violation',
  /** a bytes or string value would exceed 65,536 bytes, or a map key 1,024 bytes */
  value_too_large: 'value_too_large',
  /** the events of one call would exceed 65,536 bytes */
  event_limit_exceeded: 'event_limit_exceeded',
} as const;

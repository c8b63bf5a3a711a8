/**
 * Typed contracts, as viem's getContract: from a compiler artifact's ABI given `as const`
 * (or the module `svc codegen` writes, src/cli/codegen.ts), `typedContract(abi, ...)`
 * answers an object whose `write.<function>(...args)` submits a call, `simulate.<function>`
 * runs one against the node's state, and `read.<field>(key?)` reads a field with its proof
 * verified, each with its arguments and result typed by the ABI: a wrong argument type or
 * count, or a function or field the contract lacks, is a compile error in the caller's
 * code, not a 422 at run time.
 *
 * TypeScript types of the ABI's value types: u64, i64, u128 are `bigint`; bool `boolean`;
 * string `string`; bytes and key lowercase hex `string` or `Uint8Array` in, hex `string`
 * out.
 */
import { ClientError } from './errors.js';
import type { ValueType, Value } from '@svc-node/protocol/value';
import { valueFromJson } from '@svc-node/protocol/value';
import { NodeError } from '@svc-node/protocol/errors';
import type { CallResult, SvcClient } from './sdk.js';
import type { CallFate, Submitter } from './submitter.js';
import type { SvcReader } from './reader.js';
import type { SimulateAnswer } from './node.js';

/** The ABI entries as the compiler writes them, read-only (what `as const` makes of an artifact's abi). */
export type AbiLike = readonly (
  | { readonly type: 'function'; readonly name: string; readonly inputs: readonly { readonly name: string; readonly type: ValueType }[]; readonly outputs: readonly { readonly type: ValueType }[]; readonly readonly?: boolean }
  | { readonly type: 'event'; readonly name: string; readonly inputs: readonly { readonly name: string; readonly type: ValueType }[] }
  | { readonly type: 'field'; readonly name: string; readonly key: ValueType | null; readonly value: ValueType }
)[];

/** What a value of each ABI type is given as. */
export type ArgOf<T extends ValueType> = T extends 'u64' | 'i64' | 'u128' ? bigint : T extends 'bool' ? boolean : T extends 'string' ? string : T extends 'bytes' | 'key' ? string | Uint8Array : never;
/** What a value of each ABI type is read as. */
export type ResultOf<T extends ValueType> = T extends 'u64' | 'i64' | 'u128' ? bigint : T extends 'bool' ? boolean : string;

type Functions<A extends AbiLike> = Extract<A[number], { type: 'function' }>;
type Fields<A extends AbiLike> = Extract<A[number], { type: 'field' }>;
export type FunctionName<A extends AbiLike> = Functions<A>['name'];
export type FieldName<A extends AbiLike> = Fields<A>['name'];
type FunctionEntry<A extends AbiLike, N> = Extract<Functions<A>, { name: N }>;
/** The argument tuple of function N. */
export type ArgsOf<A extends AbiLike, N extends FunctionName<A>> = InputsArgs<FunctionEntry<A, N>['inputs']>;
type InputsArgs<I> = I extends readonly [{ type: infer T extends ValueType }, ...infer R] ? [ArgOf<T>, ...InputsArgs<R>] : I extends readonly [] ? [] : ArgOf<ValueType>[];
/** The result of function N (null when it returns nothing). */
export type ReturnOf<A extends AbiLike, N extends FunctionName<A>> = FunctionEntry<A, N>['outputs'] extends readonly [{ type: infer T extends ValueType }, ...unknown[]] ? ResultOf<T> : null;
type FieldEntry<A extends AbiLike, N> = Extract<Fields<A>, { name: N }>;

export interface TypedSimulation<R> extends Omit<SimulateAnswer, 'result'> {
  result: R | null;
}

export interface TypedContract<A extends AbiLike> {
  readonly abi: A;
  readonly contractId: string;
  /** Submits the call: through the Submitter when given (its first fate), else SvcClient.call (the call's result). */
  readonly write: { [N in FunctionName<A>]: (...args: ArgsOf<A, N>) => Promise<CallFate | CallResult> };
  /** Runs the call against the node's state (POST /v2/{id}/simulate); nothing is anchored. */
  readonly simulate: { [N in FunctionName<A>]: (...args: ArgsOf<A, N>) => Promise<TypedSimulation<ReturnOf<A, N>>> };
  /** Reads a field (a map's entry by its key), its proof verified unless the reader says not to. */
  readonly read: { [N in FieldName<A>]: FieldEntry<A, N>['key'] extends ValueType ? (key: ArgOf<FieldEntry<A, N>['key']>) => Promise<ResultOf<FieldEntry<A, N>['value']>> : () => Promise<ResultOf<FieldEntry<A, N>['value']>> };
}

export interface TypedContractOptions {
  contractId: string;
  /** Submits `write` calls (with its checks, bound and fates); else `client` does. */
  submitter?: Submitter;
  client?: SvcClient;
  /** Reads fields (verified by default) and simulates. */
  reader?: SvcReader;
}

function hexOf(v: string | Uint8Array): string {
  return typeof v === 'string' ? v.replace(/^0x/, '').toLowerCase() : Buffer.from(v).toString('hex');
}

/** A typed argument as a Value (checked as the node checks it: valueFromJson). */
export function toValue(type: ValueType, v: unknown, what: string): Value {
  let json: unknown = v;
  if (type === 'u64' || type === 'i64' || type === 'u128') json = typeof v === 'bigint' ? v.toString(10) : v;
  else if (type === 'bytes' || type === 'key') json = typeof v === 'string' || v instanceof Uint8Array ? hexOf(v) : v;
  try {
    return valueFromJson(type, json, what);
  } catch (e) {
    if (e instanceof NodeError) throw new ClientError('bad_argument', e.message);
    throw e;
  }
}

/** A value in its JSON form (PROTOCOL section 6) as its TypeScript type. */
export function fromJson(type: ValueType, json: unknown): bigint | boolean | string {
  if (type === 'u64' || type === 'i64' || type === 'u128') return BigInt(json as string);
  return json as boolean | string;
}

/** The typed contract at `contractId` for `abi` (an artifact's abi `as const`, or a generated module's). */
export function typedContract<const A extends AbiLike>(abi: A, o: TypedContractOptions): TypedContract<A> {
  const write: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const simulate: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const read: Record<string, (key?: unknown) => Promise<unknown>> = {};
  const need = <T>(x: T | undefined, what: string): T => {
    if (x === undefined) throw new ClientError('bad_argument', `typedContract: give a ${what}`);
    return x;
  };
  for (const e of abi) {
    if (e.type === 'function') {
      const values = (args: unknown[]): Value[] => {
        if (args.length !== e.inputs.length) throw new ClientError('bad_argument', `${e.name} takes ${e.inputs.length} argument(s), got ${args.length}`);
        return e.inputs.map((p, i) => toValue(p.type, args[i], `${e.name} argument ${p.name}`));
      };
      write[e.name] = async (...args) => {
        const req = { contractId: o.contractId, function: e.name, args: values(args), abi: abi as unknown as readonly unknown[] };
        if (o.submitter) return o.submitter.submit(req);
        return need(o.client, 'submitter or client').call(req);
      };
      simulate[e.name] = async (...args) => {
        const typed = values(args).map((v) => ({ type: v.type, value: v.type === 'bytes' || v.type === 'key' ? hexOf(v.value) : typeof v.value === 'bigint' ? v.value.toString(10) : v.value }));
        const a = await need(o.reader, 'reader').node.simulate(o.contractId, { function: e.name, args: typed });
        const out = e.outputs[0];
        return { ...a, result: a.result === null || out === undefined ? null : fromJson(out.type, a.result) };
      };
    } else if (e.type === 'field') {
      read[e.name] = async (key?: unknown) => {
        const r = need(o.reader, 'reader');
        const k = e.key === null ? undefined : toValue(e.key, key, `${e.name} key`);
        const text = k === undefined ? undefined : `${k.type}:${k.type === 'bytes' || k.type === 'key' ? hexOf(k.value as Uint8Array) : String(k.value)}`;
        const a = await r.readField(o.contractId, e.name, text);
        return fromJson(e.value, a.value);
      };
    }
  }
  return { abi, contractId: o.contractId, write, simulate, read } as unknown as TypedContract<A>;
}

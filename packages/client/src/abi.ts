/**
 * ABI lookups and typed arguments (PROTOCOL.md section 2 ABI entries).
 * Command-line argument form: `TYPE:VALUE` (u64:5, i64:-3, u128:..., bool:true,
 * string:hello, bytes:deadbeef, key:<64 hex>), or a bare VALUE read with the ABI's type.
 */
import { ClientError } from './errors.js';
import { type Value, type ValueType, isValueType, valueFromJson, valueToPathArg, VALUE_TYPES } from '@svc-node/protocol/value';
import { NodeError } from '@svc-node/protocol/errors';
import type { AbiEntry, AbiField, AbiFunction } from '@svc-node/protocol/contract';

export type { AbiParam, AbiFunction, AbiEvent, AbiField, AbiEntry } from '@svc-node/protocol/contract';

function entries(abi: readonly unknown[]): AbiEntry[] {
  return abi.filter((e): e is AbiEntry => !!e && typeof e === 'object' && typeof (e as AbiEntry).name === 'string');
}

export function findFunction(abi: readonly unknown[], name: string): AbiFunction {
  const fns = entries(abi).filter((e): e is AbiFunction => e.type === 'function');
  const f = fns.find((e) => e.name === name);
  if (!f) {
    const names = fns.map((e) => e.name).join(', ') || 'none';
    throw new ClientError('unknown_function', `unknown function "${name}" (the contract has: ${names})`);
  }
  if (!Array.isArray(f.inputs) || !f.inputs.every((p) => p && isValueType(p.type))) {
    throw new ClientError('bad_argument', `ABI entry of function "${name}" has malformed inputs`);
  }
  return f;
}

export function findField(abi: readonly unknown[], name: string): AbiField {
  const fields = entries(abi).filter((e): e is AbiField => e.type === 'field');
  const f = fields.find((e) => e.name === name);
  if (!f) {
    const names = fields.map((e) => e.name).join(', ') || 'none';
    throw new ClientError('bad_argument', `unknown field "${name}" (the contract has: ${names})`);
  }
  return f;
}

function signature(f: AbiFunction): string {
  return `${f.name}(${f.inputs.map((p) => `${p.name}: ${p.type}`).join(', ')})`;
}

/** One text value of a known type -> Value. Hex may be given in either case. */
export function parseValueText(type: ValueType, text: string, what: string): Value {
  let json: unknown = text;
  if (type === 'bool') {
    if (text !== 'true' && text !== 'false') throw new ClientError('bad_argument', `${what}: bool must be true or false, got "${text}"`);
    json = text === 'true';
  } else if (type === 'bytes' || type === 'key') {
    json = text.replace(/^0x/, '').toLowerCase();
  }
  try {
    return valueFromJson(type, json);
  } catch (e) {
    if (e instanceof NodeError) throw new ClientError('bad_argument', `${what}: ${e.message} (got "${text}")`);
    throw e;
  }
}

/** Splits `TYPE:VALUE`; null when the text has no known type prefix. */
export function splitTyped(text: string): { type: ValueType; value: string } | null {
  const i = text.indexOf(':');
  if (i <= 0) return null;
  const t = text.slice(0, i);
  return isValueType(t) ? { type: t, value: text.slice(i + 1) } : null;
}

/**
 * Command-line arguments -> Values checked against the function's inputs: count, and the
 * type of each (a typed argument must name the ABI's type; a bare one is read as it).
 */
export function argsFromText(f: AbiFunction, texts: readonly string[]): Value[] {
  if (texts.length !== f.inputs.length) {
    throw new ClientError('bad_argument', `${signature(f)} takes ${f.inputs.length} argument(s), got ${texts.length}`);
  }
  return f.inputs.map((p, i) => {
    const what = `argument ${i + 1} (${p.name}: ${p.type})`;
    const typed = splitTyped(texts[i]!);
    if (typed && typed.type !== p.type) {
      throw new ClientError('bad_argument', `${what}: given as ${typed.type}, the ABI says ${p.type}`);
    }
    return parseValueText(p.type, typed ? typed.value : texts[i]!, what);
  });
}

/** Checks already-typed Values against the function's inputs. */
export function checkArgs(f: AbiFunction, args: readonly Value[]): void {
  if (args.length !== f.inputs.length) {
    throw new ClientError('bad_argument', `${signature(f)} takes ${f.inputs.length} argument(s), got ${args.length}`);
  }
  args.forEach((v, i) => {
    const p = f.inputs[i]!;
    if (!v || v.type !== p.type) {
      throw new ClientError('bad_argument', `argument ${i + 1} (${p.name}) must be ${p.type}, got ${v?.type ?? 'nothing'}`);
    }
  });
}

/** Path form of a field-read key (PROTOCOL section 6: GET /v2/{contract_id}/{field}/{arg}). */
export function encodeFieldArg(type: ValueType, text: string): string {
  const typed = splitTyped(text);
  if (typed && typed.type !== type) {
    throw new ClientError('bad_argument', `field key given as ${typed.type}, the ABI says ${type}`);
  }
  return valueToPathArg(parseValueText(type, typed ? typed.value : text, 'field key'));
}

export { VALUE_TYPES };

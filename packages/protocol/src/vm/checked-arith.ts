/**
 * The integer arithmetic of PROTOCOL.md, checked: the one definition the VM runs (its exact
 * slow path, src/vm/handlers.ts) and the compiler folds constants with (src/compiler/fold.ts),
 * so a constant folded at compile time and the same expression at run time cannot disagree.
 * Division truncates toward zero and `%` takes the dividend's sign (BigInt's own rules).
 */
import { INT_RANGE } from '../value.js';

export type IntTypeName = 'u64' | 'i64' | 'u128';
export type ArithOp = '+' | '-' | '*' | '/' | '%';

/** The exact result, or why there is none (`exact`: the out-of-range result, for messages). */
export type ArithOutcome =
  | { ok: true; value: bigint }
  | { ok: false; code: 'division_by_zero' }
  | { ok: false; code: 'arithmetic_overflow'; exact: bigint };

/** Whether `v` is a value of integer type `t`. */
export function fitsInt(t: IntTypeName, v: bigint): boolean {
  const [lo, hi] = INT_RANGE[t]!;
  return v >= lo && v <= hi;
}

/** `a op b` for operands of type `t`, checked against `t`'s range. */
export function checkedArith(op: ArithOp, t: IntTypeName, a: bigint, b: bigint): ArithOutcome {
  if ((op === '/' || op === '%') && b === 0n) return { ok: false, code: 'division_by_zero' };
  const v = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : op === '/' ? a / b : a % b;
  return fitsInt(t, v) ? { ok: true, value: v } : { ok: false, code: 'arithmetic_overflow', exact: v };
}

/** `-a` for an i64 (the only signed type), checked. */
export function checkedNeg(a: bigint): ArithOutcome {
  const v = -a;
  return fitsInt('i64', v) ? { ok: true, value: v } : { ok: false, code: 'arithmetic_overflow', exact: v };
}

/**
 * Module-level constants (`const NAME: TYPE = EXPR;`), folded at compile time: the value
 * of EXPR is computed here, with the typing rules of the checker and the VM's checked
 * arithmetic, so a constant costs nothing at run time and a use of it emits exactly what
 * the literal would (the same CONST of the same pool entry). EXPR may use literals,
 * constants declared before it, `!` and `-`, the binary operators and `as`; an overflow, a
 * division by zero or a cast out of range is a positioned compile error, as is anything
 * that needs a run (a field, a local, a call).
 */
import { INT_RANGE, type Value, type ValueType } from '@svc-node/protocol/value';
import type { BinOp, ConstDecl, Expr, Pos } from './ast.js';

const INT = new Set<ValueType>(['u64', 'i64', 'u128']);
const ORDERING = new Set<BinOp>(['<', '<=', '>', '>=']);
const ARITH = new Set<BinOp>(['+', '-', '*', '/', '%']);

/** Thrown inside a fold after its error is reported: the constant has no value. */
class Unfoldable extends Error {}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Folds every constant in declaration order; answers each one's value (absent when its
 * expression had an error, which `err` was told). `later` holds the names of all
 * constants, so a use before the declaration says so.
 */
export function foldConsts(decls: readonly ConstDecl[], err: (p: Pos, m: string) => void, isOtherName: (name: string) => string | null): Map<string, Value> {
  const values = new Map<string, Value>();
  const all = new Set(decls.map((d) => d.name));
  const failed = new Set<string>();

  const fail = (p: Pos, m: string): never => {
    err(p, m);
    throw new Unfoldable();
  };

  /**
   * The type of `e` without an expected type; null for a literal that adapts (an unsuffixed
   * integer, a hex literal). A left spine of operators (a sum of thousands of terms) is
   * walked with a loop, each node remembered: recursion goes only where nesting is bounded.
   */
  const inferred = new Map<Expr, ValueType | null>();
  const infer = (e: Expr): ValueType | null => {
    if (e.k !== 'bin') {
      switch (e.k) {
        case 'int': return e.suffix;
        case 'str': return 'string';
        case 'bool': return 'bool';
        case 'name': return values.get(e.name)?.type ?? null;
        case 'unary': return e.op === '!' ? 'bool' : infer(e.e);
        case 'cast': return e.to;
        default: return null;
      }
    }
    const spine: Extract<Expr, { k: 'bin' }>[] = [];
    let n: Expr = e;
    while (n.k === 'bin' && !inferred.has(n)) { spine.push(n); n = n.l; }
    let t = n.k === 'bin' ? inferred.get(n)! : infer(n);
    for (let i = spine.length - 1; i >= 0; i--) {
      const s = spine[i]!;
      t = ARITH.has(s.op) ? t ?? infer(s.r) : 'bool';
      inferred.set(s, t);
    }
    return t;
  };

  /** `v` as a value of type `t`; out of range, the error is `${what} ${v}, out of range for ${t}` (a literal: as the checker says it). */
  const checkRange = (t: ValueType, v: bigint, p: Pos, what: string): Value => {
    const [lo, hi] = INT_RANGE[t]!;
    if (v < lo || v > hi) fail(p, what === 'integer literal' ? `integer literal ${v} is out of range for ${t}` : `${what} ${v}, out of range for ${t}`);
    return { type: t, value: v } as Value;
  };

  const fold = (e: Expr, expected: ValueType | null): Value => {
    switch (e.k) {
      case 'int': {
        const t = e.suffix ?? (expected && INT.has(expected) ? expected : 'u64');
        return checkRange(t, e.value, e.pos, 'integer literal');
      }
      case 'hex':
        if (expected === 'key') {
          if (e.value.length !== 32) fail(e.pos, `a key literal needs 32 bytes, this one has ${e.value.length}`);
          return { type: 'key', value: e.value };
        }
        return { type: 'bytes', value: e.value };
      case 'str':
        return { type: 'string', value: e.value };
      case 'bool':
        return { type: 'bool', value: e.value };
      case 'name': {
        const v = values.get(e.name);
        if (v) return v;
        if (failed.has(e.name)) throw new Unfoldable(); // its own error was reported
        if (all.has(e.name)) return fail(e.pos, `constant '${e.name}' is used before its declaration`);
        const other = isOtherName(e.name);
        return fail(e.pos, other ? `'${e.name}' is a ${other}: a constant's value must be known at compile time (literals, other constants, operators, casts)` : `unknown name '${e.name}'`);
      }
      case 'unary': {
        if (e.op === '!') {
          const v = fold(e.e, 'bool');
          if (v.type !== 'bool') fail(e.e.pos, `operand of '!': expected bool, found ${v.type}`);
          return { type: 'bool', value: !(v.value as boolean) };
        }
        if (e.e.k === 'int' && (!e.e.suffix || e.e.suffix === 'i64')) {
          // a negative literal, as the checker reads it
          const t = e.e.suffix ?? (expected && INT.has(expected) ? expected : 'i64');
          if (t !== 'i64') fail(e.pos, `negative literal for unsigned type ${t}`);
          return checkRange('i64', -e.e.value, e.pos, 'integer literal');
        }
        const v = fold(e.e, expected);
        if (v.type !== 'i64') fail(e.pos, `unary '-' needs an i64, found ${v.type}`);
        return checkRange('i64', -(v.value as bigint), e.pos, "unary '-' gives");
      }
      case 'cast': {
        const from = infer(e.e);
        const v = fold(e.e, from === null ? e.to : null);
        if (!INT.has(v.type)) fail(e.pos, `only integers can be cast, found ${v.type}`);
        if (!INT.has(e.to)) fail(e.pos, `cannot cast to ${e.to}`);
        return checkRange(e.to, v.value as bigint, e.pos, `cast to ${e.to} of`);
      }
      case 'bin':
        return foldBin(e, expected);
      case 'index':
      case 'call':
      case 'xcall':
        return fail(e.pos, `a constant's value must be known at compile time: ${e.k === 'index' ? `'${e.name}[...]' reads a field` : 'a call runs only in a call'} (use literals, other constants, operators, casts)`);
    }
  };

  /**
   * A binary expression and the binary left operands below it, with a loop (as the checker
   * walks them): top-down each level fixes the type its operands are folded for, then the
   * leaf and, bottom-up, each right operand and operator.
   */
  const foldBin = (top: Extract<Expr, { k: 'bin' }>, expected: ValueType | null): Value => {
    const levels: Extract<Expr, { k: 'bin' }>[] = [];
    let n: Expr = top;
    while (n.k === 'bin') { levels.push(n); n = n.l; }
    const want: ValueType[] = [];
    let exp = expected;
    for (const lv of levels) {
      // the operand type: a side whose type is known, else what the context wants, else u64
      const t: ValueType = lv.op === '&&' || lv.op === '||' ? 'bool' : infer(lv.l) ?? infer(lv.r) ?? (ARITH.has(lv.op) && exp && INT.has(exp) ? exp : lv.l.k === 'hex' ? 'bytes' : 'u64');
      want.push(t);
      exp = t;
    }
    let acc = fold(n, want[levels.length - 1]!);
    for (let i = levels.length - 1; i >= 0; i--) acc = apply(levels[i]!, acc, fold(levels[i]!.r, want[i]!));
    return acc;
  };

  /** One operator on folded operands. */
  const apply = (e: Extract<Expr, { k: 'bin' }>, l: Value, r: Value): Value => {
    if (e.op === '&&' || e.op === '||') {
      if (l.type !== 'bool') fail(e.l.pos, `left of '${e.op}': expected bool, found ${l.type}`);
      if (r.type !== 'bool') fail(e.r.pos, `right of '${e.op}': expected bool, found ${r.type}`);
      return { type: 'bool', value: e.op === '&&' ? (l.value as boolean) && (r.value as boolean) : (l.value as boolean) || (r.value as boolean) };
    }
    if (ORDERING.has(e.op) && e.l.k === 'bin' && (ORDERING.has(e.l.op) || e.l.op === '==' || e.l.op === '!=')) fail(e.pos, `comparisons cannot be chained: write a ${e.l.op} b && b ${e.op} c`);
    if (l.type !== r.type) fail(e.pos, `operands of '${e.op}' have different types: ${l.type} and ${r.type}`);
    if (e.op === '==' || e.op === '!=') {
      const eq = l.value instanceof Uint8Array ? bytesEqual(l.value, r.value as Uint8Array) : l.value === r.value;
      return { type: 'bool', value: e.op === '==' ? eq : !eq };
    }
    if (!INT.has(l.type)) fail(e.pos, `'${e.op}' needs integers, found ${l.type}`);
    const a = l.value as bigint;
    const b = r.value as bigint;
    if (ORDERING.has(e.op)) {
      return { type: 'bool', value: e.op === '<' ? a < b : e.op === '<=' ? a <= b : e.op === '>' ? a > b : a >= b };
    }
    if ((e.op === '/' || e.op === '%') && b === 0n) fail(e.pos, `division by zero in a constant`);
    // BigInt division truncates toward zero and % takes the dividend's sign, as the VM's i64
    const v = e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : e.op === '/' ? a / b : a % b;
    return checkRange(l.type, v, e.pos, `'${e.op}' gives`);
  };

  for (const d of decls) {
    try {
      const v = fold(d.value, d.type);
      if (v.type !== d.type) fail(d.value.pos, `constant '${d.name}' is declared ${d.type}, its value is ${v.type}`);
      values.set(d.name, v);
    } catch (e) {
      if (!(e instanceof Unfoldable)) throw e;
      failed.add(d.name);
    }
  }
  return values;
}

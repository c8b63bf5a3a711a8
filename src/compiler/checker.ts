/**
 * Type checker: resolves every name, types every expression, allocates local slots and
 * reports every type error with its position. It annotates each node with a Note (ast.ts)
 * saying what to emit, so the emitter (codegen.ts) never decides a type. Long left-nested
 * operator chains and else-if chains are walked with loops; everything else recurses at
 * most MAX_NESTING (parser.ts) levels deep.
 */
import { INT_RANGE, U64_MAX, type ValueType } from '@svc-node/protocol/value';
import { LIMITS, OP } from '@svc-node/protocol/vm/isa';
import type { ContractDecl, Expr, FnDecl, LoopBound, Pos, Stmt } from './ast.js';
import type { CompileError } from './parser.js';
import { INTERFACES } from './stdlib.js';
import { foldConsts } from './fold.js';

type Ty = ValueType | 'void' | 'error';
const INT = new Set<Ty>(['u64', 'i64', 'u128']);
export const ARITH_BASE: Record<string, number> = { u64: OP.ADD_U64, i64: OP.ADD_I64, u128: OP.ADD_U128 };
export const ARITH_K: Record<string, number> = { '+': 0, '-': 1, '*': 2, '/': 3, '%': 4 };
export const isArith = (op: string): boolean => ARITH_K[op] !== undefined;
const ORDERING = new Set(['<', '<=', '>', '>=']);
export type BinExpr = Extract<Expr, { k: 'bin' }>;

/** The left spine of a binary expression, top first, and the operand at its bottom. */
export function binSpine(top: BinExpr): { levels: BinExpr[]; leaf: Expr } {
  const levels: BinExpr[] = [];
  let n: Expr = top;
  while (n.k === 'bin') { levels.push(n); n = n.l; }
  return { levels, leaf: n };
}

/** The arms of an if / else-if chain and the final else, walked with a loop. */
export function ifArms(s: Extract<Stmt, { k: 'if' }>): { arms: Extract<Stmt, { k: 'if' }>[]; last: Stmt[] | null } {
  const arms = [s];
  for (;;) {
    const els = arms[arms.length - 1]!.else;
    const only = els && els.length === 1 ? els[0]! : null;
    if (only && only.k === 'if') { arms.push(only); continue; }
    return { arms, last: els };
  }
}

interface Builtin { params: (ValueType | 'bytes|string')[]; ret: ValueType; op: number; ctx?: boolean }
const BUILTINS: Record<string, Builtin> = {
  height: { params: [], ret: 'u64', op: OP.HEIGHT, ctx: true },
  txid: { params: [], ret: 'key', op: OP.TXID, ctx: true },
  caller: { params: [], ret: 'key', op: OP.CALLER, ctx: true },
  call_id: { params: [], ret: 'u64', op: OP.CALLID, ctx: true },
  self_id: { params: [], ret: 'key', op: OP.SELF, ctx: true },
  input_count: { params: [], ret: 'u64', op: OP.NIN, ctx: true },
  output_count: { params: [], ret: 'u64', op: OP.NOUT, ctx: true },
  input_txid: { params: ['u64'], ret: 'key', op: OP.INTXID, ctx: true },
  input_vout: { params: ['u64'], ret: 'u64', op: OP.INVOUT, ctx: true },
  output_value: { params: ['u64'], ret: 'u64', op: OP.OUTVAL, ctx: true },
  output_script: { params: ['u64'], ret: 'bytes', op: OP.OUTSCRIPT, ctx: true },
  len: { params: ['bytes|string'], ret: 'u64', op: OP.LEN },
  concat: { params: ['bytes|string', 'bytes|string'], ret: 'bytes', op: OP.CONCAT },
  outpoint: { params: ['key', 'u64'], ret: 'bytes', op: OP.OUTPOINT },
  to_bytes: { params: ['key'], ret: 'bytes', op: OP.TOBYTES },
  to_key: { params: ['bytes'], ret: 'key', op: OP.TOKEY },
  sha256: { params: ['bytes'], ret: 'key', op: OP.SHA256 },
};

/** Own-property lookup: a user name such as `constructor` must never hit Object.prototype. */
function builtin(name: string): Builtin | undefined {
  return Object.hasOwn(BUILTINS, name) ? BUILTINS[name] : undefined;
}

interface Local { slot: number; type: ValueType; mutable: boolean }

/** What to suggest when two operands differ in type: only conversions that exist. */
function conversionHint(a: Ty, b: Ty): string {
  if (INT.has(a) && INT.has(b)) return " (use 'as' to convert)";
  const pair = new Set([a, b]);
  if (pair.has('key') && pair.has('bytes')) return ' (use to_bytes or to_key to convert)';
  if (pair.has('bytes') && INT.has(a === 'bytes' ? b : a)) return ' (use to_bytes to turn the integer into bytes)';
  return '';
}

/** A checked contract: the notes are on its nodes; `fns` lists the functions to emit, in source order. */
export interface Checked { contract: ContractDecl; fns: FnDecl[]; interfaces: string[] }

export function check(c: ContractDecl, file: string): { ok: true; checked: Checked } | { ok: false; errors: CompileError[] } {
  const errors: CompileError[] = [];
  const err = (p: Pos, m: string): void => {
    errors.push({ file, line: p.line, col: p.col, message: m });
  };

  // ---- declarations ----
  const fields = new Map<string, { idx: number; key: ValueType | null; value: ValueType }>();
  const events = new Map<string, { idx: number; params: ValueType[] }>();
  const fns = new Map<string, FnDecl>();
  const globalNames = new Map<string, string>();
  const declare = (name: string, kind: string, p: Pos): boolean => {
    if (builtin(name)) { err(p, `'${name}' is a built-in function and cannot be redeclared`); return false; }
    const prev = globalNames.get(name);
    if (prev) { err(p, `'${name}' is already declared as a ${prev}`); return false; }
    globalNames.set(name, kind);
    return true;
  };
  c.fields.forEach((f) => { if (declare(f.name, 'field', f.pos)) fields.set(f.name, { idx: fields.size, key: f.key, value: f.value }); });
  c.events.forEach((e) => {
    if (events.has(e.name)) { err(e.pos, `event '${e.name}' is already declared`); return; }
    events.set(e.name, { idx: events.size, params: e.params.map((p) => p.type) });
  });
  c.fns.forEach((f) => { if (declare(f.name, 'function', f.pos)) fns.set(f.name, f); });
  // constants: names of their own, values folded now (fold.ts), in declaration order
  const declaredConsts = c.consts.filter((k) => declare(k.name, 'constant', k.pos));
  const consts = foldConsts(declaredConsts, err, (name) => (builtin(name) ? 'built-in function' : globalNames.get(name) ?? null));
  if (c.fns.length === 0) err(c.pos, 'a contract needs at least one function');
  if (fields.size > 65535 || events.size > 65535) err(c.pos, 'too many fields or events');

  // ---- interfaces ----
  const interfaces: string[] = [];
  for (const im of c.implements) {
    const def = INTERFACES.get(im.name);
    if (!def) { err(im.pos, `unknown interface '${im.name}' (known: ${[...INTERFACES.keys()].join(', ')})`); continue; }
    if (interfaces.includes(def.name)) { err(im.pos, `interface '${im.name}' listed twice`); continue; }
    interfaces.push(def.name);
    for (const f of def.functions) {
      const g = fns.get(f.name);
      const sig = `${f.readonly ? 'readonly ' : ''}fn ${f.name}(${f.params.join(', ')})${f.ret ? ' -> ' + f.ret : ''}`;
      if (!g) err(im.pos, `${im.name} requires function ${sig}`);
      else if (!g.pub || g.readonly !== f.readonly || g.ret !== f.ret || g.params.length !== f.params.length || g.params.some((p, i) => p.type !== f.params[i])) {
        err(g.pos, `function '${f.name}' does not match ${im.name}: expected pub ${sig}`);
      }
    }
    for (const e of def.events) {
      const g = events.get(e.name);
      if (!g) err(im.pos, `${im.name} requires event ${e.name}(${e.params.join(', ')})`);
      else if (g.params.length !== e.params.length || g.params.some((t, i) => t !== e.params[i])) {
        err(c.events.find((x) => x.name === e.name)!.pos, `event '${e.name}' does not match ${im.name}: expected (${e.params.join(', ')})`);
      }
    }
    for (const f of def.fields) {
      const g = fields.get(f.name);
      const want = f.key ? `map<${f.key}, ${f.value}>` : f.value;
      if (!g) err(im.pos, `${im.name} requires field ${f.name}: ${want}`);
      else if (g.key !== f.key || g.value !== f.value) err(c.fields.find((x) => x.name === f.name)!.pos, `field '${f.name}' does not match ${im.name}: expected ${want}`);
    }
  }

  // ---- call graph: reject cycles (no recursion, also through helpers) ----
  const callees = new Map<string, { name: string; pos: Pos }[]>();
  // a work list, not recursion: a flat sum of thousands of terms is a tree that deep
  const collectCalls = (root: Expr, out: { name: string; pos: Pos }[]): void => {
    const work: Expr[] = [root];
    for (let e = work.pop(); e; e = work.pop()) {
      switch (e.k) {
        case 'call': if (fns.has(e.name)) out.push({ name: e.name, pos: e.pos }); work.push(...e.args); break;
        case 'xcall': work.push(e.target, ...e.args); break;
        case 'index': work.push(e.key); break;
        case 'unary': case 'cast': work.push(e.e); break;
        case 'bin': work.push(e.l, e.r); break;
        default: break;
      }
    }
  };
  const collectStmts = (root: Stmt[], out: { name: string; pos: Pos }[]): void => {
    const work: Stmt[][] = [root];
    for (let ss = work.pop(); ss; ss = work.pop()) for (const s of ss) {
      switch (s.k) {
        case 'let': collectCalls(s.init, out); break;
        case 'assign': case 'compound': if (s.key) collectCalls(s.key, out); collectCalls(s.value, out); break;
        case 'if': collectCalls(s.cond, out); work.push(s.then); if (s.else) work.push(s.else); break;
        case 'for': work.push(s.body); break;
        case 'return': if (s.value) collectCalls(s.value, out); break;
        case 'require': collectCalls(s.cond, out); break;
        case 'emit': s.args.forEach((a) => collectCalls(a, out)); break;
        case 'expr': collectCalls(s.e, out); break;
        default: break;
      }
    }
  };
  for (const f of fns.values()) { const out: { name: string; pos: Pos }[] = []; collectStmts(f.body, out); callees.set(f.name, out); }
  {
    const state = new Map<string, number>();
    const stack: string[] = [];
    const reported = new Set<string>();
    const visit = (n: string): void => {
      state.set(n, 1);
      stack.push(n);
      for (const cl of callees.get(n) ?? []) {
        const s = state.get(cl.name) ?? 0;
        if (s === 1) {
          const cycle = [...stack.slice(stack.indexOf(cl.name)), cl.name].join(' -> ');
          if (!reported.has(cycle)) { reported.add(cycle); err(cl.pos, `recursive call cycle: ${cycle} (recursion is not allowed)`); }
        } else if (s === 0) visit(cl.name);
      }
      stack.pop();
      state.set(n, 2);
    };
    for (const n of fns.keys()) if (!state.get(n)) visit(n);
  }


  const emitted: FnDecl[] = [];
  for (const f of c.fns) {
    if (!fns.has(f.name) || fns.get(f.name) !== f) continue;
    checkFn(f);
    emitted.push(f);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, checked: { contract: c, fns: emitted, interfaces } };

  // ---- functions ----
  function checkFn(f: FnDecl): void {
    let nlocals = 0;
    let tooManyLocalsReported = false;
    /** A fresh local slot, or slot 0 after one error per function when all 255 are taken. */
    const allocSlot = (p: Pos): number | null => {
      if (nlocals < 255) return nlocals++;
      if (!tooManyLocalsReported) err(p, 'too many local variables in one function (at most 255)');
      tooManyLocalsReported = true;
      return null;
    };
    /** Hidden slots holding a map key while a compound assignment reads and writes the entry, one per key type. */
    const keyTemps = new Map<ValueType, number>();
    const scopes: Map<string, Local>[] = [new Map()];
    /** The innermost scope open (a function body opens one before any statement is checked). */
    const innermost = (): Map<string, Local> => {
      const s = scopes.at(-1);
      if (!s) throw new Error('checker: no scope open');
      return s;
    };
    let loopDepth = 0;
    const newLocal = (name: string, type: ValueType, mutable: boolean, p: Pos): Local | null => {
      if (fields.has(name)) err(p, `'${name}' shadows a field`);
      if (globalNames.get(name) === 'constant') err(p, `'${name}' shadows a constant`);
      for (const s of scopes) if (s.has(name)) { err(p, `variable '${name}' is already declared`); break; }
      const slot = allocSlot(p);
      if (slot === null) return null;
      const l = { slot, type, mutable };
      innermost().set(name, l);
      return l;
    };
    const lookup = (name: string): Local | undefined => {
      for (let i = scopes.length - 1; i >= 0; i--) { const l = scopes[i]?.get(name); if (l) return l; }
      return undefined;
    };
    for (const p of f.params) newLocal(p.name, p.type, true, p.pos);
    const unknownTarget = (name: string): string => (globalNames.get(name) === 'constant' ? `cannot assign to constant '${name}'` : `unknown variable or field '${name}'`);
    /** A loop bound's value: the literal, or a u64 constant's (null after an error). */
    const boundValue = (b: LoopBound): bigint | null => {
      if ('value' in b) return b.value;
      const k = consts.get(b.name);
      if (k && k.type === 'u64') return k.value;
      if (k) err(b.pos, `loop bound '${b.name}' is a constant of type ${k.type}; bounds are u64`);
      else if (globalNames.get(b.name) !== 'constant') err(b.pos, `loop bound '${b.name}' is not a constant (bounds are integer literals or u64 constants)`);
      return null;
    };

    const inferred = new Map<Expr, Ty | null>();
    // type inference without checking (null = adaptable literal)
    const infer = (e: Expr): Ty | null => {
      switch (e.k) {
        case 'int': return e.suffix;
        case 'hex': return null;
        case 'str': return 'string';
        case 'bool': return 'bool';
        case 'name': {
          const l = lookup(e.name);
          if (l) return l.type;
          const fd = fields.get(e.name);
          if (fd) return fd.key ? 'error' : fd.value;
          return consts.get(e.name)?.type ?? 'error';
        }
        case 'index': { const fd = fields.get(e.name); return fd && fd.key ? fd.value : 'error'; }
        case 'call': {
          const b = builtin(e.name);
          if (b) return e.name === 'concat' ? (e.args[0] ? infer(e.args[0]) ?? 'bytes' : 'error') : b.ret;
          const g = fns.get(e.name);
          return g ? g.ret ?? 'void' : 'error';
        }
        case 'xcall': return e.ret ?? 'void';
        case 'unary': return e.op === '!' ? 'bool' : infer(e.e);
        case 'bin': {
          if (!isArith(e.op)) return 'bool';
          // infer(l) ?? infer(r), down the left spine without recursion; every node of the
          // spine is memoised in the same pass, as the checker asks again at each level
          const known = inferred.get(e);
          if (known !== undefined) return known;
          const spine: BinExpr[] = [];
          let n: Expr = e;
          while (n.k === 'bin' && isArith(n.op) && !inferred.has(n)) { spine.push(n); n = n.l; }
          let t = n.k === 'bin' && isArith(n.op) ? inferred.get(n)! : infer(n);
          for (let i = spine.length - 1; i >= 0; i--) {
            if (t === null) t = infer(spine[i]!.r);
            inferred.set(spine[i]!, t);
          }
          return t;
        }
        case 'cast': return e.to;
      }
    };

    const want = (got: Ty, expected: ValueType, p: Pos, what: string): void => {
      if (got !== 'error' && got !== expected) err(p, `${what}: expected ${expected}, found ${got}`);
    };

    // check an expression for an expected type (null: none); returns its type
    const expr = (e: Expr, expected: ValueType | null): Ty => {
      switch (e.k) {
        case 'int': {
          const t = e.suffix ?? (expected && INT.has(expected) ? expected : 'u64');
          const [lo, hi] = INT_RANGE[t]!;
          if (e.value < lo || e.value > hi) { err(e.pos, `integer literal ${e.value} is out of range for ${t}`); return 'error'; }
          e.note = { ty: t };
          return t;
        }
        case 'hex': {
          if (expected === 'key') {
            if (e.value.length !== 32) { err(e.pos, `a key literal needs 32 bytes, this one has ${e.value.length}`); return 'error'; }
            e.note = { flag: true };
            return 'key';
          }
          return 'bytes';
        }
        case 'str':
          return 'string';
        case 'bool':
          return 'bool';
        case 'name': {
          const l = lookup(e.name);
          if (l) { e.note = { slot: l.slot }; return l.type; }
          const fd = fields.get(e.name);
          if (fd) {
            if (fd.key) { err(e.pos, `'${e.name}' is a map: use ${e.name}[key]`); return 'error'; }
            e.note = { idx: fd.idx };
            return fd.value;
          }
          const k = consts.get(e.name);
          if (k) { e.note = { konst: k }; return k.type; }
          // a constant whose own declaration had an error: that error is reported
          if (globalNames.get(e.name) !== 'constant') err(e.pos, `unknown name '${e.name}'`);
          return 'error';
        }
        case 'index': {
          const fd = fields.get(e.name);
          if (!fd || !fd.key) { err(e.pos, fd ? `'${e.name}' is not a map` : globalNames.get(e.name) === 'constant' ? `'${e.name}' is a constant, not a map` : `unknown map '${e.name}'`); return 'error'; }
          want(expr(e.key, fd.key), fd.key, e.key.pos, `key of ${e.name}`);
          e.note = { idx: fd.idx };
          return fd.value;
        }
        case 'call': return call(e);
        case 'xcall': {
          want(expr(e.target, 'key'), 'key', e.target.pos, 'contract id of call');
          for (const a of e.args) { const t = expr(a, null); if (t === 'void') err(a.pos, 'argument has no value'); }
          if (e.args.length > 255) err(e.pos, 'too many arguments');
          return e.ret ?? 'void';
        }
        case 'unary': {
          if (e.op === '!') { want(expr(e.e, 'bool'), 'bool', e.e.pos, "operand of '!'"); return 'bool'; }
          if (e.e.k === 'int' && (!e.e.suffix || e.e.suffix === 'i64')) {
            const t = e.e.suffix ?? (expected && INT.has(expected) ? expected : 'i64');
            if (t !== 'i64') { err(e.pos, `negative literal for unsigned type ${t}`); return 'error'; }
            const v = -e.e.value;
            if (v < INT_RANGE.i64![0]) { err(e.pos, `integer literal ${v} is out of range for i64`); return 'error'; }
            e.note = { folded: v };
            return 'i64';
          }
          const t = expr(e.e, expected);
          if (t !== 'error' && t !== 'i64') { err(e.pos, `unary '-' needs an i64, found ${t}`); return 'error'; }
          return 'i64';
        }
        case 'cast': {
          const from = infer(e.e);
          const t = expr(e.e, from === null ? e.to : null);
          if (t !== 'error' && !INT.has(t)) { err(e.pos, `only integers can be cast, found ${t}`); return 'error'; }
          if (!INT.has(e.to)) { err(e.pos, `cannot cast to ${e.to}`); return 'error'; }
          e.note = { op: t !== e.to ? OP.CAST : 0 };
          return e.to;
        }
        case 'bin': return binChain(e, expected);
      }
    };

    /**
     * A binary expression and the left operands below it that are binary too: a flat sum of
     * thousands of terms is a tree that deep, so the spine is walked with a loop. Top-down
     * each level fixes the type its left operand is checked for; then the leaf is checked
     * and each level, bottom-up, its right operand and operator.
     */
    const binChain = (top: BinExpr, expected: ValueType | null): Ty => {
      const { levels, leaf } = binSpine(top);
      let exp = expected;
      for (const n of levels) {
        let t: ValueType = 'bool';
        if (n.op !== '&&' && n.op !== '||') {
          const li = infer(n.l), ri = infer(n.r);
          const known = (li && li !== 'void' && li !== 'error' ? li : null) ?? (ri && ri !== 'void' && ri !== 'error' ? ri : null);
          t = known ?? (isArith(n.op) && exp && INT.has(exp) ? exp : n.l.k === 'hex' ? 'bytes' : 'u64');
        }
        n.note = { ty: t };
        exp = t;
      }
      const lt = expr(leaf, exp);
      const chain = { comparisonReported: false };
      return levels.reduceRight((t, level) => binLevel(level, t, chain), lt);
    };
    /** One operator whose left operand (of type lt) is checked. */
    const binLevel = (e: BinExpr, lt: Ty, chain: { comparisonReported: boolean }): Ty => {
      const t = e.note!.ty!;
      if (ORDERING.has(e.op) && e.l.k === 'bin' && (ORDERING.has(e.l.op) || e.l.op === '==' || e.l.op === '!=')) {
        // `a < b < c`: one error for the whole chain, not one per operator
        if (!chain.comparisonReported) err(e.pos, `comparisons cannot be chained: write a ${e.l.op} b && b ${e.op} c`);
        chain.comparisonReported = true;
        expr(e.r, t);
        return 'bool';
      }
      if (e.op === '&&' || e.op === '||') {
        want(lt, 'bool', e.l.pos, `left of '${e.op}'`);
        want(expr(e.r, 'bool'), 'bool', e.r.pos, `right of '${e.op}'`);
        return 'bool';
      }
      const arith = isArith(e.op);
      const rt = expr(e.r, t);
      if (lt === 'error' || rt === 'error') return arith ? 'error' : 'bool';
      if (lt !== rt) { err(e.pos, `operands of '${e.op}' have different types: ${lt} and ${rt}${conversionHint(lt, rt)}`); return arith ? 'error' : 'bool'; }
      e.note = { ty: lt as ValueType };
      if (arith) {
        if (!INT.has(lt)) { err(e.pos, `'${e.op}' needs integers, found ${lt}`); return 'error'; }
        return lt;
      }
      if (e.op === '==' || e.op === '!=') {
        if (lt === 'void') err(e.pos, 'cannot compare values of no type');
        return 'bool';
      }
      if (!INT.has(lt)) err(e.pos, `'${e.op}' needs integers, found ${lt}`);
      return 'bool';
    };

    const call = (e: Extract<Expr, { k: 'call' }>): Ty => {
      const b = builtin(e.name);
      if (b) {
        if (e.args.length !== b.params.length) { err(e.pos, `${e.name} takes ${b.params.length} argument(s), got ${e.args.length}`); return 'error'; }
        if (e.name === 'to_bytes') {
          // a key's 32 bytes, or an integer in the storage layout's encoding (big-endian)
          const arg = e.args[0]!;
          const inf = infer(arg);
          const t = expr(arg, inf === null && arg.k === 'hex' ? 'key' : null);
          if (t === 'error') return 'error';
          if (t === 'key') e.note = { op: OP.TOBYTES };
          else if (INT.has(t)) e.note = { op: OP.INTBYTES, ty: t as ValueType };
          else { err(arg.pos, `to_bytes needs a key or an integer, found ${t}`); return 'error'; }
          return 'bytes';
        }
        if (e.name === 'concat') {
          const t0 = infer(e.args[0]!) ?? infer(e.args[1]!) ?? 'bytes';
          const a = expr(e.args[0]!, t0 === 'string' ? 'string' : 'bytes');
          const c2 = expr(e.args[1]!, a === 'string' ? 'string' : 'bytes');
          if (a === 'error' || c2 === 'error') return 'error';
          if (a !== c2 || (a !== 'bytes' && a !== 'string')) { err(e.pos, `concat needs two bytes or two strings, found ${a} and ${c2}`); return 'error'; }
          e.note = { op: OP.CONCAT };
          return a;
        }
        e.args.forEach((a, i) => {
          const p = b.params[i]!;
          if (p === 'bytes|string') {
            const t = expr(a, 'bytes');
            if (t !== 'error' && t !== 'bytes' && t !== 'string') err(a.pos, `${e.name} needs bytes or a string, found ${t}`);
          } else want(expr(a, p), p, a.pos, `argument ${i + 1} of ${e.name}`);
        });
        e.note = { op: b.op };
        return b.ret;
      }
      const g = fns.get(e.name);
      if (!g) { err(e.pos, `unknown function '${e.name}'`); return 'error'; }
      if (f.readonly && !g.readonly) err(e.pos, `readonly function '${f.name}' cannot call non-readonly '${g.name}'`);
      if (e.args.length !== g.params.length) { err(e.pos, `${g.name} takes ${g.params.length} argument(s), got ${e.args.length}`); return 'error'; }
      e.args.forEach((a, i) => want(expr(a, g.params[i]!.type), g.params[i]!.type, a.pos, `argument '${g.params[i]!.name}' of ${g.name}`));
      return g.ret ?? 'void';
    };

    // statements; returns true when the statement list always returns
    const block = (ss: Stmt[]): boolean => {
      scopes.push(new Map());
      let returns = false;
      for (const s of ss) {
        if (returns) { err(s.pos, 'unreachable statement'); break; }
        returns = stmt(s);
      }
      scopes.pop();
      return returns;
    };
    const stmt = (s: Stmt): boolean => {
      switch (s.k) {
        case 'let': {
          const inf = s.type ?? infer(s.init);
          const t = expr(s.init, s.type ?? (inf === null ? null : inf === 'void' || inf === 'error' ? null : inf));
          if (t === 'void') { err(s.init.pos, 'expression has no value'); return false; }
          if (s.type && t !== 'error' && t !== s.type) err(s.init.pos, `cannot assign ${t} to '${s.name}' of type ${s.type}`);
          const l = newLocal(s.name, (s.type ?? (t === 'error' ? 'u64' : t)) as ValueType, true, s.pos);
          if (l) s.note = { slot: l.slot };
          return false;
        }
        case 'assign': {
          const l = s.key ? undefined : lookup(s.name);
          if (l) {
            if (!l.mutable) err(s.pos, `cannot assign to loop variable '${s.name}'`);
            want(expr(s.value, l.type), l.type, s.value.pos, `assignment to '${s.name}'`);
            s.note = { slot: l.slot };
            return false;
          }
          const fd = fields.get(s.name);
          if (!fd) { err(s.pos, unknownTarget(s.name)); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot write field '${s.name}'`);
          if (s.key) {
            if (!fd.key) { err(s.pos, `'${s.name}' is not a map`); return false; }
            want(expr(s.key, fd.key), fd.key, s.key.pos, `key of ${s.name}`);
          } else if (fd.key) { err(s.pos, `'${s.name}' is a map: assign ${s.name}[key]`); return false; }
          want(expr(s.value, fd.value), fd.value, s.value.pos, `value of ${s.name}`);
          s.note = { idx: fd.idx };
          return false;
        }
        case 'compound': {
          const what = `'${s.op}='`;
          const l = s.key ? undefined : lookup(s.name);
          if (l) {
            if (!l.mutable) err(s.pos, `cannot assign to loop variable '${s.name}'`);
            if (!INT.has(l.type)) { err(s.opPos, `${what} needs an integer, '${s.name}' is ${l.type}`); return false; }
            want(expr(s.value, l.type), l.type, s.value.pos, `right of ${what}`);
            s.note = { slot: l.slot, ty: l.type };
            return false;
          }
          const fd = fields.get(s.name);
          if (!fd) { err(s.pos, unknownTarget(s.name)); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot write field '${s.name}'`);
          if (!!fd.key !== !!s.key) { err(s.pos, fd.key ? `'${s.name}' is a map: use ${s.name}[key] ${s.op}= ...` : `'${s.name}' is not a map`); return false; }
          if (!INT.has(fd.value)) { err(s.opPos, `${what} needs an integer, '${s.name}' holds ${fd.value}`); return false; }
          s.note = { idx: fd.idx, ty: fd.value };
          if (s.key && fd.key) {
            // the key is evaluated once (it may call other code), kept in a hidden local
            want(expr(s.key, fd.key), fd.key, s.key.pos, `key of ${s.name}`);
            let tmp = keyTemps.get(fd.key);
            if (tmp === undefined) { tmp = allocSlot(s.pos) ?? 0; keyTemps.set(fd.key, tmp); }
            s.note.keySlot = tmp;
          }
          want(expr(s.value, fd.value), fd.value, s.value.pos, `right of ${what}`);
          return false;
        }
        case 'if': {
          // an else-if chain is walked with a loop (the parser reads it the same way)
          const { arms, last } = ifArms(s);
          let allReturn = true;
          for (const arm of arms) {
            want(expr(arm.cond, 'bool'), 'bool', arm.cond.pos, 'if condition');
            const r = block(arm.then);
            arm.note = { returns: r };
            allReturn = allReturn && r;
          }
          if (!last) return false;
          const r2 = block(last);
          return allReturn && r2;
        }
        case 'for': {
          const from = boundValue(s.from);
          const to = boundValue(s.to);
          if (from === null || to === null) return false;
          const n = to - from;
          if (to > U64_MAX || n < 0n) { err(s.pos, 'loop range must be a..b with a <= b'); return false; }
          if (n > BigInt(LIMITS.loopBound)) { err(s.pos, `loop runs ${n} times, at most ${LIMITS.loopBound} allowed`); return false; }
          if (n === 0n) return false; // no code: the body never runs
          scopes.push(new Map());
          const counter = allocSlot(s.pos) ?? 0;
          s.note = { slot: counter, range: { from, to } };
          if (from === 0n) {
            if (fields.has(s.name)) err(s.pos, `'${s.name}' shadows a field`);
            if (lookup(s.name)) err(s.pos, `variable '${s.name}' is already declared`);
            innermost().set(s.name, { slot: counter, type: 'u64', mutable: false });
          } else {
            const user = newLocal(s.name, 'u64', false, s.pos);
            if (user) s.note.userSlot = user.slot;
          }
          loopDepth++;
          block(s.body);
          loopDepth--;
          scopes.pop();
          return false;
        }
        case 'break': case 'continue': {
          if (loopDepth === 0) { err(s.pos, `'${s.k}' outside a loop`); return false; }
          return true;
        }
        case 'return': {
          if (f.ret) {
            if (!s.value) { err(s.pos, `function '${f.name}' must return a ${f.ret}`); return true; }
            want(expr(s.value, f.ret), f.ret, s.value.pos, 'return value');
          } else if (s.value) {
            err(s.value.pos, `function '${f.name}' returns no value`);
          }
          return true;
        }
        case 'require':
          want(expr(s.cond, 'bool'), 'bool', s.cond.pos, 'require condition');
          return false;
        case 'emit': {
          const ev = events.get(s.name);
          if (!ev) { err(s.pos, `unknown event '${s.name}'`); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot emit events`);
          if (s.args.length !== ev.params.length) { err(s.pos, `event ${s.name} takes ${ev.params.length} argument(s), got ${s.args.length}`); return false; }
          s.args.forEach((a, i) => want(expr(a, ev.params[i]!), ev.params[i]!, a.pos, `argument ${i + 1} of event ${s.name}`));
          s.note = { idx: ev.idx };
          return false;
        }
        case 'expr': {
          if (s.e.k !== 'call' && s.e.k !== 'xcall') err(s.pos, 'expression statement has no effect');
          const t = expr(s.e, null);
          s.note = { flag: t !== 'void' && t !== 'error' };
          return false;
        }
      }
    };

    const returns = block(f.body);
    if (!returns && f.ret) err(f.pos, `function '${f.name}' may end without returning a ${f.ret}`);
    f.note = { nlocals, returns };
  }
}

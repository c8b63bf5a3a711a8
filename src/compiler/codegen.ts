/** Type checker and code generator: AST -> bytecode, ABI, offsets, constants. */
import type { ValueType } from '../protocol/value.js';
import { FUNC_READONLY, LIMITS, OP, TY } from '../vm/isa.js';
import type { AbiEntry, ArtifactCore, ConstantEntry } from '../vm/types.js';
import type { ContractDecl, Expr, FnDecl, Pos, Stmt } from './ast.js';
import type { CompileError } from './parser.js';
import { INTERFACES } from './stdlib.js';

type Ty = ValueType | 'void' | 'error';
const INT = new Set<Ty>(['u64', 'i64', 'u128']);
const RANGE: Record<string, [bigint, bigint]> = {
  u64: [0n, (1n << 64n) - 1n],
  i64: [-(1n << 63n), (1n << 63n) - 1n],
  u128: [0n, (1n << 128n) - 1n],
};
const ARITH_BASE: Record<string, number> = { u64: OP.ADD_U64, i64: OP.ADD_I64, u128: OP.ADD_U128 };
const ARITH_K: Record<string, number> = { '+': 0, '-': 1, '*': 2, '/': 3, '%': 4 };
const isArith = (op: string): boolean => ARITH_K[op] !== undefined;
const ORDERING = new Set(['<', '<=', '>', '>=']);
type BinExpr = Extract<Expr, { k: 'bin' }>;

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
interface LoopCtx { breaks: number[]; continues: number[] }

/** What to suggest when two operands differ in type: only conversions that exist. */
function conversionHint(a: Ty, b: Ty): string {
  if (INT.has(a) && INT.has(b)) return " (use 'as' to convert)";
  const pair = new Set([a, b]);
  if (pair.has('key') && pair.has('bytes')) return ' (use to_bytes or to_key to convert)';
  if (pair.has('bytes') && INT.has(a === 'bytes' ? b : a)) return ' (use to_bytes to turn the integer into bytes)';
  return '';
}

export interface CodegenResult { core: ArtifactCore; interfaces: string[] }

export function generate(c: ContractDecl, file: string): { ok: true; result: CodegenResult } | { ok: false; errors: CompileError[] } {
  const errors: CompileError[] = [];
  const err = (p: Pos, m: string): void => {
    errors.push({ file, line: p.line, col: p.col, message: m });
  };
  const code: number[] = [];
  const constants: ConstantEntry[] = [];
  const constIdx = new Map<string, number>();

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

  // ---- emission helpers ----
  const u8 = (x: number): void => { code.push(x & 0xff); };
  const u16 = (x: number): void => { code.push(x & 0xff, (x >>> 8) & 0xff); };
  const u32 = (x: number): void => { code.push(x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff); };
  const patch32 = (at: number, v: number): void => { code[at] = v & 0xff; code[at + 1] = (v >>> 8) & 0xff; code[at + 2] = (v >>> 16) & 0xff; code[at + 3] = (v >>> 24) & 0xff; };
  const jump = (op: number): number => { u8(op); const at = code.length; u32(0); return at; };
  const here = (): number => code.length;
  const constant = (e: ConstantEntry): number => {
    const k = `${e.type}:${e.value}`;
    let i = constIdx.get(k);
    if (i === undefined) {
      i = constants.length;
      constants.push(e);
      constIdx.set(k, i);
    }
    return i;
  };
  const intConst = (t: ValueType, v: bigint): number => {
    const safe = v >= -9007199254740991n && v <= 9007199254740991n;
    return constant({ type: t as 'u64', value: safe ? Number(v) : v.toString() });
  };
  const strConst = (s: string): number => constant({ type: 'string', value: s });

  const fnOffsets = new Map<string, number>();
  const callPatches: { at: number; name: string }[] = [];
  const localsCount = new Map<number, number>();

  for (const f of c.fns) {
    if (!fns.has(f.name) || fns.get(f.name) !== f) continue;
    compileFn(f);
  }
  for (const p of callPatches) patch32(p.at, fnOffsets.get(p.name) ?? 0);
  if (code.length > LIMITS.bytecodeBytes) err(c.pos, `bytecode is ${code.length} bytes, more than ${LIMITS.bytecodeBytes}`);
  if (constants.length > 65535) err(c.pos, 'too many constants');
  if (errors.length) return { ok: false, errors };

  const abi: AbiEntry[] = [];
  for (const f of c.fields) abi.push({ type: 'field', name: f.name, key: f.key, value: f.value });
  for (const e of c.events) abi.push({ type: 'event', name: e.name, inputs: e.params.map((p) => ({ name: p.name, type: p.type })) });
  for (const f of c.fns) {
    if (!f.pub) continue;
    abi.push({ type: 'function', name: f.name, inputs: f.params.map((p) => ({ name: p.name, type: p.type })), outputs: f.ret ? [{ type: f.ret }] : [], readonly: f.readonly });
  }
  // Object.fromEntries defines own properties, so even a function named __proto__ is safe.
  const function_offsets: Record<string, number> = Object.fromEntries(c.fns.map((f) => [f.name, fnOffsets.get(f.name)!]));
  const function_offset_to_locals: Record<string, number> = Object.fromEntries(c.fns.map((f) => [String(fnOffsets.get(f.name)!), localsCount.get(fnOffsets.get(f.name)!)!]));
  const core: ArtifactCore = { bytecode: Buffer.from(code).toString('hex'), abi, function_offsets, function_offset_to_locals, constants };
  return { ok: true, result: { core, interfaces } };

  // ---- functions ----
  function compileFn(f: FnDecl): void {
    const off = here();
    fnOffsets.set(f.name, off);
    u8(OP.FUNC);
    u8(f.readonly ? FUNC_READONLY : 0);
    u8(f.params.length);
    const nlocalsAt = here();
    u8(0);
    u8(f.ret ? TY[f.ret] : 0);
    for (const p of f.params) u8(TY[p.type]);
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
    const loops: LoopCtx[] = [];
    const newLocal = (name: string, type: ValueType, mutable: boolean, p: Pos): Local | null => {
      if (fields.has(name)) err(p, `'${name}' shadows a field`);
      for (const s of scopes) if (s.has(name)) { err(p, `variable '${name}' is already declared`); break; }
      const slot = allocSlot(p);
      if (slot === null) return null;
      const l = { slot, type, mutable };
      scopes[scopes.length - 1]!.set(name, l);
      return l;
    };
    const lookup = (name: string): Local | undefined => {
      for (let i = scopes.length - 1; i >= 0; i--) { const l = scopes[i]!.get(name); if (l) return l; }
      return undefined;
    };
    for (const p of f.params) newLocal(p.name, p.type, true, p.pos);

    const inferred = new Map<Expr, Ty | null>();
    // type inference without code (null = adaptable literal)
    const infer = (e: Expr): Ty | null => {
      switch (e.k) {
        case 'int': return e.suffix;
        case 'hex': return null;
        case 'str': return 'string';
        case 'bool': return 'bool';
        case 'name': { const l = lookup(e.name); if (l) return l.type; const fd = fields.get(e.name); return fd && !fd.key ? fd.value : 'error'; }
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
          // infer(l) ?? infer(r), down the left spine without recursion; memoised because
          // the generator asks again at every level of a long chain
          const known = inferred.get(e);
          if (known !== undefined) return known;
          const rights: Expr[] = [];
          let n: Expr = e;
          while (n.k === 'bin' && isArith(n.op)) { rights.push(n.r); n = n.l; }
          let t = infer(n);
          for (let i = rights.length - 1; i >= 0 && t === null; i--) t = infer(rights[i]!);
          inferred.set(e, t);
          return t;
        }
        case 'cast': return e.to;
      }
    };

    const want = (got: Ty, expected: ValueType, p: Pos, what: string): void => {
      if (got !== 'error' && got !== expected) err(p, `${what}: expected ${expected}, found ${got}`);
    };

    // generate code for an expression; returns its type
    const gen = (e: Expr, expected: ValueType | null): Ty => {
      switch (e.k) {
        case 'int': {
          const t = e.suffix ?? (expected && INT.has(expected) ? expected : 'u64');
          const [lo, hi] = RANGE[t]!;
          if (e.value < lo || e.value > hi) { err(e.pos, `integer literal ${e.value} is out of range for ${t}`); return 'error'; }
          u8(OP.CONST); u16(intConst(t, e.value));
          return t;
        }
        case 'hex': {
          if (expected === 'key') {
            if (e.value.length !== 32) { err(e.pos, `a key literal needs 32 bytes, this one has ${e.value.length}`); return 'error'; }
            u8(OP.CONST); u16(constant({ type: 'key', value: Buffer.from(e.value).toString('hex') }));
            return 'key';
          }
          u8(OP.CONST); u16(constant({ type: 'bytes', value: Buffer.from(e.value).toString('hex') }));
          return 'bytes';
        }
        case 'str':
          u8(OP.CONST); u16(strConst(e.value));
          return 'string';
        case 'bool':
          u8(e.value ? OP.TRUE : OP.FALSE);
          return 'bool';
        case 'name': {
          const l = lookup(e.name);
          if (l) { u8(OP.LOAD); u8(l.slot); return l.type; }
          const fd = fields.get(e.name);
          if (fd) {
            if (fd.key) { err(e.pos, `'${e.name}' is a map: use ${e.name}[key]`); return 'error'; }
            u8(OP.SLOAD); u16(fd.idx);
            return fd.value;
          }
          err(e.pos, `unknown name '${e.name}'`);
          return 'error';
        }
        case 'index': {
          const fd = fields.get(e.name);
          if (!fd || !fd.key) { err(e.pos, fd ? `'${e.name}' is not a map` : `unknown map '${e.name}'`); return 'error'; }
          want(gen(e.key, fd.key), fd.key, e.key.pos, `key of ${e.name}`);
          u8(OP.MLOAD); u16(fd.idx);
          return fd.value;
        }
        case 'call': return genCall(e);
        case 'xcall': {
          want(gen(e.target, 'key'), 'key', e.target.pos, 'contract id of call');
          for (const a of e.args) { const t = gen(a, null); if (t === 'void') err(a.pos, 'argument has no value'); }
          if (e.args.length > 255) err(e.pos, 'too many arguments');
          u8(OP.XCALL); u16(strConst(e.fn)); u8(e.args.length); u8(e.ret ? TY[e.ret] : 0);
          return e.ret ?? 'void';
        }
        case 'unary': {
          if (e.op === '!') { want(gen(e.e, 'bool'), 'bool', e.e.pos, "operand of '!'"); u8(OP.NOT); return 'bool'; }
          if (e.e.k === 'int' && !e.e.suffix || e.e.k === 'int' && e.e.suffix === 'i64') {
            const t = (e.e as { suffix: ValueType | null }).suffix ?? (expected && INT.has(expected) ? expected : 'i64');
            if (t !== 'i64') { err(e.pos, `negative literal for unsigned type ${t}`); return 'error'; }
            const v = -(e.e as { value: bigint }).value;
            if (v < RANGE.i64![0]) { err(e.pos, `integer literal ${v} is out of range for i64`); return 'error'; }
            u8(OP.CONST); u16(intConst('i64', v));
            return 'i64';
          }
          const t = gen(e.e, expected);
          if (t !== 'error' && t !== 'i64') { err(e.pos, `unary '-' needs an i64, found ${t}`); return 'error'; }
          u8(OP.NEG_I64);
          return 'i64';
        }
        case 'cast': {
          const from = infer(e.e);
          const t = gen(e.e, from === null ? e.to : null);
          if (t !== 'error' && !INT.has(t)) { err(e.pos, `only integers can be cast, found ${t}`); return 'error'; }
          if (!INT.has(e.to)) { err(e.pos, `cannot cast to ${e.to}`); return 'error'; }
          if (t !== e.to) { u8(OP.CAST); u8(TY[e.to]); }
          return e.to;
        }
        case 'bin': return genBinChain(e, expected);
      }
    };

    /**
     * A binary expression and the left operands below it that are binary too: a flat sum of
     * thousands of terms is a tree that deep, so the spine is walked with a loop. Top-down
     * each level fixes the type its left operand is generated for; then the leaf is
     * generated and each level, bottom-up, adds its right operand and operator.
     */
    const genBinChain = (top: BinExpr, expected: ValueType | null): Ty => {
      const levels: { e: BinExpr; t: ValueType }[] = [];
      let n: Expr = top;
      let exp = expected;
      while (n.k === 'bin') {
        let t: ValueType = 'bool';
        if (n.op !== '&&' && n.op !== '||') {
          const li = infer(n.l), ri = infer(n.r);
          const known = (li && li !== 'void' && li !== 'error' ? li : null) ?? (ri && ri !== 'void' && ri !== 'error' ? ri : null);
          t = known ?? (isArith(n.op) && exp && INT.has(exp) ? exp : n.l.k === 'hex' ? 'bytes' : 'u64');
        }
        levels.push({ e: n, t });
        exp = t;
        n = n.l;
      }
      let lt = gen(n, exp);
      const chain = { comparisonReported: false };
      for (let i = levels.length - 1; i >= 0; i--) lt = genBinLevel(levels[i]!.e, lt, levels[i]!.t, chain);
      return lt;
    };
    /** One operator whose left operand (of type lt) is already generated. */
    const genBinLevel = (e: BinExpr, lt: Ty, t: ValueType, chain: { comparisonReported: boolean }): Ty => {
      if (ORDERING.has(e.op) && e.l.k === 'bin' && (ORDERING.has(e.l.op) || e.l.op === '==' || e.l.op === '!=')) {
        // `a < b < c`: one error for the whole chain, not one per operator
        if (!chain.comparisonReported) err(e.pos, `comparisons cannot be chained: write a ${e.l.op} b && b ${e.op} c`);
        chain.comparisonReported = true;
        gen(e.r, t);
        return 'bool';
      }
      if (e.op === '&&' || e.op === '||') {
        want(lt, 'bool', e.l.pos, `left of '${e.op}'`);
        if (e.op === '&&') {
          const j1 = jump(OP.JMPF);
          want(gen(e.r, 'bool'), 'bool', e.r.pos, "right of '&&'");
          const j2 = jump(OP.JMP);
          patch32(j1, here()); u8(OP.FALSE);
          patch32(j2, here());
        } else {
          const j1 = jump(OP.JMPF);
          u8(OP.TRUE);
          const j2 = jump(OP.JMP);
          patch32(j1, here());
          want(gen(e.r, 'bool'), 'bool', e.r.pos, "right of '||'");
          patch32(j2, here());
        }
        return 'bool';
      }
      const arith = isArith(e.op);
      const rt = gen(e.r, t);
      if (lt === 'error' || rt === 'error') return arith ? 'error' : 'bool';
      if (lt !== rt) { err(e.pos, `operands of '${e.op}' have different types: ${lt} and ${rt}${conversionHint(lt, rt)}`); return arith ? 'error' : 'bool'; }
      if (arith) {
        if (!INT.has(lt)) { err(e.pos, `'${e.op}' needs integers, found ${lt}`); return 'error'; }
        u8(ARITH_BASE[lt]! + ARITH_K[e.op]!);
        return lt;
      }
      if (e.op === '==' || e.op === '!=') {
        if (lt === 'void') { err(e.pos, 'cannot compare values of no type'); return 'bool'; }
        u8(e.op === '==' ? OP.EQ : OP.NE);
        return 'bool';
      }
      if (!INT.has(lt)) { err(e.pos, `'${e.op}' needs integers, found ${lt}`); return 'bool'; }
      u8({ '<': OP.LT, '<=': OP.LE, '>': OP.GT, '>=': OP.GE }[e.op as '<']);
      return 'bool';
    };

    const genCall = (e: Extract<Expr, { k: 'call' }>): Ty => {
      const b = builtin(e.name);
      if (b) {
        if (e.args.length !== b.params.length) { err(e.pos, `${e.name} takes ${b.params.length} argument(s), got ${e.args.length}`); return 'error'; }
        if (e.name === 'to_bytes') {
          // a key's 32 bytes, or an integer in the storage layout's encoding (big-endian)
          const arg = e.args[0]!;
          const inf = infer(arg);
          const t = gen(arg, inf === null && arg.k === 'hex' ? 'key' : null);
          if (t === 'error') return 'error';
          if (t === 'key') u8(OP.TOBYTES);
          else if (INT.has(t)) { u8(OP.INTBYTES); u8(TY[t as 'u64']); }
          else { err(arg.pos, `to_bytes needs a key or an integer, found ${t}`); return 'error'; }
          return 'bytes';
        }
        if (e.name === 'concat') {
          const t0 = infer(e.args[0]!) ?? infer(e.args[1]!) ?? 'bytes';
          const a = gen(e.args[0]!, t0 === 'string' ? 'string' : 'bytes');
          const c2 = gen(e.args[1]!, a === 'string' ? 'string' : 'bytes');
          if (a === 'error' || c2 === 'error') return 'error';
          if (a !== c2 || (a !== 'bytes' && a !== 'string')) { err(e.pos, `concat needs two bytes or two strings, found ${a} and ${c2}`); return 'error'; }
          u8(OP.CONCAT);
          return a;
        }
        e.args.forEach((a, i) => {
          const p = b.params[i]!;
          if (p === 'bytes|string') {
            const t = gen(a, 'bytes');
            if (t !== 'error' && t !== 'bytes' && t !== 'string') err(a.pos, `${e.name} needs bytes or a string, found ${t}`);
          } else want(gen(a, p), p, a.pos, `argument ${i + 1} of ${e.name}`);
        });
        u8(b.op);
        return b.ret;
      }
      const g = fns.get(e.name);
      if (!g) { err(e.pos, `unknown function '${e.name}'`); return 'error'; }
      if (f.readonly && !g.readonly) err(e.pos, `readonly function '${f.name}' cannot call non-readonly '${g.name}'`);
      if (e.args.length !== g.params.length) { err(e.pos, `${g.name} takes ${g.params.length} argument(s), got ${e.args.length}`); return 'error'; }
      e.args.forEach((a, i) => want(gen(a, g.params[i]!.type), g.params[i]!.type, a.pos, `argument '${g.params[i]!.name}' of ${g.name}`));
      u8(OP.CALL);
      callPatches.push({ at: here(), name: g.name });
      u32(0);
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
          const t = gen(s.init, s.type ?? (inf === null ? null : inf === 'void' || inf === 'error' ? null : inf));
          if (t === 'void') { err(s.init.pos, 'expression has no value'); return false; }
          if (s.type && t !== 'error' && t !== s.type) err(s.init.pos, `cannot assign ${t} to '${s.name}' of type ${s.type}`);
          const l = newLocal(s.name, (s.type ?? (t === 'error' ? 'u64' : t)) as ValueType, true, s.pos);
          if (l) { u8(OP.STORE); u8(l.slot); }
          return false;
        }
        case 'assign': {
          const l = s.key ? undefined : lookup(s.name);
          if (l) {
            if (!l.mutable) err(s.pos, `cannot assign to loop variable '${s.name}'`);
            want(gen(s.value, l.type), l.type, s.value.pos, `assignment to '${s.name}'`);
            u8(OP.STORE); u8(l.slot);
            return false;
          }
          const fd = fields.get(s.name);
          if (!fd) { err(s.pos, `unknown variable or field '${s.name}'`); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot write field '${s.name}'`);
          if (s.key) {
            if (!fd.key) { err(s.pos, `'${s.name}' is not a map`); return false; }
            want(gen(s.key, fd.key), fd.key, s.key.pos, `key of ${s.name}`);
            want(gen(s.value, fd.value), fd.value, s.value.pos, `value of ${s.name}`);
            u8(OP.MSTORE); u16(fd.idx);
          } else {
            if (fd.key) { err(s.pos, `'${s.name}' is a map: assign ${s.name}[key]`); return false; }
            want(gen(s.value, fd.value), fd.value, s.value.pos, `value of ${s.name}`);
            u8(OP.SSTORE); u16(fd.idx);
          }
          return false;
        }
        case 'compound': {
          const what = `'${s.op}='`;
          const l = s.key ? undefined : lookup(s.name);
          if (l) {
            if (!l.mutable) err(s.pos, `cannot assign to loop variable '${s.name}'`);
            if (!INT.has(l.type)) { err(s.opPos, `${what} needs an integer, '${s.name}' is ${l.type}`); return false; }
            u8(OP.LOAD); u8(l.slot);
            want(gen(s.value, l.type), l.type, s.value.pos, `right of ${what}`);
            u8(ARITH_BASE[l.type]! + ARITH_K[s.op]!);
            u8(OP.STORE); u8(l.slot);
            return false;
          }
          const fd = fields.get(s.name);
          if (!fd) { err(s.pos, `unknown variable or field '${s.name}'`); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot write field '${s.name}'`);
          if (!!fd.key !== !!s.key) { err(s.pos, fd.key ? `'${s.name}' is a map: use ${s.name}[key] ${s.op}= ...` : `'${s.name}' is not a map`); return false; }
          if (!INT.has(fd.value)) { err(s.opPos, `${what} needs an integer, '${s.name}' holds ${fd.value}`); return false; }
          if (s.key && fd.key) {
            // the key is evaluated once (it may call other code), kept in a hidden local
            want(gen(s.key, fd.key), fd.key, s.key.pos, `key of ${s.name}`);
            let tmp = keyTemps.get(fd.key);
            if (tmp === undefined) { tmp = allocSlot(s.pos) ?? 0; keyTemps.set(fd.key, tmp); }
            u8(OP.STORE); u8(tmp); u8(OP.LOAD); u8(tmp); u8(OP.LOAD); u8(tmp);
            u8(OP.MLOAD); u16(fd.idx);
          } else {
            u8(OP.SLOAD); u16(fd.idx);
          }
          want(gen(s.value, fd.value), fd.value, s.value.pos, `right of ${what}`);
          u8(ARITH_BASE[fd.value]! + ARITH_K[s.op]!);
          u8(s.key ? OP.MSTORE : OP.SSTORE); u16(fd.idx);
          return false;
        }
        case 'if': {
          // an else-if chain is walked with a loop (the parser reads it the same way)
          const ends: number[] = [];
          let arm: Extract<Stmt, { k: 'if' }> = s;
          let allReturn = true;
          for (;;) {
            want(gen(arm.cond, 'bool'), 'bool', arm.cond.pos, 'if condition');
            const jf = jump(OP.JMPF);
            const r1 = block(arm.then);
            if (!arm.else) { patch32(jf, here()); allReturn = false; break; }
            allReturn = allReturn && r1;
            if (!r1) ends.push(jump(OP.JMP));
            patch32(jf, here());
            const only = arm.else.length === 1 ? arm.else[0]! : null;
            if (only && only.k === 'if') { arm = only; continue; }
            const r2 = block(arm.else); // always generated: `&&=` would skip it
            allReturn &&= r2;
            break;
          }
          for (const j of ends) patch32(j, here());
          return allReturn;
        }
        case 'for': {
          const n = s.to - s.from;
          if (s.to > (1n << 64n) - 1n || n < 0n) { err(s.pos, 'loop range must be a..b with a <= b'); return false; }
          if (n > BigInt(LIMITS.loopBound)) { err(s.pos, `loop runs ${n} times, at most ${LIMITS.loopBound} allowed`); return false; }
          if (n === 0n) return false;
          scopes.push(new Map());
          const counter = allocSlot(s.pos) ?? 0;
          u8(OP.CONST); u16(intConst('u64', 0n)); u8(OP.STORE); u8(counter);
          let user: Local | null;
          if (s.from === 0n) {
            user = { slot: counter, type: 'u64', mutable: false };
            if (fields.has(s.name)) err(s.pos, `'${s.name}' shadows a field`);
            if (lookup(s.name)) err(s.pos, `variable '${s.name}' is already declared`);
            scopes[scopes.length - 1]!.set(s.name, user);
          } else user = newLocal(s.name, 'u64', false, s.pos);
          const head = here();
          if (user && s.from !== 0n) {
            u8(OP.LOAD); u8(counter); u8(OP.CONST); u16(intConst('u64', s.from)); u8(OP.ADD_U64); u8(OP.STORE); u8(user.slot);
          }
          const lp: LoopCtx = { breaks: [], continues: [] };
          loops.push(lp);
          block(s.body);
          loops.pop();
          const cont = here();
          u8(OP.LOOP); u8(counter); u32(Number(n)); u32(head);
          const end = here();
          for (const b of lp.continues) patch32(b, cont);
          for (const b of lp.breaks) patch32(b, end);
          scopes.pop();
          return false;
        }
        case 'break': case 'continue': {
          const lp = loops[loops.length - 1];
          if (!lp) { err(s.pos, `'${s.k}' outside a loop`); return false; }
          (s.k === 'break' ? lp.breaks : lp.continues).push(jump(OP.JMP));
          return true;
        }
        case 'return': {
          if (f.ret) {
            if (!s.value) { err(s.pos, `function '${f.name}' must return a ${f.ret}`); return true; }
            want(gen(s.value, f.ret), f.ret, s.value.pos, 'return value');
          } else if (s.value) {
            err(s.value.pos, `function '${f.name}' returns no value`);
          }
          u8(OP.RET);
          return true;
        }
        case 'require':
          want(gen(s.cond, 'bool'), 'bool', s.cond.pos, 'require condition');
          u8(OP.REQUIRE); u16(strConst(s.msg));
          return false;
        case 'emit': {
          const ev = events.get(s.name);
          if (!ev) { err(s.pos, `unknown event '${s.name}'`); return false; }
          if (f.readonly) err(s.pos, `readonly function '${f.name}' cannot emit events`);
          if (s.args.length !== ev.params.length) { err(s.pos, `event ${s.name} takes ${ev.params.length} argument(s), got ${s.args.length}`); return false; }
          s.args.forEach((a, i) => want(gen(a, ev.params[i]!), ev.params[i]!, a.pos, `argument ${i + 1} of event ${s.name}`));
          u8(OP.EMIT); u16(ev.idx);
          return false;
        }
        case 'expr': {
          if (s.e.k !== 'call' && s.e.k !== 'xcall') err(s.pos, 'expression statement has no effect');
          const t = gen(s.e, null);
          if (t !== 'void' && t !== 'error') u8(OP.POP);
          return false;
        }
      }
    };

    const returns = block(f.body);
    if (!returns) {
      if (f.ret) err(f.pos, `function '${f.name}' may end without returning a ${f.ret}`);
      else u8(OP.RET);
    }
    code[nlocalsAt] = nlocals;
    localsCount.set(off, nlocals);
  }
}

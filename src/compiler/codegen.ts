/**
 * Code generator: a checked tree (checker.ts) -> bytecode, ABI, offsets, constants. It only
 * emits: every type, slot and index it needs is in the nodes' notes, and it reports no
 * errors of its own but the constant pool's size (the artifact's size is index.ts's).
 */
import type { Value, ValueType } from '@svc-node/protocol/value';
import { FUNC_READONLY, OP, TY } from '@svc-node/protocol/vm/isa';
import type { AbiEntry, CompiledCore, ConstantEntry } from '@svc-node/protocol/contract';
import type { Expr, FnDecl, Note, Pos, Stmt } from './ast.js';
import { ARITH_BASE, ARITH_K, binSpine, ifArms, type BinExpr, type Checked } from './checker.js';
import type { CompileError } from './parser.js';

export interface CodegenResult {
  core: CompiledCore;
  interfaces: string[];
  /** Where each string or hex constant is first used (by constant index), for size errors. */
  literalPos: Map<number, Pos>;
}

interface LoopCtx { breaks: number[]; continues: number[] }

/** The note the checker left on a node it accepted (absent only where a node needs none). */
function note(n: { note?: Note }): Note {
  return n.note ?? {};
}

export function generate(checked: Checked, file: string): { ok: true; result: CodegenResult } | { ok: false; errors: CompileError[] } {
  const c = checked.contract;
  const code: number[] = [];
  const constants: ConstantEntry[] = [];
  const constIdx = new Map<string, number>();

  const u8 = (x: number): void => { code.push(x & 0xff); };
  const u16 = (x: number): void => { code.push(x & 0xff, (x >>> 8) & 0xff); };
  const u32 = (x: number): void => { code.push(x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff); };
  const patch32 = (at: number, v: number): void => { code[at] = v & 0xff; code[at + 1] = (v >>> 8) & 0xff; code[at + 2] = (v >>> 16) & 0xff; code[at + 3] = (v >>> 24) & 0xff; };
  const jump = (op: number): number => { u8(op); const at = code.length; u32(0); return at; };
  const here = (): number => code.length;
  // constants in first-use order, each distinct (type, value) once
  const literalPos = new Map<number, Pos>();
  const constant = (e: ConstantEntry, pos?: Pos): number => {
    const k = `${e.type}:${e.value}`;
    let i = constIdx.get(k);
    if (i === undefined) {
      i = constants.length;
      constants.push(e);
      constIdx.set(k, i);
      if (pos) literalPos.set(i, pos);
    }
    return i;
  };
  const intConst = (t: ValueType, v: bigint): number => {
    const safe = v >= -9007199254740991n && v <= 9007199254740991n;
    return constant({ type: t as 'u64', value: safe ? Number(v) : v.toString() });
  };
  const strConst = (s: string, pos?: Pos): number => constant({ type: 'string', value: s }, pos);

  const fnOffsets = new Map<string, number>();
  const callPatches: { at: number; name: string }[] = [];
  const localsCount = new Map<number, number>();

  for (const f of checked.fns) emitFn(f);
  for (const p of callPatches) patch32(p.at, fnOffsets.get(p.name) ?? 0);
  const errors: CompileError[] = [];
  if (constants.length > 65535) errors.push({ file, line: c.pos.line, col: c.pos.col, message: 'too many constants' });
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
  const core: CompiledCore = { bytecode: Buffer.from(code).toString('hex'), abi, function_offsets, function_offset_to_locals, constants };
  return { ok: true, result: { core, interfaces: checked.interfaces, literalPos } };

  function emitFn(f: FnDecl): void {
    const off = here();
    fnOffsets.set(f.name, off);
    const nlocals = f.note!.nlocals;
    u8(OP.FUNC);
    u8(f.readonly ? FUNC_READONLY : 0);
    u8(f.params.length);
    u8(nlocals);
    u8(f.ret ? TY[f.ret] : 0);
    for (const p of f.params) u8(TY[p.type]);
    localsCount.set(off, nlocals);
    const loops: LoopCtx[] = [];

    const expr = (e: Expr): void => {
      const n = note(e);
      switch (e.k) {
        case 'int': u8(OP.CONST); u16(intConst(n.ty!, e.value)); return;
        case 'hex': u8(OP.CONST); u16(constant({ type: n.flag ? 'key' : 'bytes', value: Buffer.from(e.value).toString('hex') }, e.pos)); return;
        case 'str': u8(OP.CONST); u16(strConst(e.value, e.pos)); return;
        case 'bool': u8(e.value ? OP.TRUE : OP.FALSE); return;
        case 'name':
          if (n.konst) { konst(n.konst); return; }
          if (n.slot !== undefined) { u8(OP.LOAD); u8(n.slot); } else { u8(OP.SLOAD); u16(n.idx!); }
          return;
        case 'index': expr(e.key); u8(OP.MLOAD); u16(n.idx!); return;
        case 'call':
          if (n.op === undefined) {
            e.args.forEach(expr);
            u8(OP.CALL);
            callPatches.push({ at: here(), name: e.name });
            u32(0);
            return;
          }
          e.args.forEach(expr);
          u8(n.op);
          if (n.op === OP.INTBYTES) u8(TY[n.ty!]);
          return;
        case 'xcall':
          expr(e.target);
          e.args.forEach(expr);
          u8(OP.XCALL); u16(strConst(e.fn)); u8(e.args.length); u8(e.ret ? TY[e.ret] : 0);
          return;
        case 'unary':
          if (e.op === '!') { expr(e.e); u8(OP.NOT); return; }
          if (n.folded !== undefined) { u8(OP.CONST); u16(intConst('i64', n.folded)); return; }
          expr(e.e);
          u8(OP.NEG_I64);
          return;
        case 'cast':
          expr(e.e);
          if (n.op) { u8(OP.CAST); u8(TY[e.to]); }
          return;
        case 'bin': binChain(e); return;
      }
    };

    /** A constant's folded value, emitted exactly as its literal would be (same opcode, same pool entry). */
    const konst = (v: Value): void => {
      switch (v.type) {
        case 'bool': u8(v.value ? OP.TRUE : OP.FALSE); return;
        case 'string': u8(OP.CONST); u16(strConst(v.value)); return;
        case 'bytes': case 'key': u8(OP.CONST); u16(constant({ type: v.type, value: Buffer.from(v.value).toString('hex') })); return;
        default: u8(OP.CONST); u16(intConst(v.type, v.value));
      }
    };

    /** The left spine with a loop, as the checker walks it: the leaf, then each level's right operand and operator. */
    const binChain = (top: BinExpr): void => {
      const { levels, leaf } = binSpine(top);
      expr(leaf);
      for (let i = levels.length - 1; i >= 0; i--) binLevel(levels[i]!);
    };
    const binLevel = (e: BinExpr): void => {
      if (e.op === '&&') {
        const j1 = jump(OP.JMPF);
        expr(e.r);
        const j2 = jump(OP.JMP);
        patch32(j1, here()); u8(OP.FALSE);
        patch32(j2, here());
        return;
      }
      if (e.op === '||') {
        const j1 = jump(OP.JMPF);
        u8(OP.TRUE);
        const j2 = jump(OP.JMP);
        patch32(j1, here());
        expr(e.r);
        patch32(j2, here());
        return;
      }
      expr(e.r);
      if (ARITH_K[e.op] !== undefined) u8(ARITH_BASE[note(e).ty!]! + ARITH_K[e.op]!);
      else u8({ '==': OP.EQ, '!=': OP.NE, '<': OP.LT, '<=': OP.LE, '>': OP.GT, '>=': OP.GE }[e.op as '<']);
    };

    const block = (ss: Stmt[]): void => { ss.forEach(stmt); };
    const stmt = (s: Stmt): void => {
      const n = note(s);
      switch (s.k) {
        case 'let':
          expr(s.init);
          u8(OP.STORE); u8(n.slot!);
          return;
        case 'assign':
          if (n.slot !== undefined) { expr(s.value); u8(OP.STORE); u8(n.slot); return; }
          if (s.key) { expr(s.key); expr(s.value); u8(OP.MSTORE); u16(n.idx!); return; }
          expr(s.value); u8(OP.SSTORE); u16(n.idx!);
          return;
        case 'compound': {
          const op = ARITH_BASE[n.ty!]! + ARITH_K[s.op]!;
          if (n.slot !== undefined) { u8(OP.LOAD); u8(n.slot); expr(s.value); u8(op); u8(OP.STORE); u8(n.slot); return; }
          if (s.key) {
            expr(s.key);
            u8(OP.STORE); u8(n.keySlot!); u8(OP.LOAD); u8(n.keySlot!); u8(OP.LOAD); u8(n.keySlot!);
            u8(OP.MLOAD); u16(n.idx!);
          } else {
            u8(OP.SLOAD); u16(n.idx!);
          }
          expr(s.value);
          u8(op);
          u8(s.key ? OP.MSTORE : OP.SSTORE); u16(n.idx!);
          return;
        }
        case 'if': {
          const { arms, last } = ifArms(s);
          const ends: number[] = [];
          for (const arm of arms) {
            expr(arm.cond);
            const jf = jump(OP.JMPF);
            block(arm.then);
            if (arm === arms[arms.length - 1] && !last) { patch32(jf, here()); break; }
            if (!note(arm).returns) ends.push(jump(OP.JMP));
            patch32(jf, here());
          }
          if (last) block(last);
          for (const j of ends) patch32(j, here());
          return;
        }
        case 'for': {
          if (s.note === undefined) return; // an empty range: no code
          const counter = n.slot!;
          const { from, to } = n.range!;
          const start = here();
          u8(OP.CONST); u16(intConst('u64', 0n)); u8(OP.STORE); u8(counter);
          const head = here();
          if (n.userSlot !== undefined) {
            u8(OP.LOAD); u8(counter); u8(OP.CONST); u16(intConst('u64', from)); u8(OP.ADD_U64); u8(OP.STORE); u8(n.userSlot);
          }
          const lp: LoopCtx = { breaks: [], continues: [] };
          loops.push(lp);
          block(s.body);
          loops.pop();
          // A body of no code (`{}`) does nothing however often it runs: no code either, since
          // a LOOP may not jump back to itself (the verifier's backward-jump rule).
          if (here() === head) { code.length = start; return; }
          const cont = here();
          u8(OP.LOOP); u8(counter); u32(Number(to - from)); u32(head);
          const end = here();
          for (const b of lp.continues) patch32(b, cont);
          for (const b of lp.breaks) patch32(b, end);
          return;
        }
        case 'break': case 'continue': {
          const lp = loops[loops.length - 1]!;
          (s.k === 'break' ? lp.breaks : lp.continues).push(jump(OP.JMP));
          return;
        }
        case 'return':
          if (s.value) expr(s.value);
          u8(OP.RET);
          return;
        case 'require':
          expr(s.cond);
          u8(OP.REQUIRE); u16(strConst(s.msg, s.pos));
          return;
        case 'emit':
          s.args.forEach(expr);
          u8(OP.EMIT); u16(n.idx!);
          return;
        case 'expr':
          expr(s.e);
          if (n.flag) u8(OP.POP);
          return;
      }
    };

    block(f.body);
    if (!f.note!.returns) u8(OP.RET);
  }
}

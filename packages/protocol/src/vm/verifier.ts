/**
 * Bytecode verifier: run by the node on every deploy, before any code runs. It checks the
 * artifact's shape (hostile JSON), decodes every instruction, and proves per function, by a
 * single forward pass of typed abstract interpretation, that:
 *  - every opcode is known, every instruction is complete, every jump lands on an
 *    instruction start inside its own function;
 *  - the only backward jump is LOOP (the compiler's bounded loop): its counter is a u64 local
 *    that no STORE inside the loop touches, its bound is a constant, and loops nest properly;
 *  - stack heights and types agree at every join; every operand has the type its opcode needs;
 *  - constant, local, field and event indexes are in range; locals counts match the headers;
 *  - function offsets are exactly the FUNC headers; internal calls form no cycle;
 *  - readonly functions neither write nor emit nor call non-readonly helpers.
 * Together with the VM's instruction budget this means verified code cannot crash or hang the
 * VM. Failures name the byte offset (or -1 for artifact-shape errors) and a reason.
 */
import { FUNC_READONLY, LIMITS, OP, OPINFO, TY, TYPE_NAMES, fixedLength, isIntCode } from './isa.js';
import { fieldPrefix } from './storage-layout.js';
import type { AbiEntry, EventInfo, FieldInfo, FunctionInfo, Program, RtValue } from './types.js';
import type { ArtifactCore } from '../contract.js';
import { norm, inRange, utf8Length } from './values.js';
import { isWellFormedString } from '../value.js';
import { isName } from '../identifiers.js';

export type VerifyResult = { ok: true; program: Program } | { ok: false; offset: number; reason: string };

class VerifyError extends Error {
  constructor(readonly offset: number, readonly reason: string) {
    super(reason);
  }
}
function fail(offset: number, reason: string): never {
  throw new VerifyError(offset, reason);
}

const VALUE_TYPES = new Set(['u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key']);
const DEC = /^-?(0|[1-9][0-9]*)$/;
const HEX = /^(?:[0-9a-f]{2})*$/;
const MAX_ABI = 4096;
const MAX_CONSTS = 65535;
/** Bounds the call-graph walk (recursive DFS) and the per-function tables. */
const MAX_FUNCTIONS = 1024;

function isObj(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
function exactKeys(o: Record<string, unknown>, keys: string[], what: string): void {
  const ks = Object.keys(o);
  if (ks.length !== keys.length || !keys.every((k) => Object.prototype.hasOwnProperty.call(o, k))) {
    fail(-1, `${what} must have exactly the keys ${keys.join(', ')}`);
  }
}
function checkType(t: unknown, what: string): number {
  if (typeof t !== 'string' || !VALUE_TYPES.has(t)) fail(-1, `${what}: unknown type ${JSON.stringify(t)}`);
  return TY[t as keyof typeof TY];
}
function checkName(n: unknown, what: string): string {
  if (!isName(n)) fail(-1, `${what}: bad name ${JSON.stringify(n)}`);
  return n;
}
function checkParams(ps: unknown, what: string): number[] {
  if (!Array.isArray(ps) || ps.length > 255) fail(-1, `${what}: inputs must be an array of at most 255`);
  const seen = new Set<string>();
  return ps.map((p, i) => {
    if (!isObj(p)) fail(-1, `${what}: input ${i} must be an object`);
    exactKeys(p, ['name', 'type'], `${what} input ${i}`);
    const n = checkName(p.name, `${what} input ${i}`);
    if (seen.has(n)) fail(-1, `${what}: duplicate input ${n}`);
    seen.add(n);
    return checkType(p.type, `${what} input ${n}`);
  });
}

interface AbiFn { name: string; params: number[]; ret: number; readonly: boolean }

function parseAbi(abi: unknown): { fns: Map<string, AbiFn>; fields: FieldInfo[]; events: EventInfo[]; entries: AbiEntry[] } {
  if (!Array.isArray(abi) || abi.length > MAX_ABI) fail(-1, `abi must be an array of at most ${MAX_ABI} entries`);
  const fns = new Map<string, AbiFn>();
  const fields: FieldInfo[] = [];
  const events: EventInfo[] = [];
  const names = new Set<string>();
  abi.forEach((e, i) => {
    if (!isObj(e)) fail(-1, `abi entry ${i} must be an object`);
    const what = `abi entry ${i}`;
    if (e.type === 'function') {
      exactKeys(e, ['type', 'name', 'inputs', 'outputs', 'readonly'], what);
      const name = checkName(e.name, what);
      if (fns.has(name)) fail(-1, `${what}: duplicate function ${name}`);
      const params = checkParams(e.inputs, what);
      if (!Array.isArray(e.outputs) || e.outputs.length > 1) fail(-1, `${what}: outputs must hold at most one entry`);
      let ret: number = TY.none;
      if (e.outputs.length === 1) {
        const o = e.outputs[0];
        if (!isObj(o)) fail(-1, `${what}: output must be an object`);
        exactKeys(o, ['type'], `${what} output`);
        ret = checkType(o.type, `${what} output`);
      }
      if (typeof e.readonly !== 'boolean') fail(-1, `${what}: readonly must be a boolean`);
      fns.set(name, { name, params, ret, readonly: e.readonly });
    } else if (e.type === 'event') {
      exactKeys(e, ['type', 'name', 'inputs'], what);
      const name = checkName(e.name, what);
      if (events.some((x) => x.name === name)) fail(-1, `${what}: duplicate event ${name}`);
      events.push({ name, types: checkParams(e.inputs, what) });
    } else if (e.type === 'field') {
      exactKeys(e, ['type', 'name', 'key', 'value'], what);
      const name = checkName(e.name, what);
      if (names.has(name)) fail(-1, `${what}: duplicate field ${name}`);
      names.add(name);
      const keyType = e.key === null ? 0 : checkType(e.key, `${what} key`);
      const valueType = checkType(e.value, `${what} value`);
      const prefix = fieldPrefix(name, keyType !== 0);
      fields.push({ name, keyType, valueType, prefix });
    } else {
      fail(-1, `${what}: type must be function, event or field`);
    }
  });
  return { fns, fields, events, entries: abi as AbiEntry[] };
}

function parseConstants(cs: unknown): { consts: RtValue[]; types: number[] } {
  if (!Array.isArray(cs) || cs.length > MAX_CONSTS) fail(-1, `constants must be an array of at most ${MAX_CONSTS}`);
  const consts: RtValue[] = [];
  const types: number[] = [];
  cs.forEach((c, i) => {
    const what = `constant ${i}`;
    if (!isObj(c)) fail(-1, `${what} must be an object`);
    exactKeys(c, ['type', 'value'], what);
    const t = checkType(c.type, what);
    const v = c.value;
    if (isIntCode(t)) {
      let x: bigint;
      if (typeof v === 'number') {
        if (!Number.isSafeInteger(v)) fail(-1, `${what}: integer beyond 2^53 must be a decimal string`);
        x = BigInt(v);
      } else if (typeof v === 'string' && DEC.test(v) && v !== '-0') {
        x = BigInt(v);
        if (x >= -9007199254740991n && x <= 9007199254740991n) fail(-1, `${what}: small integer must be a JSON number`);
      } else fail(-1, `${what}: bad integer`);
      if (!inRange(t, x)) fail(-1, `${what}: out of range for ${TYPE_NAMES[t]}`);
      consts.push(norm(x));
    } else if (t === TY.string) {
      if (typeof v !== 'string' || !isWellFormedString(v) || utf8Length(v) > LIMITS.valueBytes) fail(-1, `${what}: bad string`);
      consts.push(v);
    } else if (t === TY.bytes || t === TY.key) {
      if (typeof v !== 'string' || !HEX.test(v) || v.length > 2 * LIMITS.valueBytes) fail(-1, `${what}: bad hex`);
      if (t === TY.key && v.length !== 64) fail(-1, `${what}: key must be 32 bytes`);
      consts.push(new Uint8Array(Buffer.from(v, 'hex')));
    } else fail(-1, `${what}: bool constants are not allowed (use TRUE/FALSE)`);
    types.push(t);
  });
  return { consts, types };
}

interface State { stack: number[]; locals: number[] }
function cloneState(s: State): State {
  return { stack: s.stack.slice(), locals: s.locals.slice() };
}

export function verifyArtifact(core: ArtifactCore): VerifyResult {
  try {
    return { ok: true, program: verify(core) };
  } catch (e) {
    if (e instanceof VerifyError) return { ok: false, offset: e.offset, reason: e.reason };
    throw e;
  }
}

function verify(core: ArtifactCore): Program {
  if (!isObj(core)) fail(-1, 'artifact must be an object');
  const hex = core.bytecode;
  if (typeof hex !== 'string' || !HEX.test(hex) || hex.length === 0) fail(-1, 'bytecode must be non-empty lowercase hex');
  if (hex.length > 2 * LIMITS.bytecodeBytes) fail(-1, `bytecode larger than ${LIMITS.bytecodeBytes} bytes`);
  const code = new Uint8Array(Buffer.from(hex, 'hex'));
  const n = code.length;
  const { fns: abiFns, fields, events, entries } = parseAbi(core.abi);
  const { consts, types: constTypes } = parseConstants(core.constants);
  if (!isObj(core.function_offsets)) fail(-1, 'function_offsets must be an object');
  if (!isObj(core.function_offset_to_locals)) fail(-1, 'function_offset_to_locals must be an object');

  // 1. Decode every instruction.
  const ops = new Uint8Array(n);
  const A = new Int32Array(n);
  const B = new Int32Array(n);
  const C = new Int32Array(n);
  const next = new Int32Array(n);
  const starts: number[] = [];
  const funcHeaders: number[] = [];
  for (let pc = 0; pc < n; ) {
    const op = code[pc]!;
    const info = OPINFO[op];
    if (!info) fail(pc, `unknown opcode 0x${op.toString(16).padStart(2, '0')}`);
    let len = fixedLength(op);
    if (op === OP.FUNC) {
      if (pc + 5 > n) fail(pc, 'truncated FUNC header');
      len = 5 + code[pc + 2]!;
      funcHeaders.push(pc);
    }
    if (pc + len > n) fail(pc, `truncated ${info.name} instruction`);
    let p = pc + 1;
    const vals: number[] = [];
    for (const k of info.operands) {
      vals.push(k === 1 ? code[p]! : k === 2 ? code[p]! | (code[p + 1]! << 8) : (code[p]! | (code[p + 1]! << 8) | (code[p + 2]! << 16) | (code[p + 3]! << 24)) >>> 0);
      p += k;
    }
    ops[pc] = op;
    A[pc] = vals[0] ?? 0;
    B[pc] = vals[1] ?? 0;
    C[pc] = vals[2] ?? 0;
    next[pc] = pc + len;
    starts.push(pc);
    pc += len;
  }
  const isStart = new Uint8Array(n + 1);
  for (const s of starts) isStart[s] = 1;

  // 2. Functions: offsets are exactly the FUNC headers, starting at 0, locals counts match.
  const offEntries = Object.entries(core.function_offsets);
  const locEntries = Object.entries(core.function_offset_to_locals);
  if (offEntries.length !== funcHeaders.length) fail(-1, `function_offsets lists ${offEntries.length} functions, bytecode has ${funcHeaders.length} FUNC headers`);
  if (locEntries.length !== funcHeaders.length) fail(-1, 'function_offset_to_locals must list every function offset exactly once');
  if (funcHeaders[0] !== 0) fail(0, 'code must start with a FUNC header');
  if (funcHeaders.length > MAX_FUNCTIONS) fail(-1, `more than ${MAX_FUNCTIONS} functions`);
  const funcAt = new Int32Array(n).fill(-1);
  const functions: FunctionInfo[] = [];
  const byOff = new Map<number, string>();
  for (const [name, off] of offEntries) {
    checkName(name, 'function_offsets');
    if (typeof off !== 'number' || !Number.isInteger(off) || off < 0 || off >= n) fail(-1, `function_offsets.${name}: offset outside the code`);
    if (!isStart[off] || ops[off] !== OP.FUNC) fail(off, `function_offsets.${name}: offset is not a function start`);
    if (byOff.has(off)) fail(off, `functions ${byOff.get(off)} and ${name} share an offset`);
    byOff.set(off, name);
  }
  for (const [k, v] of locEntries) {
    if (!/^(0|[1-9][0-9]*)$/.test(k) || !byOff.has(Number(k))) fail(-1, `function_offset_to_locals key ${JSON.stringify(k)} is not a function offset`);
    const off = Number(k);
    const nl = code[off + 3]!;
    if (v !== nl) fail(off, `locals count ${JSON.stringify(v)} does not match the FUNC header (${nl})`);
  }
  for (const name of abiFns.keys()) if (!offEntries.some(([nm]) => nm === name)) fail(-1, `abi function ${name} has no offset`);
  const sortedOffs = [...byOff.keys()].sort((x, y) => x - y);
  const byName = new Map<string, number>();
  sortedOffs.forEach((off, idx) => {
    const name = byOff.get(off)!;
    const flags = code[off + 1]!;
    const np = code[off + 2]!;
    const nl = code[off + 3]!;
    const ret = code[off + 4]!;
    if (flags & ~FUNC_READONLY) fail(off, 'unknown FUNC flags');
    if (np > nl) fail(off, 'more parameters than locals');
    if (ret > 7) fail(off, 'bad return type');
    const params: number[] = [];
    for (let i = 0; i < np; i++) {
      const t = code[off + 5 + i]!;
      if (t < 1 || t > 7) fail(off, 'bad parameter type');
      params.push(t);
    }
    const readonly = (flags & FUNC_READONLY) !== 0;
    const abiFn = abiFns.get(name);
    if (abiFn) {
      if (abiFn.readonly !== readonly || abiFn.ret !== ret || abiFn.params.length !== np || abiFn.params.some((t, i) => t !== params[i])) {
        fail(off, `FUNC header of ${name} does not match its abi entry`);
      }
      byName.set(name, idx);
    }
    funcAt[off] = idx;
    functions.push({ name, offset: off, body: off + 5 + np, params, ret, readonly, nlocals: nl, maxStack: 0, public: abiFn !== undefined });
  });

  // 3. Per-function typed abstract interpretation.
  const calls: number[][] = functions.map(() => []);
  for (let fi = 0; fi < functions.length; fi++) {
    const f = functions[fi]!;
    const end = fi + 1 < functions.length ? functions[fi + 1]!.offset : n;
    verifyFunction(f, fi, end);
  }

  function verifyFunction(f: FunctionInfo, fi: number, end: number): void {
    const states = new Map<number, State>();
    const loopHeads = new Map<number, State>();
    const loopTargets = new Set<number>();
    const loops: { start: number; end: number; counter: number }[] = [];
    const storesByLocal = new Map<number, number[]>();
    for (let pc = f.body; pc < end; pc = next[pc]!) {
      const op = ops[pc]!;
      if (op === OP.JMP || op === OP.JMPF) {
        const t = A[pc]!;
        if (t >= n || !isStart[t]) fail(pc, 'jump target outside the code or inside an instruction');
        if (t <= pc) fail(pc, 'backward jump outside a bounded loop');
        if (t >= end) fail(pc, 'jump target outside the function');
      } else if (op === OP.LOOP) {
        const t = C[pc]!;
        if (t >= n || !isStart[t]) fail(pc, 'loop target outside the code or inside an instruction');
        if (t >= pc || t < f.body) fail(pc, 'loop target must be a backward jump inside the function');
        if (B[pc]! < 1 || B[pc]! > LIMITS.loopBound) fail(pc, `loop bound must be 1..${LIMITS.loopBound}`);
        loopTargets.add(t);
        loops.push({ start: t, end: pc, counter: A[pc]! });
      } else if (op === OP.STORE) {
        let l = storesByLocal.get(A[pc]!);
        if (!l) storesByLocal.set(A[pc]!, (l = []));
        l.push(pc);
      } else if (op === OP.FUNC) fail(pc, 'FUNC header inside a function');
    }
    // Loops: counter never stored inside the loop; loops nested or disjoint.
    for (const lp of loops) {
      for (const s of storesByLocal.get(lp.counter) ?? []) if (s >= lp.start && s < lp.end) fail(s, `store to the counter of the loop at ${lp.end}`);
    }
    const sorted = loops.slice().sort((x, y) => x.start - y.start || y.end - x.end);
    const open: { start: number; end: number }[] = [];
    for (const lp of sorted) {
      while (open.length && open[open.length - 1]!.end < lp.start) open.pop();
      if (open.length && open[open.length - 1]!.end < lp.end) fail(lp.end, 'loops overlap without nesting');
      open.push(lp);
    }

    let cur: State | null = { stack: [], locals: new Array(f.nlocals).fill(0) };
    f.params.forEach((t, i) => (cur!.locals[i] = t));
    let maxStack = 0;
    const merge = (t: number, s: State, at: number): void => {
      const old = states.get(t);
      if (!old) {
        states.set(t, cloneState(s));
        return;
      }
      if (old.stack.length !== s.stack.length) fail(at, `inconsistent stack height at join ${t} (${old.stack.length} vs ${s.stack.length})`);
      for (let i = 0; i < s.stack.length; i++) if (old.stack[i] !== s.stack[i]) fail(at, `inconsistent stack types at join ${t}`);
      for (let i = 0; i < s.locals.length; i++) if (old.locals[i] !== s.locals[i]) old.locals[i] = 0;
    };
    for (let pc = f.body; pc < end; pc = next[pc]!) {
      const incoming = states.get(pc);
      if (incoming) {
        if (cur) merge(pc, cur, pc);
        cur = cloneState(states.get(pc)!);
        states.delete(pc);
      }
      if (!cur) continue; // unreachable
      if (loopTargets.has(pc)) loopHeads.set(pc, cloneState(cur));
      const st = cur.stack;
      const pop = (want?: number): number => {
        const t = st.pop();
        if (t === undefined) fail(pc, `stack underflow in ${OPINFO[ops[pc]!]!.name}`);
        if (want !== undefined && t !== want) fail(pc, `${OPINFO[ops[pc]!]!.name} needs ${TYPE_NAMES[want]}, found ${TYPE_NAMES[t]}`);
        return t;
      };
      const push = (t: number): void => {
        st.push(t);
      };
      const op = ops[pc]!;
      const a = A[pc]!;
      let terminal = false;
      switch (op) {
        case OP.RET:
          if (f.ret === TY.none) {
            if (st.length !== 0) fail(pc, 'RET with values on the stack');
          } else {
            if (st.length !== 1) fail(pc, 'RET needs exactly the return value on the stack');
            pop(f.ret);
          }
          terminal = true;
          break;
        case OP.CALL: {
          // A is an Int32Array: a 4-byte target of 2^31 or more reads negative here.
          if (a < 0 || a >= n || funcAt[a]! < 0) fail(pc, 'CALL target is not a function start');
          const g = functions[funcAt[a]!]!;
          if (f.readonly && !g.readonly) fail(pc, `readonly function calls non-readonly ${g.name}`);
          for (let i = g.params.length - 1; i >= 0; i--) pop(g.params[i]);
          if (g.ret !== TY.none) push(g.ret);
          calls[fi]!.push(funcAt[a]!);
          break;
        }
        case OP.XCALL: {
          if (a >= consts.length || constTypes[a] !== TY.string) fail(pc, 'XCALL function name must be a string constant');
          const ret = C[pc]!;
          if (ret > 7) fail(pc, 'XCALL bad return type');
          for (let i = 0; i < B[pc]!; i++) pop();
          pop(TY.key);
          if (ret !== TY.none) push(ret);
          break;
        }
        case OP.JMP:
          merge(a, cur, pc);
          terminal = true;
          break;
        case OP.JMPF:
          pop(TY.bool);
          merge(a, cur, pc);
          break;
        case OP.LOOP: {
          if (a >= f.nlocals) fail(pc, 'local index out of range');
          if (cur.locals[a] !== TY.u64) fail(pc, 'loop counter must be a u64 local');
          const head = loopHeads.get(C[pc]!);
          if (!head) fail(pc, 'loop head is unreachable');
          if (head.stack.length !== st.length || head.stack.some((t, i) => t !== st[i])) fail(pc, 'inconsistent stack at loop back-edge');
          for (let i = 0; i < head.locals.length; i++) if (head.locals[i] !== 0 && head.locals[i] !== cur.locals[i]) fail(pc, `local ${i} changes type around the loop`);
          break;
        }
        case OP.REQUIRE:
          if (a >= consts.length || constTypes[a] !== TY.string) fail(pc, 'REQUIRE message must be a string constant');
          pop(TY.bool);
          break;
        case OP.POP:
          pop();
          break;
        case OP.CONST:
          if (a >= consts.length) fail(pc, 'constant index out of range');
          push(constTypes[a]!);
          break;
        case OP.TRUE:
        case OP.FALSE:
          push(TY.bool);
          break;
        case OP.LOAD:
          if (a >= f.nlocals) fail(pc, 'local index out of range');
          if (cur.locals[a] === 0) fail(pc, `local ${a} read before it is written`);
          push(cur.locals[a]!);
          break;
        case OP.STORE:
          if (a >= f.nlocals) fail(pc, 'local index out of range');
          cur.locals[a] = pop();
          break;
        case OP.NEG_I64:
          pop(TY.i64);
          push(TY.i64);
          break;
        case OP.LT: case OP.LE: case OP.GT: case OP.GE: {
          const t = pop();
          if (!isIntCode(t)) fail(pc, 'comparison needs integers');
          pop(t);
          push(TY.bool);
          break;
        }
        case OP.EQ: case OP.NE: {
          const t = pop();
          pop(t);
          push(TY.bool);
          break;
        }
        case OP.NOT:
          pop(TY.bool);
          push(TY.bool);
          break;
        case OP.CAST: {
          if (!isIntCode(a)) fail(pc, 'CAST target must be an integer type');
          if (!isIntCode(pop())) fail(pc, 'CAST needs an integer');
          push(a);
          break;
        }
        case OP.SLOAD: case OP.SSTORE: case OP.MLOAD: case OP.MSTORE: {
          if (a >= fields.length) fail(pc, 'field index out of range');
          const fd = fields[a]!;
          const isMap = op === OP.MLOAD || op === OP.MSTORE;
          if (isMap !== (fd.keyType !== 0)) fail(pc, `field ${fd.name} is ${fd.keyType ? 'a map' : 'a scalar'}`);
          if ((op === OP.SSTORE || op === OP.MSTORE) && f.readonly) fail(pc, 'readonly function writes storage');
          if (op === OP.SSTORE || op === OP.MSTORE) pop(fd.valueType);
          if (isMap) pop(fd.keyType);
          if (op === OP.SLOAD || op === OP.MLOAD) push(fd.valueType);
          break;
        }
        case OP.EMIT: {
          if (a >= events.length) fail(pc, 'event index out of range');
          if (f.readonly) fail(pc, 'readonly function emits an event');
          const ev = events[a]!;
          for (let i = ev.types.length - 1; i >= 0; i--) pop(ev.types[i]);
          break;
        }
        case OP.HEIGHT: case OP.CALLID: case OP.NIN: case OP.NOUT:
          push(TY.u64);
          break;
        case OP.TXID: case OP.CALLER: case OP.SELF:
          push(TY.key);
          break;
        case OP.INTXID:
          pop(TY.u64);
          push(TY.key);
          break;
        case OP.INVOUT: case OP.OUTVAL:
          pop(TY.u64);
          push(TY.u64);
          break;
        case OP.OUTSCRIPT:
          pop(TY.u64);
          push(TY.bytes);
          break;
        case OP.LEN: {
          const t = pop();
          if (t !== TY.bytes && t !== TY.string) fail(pc, 'LEN needs bytes or string');
          push(TY.u64);
          break;
        }
        case OP.CONCAT: {
          const t = pop();
          if (t !== TY.bytes && t !== TY.string) fail(pc, 'CONCAT needs bytes or strings');
          pop(t);
          push(t);
          break;
        }
        case OP.OUTPOINT:
          pop(TY.u64);
          pop(TY.key);
          push(TY.bytes);
          break;
        case OP.TOBYTES:
          pop(TY.key);
          push(TY.bytes);
          break;
        case OP.INTBYTES:
          if (!isIntCode(a)) fail(pc, 'INTBYTES type must be an integer type');
          pop(a);
          push(TY.bytes);
          break;
        case OP.TOKEY:
          pop(TY.bytes);
          push(TY.key);
          break;
        case OP.SHA256:
          pop(TY.bytes);
          push(TY.key);
          break;
        default: {
          // Arithmetic families: 0x20..0x2e.
          if (op >= OP.ADD_U64 && op <= OP.MOD_U128) {
            const t = op < OP.ADD_I64 ? TY.u64 : op < OP.ADD_U128 ? TY.i64 : TY.u128;
            pop(t);
            pop(t);
            push(t);
            break;
          }
          fail(pc, `opcode ${OPINFO[op]?.name ?? op} not allowed here`);
        }
      }
      if (st.length > LIMITS.stack) fail(pc, `operand stack deeper than ${LIMITS.stack}`);
      if (st.length > maxStack) maxStack = st.length;
      if (terminal) cur = null;
    }
    if (cur) fail(end, `control falls off the end of function ${f.name}`);
    for (const t of states.keys()) fail(t, 'jump into dead end');
    f.maxStack = maxStack;
  }

  // 4. No cycles in the internal call graph (no recursion).
  const color = new Uint8Array(functions.length);
  const visit = (i: number): void => {
    color[i] = 1;
    for (const j of calls[i]!) {
      if (color[j] === 1) fail(functions[j]!.offset, `recursive call cycle through ${functions[j]!.name}`);
      if (color[j] === 0) visit(j);
    }
    color[i] = 2;
  };
  for (let i = 0; i < functions.length; i++) if (color[i] === 0) visit(i);

  return { code, ops, a: A, b: B, c: C, next, consts, constTypes, functions, funcAt, byName, fields, events, abi: entries };
}

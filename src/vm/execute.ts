/**
 * The VM: a deterministic stack machine (PROTOCOL.md section 4). Pure and synchronous:
 * committed storage comes in through Host, the write set, events and result go out.
 *
 * - One value stack of LIMITS.stack slots shared by every frame of the call: a frame holds its
 *   locals then its operands. A frame is admitted only when base + locals + the verifier's
 *   proven maximum operand depth fits, so no push needs a bounds check (stack_overflow).
 * - One instruction budget for the whole call, all frames: charge, advance, execute.
 * - Contract failures are Halt objects caught here and returned as results; any other thrown
 *   error is a bug and propagates.
 * - Integers: JS number when |v| <= 2^53-1, bigint beyond (canonical). Fast paths stay in
 *   numbers; a result that leaves the safe range is recomputed exactly in bigint.
 */
import { sha256 } from '../protocol/hash.js';
import type { Value } from '../protocol/value.js';
import { LIMITS, OP, OPINFO, TY } from './isa.js';
import type { EmittedEvent, ExecRequest, ExecResult, FieldInfo, FunctionInfo, Host, Program, RtValue, StorageWrite, TraceHook } from './types.js';
import {
  I64_MAX, I64_MIN, MAX_SAFE, U128_MAX, U64_MAX, big, bytesEqual, decodeRt, defaultRt, encodeRt, inRange, isDefaultRt,
  norm, rtHasType, toRuntime, toValue, utf8Length,
} from './values.js';

class Halt {
  constructor(readonly code: string, readonly message: string) {}
}
function halt(code: string, message: string): never {
  throw new Halt(code, message);
}

// ---- exact slow paths -------------------------------------------------------------------
function umax(t: number): bigint {
  return t === TY.u64 ? U64_MAX : U128_MAX;
}
function checkU(r: bigint, t: number): number | bigint {
  if (r < 0n || r > umax(t)) halt('arithmetic_overflow', `${t === TY.u64 ? 'u64' : 'u128'} overflow`);
  return norm(r);
}
function checkI(r: bigint): number | bigint {
  if (r < I64_MIN || r > I64_MAX) halt('arithmetic_overflow', 'i64 overflow');
  return norm(r);
}
export function arith(op: number, a: number | bigint, b: number | bigint): number | bigint {
  const x = big(a);
  const y = big(b);
  const k = (op - OP.ADD_U64) % 5;
  const t = op < OP.ADD_I64 ? TY.u64 : op < OP.ADD_U128 ? TY.i64 : TY.u128;
  let r: bigint;
  switch (k) {
    case 0: r = x + y; break;
    case 1: r = x - y; break;
    case 2: r = x * y; break;
    case 3: if (y === 0n) halt('division_by_zero', 'division by zero'); r = x / y; break;
    default: if (y === 0n) halt('division_by_zero', 'division by zero'); r = x % y; break;
  }
  return t === TY.i64 ? checkI(r) : checkU(r, t);
}

// ---- storage overlay ----------------------------------------------------------------------
interface Slot { kb: Uint8Array; h: number; shared: boolean; type: number; val: RtValue; dirty: boolean; orig: Uint8Array | undefined }
/** Per-contract overlay. Few slots are searched linearly by bytes (no string building or
 *  hashing per access, which dominates short calls); past LINEAR_SLOTS an index by key hash is built. */
interface CState { id: Uint8Array; slots: Slot[]; index: Map<number, Slot[]> | null }
const LINEAR_SLOTS = 16;

function addToIndex(index: Map<number, Slot[]>, s: Slot): void {
  const b = index.get(s.h);
  if (b === undefined) index.set(s.h, [s]);
  else b.push(s);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** A private copy in a Buffer of its own (see encodeRt: the writer stores Buffers as they are). */
function copyToBuffer(b: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafeSlow(b.length);
  out.set(b, 0);
  return out;
}

function hexOf(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}


/**
 * Runs `req.function` of `req.contractId` with `req.args`. Returns `executed` (result, write set
 * sorted by contract id then key, events in emission order, instructions used) or `failed`
 * (code, message). Nothing is applied anywhere: the caller owns the write set. Not re-entrant
 * on one thread (the value stack is shared): Host callbacks must not call execute.
 */
export function execute(req: ExecRequest, opts?: { trace?: TraceHook }): ExecResult {
  const vm = new Machine(req, opts?.trace);
  try {
    return vm.run();
  } catch (e) {
    if (e instanceof Halt) return { status: 'failed', code: e.code, message: e.message, instructions: vm.used() };
    throw e;
  }
}

/** The value stack, reused by every call on this thread (see execute). */
const STACK: RtValue[] = new Array<RtValue>(LIMITS.stack).fill(0);

class Machine {
  gas: number = LIMITS.instructions;
  eventBytes = 0;
  readonly host: Host;
  readonly stateList: CState[] = [];
  /** Contract states by hex id, once a call touches more than 8 contracts. */
  stateIndex: Map<string, CState> | null = null;
  readonly events: { cs: CState; name: string; types: number[]; vals: RtValue[] }[] = [];
  readonly callId: number | bigint;

  constructor(readonly req: ExecRequest, readonly trace: TraceHook | undefined) {
    this.host = req.host;
    const c = req.context;
    if (!Number.isSafeInteger(c.height) || c.height < 0) throw new TypeError('context.height must be a non-negative integer');
    if (typeof c.callId !== 'bigint' || c.callId < 0n || c.callId > U64_MAX) throw new TypeError('context.callId must be a u64 bigint');
    this.callId = norm(c.callId);
    if (!(c.txid instanceof Uint8Array) || c.txid.length !== 32 || !(c.caller instanceof Uint8Array) || c.caller.length !== 32) {
      throw new TypeError('context.txid and context.caller must be 32 bytes');
    }
    for (const i of c.inputs) {
      if (!(i.txid instanceof Uint8Array) || i.txid.length !== 32 || !Number.isInteger(i.vout) || i.vout < 0 || i.vout > 0xffffffff) {
        throw new TypeError('context.inputs must hold 32-byte txids and u32 vouts');
      }
    }
    for (const o of c.outputs) if (!(o.script instanceof Uint8Array)) throw new TypeError('context.outputs scripts must be bytes');
  }

  used(): number {
    return Math.min(LIMITS.instructions, LIMITS.instructions - this.gas);
  }

  cstate(id: Uint8Array): CState {
    // Calls touch few contracts: a linear search by bytes beats building a string key.
    const list = this.stateList;
    if (list.length <= 8) {
      for (let i = 0; i < list.length; i++) if (bytesEqual(list[i]!.id, id)) return list[i]!;
    } else {
      const found = this.stateIndex!.get(hexOf(id));
      if (found !== undefined) return found;
    }
    const s: CState = { id: new Uint8Array(id), slots: [], index: null };
    list.push(s);
    if (list.length === 9) {
      this.stateIndex = new Map();
      for (const x of list) this.stateIndex.set(hexOf(x.id), x);
    } else if (list.length > 9) this.stateIndex!.set(hexOf(s.id), s);
    return s;
  }

  /** Storage slot of field `fd` (map entry `suffix` = encoded map key, or null for a scalar). */
  slot(cs: CState, fd: FieldInfo, suffix: Uint8Array | null, t: number): Slot {
    const prefix = fd.prefix;
    const plen = prefix.length;
    const klen = suffix === null ? plen : plen + suffix.length;
    // FNV-1a over the map key (scalars: the field index) filters the linear search.
    let h = 0x811c9dc5;
    if (suffix !== null) for (let j = 0; j < suffix.length; j++) h = Math.imul(h ^ suffix[j]!, 0x01000193);
    else h = plen;
    let s: Slot | undefined;
    const candidates = cs.index === null ? cs.slots : cs.index.get(h);
    if (candidates !== undefined) {
      search: for (let i = 0; i < candidates.length; i++) {
        const x = candidates[i]!;
        if (x.h !== h) continue;
        const kb = x.kb;
        if (kb.length !== klen) continue;
        for (let j = 0; j < plen; j++) if (kb[j] !== prefix[j]) continue search;
        if (suffix !== null) for (let j = 0; j < suffix.length; j++) if (kb[plen + j] !== suffix[j]) continue search;
        s = x;
        break;
      }
    }
    if (s === undefined) {
      let kb: Uint8Array;
      if (suffix === null) kb = prefix;
      else {
        kb = new Uint8Array(klen);
        kb.set(prefix, 0);
        kb.set(suffix, plen);
      }
      const raw = this.host.storageGet(cs.id, kb);
      let val: RtValue | undefined;
      if (raw === undefined) val = defaultRt(t);
      else {
        val = decodeRt(raw, t);
        if (val === undefined) throw new Error(`committed storage of ${hexOf(cs.id)} holds a non-canonical ${t} value`);
      }
      s = { kb, h, shared: suffix === null, type: t, val, dirty: false, orig: raw };
      cs.slots.push(s);
      if (cs.index !== null) addToIndex(cs.index, s);
      else if (cs.slots.length > LINEAR_SLOTS) {
        cs.index = new Map();
        for (const x of cs.slots) addToIndex(cs.index, x);
      }
    }
    return s;
  }

  run(): ExecResult {
    const req = this.req;
    const host = this.host;
    const ctx = req.context;
    const entryProg = host.program(req.contractId);
    if (!entryProg) halt('unknown_contract', 'unknown contract');
    const fi0 = entryProg.byName.get(req.function);
    if (fi0 === undefined) halt('unknown_function', `unknown function ${JSON.stringify(String(req.function))}`);
    const f0 = entryProg.functions[fi0]!;
    if (!Array.isArray(req.args) || req.args.length !== f0.params.length) halt('bad_arguments', `${f0.name} takes ${f0.params.length} arguments`);

    // One value stack reused by every call on this thread (execute is synchronous and never
    // re-entered): the verifier proves no slot is read before this call writes it.
    const st = STACK;
    let sp = 0;
    for (let i = 0; i < f0.params.length; i++) {
      const v = toRuntime(req.args[i]!, f0.params[i]!);
      if (v === undefined) halt('bad_arguments', `argument ${i} of ${f0.name} must be a valid ${['', 'u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'][f0.params[i]!]}`);
      st[sp++] = v;
    }

    // Frame stack (saved registers of the callers).
    const fProg: Program[] = [];
    const fFn: FunctionInfo[] = [];
    const fPc: number[] = [];
    const fBase: number[] = [];
    const fCs: CState[] = [];
    const fCaller: Uint8Array[] = [];

    // Current frame registers.
    let prog = entryProg;
    let ops = prog.ops, A = prog.a, B = prog.b, C = prog.c, NX = prog.next, consts = prog.consts;
    let fields: FieldInfo[] = prog.fields;
    let fn = f0;
    let cs = this.cstate(req.contractId);
    let caller: Uint8Array = ctx.caller;
    let base = 0;
    if (fn.nlocals + fn.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');
    sp = base + fn.nlocals;
    let pc = fn.offset;
    let gas = this.gas;
    const trace = this.trace;
    let result: RtValue | undefined;
    const inputs = ctx.inputs;
    const outputs = ctx.outputs;

    try {
      for (;;) {
        if (--gas < 0) halt('out_of_instructions', `more than ${LIMITS.instructions} instructions`);
        const cur = pc;
        const op = ops[cur]!;
        pc = NX[cur]!;
        if (trace !== undefined) trace({ depth: fProg.length + 1, contractId: cs.id, pc: cur, op: OPINFO[op]!.name, stack: st.slice(0, sp) });
        switch (op) {
          case OP.FUNC:
            break;
          case OP.CONST:
            st[sp++] = consts[A[cur]!]!;
            break;
          case OP.LOAD:
            st[sp++] = st[base + A[cur]!]!;
            break;
          case OP.STORE:
            st[base + A[cur]!] = st[--sp]!;
            break;
          case OP.TRUE:
            st[sp++] = true;
            break;
          case OP.FALSE:
            st[sp++] = false;
            break;
          case OP.POP:
            sp--;
            break;
          case OP.JMP:
            pc = A[cur]!;
            break;
          case OP.JMPF:
            if (st[--sp] === false) pc = A[cur]!;
            break;
          case OP.LOOP: {
            const i = base + A[cur]!;
            const v = st[i];
            if (typeof v === 'number') {
              const nv = v + 1;
              st[i] = nv;
              if (nv < B[cur]!) pc = C[cur]!;
            }
            break;
          }
          case OP.REQUIRE:
            if (st[--sp] !== true) halt('revert', consts[A[cur]!] as string);
            break;
          // ---- integers ----
          case OP.ADD_U64: case OP.ADD_U128: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number') {
              const r = a + b;
              if (r <= MAX_SAFE) { st[sp - 1] = r; break; }
            }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.SUB_U64: case OP.SUB_U128: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number') {
              const r = a - b;
              if (r >= 0) { st[sp - 1] = r; break; }
            }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.MUL_U64: case OP.MUL_U128: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number') {
              const r = a * b;
              if (r <= MAX_SAFE) { st[sp - 1] = r; break; }
            }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.DIV_U64: case OP.DIV_U128: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number' && b !== 0) { st[sp - 1] = (a - (a % b)) / b; break; }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.MOD_U64: case OP.MOD_U128: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number' && b !== 0) { st[sp - 1] = a % b; break; }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.ADD_I64: case OP.SUB_I64: case OP.MUL_I64: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number') {
              const r = op === OP.ADD_I64 ? a + b : op === OP.SUB_I64 ? a - b : a * b;
              if (r <= MAX_SAFE && r >= -MAX_SAFE) { st[sp - 1] = r + 0; break; }
            }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.DIV_I64: case OP.MOD_I64: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'number' && typeof b === 'number' && b !== 0) {
              const m = a % b;
              st[sp - 1] = (op === OP.DIV_I64 ? (a - m) / b : m) + 0;
              break;
            }
            st[sp - 1] = arith(op, a as number, b as number);
            break;
          }
          case OP.NEG_I64: {
            const a = st[sp - 1];
            if (typeof a === 'number') st[sp - 1] = 0 - a;
            else st[sp - 1] = checkI(-(a as bigint));
            break;
          }
          case OP.CAST: {
            const v = st[sp - 1] as number | bigint;
            if (!(typeof v === 'number' && (v >= 0 || A[cur] === TY.i64)) && !inRange(A[cur]!, v)) halt('arithmetic_overflow', `value does not fit ${['', 'u64', 'i64', 'u128'][A[cur]!]}`);
            break;
          }
          case OP.LT: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! < b; break; }
          case OP.LE: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! <= b; break; }
          case OP.GT: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! > b; break; }
          case OP.GE: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! >= b; break; }
          case OP.EQ: case OP.NE: {
            const b = st[--sp]!, a = st[sp - 1]!;
            const eq = a === b || (a instanceof Uint8Array && bytesEqual(a, b as Uint8Array));
            st[sp - 1] = op === OP.EQ ? eq : !eq;
            break;
          }
          case OP.NOT:
            st[sp - 1] = !st[sp - 1];
            break;
          // ---- storage and events ----
          case OP.SLOAD: {
            const fd = fields[A[cur]!]!;
            st[sp++] = this.slot(cs, fd, null, fd.valueType).val;
            break;
          }
          case OP.SSTORE: {
            const fd = fields[A[cur]!]!;
            const s = this.slot(cs, fd, null, fd.valueType);
            s.val = st[--sp]!;
            s.dirty = true;
            break;
          }
          case OP.MLOAD: {
            const fd = fields[A[cur]!]!;
            const k = st[sp - 1]!;
            const kb = k instanceof Uint8Array ? k : encodeRt(k, fd.keyType);
            if (kb.length > LIMITS.mapKeyBytes) halt('value_too_large', `map key longer than ${LIMITS.mapKeyBytes} bytes`);
            st[sp - 1] = this.slot(cs, fd, kb, fd.valueType).val;
            break;
          }
          case OP.MSTORE: {
            const fd = fields[A[cur]!]!;
            const v = st[--sp]!;
            const k = st[--sp]!;
            const kb = k instanceof Uint8Array ? k : encodeRt(k, fd.keyType);
            if (kb.length > LIMITS.mapKeyBytes) halt('value_too_large', `map key longer than ${LIMITS.mapKeyBytes} bytes`);
            const s = this.slot(cs, fd, kb, fd.valueType);
            s.val = v;
            s.dirty = true;
            break;
          }
          case OP.EMIT: {
            const ev = prog.events[A[cur]!]!;
            const n = ev.types.length;
            let size = ev.name.length;
            for (let i = sp - n; i < sp; i++) {
              const v = st[i]!;
              size += typeof v === 'string' ? utf8Length(v) : v instanceof Uint8Array ? v.length : 16;
            }
            this.eventBytes += size;
            if (this.eventBytes > LIMITS.eventBytes) halt('event_limit_exceeded', `events of this call exceed ${LIMITS.eventBytes} bytes`);
            this.events.push({ cs, name: ev.name, types: ev.types, vals: st.slice(sp - n, sp) });
            sp -= n;
            break;
          }
          // ---- calls ----
          case OP.CALL: {
            const g = prog.functions[prog.funcAt[A[cur]!]!]!;
            if (fProg.length + 2 > LIMITS.callDepth) halt('call_depth_exceeded', `call depth above ${LIMITS.callDepth}`);
            const nb = sp - g.params.length;
            if (nb + g.nlocals + g.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');
            fProg.push(prog); fFn.push(fn); fPc.push(pc); fBase.push(base); fCs.push(cs); fCaller.push(caller);
            fn = g;
            base = nb;
            sp = nb + g.nlocals;
            pc = g.offset;
            break;
          }
          case OP.XCALL: {
            const name = consts[A[cur]!] as string;
            const argc = B[cur]!;
            const ret = C[cur]!;
            const argBase = sp - argc;
            const cid = st[argBase - 1] as Uint8Array;
            const cp = host.program(cid);
            if (cp === undefined) halt('unknown_contract', `no contract ${hexOf(cid)}`);
            const gi = cp.byName.get(name);
            if (gi === undefined) halt('unknown_function', `contract ${hexOf(cid)} has no function ${JSON.stringify(name)}`);
            const g = cp.functions[gi]!;
            if (g.params.length !== argc) halt('bad_arguments', `${name} takes ${g.params.length} arguments, got ${argc}`);
            for (let i = 0; i < argc; i++) if (!rtHasType(st[argBase + i]!, g.params[i]!)) halt('bad_arguments', `argument ${i} of ${name} has the wrong type`);
            if (g.ret !== ret) halt('bad_arguments', `${name} returns a different type than the caller expects`);
            if (fn.readonly && !g.readonly) halt('readonly_violation', `readonly function calls non-readonly ${name}`);
            if (fProg.length + 2 > LIMITS.callDepth) halt('call_depth_exceeded', `call depth above ${LIMITS.callDepth}`);
            const nb = argBase - 1;
            if (nb + g.nlocals + g.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');
            for (let i = 0; i < argc; i++) st[nb + i] = st[argBase + i]!;
            fProg.push(prog); fFn.push(fn); fPc.push(pc); fBase.push(base); fCs.push(cs); fCaller.push(caller);
            caller = cs.id;
            cs = this.cstate(cid);
            prog = cp;
            ops = prog.ops; A = prog.a; B = prog.b; C = prog.c; NX = prog.next; consts = prog.consts; fields = prog.fields;
            fn = g;
            base = nb;
            sp = nb + g.nlocals;
            pc = g.offset;
            break;
          }
          case OP.RET: {
            const hasRet = fn.ret !== TY.none;
            const v = hasRet ? st[sp - 1] : undefined;
            if (fProg.length === 0) {
              result = v;
              this.gas = gas;
              return this.finish(result, fn.ret);
            }
            sp = base;
            if (hasRet) st[sp++] = v!;
            const p = fProg.pop()!;
            fn = fFn.pop()!;
            pc = fPc.pop()!;
            base = fBase.pop()!;
            cs = fCs.pop()!;
            caller = fCaller.pop()!;
            if (p !== prog) {
              prog = p;
              ops = prog.ops; A = prog.a; B = prog.b; C = prog.c; NX = prog.next; consts = prog.consts; fields = prog.fields;
            }
            break;
          }
          // ---- Bitcoin context ----
          case OP.HEIGHT: st[sp++] = ctx.height; break;
          case OP.TXID: st[sp++] = ctx.txid; break;
          case OP.CALLER: st[sp++] = caller; break;
          case OP.CALLID: st[sp++] = this.callId; break;
          case OP.SELF: st[sp++] = cs.id; break;
          case OP.NIN: st[sp++] = inputs.length; break;
          case OP.NOUT: st[sp++] = outputs.length; break;
          case OP.INTXID: case OP.INVOUT: {
            const i = st[sp - 1];
            if (typeof i !== 'number' || i >= inputs.length) halt('revert', `input index ${i} out of range`);
            const inp = inputs[i]!;
            st[sp - 1] = op === OP.INTXID ? inp.txid : inp.vout;
            break;
          }
          case OP.OUTVAL: case OP.OUTSCRIPT: {
            const i = st[sp - 1];
            if (typeof i !== 'number' || i >= outputs.length) halt('revert', `output index ${i} out of range`);
            const o = outputs[i]!;
            if (op === OP.OUTVAL) {
              if (typeof o.value !== 'bigint' || o.value < 0n || o.value > U64_MAX) throw new TypeError('context output value must be a u64 bigint');
              st[sp - 1] = norm(o.value);
            } else st[sp - 1] = o.script;
            break;
          }
          // ---- bytes and strings ----
          case OP.LEN: {
            const v = st[sp - 1];
            st[sp - 1] = typeof v === 'string' ? utf8Length(v) : (v as Uint8Array).length;
            break;
          }
          case OP.CONCAT: {
            const b = st[--sp], a = st[sp - 1];
            if (typeof a === 'string') {
              const s = a + (b as string);
              if (utf8Length(s) > LIMITS.valueBytes) halt('value_too_large', `string longer than ${LIMITS.valueBytes} bytes`);
              st[sp - 1] = s;
            } else {
              const x = a as Uint8Array, y = b as Uint8Array;
              if (x.length + y.length > LIMITS.valueBytes) halt('value_too_large', `bytes longer than ${LIMITS.valueBytes}`);
              const out = new Uint8Array(x.length + y.length);
              out.set(x, 0);
              out.set(y, x.length);
              st[sp - 1] = out;
            }
            break;
          }
          case OP.OUTPOINT: {
            const v = st[--sp];
            const t = st[sp - 1] as Uint8Array;
            if (typeof v !== 'number' || v > 0xffffffff) halt('arithmetic_overflow', 'vout does not fit u32');
            const out = new Uint8Array(36);
            out.set(t, 0);
            out[32] = v >>> 24; out[33] = v >>> 16; out[34] = v >>> 8; out[35] = v;
            st[sp - 1] = out;
            break;
          }
          case OP.TOBYTES:
            break; // same bytes, now typed bytes
          case OP.INTBYTES:
            // the storage layout's encoding: 8 or 16 bytes big-endian, i64 two's complement
            st[sp - 1] = new Uint8Array(encodeRt(st[sp - 1]!, A[cur]!));
            break;
          case OP.TOKEY: {
            const v = st[sp - 1] as Uint8Array;
            if (v.length !== 32) halt('revert', 'to_key needs exactly 32 bytes');
            break;
          }
          case OP.SHA256:
            st[sp - 1] = sha256(st[sp - 1] as Uint8Array);
            break;
          default:
            throw new Error(`VM bug: unverified opcode ${op} at ${cur}`);
        }
      }
    } finally {
      this.gas = gas;
    }
  }

  finish(result: RtValue | undefined, retType: number): ExecResult {
    const writes: StorageWrite[] = [];
    const states = this.stateList.length === 1 ? this.stateList : this.stateList.slice().sort((x, y) => compareBytes(x.id, y.id));
    for (const cs of states) {
      const dirty = cs.slots.filter((x) => x.dirty).sort((x, y) => compareBytes(x.kb, y.kb));
      let delta = 0;
      let any = false;
      for (const s of dirty) {
        const raw = isDefaultRt(s.val, s.type) ? null : encodeRt(s.val, s.type);
        const orig = s.orig;
        if (raw === null ? orig === undefined : orig !== undefined && bytesEqual(raw, orig)) continue;
        delta += (raw ? s.kb.length + raw.length : 0) - (orig ? s.kb.length + orig.length : 0);
        // cs.id and slot keys are private copies (scalar keys are the program's prefix: copied);
        // bytes/key values may be shared with constants or arguments: copied.
        const value = raw === null ? null : s.type === TY.bytes || s.type === TY.key ? copyToBuffer(raw) : raw;
        writes.push({ contractId: cs.id, key: s.shared ? new Uint8Array(s.kb) : s.kb, value });
        any = true;
      }
      if (any && this.host.storageSize(cs.id) + delta > LIMITS.storageBytes) {
        halt('storage_limit_exceeded', `contract ${hexOf(cs.id)} would use more than ${LIMITS.storageBytes} bytes of storage`);
      }
    }
    const events: EmittedEvent[] = this.events.map((e) => ({
      contractId: e.cs.id,
      name: e.name,
      params: e.vals.map((v, i) => toValue(v, e.types[i]!)),
    }));
    const res: Value | null = retType === TY.none || result === undefined ? null : toValue(result, retType);
    return { status: 'executed', result: res, writes, events, instructions: this.used() };
  }
}

/**
 * The VM: a deterministic stack machine (PROTOCOL.md section 4). Pure and synchronous:
 * committed storage comes in through Host, the write set, events and result go out.
 *
 * - One value stack of LIMITS.stack slots shared by every frame of the call: a frame holds its
 *   locals then its operands. A frame is admitted only when base + locals + the verifier's
 *   proven maximum operand depth fits, so no push needs a bounds check (stack_overflow).
 * - One instruction budget for the whole call, all frames.
 * - Every instruction takes the same steps, in this order (Machine.run): 1. charge one
 *   instruction (out_of_instructions once the budget is spent); 2. fetch the opcode at pc;
 *   3. advance pc to the next instruction; 4. the trace hook, when one is given; 5. the
 *   opcode's handler (handlers.ts: one per opcode, in a table by opcode byte), which may jump,
 *   enter or leave a frame, or halt. The hottest opcodes (constants, locals, jumps, the
 *   loop, comparisons, unsigned add/sub/mul on numbers) have a fast path in the loop itself
 *   that does what their handler does without a call; when it does not apply (e.g. a sum past
 *   2^53-1) the handler runs. A traced call takes no fast path: every step runs its handler,
 *   and the tests compare traced and untraced calls result for result.
 * - Contract failures are Halt objects caught here and returned as results; any other thrown
 *   error is a bug and propagates.
 * - Integers: JS number when |v| <= 2^53-1, bigint beyond (canonical). Fast paths stay in
 *   numbers; a result that leaves the safe range is recomputed exactly in bigint.
 */
import { toHex } from '@svc-node/protocol/hash';
import type { Value } from '@svc-node/protocol/value';
import { Halt, halt } from './halt.js';
import { HANDLERS, STACK } from './handlers.js';
import { LIMITS, OP, OPINFO, TY } from '@svc-node/protocol/vm/isa';
import type { EmittedEvent, ExecRequest, ExecResult, FieldInfo, FunctionInfo, Host, Program, RtValue, StorageWrite, TraceHook } from '@svc-node/protocol/vm/types';
import { MAX_SAFE, U64_MAX, bytesEqual, decodeRt, defaultRt, encodeRt, isDefaultRt, norm, toRuntime, toValue } from '@svc-node/protocol/vm/values';

// ---- storage overlay ----------------------------------------------------------------------
export interface Slot { kb: Uint8Array; h: number; shared: boolean; type: number; val: RtValue; dirty: boolean; orig: Uint8Array | undefined }
/** Per-contract overlay. Few slots are searched linearly by bytes (no string building or
 *  hashing per access, which dominates short calls); past LINEAR_SLOTS an index by key hash is built. */
export interface CState { id: Uint8Array; slots: Slot[]; index: Map<number, Slot[]> | null }
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

/** One call's machine: its registers, frames, storage overlay and events. Opcode handlers
 *  (handlers.ts) read and write its registers; nothing outside the VM uses it. */
export class Machine {
  gas: number = LIMITS.instructions;
  eventBytes = 0;
  readonly host: Host;
  readonly stateList: CState[] = [];
  /** Contract states by hex id, once a call touches more than 8 contracts. */
  stateIndex: Map<string, CState> | null = null;
  readonly events: { cs: CState; name: string; types: number[]; vals: RtValue[] }[] = [];
  readonly callId: number | bigint;

  // Registers of the current frame. The loop keeps pc, sp and base in locals and writes them
  // here before a handler runs, then reads them back.
  pc = 0;
  sp = 0;
  base = 0;
  prog!: Program;
  fn!: FunctionInfo;
  cs!: CState;
  caller!: Uint8Array;
  /** Set with pc = -1 by RET from the entry frame. */
  result: RtValue | undefined = undefined;
  // Saved registers of the callers, one entry per frame below the current one.
  readonly fProg: Program[] = [];
  readonly fFn: FunctionInfo[] = [];
  readonly fPc: number[] = [];
  readonly fBase: number[] = [];
  readonly fCs: CState[] = [];
  readonly fCaller: Uint8Array[] = [];

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
      const found = this.stateIndex!.get(toHex(id));
      if (found !== undefined) return found;
    }
    const s: CState = { id: new Uint8Array(id), slots: [], index: null };
    list.push(s);
    if (list.length === 9) {
      this.stateIndex = new Map();
      for (const x of list) this.stateIndex.set(toHex(x.id), x);
    } else if (list.length > 9) this.stateIndex!.set(toHex(s.id), s);
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
        if (val === undefined) throw new Error(`committed storage of ${toHex(cs.id)} holds a non-canonical ${t} value`);
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

  /** Saves the current frame's registers (CALL, XCALL). */
  pushFrame(): void {
    this.fProg.push(this.prog); this.fFn.push(this.fn); this.fPc.push(this.pc); this.fBase.push(this.base);
    this.fCs.push(this.cs); this.fCaller.push(this.caller);
  }

  /** Restores the caller's registers except sp (RET). */
  popFrame(): void {
    this.prog = this.fProg.pop()!; this.fn = this.fFn.pop()!; this.pc = this.fPc.pop()!; this.base = this.fBase.pop()!;
    this.cs = this.fCs.pop()!; this.caller = this.fCaller.pop()!;
  }

  run(): ExecResult {
    const req = this.req;
    const entryProg = this.host.program(req.contractId);
    if (!entryProg) halt('unknown_contract', 'unknown contract');
    const fi0 = entryProg.byName.get(req.function);
    if (fi0 === undefined) halt('unknown_function', `unknown function ${JSON.stringify(String(req.function))}`);
    const f0 = entryProg.functions[fi0]!;
    if (!Array.isArray(req.args) || req.args.length !== f0.params.length) halt('bad_arguments', `${f0.name} takes ${f0.params.length} arguments`);
    // Arguments are the entry frame's first locals.
    const st = STACK;
    let sp = 0;
    for (let i = 0; i < f0.params.length; i++) {
      const v = toRuntime(req.args[i]!, f0.params[i]!);
      if (v === undefined) halt('bad_arguments', `argument ${i} of ${f0.name} must be a valid ${['', 'u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'][f0.params[i]!]}`);
      st[sp++] = v;
    }
    this.prog = entryProg;
    this.fn = f0;
    this.cs = this.cstate(req.contractId);
    this.caller = req.context.caller;
    if (f0.nlocals + f0.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');

    // The hot registers live in locals; the frame-changing handlers (CALL, XCALL, RET) work on
    // the machine's, and the locals are read back after every handler.
    let prog = this.prog;
    let ops = prog.ops, A = prog.a, B = prog.b, C = prog.c, NX = prog.next, consts = prog.consts;
    let base = 0;
    sp = f0.nlocals;
    let pc = f0.offset;
    let gas = this.gas;
    const trace = this.trace;

    try {
      for (;;) {
        if (--gas < 0) halt('out_of_instructions', `more than ${LIMITS.instructions} instructions`);
        const cur = pc;
        const op = ops[cur]!;
        pc = NX[cur]!;
        if (trace === undefined) {
          // Fast paths: each does exactly what its handler does, for the cases it takes
          // (`continue`); otherwise (`break`) the handler runs.
          switch (op) {
            case OP.CONST: st[sp++] = consts[A[cur]!]!; continue;
            case OP.LOAD: st[sp++] = st[base + A[cur]!]!; continue;
            case OP.STORE: st[base + A[cur]!] = st[--sp]!; continue;
            case OP.JMP: pc = A[cur]!; continue;
            case OP.JMPF: if (st[--sp] === false) pc = A[cur]!; continue;
            case OP.LOOP: {
              const i = base + A[cur]!;
              const v = st[i];
              if (typeof v !== 'number' || v >= MAX_SAFE) break;
              const nv = v + 1;
              st[i] = nv;
              if (nv < B[cur]!) pc = C[cur]!;
              continue;
            }
            case OP.ADD_U64: case OP.ADD_U128: {
              const a = st[sp - 2], b = st[sp - 1];
              if (typeof a !== 'number' || typeof b !== 'number' || a + b > MAX_SAFE) break;
              st[--sp - 1] = a + b;
              continue;
            }
            case OP.SUB_U64: case OP.SUB_U128: {
              const a = st[sp - 2], b = st[sp - 1];
              if (typeof a !== 'number' || typeof b !== 'number' || a - b < 0) break;
              st[--sp - 1] = a - b;
              continue;
            }
            case OP.MUL_U64: case OP.MUL_U128: {
              const a = st[sp - 2], b = st[sp - 1];
              if (typeof a !== 'number' || typeof b !== 'number' || a * b > MAX_SAFE) break;
              st[--sp - 1] = a * b;
              continue;
            }
            case OP.LT: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! < b; continue; }
            case OP.LE: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! <= b; continue; }
            case OP.GT: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! > b; continue; }
            case OP.GE: { const b = st[--sp]!; st[sp - 1] = st[sp - 1]! >= b; continue; }
          }
        } else {
          trace({ depth: this.fProg.length + 1, contractId: this.cs.id, pc: cur, op: OPINFO[op]!.name, stack: st.slice(0, sp) });
        }
        this.pc = pc;
        this.sp = sp;
        this.base = base;
        HANDLERS[op]!(this, cur, op);
        pc = this.pc;
        sp = this.sp;
        base = this.base;
        if (pc < 0) {
          this.gas = gas;
          return this.finish(this.result, this.fn.ret);
        }
        if (this.prog !== prog) {
          prog = this.prog;
          ops = prog.ops; A = prog.a; B = prog.b; C = prog.c; NX = prog.next; consts = prog.consts;
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
        halt('storage_limit_exceeded', `contract ${toHex(cs.id)} would use more than ${LIMITS.storageBytes} bytes of storage`);
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

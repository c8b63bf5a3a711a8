/**
 * The VM's opcode handlers: one small function per opcode, gathered in HANDLERS, a table keyed
 * by opcode byte beside the ISA's own tables (isa.ts: name and operands; verifier.ts: typing).
 * Each handler is the whole meaning of its opcode; the step around it (charge one instruction,
 * fetch, advance pc, trace) is the interpreter loop's, in execute.ts.
 *
 * A handler runs with the machine's registers up to date (`m.pc` already the next
 * instruction) and leaves them as the next step must find them: it pushes and pops on STACK
 * through `m.sp`, jumps by setting `m.pc`, enters or leaves frames through the machine's frame
 * stack, or throws a Halt. `cur` is the instruction's own offset, whose operands are
 * `m.prog.a/b/c[cur]`. The verifier has proven types and stack depths, so handlers do not
 * check them again.
 *
 * Integers are numbers while |v| <= 2^53-1 and bigints beyond (values.ts): each arithmetic
 * handler tries the number case and recomputes exactly in bigint (`arith`) when it does not
 * apply or leaves the safe range.
 */
import { sha256, toHex } from '@svc-node/protocol/hash';
import { halt } from './halt.js';
import { LIMITS, OP, TY } from '@svc-node/protocol/vm/isa';
import type { Machine } from './execute.js';
import type { RtValue } from '@svc-node/protocol/vm/types';
import { checkedArith, checkedNeg, type ArithOp, type ArithOutcome, type IntTypeName } from '@svc-node/protocol/vm/checked-arith';
import {
  MAX_SAFE, U64_MAX, big, bytesEqual, encodeRt, inRange, norm, rtHasType, utf8Length,
} from '@svc-node/protocol/vm/values';

/** The value stack, reused by every call on this thread (execute is synchronous and never
 *  re-entered): a frame holds its locals then its operands. The verifier proves no slot is
 *  read before the current call writes it. */
export const STACK: RtValue[] = new Array<RtValue>(LIMITS.stack).fill(0);
const st = STACK;

/** `cur`: offset of the instruction; `op`: its opcode (handlers shared by a family use it). */
export type Handler = (m: Machine, cur: number, op: number) => void;

// ---- exact slow paths -------------------------------------------------------------------
const ARITH_OPS: readonly ArithOp[] = ['+', '-', '*', '/', '%'];

/** The checked outcome as the VM's value, or its Halt (the message names the type overflowed). */
function resultOf(r: ArithOutcome, t: IntTypeName): number | bigint {
  if (r.ok) return norm(r.value);
  if (r.code === 'division_by_zero') halt('division_by_zero', 'division by zero');
  return halt('arithmetic_overflow', `${t} overflow`);
}
/** Exact result of the binary integer opcode `op` (ADD_U64..MOD_U128), or a Halt. */
export function arith(op: number, a: number | bigint, b: number | bigint): number | bigint {
  const t: IntTypeName = op < OP.ADD_I64 ? 'u64' : op < OP.ADD_U128 ? 'i64' : 'u128';
  return resultOf(checkedArith(ARITH_OPS[(op - OP.ADD_U64) % 5]!, t, big(a), big(b)), t);
}

// ---- control ------------------------------------------------------------------------------
/** FUNC headers are only ever entered by CALL/XCALL jumping to them: a no-op step. */
function func(): void {}

function jmp(m: Machine, cur: number): void {
  m.pc = m.prog.a[cur]!;
}
function jmpf(m: Machine, cur: number): void {
  if (st[--m.sp] === false) m.pc = m.prog.a[cur]!;
}
/**
 * LOOP local bound target: increment the counter local; jump back while it is below bound.
 * `counter += 1` is u64 arithmetic (docs/LANGUAGE.md, section 12): exact past 2^53 (the
 * counter then held as a bigint, as every integer past MAX_SAFE is), `arithmetic_overflow`
 * past 2^64 - 1. Only hand-written bytecode starts a counter that high; the bound is at most
 * 100,000, so such a loop never jumps back.
 */
function loop(m: Machine, cur: number): void {
  const p = m.prog;
  const i = m.base + p.a[cur]!;
  const v = st[i] as number | bigint;
  const nv = typeof v === 'number' && v < MAX_SAFE ? v + 1 : arith(OP.ADD_U64, v, 1);
  st[i] = nv;
  if (nv < p.b[cur]!) m.pc = p.c[cur]!;
}
function require_(m: Machine, cur: number): void {
  if (st[--m.sp] !== true) halt('revert', m.prog.consts[m.prog.a[cur]!] as string);
}
function pop(m: Machine): void {
  m.sp--;
}

// ---- constants and locals -------------------------------------------------------------------
function const_(m: Machine, cur: number): void {
  st[m.sp++] = m.prog.consts[m.prog.a[cur]!]!;
}
function true_(m: Machine): void {
  st[m.sp++] = true;
}
function false_(m: Machine): void {
  st[m.sp++] = false;
}
function load(m: Machine, cur: number): void {
  st[m.sp++] = st[m.base + m.prog.a[cur]!]!;
}
function store(m: Machine, cur: number): void {
  st[m.base + m.prog.a[cur]!] = st[--m.sp]!;
}

// ---- integers -----------------------------------------------------------------------------
// Binary operators pop b, then replace a with the result.
function addU(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (r <= MAX_SAFE) { st[m.sp - 1] = r; return; }
  }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
function subU(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b;
    if (r >= 0) { st[m.sp - 1] = r; return; }
  }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
function mulU(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b;
    if (r <= MAX_SAFE) { st[m.sp - 1] = r; return; }
  }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
function divU(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number' && b !== 0) { st[m.sp - 1] = (a - (a % b)) / b; return; }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
function modU(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number' && b !== 0) { st[m.sp - 1] = a % b; return; }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
/** ADD/SUB/MUL_I64. `+ 0` turns a -0 result into 0 (one representation per value). */
function addSubMulI(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number') {
    const r = op === OP.ADD_I64 ? a + b : op === OP.SUB_I64 ? a - b : a * b;
    if (r <= MAX_SAFE && r >= -MAX_SAFE) { st[m.sp - 1] = r + 0; return; }
  }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
/** DIV/MOD_I64: truncating division, remainder with the dividend's sign. */
function divModI(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'number' && typeof b === 'number' && b !== 0) {
    const r = a % b;
    st[m.sp - 1] = (op === OP.DIV_I64 ? (a - r) / b : r) + 0;
    return;
  }
  st[m.sp - 1] = arith(op, a as number, b as number);
}
function negI(m: Machine): void {
  const a = st[m.sp - 1];
  if (typeof a === 'number') st[m.sp - 1] = 0 - a;
  else st[m.sp - 1] = resultOf(checkedNeg(a as bigint), 'i64');
}
/** CAST t: the top integer unchanged, or arithmetic_overflow when it does not fit type t. */
function cast(m: Machine, cur: number): void {
  const t = m.prog.a[cur]!;
  const v = st[m.sp - 1] as number | bigint;
  if (!(typeof v === 'number' && (v >= 0 || t === TY.i64)) && !inRange(t, v)) halt('arithmetic_overflow', `value does not fit ${['', 'u64', 'i64', 'u128'][t]}`);
}

// ---- comparison and logic -------------------------------------------------------------------
// Integers of one type compare correctly across number and bigint with the JS operators.
function lt(m: Machine): void {
  const b = st[--m.sp]!;
  st[m.sp - 1] = st[m.sp - 1]! < b;
}
function le(m: Machine): void {
  const b = st[--m.sp]!;
  st[m.sp - 1] = st[m.sp - 1]! <= b;
}
function gt(m: Machine): void {
  const b = st[--m.sp]!;
  st[m.sp - 1] = st[m.sp - 1]! > b;
}
function ge(m: Machine): void {
  const b = st[--m.sp]!;
  st[m.sp - 1] = st[m.sp - 1]! >= b;
}
/** EQ/NE: canonical integers, booleans and strings by ===, bytes and keys by content. */
function eqNe(m: Machine, _cur: number, op: number): void {
  const b = st[--m.sp]!, a = st[m.sp - 1]!;
  const eq = a === b || (a instanceof Uint8Array && bytesEqual(a, b as Uint8Array));
  st[m.sp - 1] = op === OP.EQ ? eq : !eq;
}
function not(m: Machine): void {
  st[m.sp - 1] = !st[m.sp - 1];
}

// ---- storage and events ---------------------------------------------------------------------
function mapKey(k: RtValue, keyType: number): Uint8Array {
  const kb = k instanceof Uint8Array ? k : encodeRt(k, keyType);
  if (kb.length > LIMITS.mapKeyBytes) halt('value_too_large', `map key longer than ${LIMITS.mapKeyBytes} bytes`);
  return kb;
}
function sload(m: Machine, cur: number): void {
  const fd = m.prog.fields[m.prog.a[cur]!]!;
  st[m.sp++] = m.slot(m.cs, fd, null, fd.valueType).val;
}
function sstore(m: Machine, cur: number): void {
  const fd = m.prog.fields[m.prog.a[cur]!]!;
  const s = m.slot(m.cs, fd, null, fd.valueType);
  s.val = st[--m.sp]!;
  s.dirty = true;
}
function mload(m: Machine, cur: number): void {
  const fd = m.prog.fields[m.prog.a[cur]!]!;
  const kb = mapKey(st[m.sp - 1]!, fd.keyType);
  st[m.sp - 1] = m.slot(m.cs, fd, kb, fd.valueType).val;
}
function mstore(m: Machine, cur: number): void {
  const fd = m.prog.fields[m.prog.a[cur]!]!;
  const v = st[--m.sp]!;
  const kb = mapKey(st[--m.sp]!, fd.keyType);
  const s = m.slot(m.cs, fd, kb, fd.valueType);
  s.val = v;
  s.dirty = true;
}
/** EMIT e: pops the event's parameters; counts them against the call's event bytes. */
function emit(m: Machine, cur: number): void {
  const ev = m.prog.events[m.prog.a[cur]!]!;
  const n = ev.types.length;
  const sp = m.sp;
  let size = ev.name.length;
  for (let i = sp - n; i < sp; i++) {
    const v = st[i]!;
    size += typeof v === 'string' ? utf8Length(v) : v instanceof Uint8Array ? v.length : 16;
  }
  m.eventBytes += size;
  if (m.eventBytes > LIMITS.eventBytes) halt('event_limit_exceeded', `events of this call exceed ${LIMITS.eventBytes} bytes`);
  m.events.push({ cs: m.cs, name: ev.name, types: ev.types, vals: st.slice(sp - n, sp) });
  m.sp = sp - n;
}

// ---- calls ----------------------------------------------------------------------------------
/** CALL f: a function of the same program; its parameters are the top operands. */
function call(m: Machine, cur: number): void {
  const p = m.prog;
  const g = p.functions[p.funcAt[p.a[cur]!]!]!;
  if (m.fProg.length + 2 > LIMITS.callDepth) halt('call_depth_exceeded', `call depth above ${LIMITS.callDepth}`);
  const nb = m.sp - g.params.length;
  if (nb + g.nlocals + g.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');
  m.pushFrame();
  m.fn = g;
  m.base = nb;
  m.sp = nb + g.nlocals;
  m.pc = g.offset;
}
/** XCALL name argc ret: a public function of the contract whose id lies under the arguments.
 *  Nothing of the callee is trusted until checked here: it exists, takes these arguments and
 *  returns what the caller's code expects, and a readonly caller only reaches readonly code. */
function xcall(m: Machine, cur: number): void {
  const p = m.prog;
  const name = p.consts[p.a[cur]!] as string;
  const argc = p.b[cur]!;
  const ret = p.c[cur]!;
  const argBase = m.sp - argc;
  const cid = st[argBase - 1] as Uint8Array;
  const cp = m.host.program(cid);
  if (cp === undefined) halt('unknown_contract', `no contract ${toHex(cid)}`);
  const gi = cp.byName.get(name);
  if (gi === undefined) halt('unknown_function', `contract ${toHex(cid)} has no function ${JSON.stringify(name)}`);
  const g = cp.functions[gi]!;
  if (g.params.length !== argc) halt('bad_arguments', `${name} takes ${g.params.length} arguments, got ${argc}`);
  for (let i = 0; i < argc; i++) if (!rtHasType(st[argBase + i]!, g.params[i]!)) halt('bad_arguments', `argument ${i} of ${name} has the wrong type`);
  if (g.ret !== ret) halt('bad_arguments', `${name} returns a different type than the caller expects`);
  if (m.fn.readonly && !g.readonly) halt('readonly_violation', `readonly function calls non-readonly ${name}`);
  if (m.fProg.length + 2 > LIMITS.callDepth) halt('call_depth_exceeded', `call depth above ${LIMITS.callDepth}`);
  const nb = argBase - 1;
  if (nb + g.nlocals + g.maxStack > LIMITS.stack) halt('stack_overflow', 'operand stack overflow');
  for (let i = 0; i < argc; i++) st[nb + i] = st[argBase + i]!;
  m.pushFrame();
  m.caller = m.cs.id;
  m.cs = m.cstate(cid);
  m.prog = cp;
  m.fn = g;
  m.base = nb;
  m.sp = nb + g.nlocals;
  m.pc = g.offset;
}
/** RET: the caller's frame back with the return value (if any) pushed; from the entry frame,
 *  the call's result and pc = -1, which ends the loop. */
function ret(m: Machine): void {
  const hasRet = m.fn.ret !== TY.none;
  const v = hasRet ? st[m.sp - 1] : undefined;
  if (m.fProg.length === 0) {
    m.result = v;
    m.pc = -1;
    return;
  }
  m.sp = m.base;
  if (hasRet) st[m.sp++] = v!;
  m.popFrame();
}

// ---- Bitcoin context ------------------------------------------------------------------------
function height(m: Machine): void {
  st[m.sp++] = m.req.context.height;
}
function txid(m: Machine): void {
  st[m.sp++] = m.req.context.txid;
}
function caller(m: Machine): void {
  st[m.sp++] = m.caller;
}
function callid(m: Machine): void {
  st[m.sp++] = m.callId;
}
function self(m: Machine): void {
  st[m.sp++] = m.cs.id;
}
function nin(m: Machine): void {
  st[m.sp++] = m.req.context.inputs.length;
}
function nout(m: Machine): void {
  st[m.sp++] = m.req.context.outputs.length;
}
/** INTXID/INVOUT: the txid or vout of input i (revert when out of range). */
function input(m: Machine, _cur: number, op: number): void {
  const inputs = m.req.context.inputs;
  const i = st[m.sp - 1];
  if (typeof i !== 'number' || i >= inputs.length) halt('revert', `input index ${i} out of range`);
  const inp = inputs[i]!;
  st[m.sp - 1] = op === OP.INTXID ? inp.txid : inp.vout;
}
/** OUTVAL/OUTSCRIPT: the value or script of output i (revert when out of range). */
function output(m: Machine, _cur: number, op: number): void {
  const outputs = m.req.context.outputs;
  const i = st[m.sp - 1];
  if (typeof i !== 'number' || i >= outputs.length) halt('revert', `output index ${i} out of range`);
  const o = outputs[i]!;
  if (op === OP.OUTVAL) {
    if (typeof o.value !== 'bigint' || o.value < 0n || o.value > U64_MAX) throw new TypeError('context output value must be a u64 bigint');
    st[m.sp - 1] = norm(o.value);
  } else st[m.sp - 1] = o.script;
}

// ---- bytes and strings ----------------------------------------------------------------------
/** LEN: UTF-8 bytes of a string, length of bytes. */
function len(m: Machine): void {
  const v = st[m.sp - 1];
  st[m.sp - 1] = typeof v === 'string' ? utf8Length(v) : (v as Uint8Array).length;
}
function concat(m: Machine): void {
  const b = st[--m.sp], a = st[m.sp - 1];
  if (typeof a === 'string') {
    const s = a + (b as string);
    if (utf8Length(s) > LIMITS.valueBytes) halt('value_too_large', `string longer than ${LIMITS.valueBytes} bytes`);
    st[m.sp - 1] = s;
  } else {
    const x = a as Uint8Array, y = b as Uint8Array;
    if (x.length + y.length > LIMITS.valueBytes) halt('value_too_large', `bytes longer than ${LIMITS.valueBytes}`);
    const out = new Uint8Array(x.length + y.length);
    out.set(x, 0);
    out.set(y, x.length);
    st[m.sp - 1] = out;
  }
}
/** OUTPOINT: txid (32 bytes) then vout as 4 bytes big-endian. */
function outpoint(m: Machine): void {
  const v = st[--m.sp];
  const t = st[m.sp - 1] as Uint8Array;
  if (typeof v !== 'number' || v > 0xffffffff) halt('arithmetic_overflow', 'vout does not fit u32');
  const out = new Uint8Array(36);
  out.set(t, 0);
  out[32] = v >>> 24; out[33] = v >>> 16; out[34] = v >>> 8; out[35] = v;
  st[m.sp - 1] = out;
}
/** TOBYTES: a key as bytes: the same Uint8Array; only its type (the verifier's) changes. */
function tobytes(): void {}
/** INTBYTES t: the storage layout's encoding: 8 or 16 bytes big-endian, i64 two's complement. */
function intbytes(m: Machine, cur: number): void {
  st[m.sp - 1] = new Uint8Array(encodeRt(st[m.sp - 1]!, m.prog.a[cur]!));
}
function tokey(m: Machine): void {
  if ((st[m.sp - 1] as Uint8Array).length !== 32) halt('revert', 'to_key needs exactly 32 bytes');
}
function sha(m: Machine): void {
  st[m.sp - 1] = sha256(st[m.sp - 1] as Uint8Array);
}

// ---- the table ------------------------------------------------------------------------------
/** Every opcode's handler by name: the type demands exactly one for each name in OP. */
const BY_NAME: { readonly [K in keyof typeof OP]: Handler } = {
  FUNC: func, RET: ret, CALL: call, XCALL: xcall, JMP: jmp, JMPF: jmpf, LOOP: loop, REQUIRE: require_, POP: pop,
  CONST: const_, TRUE: true_, FALSE: false_, LOAD: load, STORE: store,
  ADD_U64: addU, SUB_U64: subU, MUL_U64: mulU, DIV_U64: divU, MOD_U64: modU,
  ADD_I64: addSubMulI, SUB_I64: addSubMulI, MUL_I64: addSubMulI, DIV_I64: divModI, MOD_I64: divModI,
  ADD_U128: addU, SUB_U128: subU, MUL_U128: mulU, DIV_U128: divU, MOD_U128: modU,
  NEG_I64: negI,
  LT: lt, LE: le, GT: gt, GE: ge, EQ: eqNe, NE: eqNe, NOT: not, CAST: cast,
  SLOAD: sload, SSTORE: sstore, MLOAD: mload, MSTORE: mstore, EMIT: emit,
  HEIGHT: height, TXID: txid, CALLER: caller, CALLID: callid, SELF: self, NIN: nin, NOUT: nout,
  INTXID: input, INVOUT: input, OUTVAL: output, OUTSCRIPT: output,
  LEN: len, CONCAT: concat, OUTPOINT: outpoint, TOBYTES: tobytes, TOKEY: tokey, SHA256: sha, INTBYTES: intbytes,
};

/** Reached only by a byte the verifier should have refused. */
export function unverified(_m: Machine, cur: number, op: number): never {
  throw new Error(`VM bug: unverified opcode ${op} at ${cur}`);
}

/** Handler by opcode byte, all 256 entries filled (one array shape, one call site shape). */
export const HANDLERS: readonly Handler[] = (() => {
  const t = new Array<Handler>(256).fill(unverified);
  for (const [name, code] of Object.entries(OP)) t[code] = BY_NAME[name as keyof typeof OP];
  return t;
})();

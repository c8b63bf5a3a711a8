/**
 * Execution: rules of the VM the other execution cases leave open, found by the mutation run.
 * - Storage slots are found by their whole key: two map keys whose FNV-1a hashes are equal
 *   (the slot index's hash, svc-node's own) are two entries, before and after a call has
 *   touched more than 16 slots of one contract.
 * - Contract states by id: a call touching 8, 9 and 11 contracts (the state index) and
 *   calling some of them again finds each one's storage as it left it.
 * - After a cross-contract call returns, the caller runs on in its own code with its own
 *   caller() (the program and the caller restored).
 * - The value stack: a frame is admitted when base + locals + operand depth is exactly
 *   1,024 and refused one past (entry, internal call, cross-contract call); values popped,
 *   emitted and returned leave the stack (a loop of them followed by a call fits).
 * - Internal call depth: a chain of internal calls at exactly 64 frames and one past.
 * - Events: integers count 16 bytes, keys 32, strings their UTF-8 length (at the limit and one past).
 * - Cross-contract call checks: unknown contract, unknown function, argument count, argument
 *   type and return type.
 * - Context and built-ins: an input or output index equal to the count (and one past 2^53),
 *   outpoint's vout at 2^32-1 and 2^32, string concat's limit counted in UTF-8 bytes.
 * - LOOP's counter started from an argument (hand-written bytecode): `counter += 1` in u64
 *   arithmetic at 2^53 - 1, 2^53 (exact, and EQ to the u64 argument) and 2^64 - 1 (overflow).
 * - Integer handlers where numbers meet bigints: i64 results just past 2^53, u64 mul/div/mod of
 *   a number by a bigint, NEG of a number.
 * The rules are docs/LANGUAGE.md's, section 13 ("Execution"), and ../shared/PROTOCOL.md's.
 */
import { compileSource } from '../../src/compiler/index.js';
import { FUNC_READONLY, LIMITS, OP, TY } from '@svc-node/protocol/vm/isa';
import { encodeStorageValue, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import type { ArtifactCore } from '@svc-node/protocol/contract';
import { hex, type CaseInput } from './kit.js';
import { EXTENDED_KEY, PREFIX_KEY } from './roots-vm.js';

function core(source: string, name: string): ArtifactCore {
  const r = compileSource(source, name);
  if (!r.ok) throw new Error(`execution-vm: ${name} does not compile: ${r.errors.map((e) => e.message).join('; ')}`);
  const { metadata: _m, ...c } = r.artifact;
  return c;
}

const cid = (n: number) => 'c1' + '00'.repeat(30) + n.toString(16).padStart(2, '0');
const HUB = cid(1);
const OTHER = cid(2);
const CONTEXT = {
  height: 812_345,
  txid: 'ab'.repeat(32),
  caller: 'cd'.repeat(32),
  call_id: '7',
  inputs: [{ txid: '01'.repeat(32), vout: 7 }, { txid: '02'.repeat(32), vout: 4294967295 }],
  outputs: [{ value: '2100000000000000', script: '6a' }, { value: '18446744073709551615', script: '5120' }],
};

type ValueJson = { type: string; value: string | boolean };
const u64 = (n: number | bigint): ValueJson => ({ type: 'u64', value: String(n) });
const i64 = (n: number | bigint): ValueJson => ({ type: 'i64', value: String(n) });
const keyOf = (id: string): ValueJson => ({ type: 'key', value: id });
interface ContractJson { contract_id: string; artifact: ArtifactCore; storage: [string, string][] }
const one = (id: string, artifact: ArtifactCore, storage: [string, string][] = []): ContractJson => ({ contract_id: id, artifact, storage });
const call = (id: string, pins: string, contracts: ContractJson[], to: string, fn: string, args: ValueJson[]): CaseInput => ({
  id: `vm-${id}`, pins, input: { contracts, call: { contract_id: to, function: fn, args }, context: CONTEXT },
});

// Two u64 map keys whose 8-byte big-endian encodings have one FNV-1a hash (found by a search; checked below).
const COLLIDE_A = 623380075610287n;
const COLLIDE_B = 2644863551372661n;
function fnv1a(b: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const x of b) h = Math.imul(h ^ x, 0x01000193);
  return h;
}
const u64Bytes = (x: bigint): Uint8Array => encodeStorageValue({ type: 'u64', value: x });

const COLL_SRC = `contract Coll {
  field m: map<u64, u64>;
  pub fn put2(a: u64, b: u64, n: u64) -> u64 {
    for i in 0..40 { if i >= n { break; } m[i + 1000] = i + 1; }
    m[a] = 1;
    m[b] = 2;
    m[1000] = m[1000] + 100;
    return m[a] * 10 + m[b];
  }
  field mb: map<bytes, u64>;
  pub fn pfx(a: bytes, b: bytes) -> u64 { mb[b] = 5; return mb[a]; }
  pub readonly fn get2(a: u64, b: u64, n: u64) -> u64 {
    let s: u64 = 0;
    for i in 0..40 { if i >= n { break; } s = s + m[i + 1000]; }
    return m[a] * 10 + m[b] + s;
  }
}`;

const LEAF_SRC = `contract Leaf {
  field n: u64;
  pub fn bump() -> u64 { n = n + 1; return n; }
}`;

function hubSrc(): string {
  const ks = Array.from({ length: 10 }, (_, i) => `k${i}: key`).join(', ');
  const firsts = Array.from({ length: 10 }, (_, i) => `    if n > ${i} { s = s + call<u64>(k${i}, "bump"); }`).join('\n');
  return `contract Hub {
  field total: u64;
  pub fn fan(n: u64, ${ks}) -> u64 {
    let s: u64 = 0;
${firsts}
    s = s + call<u64>(k0, "bump") * 100;
    s = s + call<u64>(k7, "bump") * 1000;
    s = s + call<u64>(k8, "bump") * 10000;
    s = s + call<u64>(k9, "bump") * 100000;
    total = s;
    return s;
  }
}`;
}

const WHO_SRC = `contract Who {
  field n: u64;
  pub fn noop() {}
  pub fn val() -> u64 { n = n + 5; return n * 2 + 1; }
  pub fn after(other: key) -> key { call(other, "noop"); return caller(); }
  pub fn more(other: key) -> u64 {
    let x = call<u64>(other, "val");
    let y = x * 3 + 1;
    if y > 5 { y = y + 100; }
    n = y;
    return y;
  }
  pub fn takes(k: key) -> u64 { return 1; }
  pub fn x_argc_fewer(other: key) -> u64 { return call<u64>(other, "takes"); }
  pub fn manycalls(other: key) -> u64 { for i in 0..2000 { if i >= 1100 { break; } call(other, "noop"); } return 7; }
  pub fn x_unknown_contract(other: key) { call(other, "noop"); }
  pub fn x_unknown_function(other: key) { call(other, "nosuch"); }
  pub fn x_argc(other: key) { call(other, "noop", 5); }
  pub fn x_argtype(other: key) -> u64 { return call<u64>(other, "takes", 5); }
  pub fn x_rettype(other: key) -> u64 { return call<u64>(other, "noop"); }
}`;

/** A callee of another program than its caller's: its code sits past padding functions and runs a loop (operands, bounds and targets of its own). */
const CALLEE_SRC = `contract Callee {
  field n: u64;
  fn pad1() -> u64 { let a: u64 = 1; let b: u64 = 2; let c: u64 = a * b + 3; return c * c; }
  fn pad2() -> u64 { let a: u64 = pad1(); for i in 0..7 { a = a + i; } return a; }
  pub fn noop() {}
  pub fn val() -> u64 {
    let s: u64 = 40;
    for i in 0..6 { s = s + i; }
    n = s + pad2();
    return s * 2 + 1;
  }
}`;

const STACKOPS_SRC = `contract StackOps {
  event Q(a: u64, b: u64, c: u64, d: u64);
  pub fn spam(n: u64) -> u64 { for i in 0..2000 { if i >= n { break; } emit Q(i, i, i, i); } return seven(); }
  pub fn drop(n: u64) -> u64 { for i in 0..2000 { if i >= n { break; } three(); nothing(); } return seven(); }
  fn seven() -> u64 { return 7; }
  fn three() -> u64 { return 3; }
  fn nothing() {}
}`;

const EVMIX_SRC = `contract EvMix {
  event N(v: u64);
  event K(k: key);
  event S(t: string);
  pub fn mix(s: string) { for i in 0..100 { emit N(i); } emit K(self_id()); emit S(s); }
}`;

const BUILTINS_SRC = `contract Builtins {
  pub readonly fn outv(i: u64) -> u64 { return output_value(i); }
  pub readonly fn outs(i: u64) -> bytes { return output_script(i); }
  pub readonly fn inv(i: u64) -> u64 { return input_vout(i); }
  pub readonly fn intx(i: u64) -> key { return input_txid(i); }
  pub readonly fn op(k: key, v: u64) -> bytes { return outpoint(k, v); }
  pub readonly fn blen(b: bytes) -> u64 { return len(b); }
  pub readonly fn cat(a: string, b: string) -> u64 { return len(concat(a, b)); }
  pub readonly fn outv1(i: u64) -> u64 { return output_value(i + 1); }
  pub readonly fn notb(b: bool) -> bool { return !b; }
  pub readonly fn notgt(a: u64) -> bool { return !(a > 5); }
  pub readonly fn fl(a: u64) -> bool { let x: bool = false; return x; }
  pub readonly fn hash2(b: bytes) -> key { return sha256(concat(b, b)); }
  pub readonly fn tk2(b: bytes) -> key { return to_key(concat(b, b)); }
  pub readonly fn branch(flag: bool) -> u64 {
    let a: u64 = 5;
    let b: u64 = 7;
    let c: u64 = 0;
    if flag { c = 1; } else { c = 2; }
    return a * 100 + b * 10 + c;
  }
}`;

const INTS_SRC = `contract Ints {
  pub readonly fn mulu(a: u64, b: u64) -> u64 { return a * b; }
  pub readonly fn divu(a: u64, b: u64) -> u64 { return a / b; }
  pub readonly fn modu(a: u64, b: u64) -> u64 { return a % b; }
  pub readonly fn mulw(a: u128, b: u128) -> u128 { return a * b; }
  pub readonly fn divw(a: u128, b: u128) -> u128 { return a / b; }
  pub readonly fn modw(a: u128, b: u128) -> u128 { return a % b; }
  pub readonly fn addi(a: i64, b: i64) -> i64 { return a + b; }
  pub readonly fn subi(a: i64, b: i64) -> i64 { return a - b; }
  pub readonly fn muli(a: i64, b: i64) -> i64 { return a * b; }
  pub readonly fn divi(a: i64, b: i64) -> i64 { return a / b; }
  pub readonly fn modi(a: i64, b: i64) -> i64 { return a % b; }
  pub readonly fn negi(a: i64) -> i64 { return -a; }
  pub readonly fn addmixed(a: i64, b: i64) -> i64 { return a + b; }
}`;

/** A chain of internal calls: go -> f1 -> ... -> f{len}. */
function chainSrc(len: number): string {
  const fns = Array.from({ length: len }, (_, i) => (i + 1 < len ? `fn f${i + 1}() { f${i + 2}(); }` : `fn f${i + 1}() {}`)).join(' ');
  return `contract Chain { pub fn go() { f1(); } ${fns} }`;
}

const u16 = (x: number): number[] => [x & 0xff, x >> 8];
const u32 = (x: number): number[] => [x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, (x >>> 24) & 0xff];
const FUNC = (nlocals: number, ret = 0): number[] => [OP.FUNC, 0, 0, nlocals, ret];
const MAIN = { type: 'function', name: 'main', inputs: [], outputs: [], readonly: false };

/**
 * Hand-assembled frames on the value stack's edge: `main` holds `locals` locals and pushes
 * `depth` bools, then enters `h` (an internal CALL, or an XCALL to itself with its own id under
 * no arguments) whose own operand depth is `hDepth`; h pushes and pops that many.
 */
function frameArtifact(locals: number, depth: number, how: 'call' | 'xcall', hDepth: number, hLocals = 0): ArtifactCore {
  const pushes = Array(depth).fill(OP.TRUE);
  const pops = Array(depth).fill(OP.POP);
  const h = (at: number) => ({ at, code: [...FUNC(hLocals), ...Array(hDepth).fill(OP.TRUE), ...Array(hDepth).fill(OP.POP), OP.RET] });
  if (how === 'call') {
    const mainLen = 5 + depth + 5 + depth + 1;
    const main = [...FUNC(locals), ...pushes, OP.CALL, ...u32(mainLen), ...pops, OP.RET];
    const g = h(mainLen);
    return { bytecode: hex(Uint8Array.from([...main, ...g.code])), abi: [MAIN], function_offsets: { main: 0, h: g.at }, function_offset_to_locals: { '0': locals, [String(g.at)]: hLocals }, constants: [] };
  }
  // SELF; XCALL "h" 0 args, no result.
  const mainLen = 5 + depth + 1 + 5 + depth + 1;
  const main = [...FUNC(locals), ...pushes, OP.SELF, OP.XCALL, ...u16(0), 0, 0, ...pops, OP.RET];
  const g = h(mainLen);
  return {
    bytecode: hex(Uint8Array.from([...main, ...g.code])),
    abi: [MAIN, { ...MAIN, name: 'h' }],
    function_offsets: { main: 0, h: g.at },
    function_offset_to_locals: { '0': locals, [String(g.at)]: hLocals },
    constants: [{ type: 'string', value: 'h' }],
  };
}

export function executionVmCases(): CaseInput[] {
  if (fnv1a(u64Bytes(COLLIDE_A)) !== fnv1a(u64Bytes(COLLIDE_B))) throw new Error('execution-vm: the FNV-1a collision does not collide');
  const cases: CaseInput[] = [];

  // Slots by whole key.
  const coll = core(COLL_SRC, 'coll.svc');
  const entry = (k: bigint, v: bigint): [string, string] => [hex(fieldKey(coll.abi as never, 'm', { type: 'u64', value: k })), hex(encodeStorageValue({ type: 'u64', value: v }))];
  const [a, b] = [u64(COLLIDE_A), u64(COLLIDE_B)];
  for (const n of [0, 20]) {
    const where = n === 0 ? 'among few slots' : 'after more than 16 slots of the contract';
    cases.push(
      call(`hash-collision-write-${n}`, `two map keys with one FNV-1a hash are two entries when written in one call (${where})`, [one(HUB, coll)], HUB, 'put2', [a, b, u64(n)]),
      call(`hash-collision-read-${n}`, `two map keys with one FNV-1a hash read their own committed values (${where})`, [one(HUB, coll, [entry(COLLIDE_A, 3n), entry(COLLIDE_B, 4n)])], HUB, 'get2', [a, b, u64(n)]),
      call(`hash-collision-read-one-${n}`, `of two map keys with one FNV-1a hash only the one in storage has a value (${where})`, [one(HUB, coll, [entry(COLLIDE_A, 3n)])], HUB, 'get2', [b, a, u64(n)]),
    );
  }

  const [pk, xk] = [{ type: 'bytes', value: PREFIX_KEY }, { type: 'bytes', value: EXTENDED_KEY }];
  cases.push(
    call('hash-collision-prefix-key', 'a bytes map key and the same key with bytes appended, with one FNV-1a hash, are two entries (the longer written first)', [one(HUB, coll)], HUB, 'pfx', [pk, xk]),
    call('hash-collision-extended-key', 'a bytes map key and the same key with bytes appended, with one FNV-1a hash, are two entries (the shorter written first)', [one(HUB, coll)], HUB, 'pfx', [xk, pk]),
  );

  // Contract states by id.
  const hub = core(hubSrc(), 'hub.svc');
  const leaf = core(LEAF_SRC, 'leaf.svc');
  const leaves = Array.from({ length: 10 }, (_, i) => cid(0x10 + i));
  const hubContracts = [one(HUB, hub), ...leaves.map((id) => one(id, leaf))];
  for (const n of [7, 8, 10]) {
    cases.push(call(`contracts-${n + 1}`, `a call touching ${n + 1} contracts (then ${n < 9 ? 'a 10th' : 'none new'}) finds each callee's storage as its earlier frame left it when called again`, hubContracts, HUB, 'fan', [u64(n), ...leaves.map(keyOf)]));
  }

  // Returning from a cross-contract call.
  const who = core(WHO_SRC, 'who.svc');
  const whoPair = [one(HUB, who), one(OTHER, who)];
  cases.push(
    call('caller-after-return', 'after a cross-contract call returns, caller() is the caller\'s own caller again', whoPair, HUB, 'after', [keyOf(OTHER)]),
    call('code-after-return', 'after a cross-contract call into another program (a loop past padding functions) returns into more code, the caller runs on in its own program', [one(HUB, who), one(OTHER, core(CALLEE_SRC, 'callee.svc'))], HUB, 'more', [keyOf(OTHER)]),
    call('xcall-argument-count-fewer', 'a cross-contract call with fewer arguments than the callee takes fails: bad_arguments', whoPair, HUB, 'x_argc_fewer', [keyOf(OTHER)]),
    call('xcalls-leave-stack', 'returns from 1,100 cross-contract calls of a function returning nothing leave the caller\'s stack as it was', whoPair, HUB, 'manycalls', [keyOf(OTHER)]),
    call('xcall-unknown-contract', 'a cross-contract call to an id with no contract fails: unknown_contract', [one(HUB, who)], HUB, 'x_unknown_contract', [keyOf(OTHER)]),
    call('xcall-unknown-function', 'a cross-contract call to a function the callee lacks fails: unknown_function', whoPair, HUB, 'x_unknown_function', [keyOf(OTHER)]),
    call('xcall-argument-count', 'a cross-contract call with more arguments than the callee takes fails: bad_arguments', whoPair, HUB, 'x_argc', [keyOf(OTHER)]),
    call('xcall-argument-type', 'a cross-contract call passing a u64 where the callee takes a key fails: bad_arguments', whoPair, HUB, 'x_argtype', [keyOf(OTHER)]),
    call('xcall-return-type', 'a cross-contract call expecting a u64 from a function returning nothing fails: bad_arguments', whoPair, HUB, 'x_rettype', [keyOf(OTHER)]),
  );

  // The value stack.
  const S = LIMITS.stack;
  const frame = (id: string, pins: string, art: ArtifactCore) => call(id, pins, [one(HUB, art)], HUB, 'main', []);
  cases.push(
    frame('entry-frame-past-limit', `an entry frame of 255 locals and ${S - 254} operands fails: stack_overflow`, frameArtifact(255, S - 254, 'call', 0)),
    frame('call-frame-at-limit', `an entry frame of 255 locals and ${S - 255} operands (${S} slots), then an internal call whose frame starts at slot ${S} with no locals and no operands, runs`, frameArtifact(255, S - 255, 'call', 0)),
    frame('call-frame-past-limit', `an internal call whose frame starts at slot ${S} with one operand fails: stack_overflow`, frameArtifact(255, S - 255, 'call', 1)),
    frame('xcall-frame-at-limit', `a cross-contract call whose frame ends exactly at slot ${S} runs`, frameArtifact(254, S - 255, 'xcall', 1)),
    frame('xcall-frame-past-limit', `a cross-contract call whose frame ends one past slot ${S} fails: stack_overflow`, frameArtifact(254, S - 255, 'xcall', 2)),
    frame('xcall-frame-local-at-limit', `a cross-contract call whose frame of one local ends exactly at slot ${S} runs`, frameArtifact(254, S - 255, 'xcall', 0, 1)),
    frame('xcall-frame-local-past-limit', `a cross-contract call whose frame of one local and one operand ends one past slot ${S} fails: stack_overflow`, frameArtifact(254, S - 255, 'xcall', 1, 1)),
  );
  // JMPF whose target offset (20) is also a local's index: a not-taken JMPF leaves local 20 as it was.
  const jmpfArt: ArtifactCore = {
    bytecode: hex(Uint8Array.from([...FUNC(40, 1), OP.CONST, ...u16(0), OP.STORE, 20, OP.TRUE, OP.JMPF, ...u32(20), OP.TRUE, OP.POP, OP.TRUE, OP.POP, OP.LOAD, 20, OP.RET])),
    abi: [{ ...MAIN, outputs: [{ type: 'u64' }] }], function_offsets: { main: 0 }, function_offset_to_locals: { '0': 40 }, constants: [{ type: 'u64', value: 0 }],
  };
  cases.push(frame('jmpf-not-taken', 'a JMPF not taken changes nothing but the stack it pops (local 20 stays 0)', jmpfArt));
  const stackOps = core(STACKOPS_SRC, 'stackops.svc');
  cases.push(
    call('emits-leave-stack', 'the parameters of an event leave the value stack: 300 emits of 4 parameters, then a call', [one(HUB, stackOps)], HUB, 'spam', [u64(300)]),
    call('discarded-results-leave-stack', 'a discarded call result and a call returning nothing leave the value stack: 1,100 of each, then a call', [one(HUB, stackOps)], HUB, 'drop', [u64(1100)]),
  );

  // Internal call depth.
  const depth = LIMITS.callDepth;
  cases.push(
    call('internal-depth-at-limit', `a chain of internal calls ${depth} frames deep (the entry is depth 1) runs`, [one(HUB, core(chainSrc(depth - 1), 'chain.svc'))], HUB, 'go', []),
    call('internal-depth-past-limit', `a chain of internal calls ${depth + 1} frames deep fails: call_depth_exceeded`, [one(HUB, core(chainSrc(depth), 'chain.svc'))], HUB, 'go', []),
  );

  // Event bytes by parameter type: 100 N(u64) (1 + 16 each), K(key) (1 + 32), S(string) (1 + its UTF-8 bytes).
  const evmix = core(EVMIX_SRC, 'evmix.svc');
  const tail = LIMITS.eventBytes - 100 * 17 - 33 - 1;
  const str = (n: number): ValueJson => ({ type: 'string', value: 'e'.repeat(n) });
  cases.push(
    call('events-typed-at-limit', `events of integers (16 bytes), a key (32) and a string (its length), ${LIMITS.eventBytes} bytes with their names, execute`, [one(HUB, evmix)], HUB, 'mix', [str(tail)]),
    call('events-typed-past-limit', `the same events one byte longer fail: event_limit_exceeded`, [one(HUB, evmix)], HUB, 'mix', [str(tail + 1)]),
  );

  // Context and built-ins.
  const bi = [one(HUB, core(BUILTINS_SRC, 'builtins.svc'))];
  const big = 2n ** 53n;
  const eacute = (n: number) => '\u00e9'.repeat(n);
  const half = LIMITS.valueBytes / 4;
  cases.push(
    call('output-value-last', 'output_value of the last output', bi, HUB, 'outv', [u64(1)]),
    call('output-value-at-count', 'output_value of an index equal to the output count reverts', bi, HUB, 'outv', [u64(2)]),
    call('output-value-big-index', 'output_value of an index of 2^53 reverts', bi, HUB, 'outv', [u64(big)]),
    call('output-script-at-count', 'output_script of an index equal to the output count reverts', bi, HUB, 'outs', [u64(2)]),
    call('input-vout-at-count', 'input_vout of an index equal to the input count reverts', bi, HUB, 'inv', [u64(2)]),
    call('input-txid-big-index', 'input_txid of an index of 2^53 reverts', bi, HUB, 'intx', [u64(big)]),
    call('outpoint-bytes', 'outpoint writes the vout as 4 bytes big-endian after the txid', bi, HUB, 'op', [keyOf('ee'.repeat(32)), u64(0x89abcdef)]),
    call('outpoint-vout-max', 'outpoint of vout 2^32-1', bi, HUB, 'op', [keyOf('ee'.repeat(32)), u64(0xffffffff)]),
    call('outpoint-vout-2-32', 'outpoint of vout 2^32 fails: arithmetic_overflow', bi, HUB, 'op', [keyOf('ee'.repeat(32)), u64(2 ** 32)]),
    call('outpoint-vout-big', 'outpoint of a vout past 2^53 fails: arithmetic_overflow', bi, HUB, 'op', [keyOf('ee'.repeat(32)), u64(big + 7n)]),
    call('output-value-computed-index', 'output_value of a computed index (0 + 1) reads that output', bi, HUB, 'outv1', [u64(0)]),
    call('not', '!true is false', bi, HUB, 'notb', [{ type: 'bool', value: true }]),
    call('not-computed', '!(3 > 5) is true', bi, HUB, 'notgt', [u64(3)]),
    call('false-local', 'a local set to false reads false', bi, HUB, 'fl', [u64(7)]),
    call('sha256-computed', 'sha256 of bytes built by concat', bi, HUB, 'hash2', [{ type: 'bytes', value: '616263' }]),
    call('to-key-computed', 'to_key of 32 bytes built by concat (16 + 16)', bi, HUB, 'tk2', [{ type: 'bytes', value: '0f'.repeat(16) }]),
    call('if-else-then', 'if/else taking the then branch, with locals on the stack: the jump over else keeps the stack', bi, HUB, 'branch', [{ type: 'bool', value: true }]),
    call('if-else-else', 'if/else taking the else branch', bi, HUB, 'branch', [{ type: 'bool', value: false }]),
    call('len-bytes', 'len of bytes is their count', bi, HUB, 'blen', [{ type: 'bytes', value: 'a1b2c3' }]),
    call('concat-string-at-limit', `concat of two strings of ${2 * half} UTF-8 bytes (${half} two-byte characters) each is ${LIMITS.valueBytes} bytes and runs`, bi, HUB, 'cat', [{ type: 'string', value: eacute(half) }, { type: 'string', value: eacute(half) }]),
    call('concat-string-past-limit', `concat of strings of ${LIMITS.valueBytes + 1} UTF-8 bytes (fewer characters) fails: value_too_large`, bi, HUB, 'cat', [{ type: 'string', value: eacute(half) }, { type: 'string', value: `${eacute(half)}a` }]),
  );

  // Integers where numbers meet bigints.
  const ints = [one(HUB, core(INTS_SRC, 'ints.svc'))];
  const MAX_SAFE = 2n ** 53n - 1n;
  const w = (n: bigint): ValueJson => ({ type: 'u128', value: String(n) });
  cases.push(
    call('mul-u64-number-by-bigint', 'u64 3 * 2^60 (a small by a large operand)', ints, HUB, 'mulu', [u64(3), u64(2n ** 60n)]),
    call('div-u64', 'u64 100 / 7 truncates', ints, HUB, 'divu', [u64(100), u64(7)]),
    call('div-u64-number-by-bigint', 'u64 5 / 2^60 is 0', ints, HUB, 'divu', [u64(5), u64(2n ** 60n)]),
    call('mod-u64-number-by-bigint', 'u64 5 % 2^60 is 5', ints, HUB, 'modu', [u64(5), u64(2n ** 60n)]),
    call('mod-u64', 'u64 100 % 7', ints, HUB, 'modu', [u64(100), u64(7)]),
    call('mul-u128-number-by-bigint', 'u128 3 * 2^100', ints, HUB, 'mulw', [w(3n), w(2n ** 100n)]),
    call('div-u128-number-by-bigint', 'u128 2^53-1 / 2^100 is 0', ints, HUB, 'divw', [w(MAX_SAFE), w(2n ** 100n)]),
    call('mod-u128-number-by-bigint', 'u128 2^53-1 % 2^100 is 2^53-1', ints, HUB, 'modw', [w(MAX_SAFE), w(2n ** 100n)]),
    call('add-i64-past-2-53', 'i64 (2^53-1) + 2 is exactly 2^53+1', ints, HUB, 'addi', [i64(MAX_SAFE), i64(2)]),
    call('sub-i64-past-minus-2-53', 'i64 -(2^53-1) - 2 is exactly -(2^53+1)', ints, HUB, 'subi', [i64(-MAX_SAFE), i64(2)]),
    call('mul-i64-past-2-53', 'i64 3 * 3002399751580331 is exactly 9007199254740993 (2^53+1)', ints, HUB, 'muli', [i64(3), i64(3002399751580331n)]),
    call('add-i64-at-2-53', 'i64 (2^53-2) + 1 is 2^53-1', ints, HUB, 'addi', [i64(MAX_SAFE - 1n), i64(1)]),
    call('div-i64-number-by-bigint', 'i64 -5 / 2^60 is 0', ints, HUB, 'divi', [i64(-5), i64(2n ** 60n)]),
    call('mod-i64-number-by-bigint', 'i64 -5 % 2^60 is -5', ints, HUB, 'modi', [i64(-5), i64(2n ** 60n)]),
    call('add-i64-number-bigint', 'i64 5 + 2^60 (a small and a large operand)', ints, HUB, 'addmixed', [i64(5), i64(2n ** 60n)]),
    call('neg-i64-number', 'i64 -(5) is -5', ints, HUB, 'negi', [i64(5)]),
  );
  // Storage at the limit after a call that deletes one entry and writes another.
  const store = core(STORE_SRC, 'store.svc');
  const sk = (k: number) => hex(fieldKey(store.abi as never, 'data', { type: 'u64', value: BigInt(k) }));
  const keyLen = sk(1).length / 2;
  const written = 100;
  const filler = LIMITS.storageBytes - 2 * keyLen - written;
  const storeBefore: [string, string][] = [[sk(1), '77'.repeat(filler)], [sk(2), '88'.repeat(50)]];
  const bytesArg = (n: number): ValueJson => ({ type: 'bytes', value: '99'.repeat(n) });
  cases.push(
    call('storage-limit-with-delete', `a call deleting one entry and writing another that leaves exactly ${LIMITS.storageBytes} bytes of storage executes`, [one(HUB, store, storeBefore)], HUB, 'swap', [u64(2), { type: 'bytes', value: '' }, u64(3), bytesArg(written)]),
    call('storage-past-limit-with-delete', `the same leaving ${LIMITS.storageBytes + 1} bytes fails: storage_limit_exceeded`, [one(HUB, store, storeBefore)], HUB, 'swap', [u64(2), { type: 'bytes', value: '' }, u64(3), bytesArg(written + 1)]),
  );

  // LOOP's counter as u64 arithmetic, started from an argument (hand-written bytecode).
  const P53 = 2n ** 53n;
  const U64_MAX = 2n ** 64n - 1n;
  const loop = loopArtifact();
  const counted = (id: string, pins: string, start: bigint) => call(id, pins, [one(HUB, loop)], HUB, 'count', [u64(start)]);
  const equal = (id: string, pins: string, start: bigint, want: bigint) => call(id, pins, [one(HUB, loop)], HUB, 'is', [u64(start), u64(want)]);
  cases.push(
    counted('loop-counter-from-0', `a LOOP counter started at 0 with bound ${LOOP_BOUND} jumps back until it reaches the bound`, 0n),
    counted('loop-counter-from-bound', `a LOOP counter started at its bound runs the body once and falls through one past it`, BigInt(LOOP_BOUND)),
    counted('loop-counter-to-2p53-less-1', 'a LOOP counter at 2^53 - 2 becomes 2^53 - 1', P53 - 2n),
    counted('loop-counter-to-2p53', 'a LOOP counter at 2^53 - 1 becomes 2^53', P53 - 1n),
    equal('loop-counter-to-2p53-equal', 'a LOOP counter at 2^53 - 1 becomes a u64 equal (EQ) to the argument 2^53', P53 - 1n, P53),
    counted('loop-counter-past-2p53', 'a LOOP counter at 2^53 becomes 2^53 + 1 (counter += 1 is exact past 2^53)', P53),
    equal('loop-counter-past-2p53-equal', 'a LOOP counter at 2^53 becomes a u64 equal (EQ) to the argument 2^53 + 1', P53, P53 + 1n),
    counted('loop-counter-to-u64-max', 'a LOOP counter at 2^64 - 2 becomes 2^64 - 1', U64_MAX - 1n),
    counted('loop-counter-past-u64-max', 'a LOOP counter at 2^64 - 1 fails: arithmetic_overflow', U64_MAX),
  );
  return cases;
}

const LOOP_BOUND = 10;

/**
 * Hand-assembled LOOPs whose counter starts at an argument (the compiler's start at 0):
 * `count(start) -> u64` sets the counter to `start`, loops over a TRUE; POP body with
 * bound LOOP_BOUND and returns the counter; `is(start, want) -> bool` does the same and
 * returns counter == want.
 */
function loopArtifact(): ArtifactCore {
  const U64 = TY.u64;
  // FUNC readonly, 1 param, 2 locals, returns u64; counter = start; head: TRUE POP; LOOP; return counter.
  const count = [OP.FUNC, FUNC_READONLY, 1, 2, U64, U64, OP.LOAD, 0, OP.STORE, 1, OP.TRUE, OP.POP, OP.LOOP, 1, ...u32(LOOP_BOUND), ...u32(10), OP.LOAD, 1, OP.RET];
  const at = count.length;
  const head = at + 11;
  const is = [OP.FUNC, FUNC_READONLY, 2, 3, TY.bool, U64, U64, OP.LOAD, 0, OP.STORE, 2, OP.TRUE, OP.POP, OP.LOOP, 2, ...u32(LOOP_BOUND), ...u32(head), OP.LOAD, 2, OP.LOAD, 1, OP.EQ, OP.RET];
  const fn = (name: string, inputs: string[], output: string) => ({ type: 'function', name, inputs: inputs.map((n) => ({ name: n, type: 'u64' })), outputs: [{ type: output }], readonly: true });
  return {
    bytecode: hex(Uint8Array.from([...count, ...is])),
    abi: [fn('count', ['start'], 'u64'), fn('is', ['start', 'want'], 'bool')],
    function_offsets: { count: 0, is: at },
    function_offset_to_locals: { '0': 2, [String(at)]: 3 },
    constants: [],
  };
}

const STORE_SRC = `contract Store {
  field data: map<u64, bytes>;
  pub fn swap(del: u64, empty: bytes, k: u64, v: bytes) { data[del] = empty; data[k] = v; }
}`;

/** Verifier: each rejection rule, hostile artifact JSON, and fuzzing (random and mutated bytecode). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OP, TY } from '@svc-node/protocol/vm/isa';
import { execute } from '../../src/vm/execute.js';
import type { Program } from '@svc-node/protocol/vm/types';
import type { CompiledCore as ArtifactCore } from '@svc-node/protocol/contract';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import { disassemble } from '../../src/vm/disasm.js';
import { defaultValue } from '@svc-node/protocol/vm/storage-layout';
import type { ValueType } from '@svc-node/protocol/value';
import { MemHost, compileFile, ctx, fromHex, id } from '../helpers/vm.js';

const u16 = (x: number): number[] => [x & 0xff, x >> 8];
const u32 = (x: number): number[] => [x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, (x >>> 24) & 0xff];
/** FUNC header: flags, nparams, nlocals, ret, param types. */
const FUNC = (nlocals: number, ret = 0, params: number[] = [], flags = 0): number[] => [OP.FUNC, flags, params.length, nlocals, ret, ...params];

function art(code: number[], opts: Partial<ArtifactCore> & { locals?: number } = {}): ArtifactCore {
  return {
    bytecode: Buffer.from(code).toString('hex'),
    abi: opts.abi ?? [{ type: 'function', name: 'main', inputs: [], outputs: [], readonly: false }],
    function_offsets: opts.function_offsets ?? { main: 0 },
    function_offset_to_locals: opts.function_offset_to_locals ?? { '0': opts.locals ?? 0 },
    constants: opts.constants ?? [],
  };
}
function rejects(a: ArtifactCore, reason: RegExp, offset?: number): void {
  const r = verifyArtifact(a);
  assert.equal(r.ok, false, `expected rejection matching ${reason}`);
  if (!r.ok) {
    assert.match(r.reason, reason);
    if (offset !== undefined) assert.equal(r.offset, offset);
  }
}

test('minimal valid program verifies and runs', () => {
  const r = verifyArtifact(art([...FUNC(0), OP.RET]));
  assert.ok(r.ok);
});

test('rejects each rule with offset and reason', () => {
  rejects(art([...FUNC(0), 0xee, OP.RET]), /unknown opcode 0xee/, 5);
  rejects(art([...FUNC(0), OP.JMP, ...u32(1000)]), /outside the code/, 5);
  rejects(art([...FUNC(0), OP.JMP, ...u32(7), OP.RET, OP.RET]), /inside an instruction/, 5);
  rejects(art([...FUNC(0), OP.RET, OP.JMP, ...u32(5)]), /backward jump/, 6);
  // Targets of 2^31 and more (found by the codecs fuzz): a CALL there once threw a TypeError.
  rejects(art([...FUNC(0), OP.CALL, ...u32(0xf7000000), OP.RET]), /CALL target is not a function start/, 5);
  rejects(art([...FUNC(0), OP.CALL, ...u32(0xffffffff), OP.RET]), /CALL target is not a function start/, 5);
  rejects(art([...FUNC(0), OP.JMP, ...u32(0x80000000), OP.RET]), /outside the code/, 5);
  rejects(art([...FUNC(0), OP.JMP, ...u32(5)]), /backward jump/, 5);
  rejects(art([...FUNC(0), OP.CONST, ...u16(3), OP.POP, OP.RET]), /constant index out of range/, 5);
  rejects(art([...FUNC(1), OP.TRUE, OP.STORE, 1, OP.RET], { locals: 1 }), /local index out of range/, 6);
  rejects(art([...FUNC(1), OP.LOAD, 0, OP.POP, OP.RET], { locals: 1 }), /read before it is written/, 5);
  rejects(art([...FUNC(2), OP.RET], { locals: 3 }), /locals count 3 does not match/, 0);
  rejects(art([...FUNC(0), OP.RET, OP.RET], { function_offsets: { main: 5 } }), /not a function start|FUNC headers/);
  rejects(art([...FUNC(0), OP.RET, ...FUNC(0), OP.RET], { function_offsets: { main: 0 }, function_offset_to_locals: { '0': 0 } }), /FUNC headers/);
  // join with different stack heights: JMPF skips a push
  rejects(art([...FUNC(0), OP.TRUE, OP.JMPF, ...u32(12), OP.TRUE, OP.POP, OP.RET]), /inconsistent stack height at join/);
  rejects(art([...FUNC(0), OP.TRUE, OP.TRUE, OP.JMPF, ...u32(13), OP.POP, OP.TRUE, OP.POP, OP.RET]), /inconsistent stack/);
  rejects(art([...FUNC(0), OP.CONST, ...u16(0), OP.TRUE, OP.ADD_U64, OP.POP, OP.RET], { constants: [{ type: 'u64', value: 1 }] }), /needs u64, found bool/);
  rejects(art([...FUNC(0), OP.POP, OP.RET]), /stack underflow/);
  rejects(art([...FUNC(0), OP.TRUE, OP.POP]), /falls off the end/);
  rejects(art([...FUNC(0), OP.TRUE, OP.RET]), /RET with values/);
  rejects(art([...FUNC(0), OP.CALL]), /truncated CALL/);
  rejects(art([...FUNC(0), OP.CALL, ...u32(0), OP.RET]), /recursive call cycle/);
  rejects(art([...FUNC(0), OP.CALL, ...u32(3), OP.RET]), /not a function start/);
  // loop whose counter is stored inside the loop body
  const loopBad = [...FUNC(1), OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), OP.STORE, 0, OP.LOOP, 0, ...u32(10), ...u32(10), OP.RET];
  rejects(art(loopBad, { locals: 1, constants: [{ type: 'u64', value: 0 }] }), /store to the counter/);
  const loopOk = [...FUNC(1), OP.CONST, ...u16(0), OP.STORE, 0, OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(10), ...u32(10), OP.RET];
  assert.ok(verifyArtifact(art(loopOk, { locals: 1, constants: [{ type: 'u64', value: 0 }] })).ok);
  rejects(art([...FUNC(1), OP.TRUE, OP.STORE, 0, OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(10), ...u32(8), OP.RET], { locals: 1 }), /counter must be a u64/);
  rejects(art([...FUNC(0), OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(10), ...u32(5), OP.RET]), /local index out of range/);
  rejects(art([...FUNC(1), OP.CONST, ...u16(0), OP.STORE, 0, OP.TRUE, OP.POP, OP.LOOP, 0, ...u32(0), ...u32(10), OP.RET], { locals: 1, constants: [{ type: 'u64', value: 0 }] }), /loop bound/);
  rejects(art([...FUNC(0), OP.SLOAD, ...u16(0), OP.POP, OP.RET]), /field index out of range/);
  rejects(art([...FUNC(0), OP.EMIT, ...u16(0), OP.RET]), /event index out of range/);
  rejects(art([...FUNC(0), OP.REQUIRE, ...u16(0), OP.RET], { constants: [{ type: 'u64', value: 1 }] }), /string constant/);
  // readonly function writes
  const roAbi = [{ type: 'field' as const, name: 'x', key: null, value: 'u64' as const }, { type: 'function' as const, name: 'main', inputs: [], outputs: [], readonly: true }];
  rejects(art([...FUNC(0, 0, [], 1), OP.CONST, ...u16(0), OP.SSTORE, ...u16(0), OP.RET], { abi: roAbi, constants: [{ type: 'u64', value: 1 }] }), /readonly function writes/);
  // header does not match abi
  rejects(art([...FUNC(0, TY.u64), OP.CONST, ...u16(0), OP.RET], { constants: [{ type: 'u64', value: 1 }] }), /does not match its abi/);
});

test('rejects hostile artifact JSON without throwing', () => {
  const good = art([...FUNC(0), OP.RET]);
  const bads: unknown[] = [
    null, 42, 'x', [], {},
    { ...good, bytecode: 'ABCD' }, { ...good, bytecode: '0' }, { ...good, bytecode: '' }, { ...good, bytecode: 7 },
    { ...good, abi: {} }, { ...good, abi: [null] }, { ...good, abi: [{ type: 'function' }] },
    { ...good, abi: [{ type: 'function', name: 'main', inputs: [], outputs: [], readonly: false, extra: 1 }] },
    { ...good, abi: [{ type: 'function', name: '__proto__x!', inputs: [], outputs: [], readonly: false }] },
    { ...good, abi: [{ type: 'function', name: 'main', inputs: [{ name: 'a', type: 'float' }], outputs: [], readonly: false }] },
    { ...good, abi: [{ type: 'function', name: 'main', inputs: [], outputs: [{ type: 'u64' }, { type: 'u64' }], readonly: false }] },
    { ...good, abi: [{ type: 'field', name: 'f', key: 'map', value: 'u64' }] },
    { ...good, abi: [...good.abi, ...good.abi] },
    { ...good, constants: [{ type: 'u64', value: 1.5 }] }, { ...good, constants: [{ type: 'u64', value: -1 }] },
    { ...good, constants: [{ type: 'u64', value: '5' }] }, { ...good, constants: [{ type: 'u64', value: 2 ** 60 }] },
    { ...good, constants: [{ type: 'u128', value: '340282366920938463463374607431768211456' }] },
    { ...good, constants: [{ type: 'key', value: 'ab' }] }, { ...good, constants: [{ type: 'string', value: '\ud800' }] },
    { ...good, constants: [{ type: 'bool', value: true }] }, { ...good, constants: 'x' },
    { ...good, function_offsets: { main: -1 } }, { ...good, function_offsets: { main: '0' } }, { ...good, function_offsets: null },
    { ...good, function_offset_to_locals: { '00': 0 } }, { ...good, function_offset_to_locals: { '0': '0' } }, { ...good, function_offset_to_locals: {} },
    { ...good, function_offsets: {} },
  ];
  for (const b of bads) {
    const r = verifyArtifact(b as ArtifactCore);
    assert.equal(r.ok, false, JSON.stringify(b));
  }
  assert.ok(verifyArtifact({ ...good, constants: [{ type: 'u64', value: '18446744073709551615' }] }).ok);
});

const EXAMPLES = ['examples/token.svc', 'examples/nft.svc', 'examples/market.svc', 'examples/swap.svc'];
const ZERO_HOST_ARGS = (p: Program, fi: number) => p.functions[fi]!.params.map((t) => defaultValue(['', 'u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'][t] as ValueType));

/** Run every public function of a verified program; must return a result, never throw. */
function runAll(p: Program): void {
  const host = new MemHost();
  const cid = host.deploy(id(1), p);
  for (const [name, fi] of p.byName) {
    const r = execute({ contractId: cid, function: name, args: ZERO_HOST_ARGS(p, fi), host, context: ctx({ inputs: [{ txid: fromHex('aa'.repeat(32)), vout: 0 }], outputs: [{ value: 1n, script: new Uint8Array(1) }] }) });
    assert.ok(r.status === 'executed' || r.status === 'failed');
  }
}

test('fuzz: random bytecode never crashes or hangs the verifier or the VM', () => {
  const t0 = process.hrtime.bigint();
  let accepted = 0;
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.integer({ min: 0, max: 8 }), (body, nl) => {
      const code = [...FUNC(nl), ...body];
      const r = verifyArtifact(art(code, { locals: nl, constants: [{ type: 'u64', value: 3 }, { type: 'string', value: 'm' }, { type: 'key', value: 'bb'.repeat(32) }] }));
      if (r.ok) { accepted++; runAll(r.program); }
    }),
    { numRuns: 3000, seed: 7 },
  );
  // constructed from valid opcodes only, to get deeper into the verifier
  const validOps = [OP.RET, OP.POP, OP.CONST, OP.TRUE, OP.FALSE, OP.LOAD, OP.STORE, OP.ADD_U64, OP.SUB_U64, OP.MUL_U64, OP.DIV_U64, OP.EQ, OP.LT, OP.NOT, OP.JMP, OP.JMPF, OP.LOOP, OP.REQUIRE, OP.CONCAT, OP.LEN, OP.SHA256, OP.HEIGHT, OP.TXID, OP.NIN, OP.INTXID, OP.OUTPOINT, OP.CAST];
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom(...validOps), fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 9, maxLength: 9 })), { minLength: 1, maxLength: 24 }), (instrs) => {
      const code: number[] = [...FUNC(4)];
      for (const [op, ops] of instrs) {
        code.push(op);
        const lens: Record<number, number> = { [OP.CONST]: 2, [OP.LOAD]: 1, [OP.STORE]: 1, [OP.JMP]: 4, [OP.JMPF]: 4, [OP.LOOP]: 9, [OP.REQUIRE]: 2, [OP.CAST]: 1 };
        const n = lens[op] ?? 0;
        if (op === OP.JMP || op === OP.JMPF) code.push(...u32(ops[0]! + code.length));
        else if (op === OP.LOOP) code.push(ops[0]! % 4, ...u32(ops[1]! + 1), ...u32(Math.max(0, code.length - 1 - ops[2]!)));
        else code.push(...ops.slice(0, n).map((x) => (op === OP.CONST || op === OP.REQUIRE ? x % 4 : op === OP.CAST ? x % 8 : x % 5)));
      }
      const r = verifyArtifact(art(code, { locals: 4, constants: [{ type: 'u64', value: 3 }, { type: 'string', value: 'm' }, { type: 'bytes', value: 'cc' }, { type: 'u64', value: 0 }] }));
      if (r.ok) { accepted++; runAll(r.program); }
    }),
    { numRuns: 3000, seed: 11 },
  );
  assert.ok(accepted > 20, `some random programs verify (${accepted})`);
  assert.ok(Number(process.hrtime.bigint() - t0) / 1e9 < 20, 'bounded in time');
});

test('fuzz: mutated example bytecode never crashes the verifier or the VM', () => {
  const arts = ['examples/token.svc'].map((f) => compileFile(f));
  let accepted = 0;
  for (const a of arts) {
    const code = fromHex(a.bytecode);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(code.length - 1), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'del', 'ins')), { minLength: 1, maxLength: 4 }), (muts) => {
        let c = Array.from(code);
        for (const [i, b, kind] of muts) {
          const at = i % c.length;
          if (kind === 'set') c[at] = b;
          else if (kind === 'del') c.splice(at, 1);
          else c.splice(at, 0, b);
        }
        if (c.length === 0) c = [0];
        const r = verifyArtifact({ ...a, bytecode: Buffer.from(c).toString('hex') });
        if (r.ok) { accepted++; runAll(r.program); }
      }),
      { numRuns: 2500, seed: 3 },
    );
  }
  assert.ok(accepted > 0);
});

test('compiled examples verify and disassemble', () => {
  for (const f of EXAMPLES) {
    let a;
    try { a = compileFile(f); } catch (e) { if (/ENOENT/.test(String(e))) continue; throw e; }
    const r = verifyArtifact(a);
    assert.ok(r.ok, f);
    if (r.ok) assert.match(disassemble(r.program), /FUNC/);
    assert.match(disassemble({ ...a, bytecode: 'ee' }), /invalid bytecode/);
  }
});

test('loops must nest: overlapping LOOP ranges are rejected', () => {
  // two counters; loop A jumps back to 13, loop B (after A) jumps back to 11 -> overlap
  const c = [{ type: 'u64' as const, value: 0 }];
  const code = [...FUNC(2), OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP,
    OP.LOOP, 0, ...u32(3), ...u32(18), OP.TRUE, OP.POP, OP.LOOP, 1, ...u32(3), ...u32(15), OP.RET];
  // offsets: CONST 5, STORE 8, CONST 10, STORE 13, TRUE 15, POP 16, LOOP 17 (-> 15), TRUE 27, POP 28, LOOP 29 (-> 15 nested ok)
  const nested = verifyArtifact(art(code, { locals: 2, constants: c }));
  assert.ok(!nested.ok, 'first build has a bad target on purpose');
  const good = [...FUNC(2), OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP,
    OP.LOOP, 0, ...u32(3), ...u32(15), OP.TRUE, OP.POP, OP.LOOP, 1, ...u32(3), ...u32(15), OP.RET];
  assert.ok(verifyArtifact(art(good, { locals: 2, constants: c })).ok, 'nested (same head) loops verify');
  const overlap = [...FUNC(2), OP.CONST, ...u16(0), OP.STORE, 0, OP.CONST, ...u16(0), OP.STORE, 1, OP.TRUE, OP.POP,
    OP.LOOP, 0, ...u32(3), ...u32(15), OP.TRUE, OP.POP, OP.LOOP, 1, ...u32(3), ...u32(16), OP.RET];
  rejects(art(overlap, { locals: 2, constants: c }), /loops overlap without nesting/);
});

test('fuzz: arbitrary JSON in every artifact field is rejected or verified, never thrown', () => {
  const base = compileFile('examples/token.svc');
  const keys = ['bytecode', 'abi', 'function_offsets', 'function_offset_to_locals', 'constants'] as const;
  fc.assert(
    fc.property(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 }), (k, v) => {
      const r = verifyArtifact({ ...base, [k]: v } as unknown as ArtifactCore);
      assert.ok(r.ok === true || typeof r.reason === 'string');
    }),
    { numRuns: 1500, seed: 5 },
  );
  // structured mutations of the ABI entries keep the verifier total
  fc.assert(
    fc.property(fc.nat(base.abi.length - 1), fc.constantFrom('name', 'type', 'inputs', 'outputs', 'readonly', 'key', 'value'), fc.jsonValue({ maxDepth: 2 }), (i, field, v) => {
      const abi = base.abi.map((e, j) => (j === i ? { ...e, [field]: v } : e));
      const r = verifyArtifact({ ...base, abi } as unknown as ArtifactCore);
      assert.ok(r.ok === true || typeof r.reason === 'string');
    }),
    { numRuns: 1500, seed: 6 },
  );
});

test('a hostile 64 KiB function (255 locals, 1,000-deep stack, 10k joins) verifies in bounded time', () => {
  const code: number[] = [...FUNC(255)];
  for (let i = 0; i < 255; i++) code.push(OP.CONST, ...u16(0), OP.STORE, i);
  for (let i = 0; i < 1000; i++) code.push(OP.TRUE);
  while (code.length < 65_536 - 1100) { const t = code.length + 6; code.push(OP.TRUE, OP.JMPF, ...u32(t)); }
  for (let i = 0; i < 1000; i++) code.push(OP.POP);
  code.push(OP.RET);
  const t0 = performance.now();
  const r = verifyArtifact(art(code, { locals: 255, constants: [{ type: 'u64', value: 1 }] }));
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.ok(performance.now() - t0 < 5000);
  if (r.ok) runAll(r.program); // and it runs into the budget or returns, never hangs
});

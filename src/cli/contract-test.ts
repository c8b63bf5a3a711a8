/**
 * Contract tests without a chain (`svc test CONTRACT.svc [TESTS]`): a test file next to the
 * contract lists calls with their caller, Bitcoin inputs and outputs and the outcome each
 * must have, and the events each emits; each test deploys the compiled contract (and the
 * other contracts the file names) afresh into an in-memory host and runs the calls through
 * the VM in order, applying the writes of executed calls. Failures name the test file's line.
 *
 * Test file (one directive per line; `# ` starts a comment):
 *   deploy NAME FILE.svc           another contract, compiled from FILE (relative to the test
 *                                  file): before the first test, in every test; inside a
 *                                  test, from that line on. Its id is sha256("contract:NAME").
 *   test NAME                      a new test: fresh contract storage; settings back to defaults
 *   caller NAME|KEYHEX|@CONTRACT   the caller of the calls that follow (NAME: sha256 of the name)
 *   height N                       confirmation height of the calls that follow
 *   inputs OUTPOINT...             inputs of the calls that follow; OUTPOINT is TXID:VOUT or
 *                                  #K:VOUT (the txid of call K of this test), none: `inputs`
 *   outputs SATS[@SCRIPTHEX]...    outputs of the calls that follow (default script: P2WPKH of
 *                                  20 zero bytes)
 *   call [CONTRACT.]FN [ARG...]    must execute; ARG as in `svc call` (u64:5, key:..., bare) or
 *                                  a reference: @CONTRACT (its id), ~NAME (caller NAME's key),
 *                                  #K (call K's txid), #K:VOUT (that outpoint's 36 bytes);
 *                                  CONTRACT defaults to the one under test (named by its file
 *                                  name without .svc)
 *   call ... -> VALUE              must execute and return VALUE (TYPE:VALUE or bare)
 *   call ... -> fail CODE [MESSAGE]   must fail with CODE (and exactly MESSAGE)
 *   emits [CONTRACT.]EVENT [ARG...]   after a call: the call emitted this event (from CONTRACT,
 *                                  default the called one); the emits lines after a call list
 *                                  all its events, in order
 *   emits nothing                  after a call: it emitted no event
 * Call K of a test is anchored by txid 00..0K (32 bytes, big-endian K).
 */
import { sha256 } from '@svc-node/protocol/hash';
import { valuesEqual, valueToJson, type Value, type ValueType } from '@svc-node/protocol/value';
import { execute } from '../vm/execute.js';
import { MemHost, load } from '../vm/mem-host.js';
import type { EmittedEvent, ExecContext, Program } from '@svc-node/protocol/vm/types';
import { argsFromText, findFunction, parseValueText, splitTyped, type AbiEvent } from '@svc-node/client/abi';
import type { CompiledArtifact } from '@svc-node/protocol/contract';
import { HEX32, IDENT } from '@svc-node/protocol/identifiers';

export interface TestFailure { line: number; message: string }
export interface TestOutcome { name: string; line: number; calls: number; failures: TestFailure[] }
export type TestRun = { ok: true; tests: TestOutcome[] } | { ok: false; errors: TestFailure[] };

/** The id the contract under test is deployed at (no chain, so no deploy txid). */
const CONTRACT_ID = new Uint8Array(32).fill(0xc0);
/** Defaults of a test until its directives change them. */
const DEFAULT_CALLER = 'alice';
const DEFAULT_HEIGHT = 800_000;
const DEFAULT_SCRIPT = '0014' + '00'.repeat(20);

type Expect = { kind: 'executed'; value: string | null } | { kind: 'fail'; code: string; message: string | null };
/** One `emits` line: the event, its contract (null: the called one) and its arguments as written. */
interface EventExpect { line: number; contract: string | null; name: string; args: string[] }
type Step =
  | { k: 'deploy'; line: number; name: string; file: string }
  | { k: 'caller'; line: number; key: Uint8Array | string }
  | { k: 'height'; line: number; height: number }
  | { k: 'inputs'; line: number; inputs: { txid: string | number; vout: number }[] }
  | { k: 'outputs'; line: number; outputs: { value: bigint; script: Uint8Array }[] }
  /** `events` null: not checked; [] after `emits nothing` (on line `nothing`). */
  | { k: 'call'; line: number; contract: string | null; fn: string; args: string[]; expect: Expect; events: EventExpect[] | null; nothing?: number };
interface TestDecl { name: string; line: number; steps: Step[] }

/** `[CONTRACT.]NAME` of a call or an event. */
const QUALIFIED = /^(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)$/;
/**
 * References in an argument or value, bare or after `key:` / `bytes:`: `@CONTRACT` a
 * contract's id, `~NAME` the key of caller NAME, `#K` the txid of call K, `#K:VOUT` the
 * 36-byte outpoint (txid || vout as u32 big-endian, as `outpoint()` builds it).
 */
const REF = /^(?:(key|bytes):)?(?:@([A-Za-z_][A-Za-z0-9_]*)|~(\S+)|#([1-9][0-9]{0,5})(?::(0|[1-9][0-9]{0,9}))?)$/;

/** The id of a contract a test file deploys: sha256("contract:NAME"). */
export function testContractId(name: string): Uint8Array {
  return sha256(Buffer.from(`contract:${name}`));
}

/** Splits a line into words; "double quoted" words may hold spaces (no escapes). */
function words(text: string): string[] | null {
  const out: string[] = [];
  const re = /\s*(?:"([^"]*)"|([^\s"]+))/g;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(text)) !== null && m[0].length > 0) {
    out.push(m[1] ?? m[2]!);
    at = re.lastIndex;
  }
  return text.slice(at).trim() === '' ? out : null;
}

export function parseTests(text: string): { setup: Step[]; tests: TestDecl[]; errors: TestFailure[] } {
  const tests: TestDecl[] = [];
  const setup: Step[] = [];
  const errors: TestFailure[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    // a comment is '#' then a space or the line's end, so #K:VOUT is not one
    const body = raw.replace(/(^|\s)#(\s.*)?$/, '').trim();
    if (!body) return;
    const w = words(body);
    const bad = (message: string): void => void errors.push({ line, message });
    if (!w) return bad('unterminated "quoted" word');
    const [kw, ...rest] = w;
    if (kw === 'test') {
      if (rest.length === 0) return bad('test needs a name');
      tests.push({ name: rest.join(' '), line, steps: [] });
      return;
    }
    if (kw === 'deploy') {
      if (rest.length !== 2 || !IDENT.test(rest[0]!)) return bad('deploy takes NAME FILE.svc (NAME an identifier, FILE relative to this file)');
      (tests[tests.length - 1]?.steps ?? setup).push({ k: 'deploy', line, name: rest[0]!, file: rest[1]! });
      return;
    }
    const cur = tests[tests.length - 1];
    if (!cur) return bad(`'${kw}' before the first 'test NAME' line`);
    switch (kw) {
      case 'caller': {
        if (rest.length !== 1) return bad('caller takes one NAME, 64-hex key or @CONTRACT');
        const t = rest[0]!.toLowerCase();
        const ref = /^@([A-Za-z_][A-Za-z0-9_]*)$/.exec(rest[0]!);
        cur.steps.push({ k: 'caller', line, key: ref ? ref[1]! : HEX32.test(t) ? new Uint8Array(Buffer.from(t, 'hex')) : sha256(Buffer.from(rest[0]!)) });
        return;
      }
      case 'emits': {
        const last = cur.steps[cur.steps.length - 1];
        if (!last || last.k !== 'call') return bad("'emits' must follow a call (its events, one line each)");
        if (last.nothing !== undefined) return bad("'emits nothing' already said the call emits no event");
        if (rest.length === 1 && rest[0] === 'nothing') {
          if (last.events?.length) return bad("'emits nothing' after events listed for the same call");
          last.events = [];
          last.nothing = line;
          return;
        }
        const q = QUALIFIED.exec(rest[0] ?? '');
        if (!q) return bad('emits takes [CONTRACT.]EVENT [ARG...] or nothing');
        (last.events ??= []).push({ line, contract: q[1] ?? null, name: q[2]!, args: rest.slice(1) });
        return;
      }
      case 'height': {
        const n = Number(rest[0]);
        if (rest.length !== 1 || !Number.isSafeInteger(n) || n < 0) return bad('height takes one whole number');
        cur.steps.push({ k: 'height', line, height: n });
        return;
      }
      case 'inputs': {
        const inputs: { txid: string | number; vout: number }[] = [];
        for (const o of rest) {
          const m = /^(#[1-9][0-9]*|[0-9a-fA-F]{64}):(0|[1-9][0-9]{0,9})$/.exec(o);
          if (!m || Number(m[2]) > 0xffffffff) return bad(`inputs: "${o}" is not TXID:VOUT or #K:VOUT`);
          inputs.push({ txid: m[1]!.startsWith('#') ? Number(m[1]!.slice(1)) : m[1]!.toLowerCase(), vout: Number(m[2]) });
        }
        cur.steps.push({ k: 'inputs', line, inputs });
        return;
      }
      case 'outputs': {
        const outputs: { value: bigint; script: Uint8Array }[] = [];
        for (const o of rest) {
          const m = /^(0|[1-9][0-9]{0,15})(?:@((?:[0-9a-fA-F]{2})*))?$/.exec(o);
          if (!m) return bad(`outputs: "${o}" is not SATS or SATS@SCRIPTHEX`);
          outputs.push({ value: BigInt(m[1]!), script: new Uint8Array(Buffer.from(m[2] ?? DEFAULT_SCRIPT, 'hex')) });
        }
        cur.steps.push({ k: 'outputs', line, outputs });
        return;
      }
      case 'call': {
        const arrow = rest.indexOf('->');
        const head = arrow < 0 ? rest : rest.slice(0, arrow);
        const tail = arrow < 0 ? [] : rest.slice(arrow + 1);
        if (head.length === 0) return bad('call needs a function name');
        const q = QUALIFIED.exec(head[0]!);
        if (!q) return bad(`call: "${head[0]}" is not FN or CONTRACT.FN`);
        let expect: Expect = { kind: 'executed', value: null };
        if (arrow >= 0) {
          if (tail[0] === 'fail') {
            if (!tail[1]) return bad('-> fail needs a failure code (revert, arithmetic_overflow, ...)');
            expect = { kind: 'fail', code: tail[1], message: tail.length > 2 ? tail.slice(2).join(' ') : null };
          } else if (tail.length === 1) expect = { kind: 'executed', value: tail[0]! };
          else return bad('-> takes one VALUE or fail CODE [MESSAGE]');
        }
        cur.steps.push({ k: 'call', line, contract: q[1] ?? null, fn: q[2]!, args: head.slice(1), expect, events: null });
        return;
      }
      default:
        return bad(`unknown directive '${kw}' (deploy, test, caller, height, inputs, outputs, call, emits)`);
    }
  });
  return { setup, tests, errors };
}

function txidOf(k: number): Uint8Array {
  const b = new Uint8Array(32);
  new DataView(b.buffer).setUint32(28, k);
  return b;
}

function show(v: Value | null): string {
  return v === null ? 'nothing' : `${v.type}:${String(valueToJson(v))}`;
}

/** The contract under test and where the other contracts of a test file come from. */
export interface TestSubjects {
  /** The name of the contract under test in the file (`@NAME`, `call NAME.FN`): its file name without `.svc`. */
  name: string;
  /**
   * Compiles FILE of a `deploy` line (a path as written, relative to the test file); throws
   * an Error whose message says why it cannot (unreadable, does not compile).
   */
  load: (file: string) => CompiledArtifact;
}

/** A contract of a test: its id, verified program and ABI. */
interface Deployed { id: Uint8Array; program: Program; abi: readonly unknown[] }

/** Runs every test of `text` against `artifact` and the contracts the file deploys. */
export function runTests(artifact: CompiledArtifact, text: string, subjects: TestSubjects = { name: 'contract', load: () => { throw new Error('this run deploys no other contract'); } }): TestRun {
  const { setup, tests, errors } = parseTests(text);
  if (errors.length) return { ok: false, errors };
  if (tests.length === 0) return { ok: false, errors: [{ line: 1, message: "no tests (a test starts with a 'test NAME' line)" }] };
  // every file once, compiled and verified before any test runs: a bad one is a bad test file
  const programs = new Map<string, { program: Program; abi: readonly unknown[] }>();
  const deployErrors: TestFailure[] = [];
  for (const st of [...setup, ...tests.flatMap((t) => t.steps)]) {
    if (st.k !== 'deploy') continue;
    if (st.name === subjects.name) deployErrors.push({ line: st.line, message: `deploy ${st.name}: that name is the contract under test's` });
    if (programs.has(st.file)) continue;
    try {
      const a = subjects.load(st.file);
      programs.set(st.file, { program: load(a), abi: a.abi });
    } catch (e) {
      deployErrors.push({ line: st.line, message: `deploy ${st.name}: ${(e as Error).message}` });
    }
  }
  if (deployErrors.length) return { ok: false, errors: deployErrors };
  const refErrors = checkNames(setup, tests, subjects.name, artifact.abi, programs);
  if (refErrors.length) return { ok: false, errors: refErrors };
  const main: Deployed = { id: CONTRACT_ID, program: load(artifact), abi: artifact.abi };
  return { ok: true, tests: tests.map((t) => runOne(main, subjects.name, setup, programs, t)) };
}

/**
 * The names a test file uses, checked before any test runs: a contract (`@NAME`, `caller
 * @NAME`, `call NAME.FN`, `emits NAME.EVENT`) must be the one under test or deployed by an
 * earlier line of the setup or of the same test, and an `emits` line's event must be one
 * its contract declares. A file naming what it never declares is a malformed file (svc:
 * exit 2), not a failing test: no run of the contract could make it pass.
 */
function checkNames(setup: readonly Step[], tests: readonly TestDecl[], mainName: string, mainAbi: readonly unknown[], programs: Map<string, { abi: readonly unknown[] }>): TestFailure[] {
  const errors: TestFailure[] = [];
  const abis = new Map<string, readonly unknown[]>([[mainName, mainAbi]]);
  for (const st of setup) if (st.k === 'deploy') abis.set(st.name, programs.get(st.file)!.abi);
  const refs = (texts: readonly string[], known: Map<string, readonly unknown[]>, line: number): void => {
    for (const t of texts) {
      const m = REF.exec(t);
      if (m?.[2] !== undefined && !known.has(m[2])) errors.push({ line, message: `unknown contract @${m[2]} (deploy it first: deploy ${m[2]} FILE.svc)` });
    }
  };
  for (const t of tests) {
    const known = new Map(abis);
    for (const s of t.steps) {
      if (s.k === 'deploy') known.set(s.name, programs.get(s.file)!.abi);
      else if (s.k === 'caller' && typeof s.key === 'string' && !known.has(s.key)) errors.push({ line: s.line, message: `caller @${s.key}: unknown contract (deploy it first: deploy ${s.key} FILE.svc)` });
      else if (s.k === 'call') {
        const target = s.contract ?? mainName;
        if (!known.has(target)) errors.push({ line: s.line, message: `call ${target}.${s.fn}: unknown contract ${target} (deploy it first: deploy ${target} FILE.svc)` });
        refs(s.expect.kind === 'executed' && s.expect.value !== null ? [...s.args, s.expect.value] : s.args, known, s.line);
        for (const w of s.events ?? []) {
          const from = w.contract ?? target;
          const abi = known.get(from);
          if (!abi) errors.push({ line: w.line, message: `emits ${from}.${w.name}: unknown contract ${from} (deploy it first: deploy ${from} FILE.svc)` });
          else if (!abi.some((x) => !!x && typeof x === 'object' && (x as AbiEvent).type === 'event' && (x as AbiEvent).name === w.name)) errors.push({ line: w.line, message: `emits ${from}.${w.name}: ${from} declares no event ${w.name}` });
          refs(w.args, known, w.line);
        }
      }
    }
  }
  return errors.sort((a, b) => a.line - b.line);
}

/** Arguments with their references (REF) as hex; `call` is the number of the call they belong to. */
function resolveRefs(args: readonly string[], contracts: Map<string, Deployed>, call: number): string[] {
  return args.map((a) => {
    const m = REF.exec(a);
    if (!m) return a;
    let b: Uint8Array;
    if (m[2] !== undefined) {
      const c = contracts.get(m[2]);
      if (!c) throw new Error(`unknown contract @${m[2]} (deploy it first: deploy ${m[2]} FILE.svc)`);
      b = c.id;
    } else if (m[3] !== undefined) b = sha256(Buffer.from(m[3]));
    else {
      const k = Number(m[4]);
      if (k > call) throw new Error(`#${k} names call ${k}, but this is call ${call}`);
      if (m[5] === undefined) b = txidOf(k);
      else {
        if (Number(m[5]) > 0xffffffff) throw new Error(`#${k}:${m[5]}: vout is a u32`);
        b = new Uint8Array(36);
        b.set(txidOf(k));
        new DataView(b.buffer).setUint32(32, Number(m[5]));
      }
    }
    const hex = Buffer.from(b).toString('hex');
    return m[1] ? `${m[1]}:${hex}` : hex;
  });
}

/** An event as the test file would write it; a key that is a contract's id shows as @NAME. */
function showEvent(e: { name: string; params: Value[] }, from: string, contracts: Map<string, Deployed>): string {
  const shown = (v: Value): string => {
    if (v.type !== 'key') return show(v);
    const named = [...contracts].find(([, c]) => Buffer.compare(Buffer.from(c.id), Buffer.from(v.value)) === 0);
    return named ? `@${named[0]}` : show(v);
  };
  return `${from}.${e.name}(${e.params.map(shown).join(', ')})`;
}

/** Compares a call's events with its `emits` lines; reports at the first line that differs. */
function checkEvents(got: readonly EmittedEvent[], want: readonly EventExpect[], target: string, contracts: Map<string, Deployed>, call: number, lastLine: number, fail: (line: number, message: string) => void): void {
  const nameOf = (id: Uint8Array): string => [...contracts].find(([, c]) => Buffer.compare(Buffer.from(c.id), Buffer.from(id)) === 0)?.[0] ?? Buffer.from(id).toString('hex');
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const from = w.contract ?? target;
    const c = contracts.get(from);
    if (!c) return fail(w.line, `emits ${from}.${w.name}: unknown contract ${from} (deploy it first)`);
    const def = c.abi.find((x): x is AbiEvent => !!x && typeof x === 'object' && (x as AbiEvent).type === 'event' && (x as AbiEvent).name === w.name);
    if (!def) return fail(w.line, `emits ${from}.${w.name}: ${from} declares no event ${w.name}`);
    let params: Value[];
    try {
      params = argsFromText({ type: 'function', name: w.name, inputs: def.inputs, outputs: [], readonly: false }, resolveRefs(w.args, contracts, call));
    } catch (e) {
      return fail(w.line, `emits ${from}.${w.name}: ${(e as Error).message}`);
    }
    const g = got[i];
    const expected = showEvent({ name: w.name, params }, from, contracts);
    if (!g) return fail(w.line, `expected event ${i + 1} ${expected}, the call emitted ${got.length}`);
    const same = g.name === w.name && Buffer.compare(Buffer.from(g.contractId), Buffer.from(c.id)) === 0 && g.params.length === params.length && g.params.every((v, j) => valuesEqual(v, params[j]!));
    if (!same) return fail(w.line, `expected event ${i + 1} ${expected}, got ${showEvent(g, nameOf(g.contractId), contracts)}`);
  }
  if (got.length > want.length) {
    const g = got[want.length]!;
    fail(want.length ? want[want.length - 1]!.line : lastLine, `the call emitted ${got.length} event(s), the test lists ${want.length}; the next is ${showEvent(g, nameOf(g.contractId), contracts)}`);
  }
}

function runOne(main: Deployed, mainName: string, setup: readonly Step[], programs: Map<string, { program: Program; abi: readonly unknown[] }>, t: TestDecl): TestOutcome {
  const host = new MemHost();
  const contracts = new Map<string, Deployed>([[mainName, main]]);
  const deploy = (name: string, file: string): void => {
    const p = programs.get(file)!;
    const d = { id: testContractId(name), program: p.program, abi: p.abi };
    host.deploy(d.id, d.program);
    contracts.set(name, d);
  };
  host.deploy(main.id, main.program);
  for (const st of setup) if (st.k === 'deploy') deploy(st.name, st.file);
  const failures: TestFailure[] = [];
  let caller = sha256(Buffer.from(DEFAULT_CALLER));
  let height = DEFAULT_HEIGHT;
  let inputs: { txid: string | number; vout: number }[] = [];
  let outputs: ExecContext['outputs'] = [];
  let calls = 0;
  for (const s of t.steps) {
    if (s.k === 'deploy') deploy(s.name, s.file);
    else if (s.k === 'caller') {
      if (typeof s.key !== 'string') caller = s.key;
      else {
        const c = contracts.get(s.key);
        if (c) caller = c.id;
        else failures.push({ line: s.line, message: `caller @${s.key}: unknown contract (deploy it first)` });
      }
    } else if (s.k === 'height') height = s.height;
    else if (s.k === 'inputs') inputs = s.inputs;
    else if (s.k === 'outputs') outputs = s.outputs;
    else {
      calls++;
      const target = s.contract ?? mainName;
      const label = s.contract ? `${s.contract}.${s.fn}` : s.fn;
      const fail = (message: string): void => void failures.push({ line: s.line, message: `call ${label}: ${message}` });
      const c = contracts.get(target);
      if (!c) { fail(`unknown contract ${target} (deploy it first: deploy ${target} FILE.svc)`); continue; }
      let args: Value[];
      let ret: ValueType | null;
      try {
        const f = findFunction(c.abi, s.fn);
        args = argsFromText(f, resolveRefs(s.args, contracts, calls));
        ret = f.outputs[0]?.type ?? null;
      } catch (e) {
        fail((e as Error).message);
        continue;
      }
      const ins: ExecContext['inputs'] = [];
      for (const i of inputs) {
        if (typeof i.txid === 'number' && i.txid >= calls) { fail(`inputs name #${i.txid}, but this is call ${calls}`); break; }
        ins.push({ txid: typeof i.txid === 'number' ? txidOf(i.txid) : new Uint8Array(Buffer.from(i.txid, 'hex')), vout: i.vout });
      }
      if (ins.length !== inputs.length) continue;
      const r = execute({ contractId: c.id, function: s.fn, args, context: { height, txid: txidOf(calls), inputs: ins, outputs, caller, callId: BigInt(calls) }, host });
      host.apply(r);
      if (s.events) checkEvents(r.status === 'executed' ? r.events : [], s.events, target, contracts, calls, s.nothing ?? s.line, (line, message) => void failures.push({ line, message: `call ${label}: ${message}` }));
      const e = s.expect;
      if (e.kind === 'fail') {
        if (r.status === 'executed') fail(`expected to fail with ${e.code}, but it executed (result ${show(r.result)})`);
        else if (r.code !== e.code || (e.message !== null && r.message !== e.message)) fail(`expected to fail with ${e.code}${e.message !== null ? `: ${e.message}` : ''}, got ${r.code}: ${r.message}`);
        continue;
      }
      if (r.status === 'failed') { fail(`expected to execute, failed with ${r.code}: ${r.message}`); continue; }
      if (e.value === null) continue;
      if (ret === null) { fail(`${s.fn} returns nothing, the test expects ${e.value}`); continue; }
      let want: Value;
      try {
        const [text] = resolveRefs([e.value], contracts, calls);
        const typed = splitTyped(text!);
        if (typed && typed.type !== ret) throw new Error(`expected value given as ${typed.type}, ${s.fn} returns ${ret}`);
        want = parseValueText(ret, typed ? typed.value : text!, 'expected value');
      } catch (x) {
        fail((x as Error).message);
        continue;
      }
      if (!r.result || !valuesEqual(r.result, want)) fail(`expected ${show(want)}, got ${show(r.result)}`);
    }
  }
  failures.sort((a, b) => a.line - b.line);
  return { name: t.name, line: t.line, calls, failures };
}

/**
 * Contract tests without a chain (`svc test CONTRACT.svc [TESTS]`): a test file next to the
 * contract lists calls with their caller, Bitcoin inputs and outputs and the outcome each
 * must have; each test deploys the compiled contract afresh into an in-memory host and runs
 * the calls through the VM in order, applying the writes of executed calls. Failures name
 * the test file's line.
 *
 * Test file (one directive per line; `# ` starts a comment):
 *   test NAME                      a new test: fresh contract storage; settings back to defaults
 *   caller NAME|KEYHEX             the caller of the calls that follow (NAME: sha256 of the name)
 *   height N                       confirmation height of the calls that follow
 *   inputs OUTPOINT...             inputs of the calls that follow; OUTPOINT is TXID:VOUT or
 *                                  #K:VOUT (the txid of call K of this test), none: `inputs`
 *   outputs SATS[@SCRIPTHEX]...    outputs of the calls that follow (default script: P2WPKH of
 *                                  20 zero bytes)
 *   call FN [ARG...]               must execute; ARG as in `svc call` (u64:5, key:..., bare)
 *   call FN [ARG...] -> VALUE      must execute and return VALUE (TYPE:VALUE or bare)
 *   call FN [ARG...] -> fail CODE [MESSAGE]   must fail with CODE (and exactly MESSAGE)
 * Call K of a test is anchored by txid 00..0K (32 bytes, big-endian K).
 */
import { sha256 } from '../protocol/hash.js';
import { valuesEqual, valueToJson, type Value, type ValueType } from '../protocol/value.js';
import { execute } from '../vm/execute.js';
import { MemHost } from '../vm/mem-host.js';
import type { ExecContext } from '../vm/types.js';
import { argsFromText, findFunction, parseValueText, splitTyped } from '../client/abi.js';
import type { Artifact } from './index.js';

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
type Step =
  | { k: 'caller'; line: number; key: Uint8Array }
  | { k: 'height'; line: number; height: number }
  | { k: 'inputs'; line: number; inputs: { txid: string | number; vout: number }[] }
  | { k: 'outputs'; line: number; outputs: { value: bigint; script: Uint8Array }[] }
  | { k: 'call'; line: number; fn: string; args: string[]; expect: Expect };
interface TestDecl { name: string; line: number; steps: Step[] }

const HEX64 = /^[0-9a-f]{64}$/;

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

export function parseTests(text: string): { tests: TestDecl[]; errors: TestFailure[] } {
  const tests: TestDecl[] = [];
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
    const cur = tests[tests.length - 1];
    if (!cur) return bad(`'${kw}' before the first 'test NAME' line`);
    switch (kw) {
      case 'caller': {
        if (rest.length !== 1) return bad('caller takes one NAME or 64-hex key');
        const t = rest[0]!.toLowerCase();
        cur.steps.push({ k: 'caller', line, key: HEX64.test(t) ? new Uint8Array(Buffer.from(t, 'hex')) : sha256(Buffer.from(rest[0]!)) });
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
        let expect: Expect = { kind: 'executed', value: null };
        if (arrow >= 0) {
          if (tail[0] === 'fail') {
            if (!tail[1]) return bad('-> fail needs a failure code (revert, arithmetic_overflow, ...)');
            expect = { kind: 'fail', code: tail[1], message: tail.length > 2 ? tail.slice(2).join(' ') : null };
          } else if (tail.length === 1) expect = { kind: 'executed', value: tail[0]! };
          else return bad('-> takes one VALUE or fail CODE [MESSAGE]');
        }
        cur.steps.push({ k: 'call', line, fn: head[0]!, args: head.slice(1), expect });
        return;
      }
      default:
        return bad(`unknown directive '${kw}' (test, caller, height, inputs, outputs, call)`);
    }
  });
  return { tests, errors };
}

function txidOf(k: number): Uint8Array {
  const b = new Uint8Array(32);
  new DataView(b.buffer).setUint32(28, k);
  return b;
}

function show(v: Value | null): string {
  return v === null ? 'nothing' : `${v.type}:${String(valueToJson(v))}`;
}

/** Runs every test of `text` against `artifact`. */
export function runTests(artifact: Artifact, text: string): TestRun {
  const { tests, errors } = parseTests(text);
  if (errors.length) return { ok: false, errors };
  if (tests.length === 0) return { ok: false, errors: [{ line: 1, message: "no tests (a test starts with a 'test NAME' line)" }] };
  return { ok: true, tests: tests.map((t) => runOne(artifact, t)) };
}

function runOne(artifact: Artifact, t: TestDecl): TestOutcome {
  const host = new MemHost();
  host.deploy(CONTRACT_ID, artifact);
  const failures: TestFailure[] = [];
  let caller = sha256(Buffer.from(DEFAULT_CALLER));
  let height = DEFAULT_HEIGHT;
  let inputs: { txid: string | number; vout: number }[] = [];
  let outputs: ExecContext['outputs'] = [];
  let calls = 0;
  for (const s of t.steps) {
    if (s.k === 'caller') caller = s.key;
    else if (s.k === 'height') height = s.height;
    else if (s.k === 'inputs') inputs = s.inputs;
    else if (s.k === 'outputs') outputs = s.outputs;
    else {
      calls++;
      const fail = (message: string): void => void failures.push({ line: s.line, message: `call ${s.fn}: ${message}` });
      let args: Value[];
      let ret: ValueType | null;
      try {
        const f = findFunction(artifact.abi, s.fn);
        args = argsFromText(f, s.args);
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
      const r = execute({ contractId: CONTRACT_ID, function: s.fn, args, context: { height, txid: txidOf(calls), inputs: ins, outputs, caller, callId: BigInt(calls) }, host });
      host.apply(r);
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
        const typed = splitTyped(e.value);
        if (typed && typed.type !== ret) throw new Error(`expected value given as ${typed.type}, ${s.fn} returns ${ret}`);
        want = parseValueText(ret, typed ? typed.value : e.value, 'expected value');
      } catch (x) {
        fail((x as Error).message);
        continue;
      }
      if (!r.result || !valuesEqual(r.result, want)) fail(`expected ${show(want)}, got ${show(r.result)}`);
    }
  }
  return { name: t.name, line: t.line, calls, failures };
}


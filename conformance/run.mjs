#!/usr/bin/env node
// The vector runner (conformance/README.md). Needs Node.js 20+ and nothing else: no part
// of src/, no package. It starts the adapter once for all vectors/*.json files, writes
// each case as one JSON line {op, id, input} on the adapter's stdin, reads one JSON line
// per case back ({id, output} | {id, unsupported: true} | {id, error}), compares `output`
// with the case's `expected` (JSON equality, key order ignored) and prints TAP 13 with a
// one-line summary. Exit status 0 when no case failed (skips do not fail), 1 otherwise.
//
//   node conformance/run.mjs [--adapter "COMMAND"] [--vectors DIR] [--only SUBSTRING] [--junit FILE]
//
// --junit also writes JUnit XML (a testsuite per operation, a testcase per case) with the
// node runner's writer, node/junit.mjs, loaded only then: without it the runner stays alone.
//
// The adapter command runs through the shell; default: node conformance/adapters/svc-node.mjs.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// How long the adapter may take for all cases before its missing answers count as
// failures: the issue's goal for the whole run is a minute; svc-node takes about 2 s.
const RUN_TIMEOUT_MS = 120_000;

function parseArgs(argv) {
  const opts = { adapter: `node ${JSON.stringify(join(here, 'adapters', 'svc-node.mjs'))}`, vectors: join(here, 'vectors'), only: null, junit: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--adapter') opts.adapter = next();
    else if (a === '--vectors') opts.vectors = resolve(next());
    else if (a === '--only') opts.only = next();
    else if (a === '--junit') opts.junit = next();
    else throw new Error(`unknown argument ${a} (use --adapter, --vectors, --only, --junit)`);
  }
  return opts;
}

/** JSON equality: same types, arrays in order, objects with the same keys in any order. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** A vector file's cases, checked for the fields the runner needs. */
function loadCases(path) {
  const cases = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(cases)) throw new Error(`${path}: not a list of cases`);
  for (const [i, c] of cases.entries()) {
    if (!c || typeof c.id !== 'string' || typeof c.pins !== 'string' || !Object.hasOwn(c, 'input') || !Object.hasOwn(c, 'expected')) {
      throw new Error(`${path}: case ${i} lacks id, pins, input or expected`);
    }
  }
  return cases;
}

/** Runs one adapter process over `cases` ({op, c} each); resolves with one answer (or null) per case, and the adapter's stderr. */
function askAdapter(command, cases) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, { shell: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = [];
    let buffered = '';
    let stderr = '';
    let done = false;
    const finish = (why) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill();
      resolvePromise({ answers: cases.map((_, i) => answers[i] ?? null), stderr: stderr.trim(), why });
    };
    const timer = setTimeout(() => finish(`the adapter did not answer within ${RUN_TIMEOUT_MS / 1000} s`), RUN_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line === '') continue;
        try {
          answers.push(JSON.parse(line));
        } catch {
          answers.push({ error: `not a JSON line: ${line.slice(0, 200)}` });
        }
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      if (stderr.length < 4000) stderr += c;
    });
    child.on('error', (e) => finish(`the adapter could not start: ${e.message}`));
    child.on('close', (code) => finish(answers.length < cases.length ? `the adapter exited (status ${code}) after ${answers.length} of ${cases.length} answers` : null));
    child.stdin.on('error', () => {}); // an adapter that exits early: reported by 'close'
    for (const { op, c } of cases) child.stdin.write(JSON.stringify({ op, id: c.id, input: c.input }) + '\n');
    child.stdin.end();
  });
}

const yamlString = (s) => JSON.stringify(s);

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = process.hrtime.bigint();
  const files = readdirSync(opts.vectors).filter((f) => f.endsWith('.json') && (!opts.only || f.includes(opts.only))).sort();
  const work = files.map((f) => ({ op: f.slice(0, -'.json'.length), cases: loadCases(join(opts.vectors, f)) }));
  const total = work.reduce((n, w) => n + w.cases.length, 0);
  console.log('TAP version 13');
  console.log(`1..${total}`);
  let n = 0;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failedOps = new Map();
  const flat = work.flatMap(({ op, cases }) => cases.map((c) => ({ op, c })));
  const { answers, stderr, why } = await askAdapter(opts.adapter, flat);
  const junit = [];
  for (const [i, { op, c }] of flat.entries()) {
    n++;
    const [passedBefore, skippedBefore] = [passed, skipped];
    const a = answers[i];
    const title = `${op} ${c.id} - ${c.pins}`;
    if (a && a.id !== undefined && a.id !== c.id) {
      failed++;
      failedOps.set(op, (failedOps.get(op) ?? 0) + 1);
      console.log(`not ok ${n} ${title}\n  ---\n  reason: ${yamlString(`answer ${i + 1} is for case ${a.id}: answers must come in order`)}\n  ...`);
    } else if (a && a.unsupported === true) {
      skipped++;
      console.log(`ok ${n} ${title} # SKIP the adapter does not implement ${op}`);
    } else if (a && Object.hasOwn(a, 'output') && jsonEqual(a.output, c.expected)) {
      passed++;
      console.log(`ok ${n} ${title}`);
    } else {
      failed++;
      failedOps.set(op, (failedOps.get(op) ?? 0) + 1);
      const reason = !a ? (why ?? 'no answer') : a.error !== undefined ? `adapter error: ${a.error}` : 'output differs from expected';
      console.log(`not ok ${n} ${title}`);
      console.log('  ---');
      console.log(`  reason: ${yamlString(reason)}`);
      console.log(`  expected: ${JSON.stringify(c.expected).slice(0, 2000)}`);
      if (a && Object.hasOwn(a, 'output')) console.log(`  got: ${JSON.stringify(a.output).slice(0, 2000)}`);
      if (!a && stderr) console.log(`  stderr: ${yamlString(stderr.slice(0, 2000))}`);
      console.log('  ...');
    }
    junit.push({ scenario: op, name: `${c.id} - ${c.pins}`, ok: passed > passedBefore || skipped > skippedBefore, skipped: skipped > skippedBefore ? `the adapter does not implement ${op}` : null, detail: { expected: c.expected, got: a?.output ?? a?.error ?? null }, seconds: 0 });
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const where = failedOps.size ? ` (failing: ${[...failedOps].map(([op, k]) => `${op} ${k}`).join(', ')})` : '';
  console.log(`# conformance: ${passed} passed, ${failed} failed, ${skipped} skipped of ${total} cases in ${work.length} files, ${seconds.toFixed(1)} s${where}`);
  if (opts.junit) (await import('./node/junit.mjs')).writeJunit(opts.junit, junit, { seconds, name: 'conformance', classPrefix: 'conformance.vectors' });
  process.exitCode = failed === 0 ? 0 : 1;
}

// Run when started as a command; imported (the mutation run reuses jsonEqual), it does nothing.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`conformance runner: ${e.message}`);
    process.exitCode = 2;
  });
}

#!/usr/bin/env node
// Mutation testing of the consensus modules with the conformance vectors as the only test
// (conformance/README.md, "The mutation run"). Copies dist/ to .mutation/dist/, rewrites the compiled
// files of the modules in scope.mjs with every mutant behind a switch (instrument.mjs),
// then drives svc-node's adapter over that copy exactly as the vector runner does (one
// JSON case per line, answers compared with `expected` by the runner's own jsonEqual):
//
//   1. one pass of every case with no mutant active records which mutants each case
//      reaches, and which ones run while the modules load;
//   2. one adapter process then runs mutant after mutant, switching between them with a
//      control line, each against the cases that reach it (fastest first, stopping at
//      the first that fails); a mutant is killed when a case fails, the adapter errs or
//      crashes, or the cases take far longer than unmutated (an endless loop);
//   3. a mutant that runs while the modules load (a constant, a table) gets a fresh
//      adapter process started with it active (SVC_MUTANT) and every case.
//
// A kill is believed only if the killing case passes again at once with no mutant
// active in the same process; otherwise the process restarts and the mutant is tried
// again there.
//
//   node conformance/mutation/run.mjs [--only PATH_SUBSTRING] [--fn FUNCTION,FUNCTION] [--survivors FILE] [--report FILE] [--work DIR]
//   node conformance/mutation/run.mjs --from-report FILE[,FILE...] [--survivors FILE]   (no run: the summary and list again; several parts' reports summed, a file in a later one replacing it in the earlier)
//   node conformance/mutation/run.mjs --only PATH_SUBSTRING --into FULL_REPORT   (the files' mutants run again, their results replace those in a full run's report)
//
// Needs `npm run build`; `npm run conformance:mutate` builds and runs it under nice.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonEqual } from '../run.mjs';
import { instrument } from './instrument.mjs';
import { EXCLUDED_FILES, EXCLUDED_FUNCTIONS, FILES, FOLDERS, FRESH_PROCESS_FILES } from './scope.mjs';
import { EXPLAINED, EXPLAINED_PATTERNS } from './explained.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
// Where the mutated tree and the report go (--work): .mutation/ in the repository by default.
let work = join(root, '.mutation');
let mutatedDist = join(work, 'dist');
// The workspace package @svc-node/protocol: its sources and where they compile to.
const PROTOCOL_SRC = 'packages/protocol/src';
const PROTOCOL_DIST = 'packages/protocol/dist';
const adapterPath = join(root, 'conformance', 'adapters', 'svc-node.mjs');
// How much longer than unmutated a mutant's cases may take before it counts as an endless
// loop (killed by timeout): generous, since the machine is shared and a slower mutant
// that ends is still judged by its answers.
let TIMEOUT_FACTOR = 20;
const TIMEOUT_FLOOR_MS = 1000;
// A process with a mutant active from its start (a load-time mutant) gets this long for all cases.
const STATIC_TIMEOUT_MS = 60_000;
// How many of the history cases reaching it a mutant meets when other cases reach it too (see capHistories).
const HISTORY_TRIES = 4;
// A mutant only histories reach (the ledger's) meets at least this many of them, and more
// while their unmutated time stays within HISTORY_ONLY_BUDGET_MS (see pickHistories).
const HISTORY_ONLY_TRIES = 8;
let HISTORY_ONLY_BUDGET_MS = 3000;

function parseArgs(argv) {
  const opts = { only: null, fn: null, survivors: null, report: null, fromReport: null, work: null, into: null, loadTime: 'run', parallel: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--only') opts.only = next();
    else if (a === '--survivors') opts.survivors = next();
    else if (a === '--report') opts.report = next();
    else if (a === '--from-report') opts.fromReport = next();
    else if (a === '--into') opts.into = resolve(next());
    else if (a === '--load-time') opts.loadTime = next();
    else if (a === '--parallel') opts.parallel = Math.max(1, Number(next()));
    else if (a === '--timeout-factor') TIMEOUT_FACTOR = Math.max(2, Number(next()));
    else if (a === '--history-budget') HISTORY_ONLY_BUDGET_MS = Math.max(0, 1000 * Number(next()));
    else if (a === '--work') opts.work = resolve(next());
    else if (a === '--fn') opts.fn = next();
    else throw new Error(`unknown argument ${a} (use --only, --fn, --survivors, --report, --from-report, --into, --work, --load-time run|skip|only, --parallel N, --timeout-factor F, --history-budget SECONDS)`);
  }
  if (opts.work) {
    work = opts.work;
    mutatedDist = join(work, 'dist');
  }
  opts.report ??= join(work, 'report.json');
  return opts;
}

/** The TypeScript files in scope, minus the excluded ones. */
function targets() {
  const files = [...FILES];
  for (const folder of FOLDERS) {
    for (const name of readdirSync(join(root, folder)).sort()) if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(`${folder}/${name}`);
  }
  return files.filter((f) => !Object.hasOwn(EXCLUDED_FILES, f));
}

// --- source maps: a compiled offset -> the TypeScript line -------------------------------

const B64 = Object.fromEntries([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]));

/** Per generated line, the segments [generatedColumn, sourceLine] (0-based), from a v3 source map. */
function decodeMappings(mappings) {
  const lines = [];
  let srcLine = 0;
  for (const lineText of mappings.split(';')) {
    const segs = [];
    let col = 0;
    for (const seg of lineText.split(',')) {
      if (seg === '') continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const d = B64[ch];
        value += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      col += fields[0];
      if (fields.length >= 4) {
        srcLine += fields[2];
        segs.push([col, srcLine]);
      }
    }
    lines.push(segs);
  }
  return lines;
}

function lineMapper(jsText, mapPath) {
  const starts = [0];
  for (let i = 0; i < jsText.length; i++) if (jsText[i] === '\n') starts.push(i + 1);
  const segs = existsSync(mapPath) ? decodeMappings(JSON.parse(readFileSync(mapPath, 'utf8')).mappings) : [];
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    // @svc-node/protocol compiles without source maps: the compiled file's line, said so.
    if (!segs.length) return `${lo + 1} of the compiled file`;
    const col = offset - starts[lo];
    const line = segs[lo] ?? [];
    let best = null;
    for (const s of line) if (s[0] <= col) best = s;
    if (!best && line.length) best = line[0];
    return best ? best[1] + 1 : null;
  };
}

// --- the mutated tree --------------------------------------------------------------------

const usedExclusions = new Set();

/** A source file's compiled file, relative to the repository: dist/ for src/, the package's own dist/ for @svc-node/protocol. */
function compiledOf(file) {
  const js = file.replace(/\.ts$/, '.js');
  return js.startsWith(`${PROTOCOL_SRC}/`) ? `${PROTOCOL_DIST}/${js.slice(PROTOCOL_SRC.length + 1)}` : join('dist', js);
}

function buildMutatedTree(files) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(join(root, 'dist'), mutatedDist, { recursive: true, filter: (src) => !src.endsWith('.d.ts') && !src.endsWith('.tsbuildinfo') });
  // The node imports @svc-node/protocol by name: the copy gets its own copy of the package,
  // and its node_modules/ resolves that name to it (every other package to the repository's).
  cpSync(join(root, PROTOCOL_DIST), join(work, PROTOCOL_DIST), { recursive: true, filter: (src) => !src.endsWith('.d.ts') && !src.endsWith('.tsbuildinfo') });
  cpSync(join(root, 'packages', 'protocol', 'package.json'), join(work, 'packages', 'protocol', 'package.json'));
  const modules = join(work, 'node_modules');
  mkdirSync(join(modules, '@svc-node'), { recursive: true });
  for (const name of readdirSync(join(root, 'node_modules'))) if (name !== '@svc-node') symlinkSync(join(root, 'node_modules', name), join(modules, name));
  for (const name of readdirSync(join(root, 'node_modules', '@svc-node'))) {
    symlinkSync(name === 'protocol' ? join(work, 'packages', 'protocol') : join(root, 'node_modules', '@svc-node', name), join(modules, '@svc-node', name), 'dir');
  }
  const mutants = [];
  for (const file of files) {
    const js = compiledOf(file);
    const text = readFileSync(join(root, js), 'utf8');
    const excludedFns = new Set(Object.keys(EXCLUDED_FUNCTIONS).filter((k) => k.startsWith(`${file}:`)).map((k) => k.slice(file.length + 1)));
    const out = instrument(text, js, mutants.length, (fn) => {
      const hit = [...excludedFns].find((x) => fn === x || fn.startsWith(`${x}.`));
      if (hit !== undefined) usedExclusions.add(`${file}:${hit}`);
      return hit !== undefined;
    });
    const tsLine = lineMapper(text, join(root, js + '.map'));
    for (const m of out.mutants) {
      delete m.code;
      mutants.push({ ...m, file, line: tsLine(m.offset) });
    }
    writeFileSync(join(work, js), out.text);
  }
  // An exclusion naming no function (renamed, removed) would hide nothing and mislead: say so.
  for (const k of Object.keys(EXCLUDED_FUNCTIONS)) if (files.includes(k.split(':')[0]) && !usedExclusions.has(k)) console.log(`# warning: the exclusion ${k} names no function with a mutant`);
  return mutants;
}

function loadCases() {
  const dir = join(root, 'conformance', 'vectors');
  const cases = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const op = f.slice(0, -'.json'.length);
    for (const c of JSON.parse(readFileSync(join(dir, f), 'utf8'))) cases.push({ op, id: c.id, line: JSON.stringify({ op, id: c.id, input: c.input }) + '\n', expected: c.expected });
  }
  return cases;
}

// --- one adapter process -----------------------------------------------------------------

// history.run's cases open a RocksDB store in a temporary directory and write it with
// synced batches: on a RAM disk (when the machine has one) the syncs cost nothing, which
// takes about a third off every ledger mutant's cases. The answers are the same. A
// directory of the run's own, removed at its end: a killed adapter leaves its store behind.
const ramTmp = existsSync('/dev/shm') ? mkdtempSync(join('/dev/shm', 'svc-mutation-')) : null;
const historyTmp = ramTmp ? { TMPDIR: ramTmp } : {};

class Adapter {
  constructor(env = {}) {
    this.child = spawn(process.execPath, [adapterPath], { env: { ...process.env, ...historyTmp, SVC_CONFORMANCE_DIST: mutatedDist, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.buffered = '';
    this.waiting = null;
    this.dead = false;
    this.stderr = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffered += chunk;
      let nl;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        const w = this.waiting;
        this.waiting = null;
        if (w) {
          try {
            w.resolve(JSON.parse(line));
          } catch {
            w.resolve({ error: `not JSON: ${line.slice(0, 200)}` });
          }
        }
      }
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (c) => {
      if (this.stderr.length < 4000) this.stderr += c;
    });
    this.child.stdin.on('error', () => {});
    this.child.on('close', () => {
      this.dead = true;
      const w = this.waiting;
      this.waiting = null;
      if (w) w.resolve({ error: 'the adapter exited', crashed: true });
    });
  }

  /** Sends one line; resolves with the answer, `{timeout: true}` after `ms`, or `{crashed: true}`. */
  ask(line, ms) {
    if (this.dead) return Promise.resolve({ error: 'the adapter exited', crashed: true });
    return new Promise((resolvePromise) => {
      const timer = ms ? setTimeout(() => {
        this.waiting = null;
        resolvePromise({ timeout: true });
      }, ms) : null;
      this.waiting = {
        resolve: (a) => {
          if (timer) clearTimeout(timer);
          resolvePromise(a);
        },
      };
      this.child.stdin.write(line);
    });
  }

  control(active, trace) {
    return this.ask(JSON.stringify({ op: '_mutation', id: '_mutation', input: { active, trace } }) + '\n', 30_000);
  }

  kill() {
    this.dead = true;
    this.child.kill('SIGKILL');
  }

  close() {
    this.child.stdin.end();
  }
}

const passes = (c, a) => a && !a.timeout && Object.hasOwn(a, 'output') && jsonEqual(a.output, c.expected);

// --- the run -----------------------------------------------------------------------------

async function coveragePass(cases) {
  const adapter = new Adapter();
  const load = await adapter.control(-1, true);
  if (!load?.output) throw new Error(`the adapter over the mutated tree did not start: ${adapter.stderr || JSON.stringify(load)}`);
  const atLoad = new Set(load.output.hits);
  const reach = new Map(); // mutant id -> case indexes
  const ms = [];
  for (const [i, c] of cases.entries()) {
    const t0 = performance.now();
    const a = await adapter.ask(c.line, 120_000);
    ms.push(performance.now() - t0);
    if (!passes(c, a)) throw new Error(`case ${c.op} ${c.id} fails with no mutant active: the instrumented tree is broken (${JSON.stringify(a).slice(0, 300)}; ${adapter.stderr.slice(0, 500)})`);
    const hits = (await adapter.control(-1, true)).output.hits;
    for (const id of hits) {
      if (!reach.has(id)) reach.set(id, []);
      reach.get(id).push(i);
    }
  }
  adapter.close();
  return { atLoad, reach, ms };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.fromReport) {
    // Only the summary and the survivors list again, from a finished run (after editing explained.mjs).
    // FILE,FILE: reports of runs over parts of the scope at the same time (--only), summed; the time is the longest.
    // A mutant in a later report replaces it in the earlier ones (a part run again after
    // cases were added), unless the later one did not run it (--load-time skip or only).
    const reports = opts.fromReport.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')));
    const byPlace = new Map();
    for (const r of reports) {
      const seen = new Map(); // the same edit twice at one place (a repeated subexpression) stays two mutants
      for (const m of r.mutants) {
        const at = `${m.file}@${m.offset}:${m.operator}:${m.original}:${m.replacement}`;
        seen.set(at, (seen.get(at) ?? 0) + 1);
        const place = `${at}#${seen.get(at)}`;
        if (m.status !== 'not run' || !byPlace.has(place)) byPlace.set(place, m);
      }
    }
    const all = [...byPlace.values()].map((m) => ({ ...m, key: keyOf(m) }));
    printSummary(all, Math.max(...reports.map((r) => r.seconds)));
    if (opts.survivors) writeFileSync(opts.survivors, survivorsMarkdown(all));
    return;
  }
  if (!existsSync(join(root, 'dist', 'conformance', 'adapters', 'svc-node-answers.js'))) throw new Error('dist/ is missing: run npm run build');
  const started = performance.now();
  // --only A,B: the files whose path contains any of them.
  const files = targets().filter((f) => !opts.only || opts.only.split(',').some((part) => f.includes(part)));
  const mutants = buildMutatedTree(files);
  const cases = loadCases();
  console.log(`# ${mutants.length} mutants in ${files.length} files; ${cases.length} cases`);
  const { atLoad, reach, ms } = await coveragePass(cases);
  // --fn F,G: only the mutants in these functions (or their nested ones) are run; the others
  // are "not run", so --from-report with the part's last full report keeps their results.
  const chosen = (m) => !opts.fn || opts.fn.split(',').some((f) => m.fn === f || m.fn.startsWith(`${f}.`));
  const baseline = ms.reduce((a, b) => a + b, 0);
  console.log(`# coverage pass: ${(baseline / 1000).toFixed(1)} s of cases; ${reach.size} mutants reached by a case, ${atLoad.size} while loading`);

  const result = new Map(); // id -> {status, by?}
  let adapter = new Adapter();
  await adapter.control(-1, false);
  const fresh = async () => {
    adapter.kill();
    adapter = new Adapter();
    await adapter.control(-1, false);
  };

  /** Runs one mutant in the shared process: {status: killed|survived|timeout, by} or {retry}. */
  const tryMutant = async (m, order) => {
    await adapter.control(m.id, false);
    const budget = Math.max(TIMEOUT_FLOOR_MS, TIMEOUT_FACTOR * order.reduce((s, i) => s + ms[i], 0));
    const deadline = performance.now() + budget;
    for (const i of order) {
      const left = deadline - performance.now();
      const a = left > 0 ? await adapter.ask(cases[i].line, left) : { timeout: true };
      if (a.timeout) {
        await fresh();
        return { status: 'timeout', by: `${cases[i].op} ${cases[i].id}` };
      }
      if (a.crashed) {
        await fresh();
        return { status: 'killed', by: `${cases[i].op} ${cases[i].id} (adapter exited)` };
      }
      if (!passes(cases[i], a)) {
        await adapter.control(-1, false);
        const again = await adapter.ask(cases[i].line, 30_000);
        if (!passes(cases[i], again)) return { retry: true };
        return { status: 'killed', by: `${cases[i].op} ${cases[i].id}` };
      }
    }
    await adapter.control(-1, false);
    return { status: 'survived' };
  };

  // history.run's cases drive the whole node (a RocksDB store each, a third of a second or
  // more): they reach nearly every mutant, and a survivor would wait for all of them. A
  // mutant some other case reaches meets only HISTORY_TRIES histories after every other
  // case; a load-time one HISTORY_ONLY_TRIES (each in byKills' order below); one only
  // histories reach (the ledger's) those pickHistories chooses. A mutant no case tried kills is counted as surviving, so the caps can
  // only lower the score, never raise it.
  const isHistory = (i) => cases[i].op === 'history.run';
  // Which histories are tried is not left to their speed alone (a loaded machine reorders
  // cases a few milliseconds apart, and kills came and went between runs): those that killed
  // the mutant's function's, then its file's, other mutants come first, then the fastest.
  const byKills = (m, hs) => {
    const inFn = killsBy.get(`${m.file}:${m.fn}`) ?? new Map();
    const inFile = killsBy.get(m.file) ?? new Map();
    return hs.map((i, k) => [i, k]).sort(([a, ka], [b, kb]) => (inFn.get(b) ?? 0) - (inFn.get(a) ?? 0) || (inFile.get(b) ?? 0) - (inFile.get(a) ?? 0) || ka - kb).map(([i]) => i);
  };
  const capHistories = (m, order) => (order.some((i) => !isHistory(i)) ? [...order.filter((i) => !isHistory(i)), ...byKills(m, order.filter(isHistory)).slice(0, HISTORY_TRIES)] : byKills(m, order).slice(0, HISTORY_ONLY_TRIES));
  // Which histories killed mutants so far, per function and per file: a ledger mutant meets
  // first the histories that killed its neighbours (a function's mutants mostly die to the
  // same few situations: a drop, a reorganisation, a restart, a late payload), then the
  // cheapest of the rest.
  const killsBy = new Map(); // "file" and "file:function" -> Map(case index -> kills)
  const noteKill = (m, i) => {
    for (const k of [m.file, `${m.file}:${m.fn}`]) {
      if (!killsBy.has(k)) killsBy.set(k, new Map());
      killsBy.get(k).set(i, (killsBy.get(k).get(i) ?? 0) + 1);
    }
  };
  const caseIndex = new Map(cases.map((c, i) => [`${c.op} ${c.id}`, i]));
  /**
   * A mutant only histories reach: those that killed mutants of its function first (most
   * kills first), then of its file, then the rest, each group cheapest first; as many as
   * fit in HISTORY_ONLY_BUDGET_MS of unmutated time, and at least HISTORY_ONLY_TRIES.
   * Every reaching history is still a candidate: the budget, not their speed, decides how
   * far down the list a survivor goes.
   */
  const pickHistories = (m, reached) => {
    const inFn = killsBy.get(`${m.file}:${m.fn}`) ?? new Map();
    const inFile = killsBy.get(m.file) ?? new Map();
    const ordered = [...reached].sort((a, b) => (inFn.get(b) ?? 0) - (inFn.get(a) ?? 0) || (inFile.get(b) ?? 0) - (inFile.get(a) ?? 0) || ms[a] - ms[b]);
    const out = [];
    let spent = 0;
    for (const i of ordered) {
      if (out.length >= HISTORY_ONLY_TRIES && spent + ms[i] > HISTORY_ONLY_BUDGET_MS) continue;
      out.push(i);
      spent += ms[i];
    }
    return out;
  };
  // --load-time skip: only the mutants a case reaches after loading (the load-time ones are
  // "not run"); only: only the load-time ones. Two runs of one part side by side, summed.
  const dynamic = opts.loadTime === 'only' ? [] : mutants.filter((m) => chosen(m) && !atLoad.has(m.id) && reach.has(m.id));
  let done = 0;
  const tried = new Map(); // mutant id -> the cases it met
  const runDynamic = async (m, order) => {
    let r = await tryMutant(m, order);
    if (r.retry) {
      await fresh();
      r = await tryMutant(m, order);
      if (r.retry) r = { status: 'killed', by: 'the process stayed broken after the mutant ran' };
      await fresh();
    }
    result.set(m.id, r);
    tried.set(m.id, new Set([...(tried.get(m.id) ?? []), ...order]));
    if ((r.status === 'killed' || r.status === 'timeout') && caseIndex.has(r.by)) noteKill(m, caseIndex.get(r.by));
  };
  for (const m of dynamic) {
    const reached = [...reach.get(m.id)].sort((a, b) => ms[a] - ms[b]);
    await runDynamic(m, reached.every(isHistory) ? pickHistories(m, reached) : capHistories(m, reached));
    if (++done % 250 === 0) console.log(`# ${done} of ${dynamic.length} reached mutants, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  // A survivor only histories reach met the histories that had killed its function's
  // mutants when its turn came; a history that kills its later neighbours (mutants run in
  // source order) may not have been among them. Once all have run, each such survivor meets
  // the histories that killed mutants of its function and that it has not met, so the
  // answer does not hang on the order of the source.
  for (const m of dynamic) {
    if (result.get(m.id)?.status !== 'survived') continue;
    const reached = [...reach.get(m.id)];
    if (!reached.every(isHistory)) continue;
    const inFn = killsBy.get(`${m.file}:${m.fn}`) ?? new Map();
    const more = reached.filter((i) => inFn.has(i) && !tried.get(m.id).has(i)).sort((a, b) => inFn.get(b) - inFn.get(a) || ms[a] - ms[b]);
    if (more.length > 0) await runDynamic(m, more);
  }
  // The caps above are for speed, and every survivor explained as `equivalent` or `not
  // consensus` needs no more. The others (a reason `not yet`, or none) are the rules the
  // vectors may miss: before one is reported as surviving it meets every history that
  // reaches it and that it has not met, cheapest first, with no cap or budget (a deep
  // history costing more than the budget alone is found so). Few mutants: seconds each.
  const lastStarted = performance.now();
  const last = dynamic.filter((m) => result.get(m.id)?.status === 'survived' && (reasonOf(m) ?? 'not yet').startsWith('not yet'));
  let lastMet = 0;
  for (const m of last) {
    const more = reach.get(m.id).filter((i) => isHistory(i) && !tried.get(m.id).has(i)).sort((a, b) => ms[a] - ms[b]);
    lastMet += more.length;
    if (more.length > 0) await runDynamic(m, more);
  }
  if (last.length > 0) console.log(`# last pass: ${last.length} survivors neither equivalent nor not consensus met ${lastMet} more histories, ${last.filter((m) => result.get(m.id).status !== 'survived').length} killed, ${((performance.now() - lastStarted) / 1000).toFixed(0)} s`);
  adapter.kill();

  // Mutants that run while the modules load: one process each, with every case.
  // The cases that reach the file's other mutants come first (a constant is mostly read where it is defined), fastest first.
  const byTime = cases.map((_, i) => i).sort((a, b) => ms[a] - ms[b]);
  const fileCases = new Map();
  for (const m of mutants) {
    if (!fileCases.has(m.file)) fileCases.set(m.file, new Set());
    for (const i of reach.get(m.id) ?? []) fileCases.get(m.file).add(i);
  }
  /** A mutant active from the start of a fresh adapter process, against every case (the file's first). */
  const runFresh = async (m) => {
    const near = fileCases.get(m.file);
    const order = capHistories(m, [...byTime.filter((i) => near.has(i)), ...byTime.filter((i) => !near.has(i))]);
    const a = new Adapter({ SVC_MUTANT: String(m.id) });
    const ready = await a.control(m.id, false);
    let r = { status: 'survived' };
    if (!ready?.output) r = { status: 'killed', by: 'the modules fail to load' };
    else {
      const deadline = performance.now() + STATIC_TIMEOUT_MS;
      for (const i of order) {
        const ans = await a.ask(cases[i].line, Math.max(1, deadline - performance.now()));
        if (ans.timeout) { r = { status: 'timeout', by: `${cases[i].op} ${cases[i].id}` }; break; }
        if (!passes(cases[i], ans)) { r = { status: 'killed', by: `${cases[i].op} ${cases[i].id}` }; break; }
      }
    }
    a.kill();
    return r;
  };
  const loading = mutants.filter((x) => chosen(x) && atLoad.has(x.id));
  if (opts.loadTime === 'skip') for (const m of loading) result.set(m.id, { status: 'not run' });
  else {
    // --parallel N: N fresh processes at a time (each is mostly waiting on module loading and I/O).
    let next = 0;
    const worker = async () => {
      while (next < loading.length) {
        const m = loading[next++];
        result.set(m.id, await runFresh(m));
      }
    };
    await Promise.all(Array.from({ length: opts.parallel }, worker));
  }
  if (opts.loadTime === 'only') for (const m of mutants) if (!atLoad.has(m.id)) result.set(m.id, { status: 'not run' });
  // A file holding a memo (scope.mjs, FRESH_PROCESS_FILES) answers from entries cached before
  // the mutant was switched on: its survivors are tried again in a process of their own.
  for (const m of mutants.filter((x) => FRESH_PROCESS_FILES[x.file] && result.get(x.id)?.status === 'survived')) result.set(m.id, await runFresh(m));
  // A survivor of the last pass, still without an accepted reason, is tried once more in a
  // process of its own (active from the start, every case): in the shared process a kill
  // was once missed (FALSE's removed push, killed by the next run of the same tree).
  for (const m of last) if (result.get(m.id)?.status === 'survived') result.set(m.id, await runFresh(m));
  for (const m of mutants) if (!chosen(m)) result.set(m.id, { status: 'not run' });
  for (const m of mutants) if (!result.has(m.id)) result.set(m.id, { status: 'no coverage' });

  const seconds = (performance.now() - started) / 1000;
  const all = mutants.map((m) => ({ ...m, ...result.get(m.id), key: keyOf(m) }));
  writeFileSync(opts.report, JSON.stringify({ seconds, cases: cases.length, mutants: all }, null, 1));
  if (opts.into) {
    // A full run's report with these files' mutants replaced by this run's (cases added for
    // them since): the summary is then of the whole scope again. Its time stays the full run's.
    const full = JSON.parse(readFileSync(opts.into, 'utf8'));
    const rerun = new Set(files);
    const merged = [...full.mutants.filter((m) => !rerun.has(m.file)), ...all];
    merged.sort((a, b) => (a.file === b.file ? a.id - b.id : 0));
    writeFileSync(opts.into, JSON.stringify({ seconds: full.seconds, cases: cases.length, rerun: [...(full.rerun ?? []), { files, seconds }], mutants: merged.map((m) => ({ ...m, key: keyOf(m) })) }, null, 1));
    console.log(`# ${files.length} files' results replaced in ${opts.into}`);
    return main2(merged, full.seconds, opts);
  }
  printSummary(all, seconds);
  if (opts.survivors) writeFileSync(opts.survivors, survivorsMarkdown(all));
}

function main2(all, seconds, opts) {
  printSummary(all, seconds);
  if (opts.survivors) writeFileSync(opts.survivors, survivorsMarkdown(all));
}

/** A survivor's name in explained.mjs: stable while the function and the mutated text stay. */
function keyOf(m) {
  return `${m.file}:${m.fn}:${m.operator}:${m.original} -> ${m.replacement}`;
}

/** The reason a survivor is explained by: its own key, else a pattern's (explained.mjs), else its function's ("file:function"), else its file's. */
function reasonOf(m) {
  // A line of the protocol package is "N of the compiled file" (no source maps): its number is N.
  const line = typeof m.line === 'number' ? m.line : Number.parseInt(String(m.line), 10);
  const pattern = EXPLAINED_PATTERNS.find((p) => m.file === p.file && (p.fn === undefined || p.fn === m.fn) && (p.lines === undefined || (line >= p.lines[0] && line <= p.lines[1])) && (p.status === undefined || p.status === m.status) && p.match.test(`${m.operator}:${m.original} -> ${m.replacement}`));
  return EXPLAINED[keyOf(m)] ?? pattern?.reason ?? EXPLAINED[`${m.file}:${m.fn}`] ?? EXPLAINED[m.file] ?? null;
}

// The summary's rows: a file counts under the longest of these its path starts with.
const MODULES = ['packages/protocol/src', 'packages/protocol/src/vm', 'packages/protocol/src/state', 'src/vm', 'src/state', 'src/writer/ledger'];
const moduleOf = (file) => MODULES.filter((mod) => file.startsWith(`${mod}/`)).sort((a, b) => b.length - a.length)[0];

function tally(list) {
  const killed = list.filter((m) => m.status === 'killed' || m.status === 'timeout').length;
  const timeout = list.filter((m) => m.status === 'timeout').length;
  const survived = list.filter((m) => m.status === 'survived').length;
  const uncovered = list.filter((m) => m.status === 'no coverage').length;
  const notRun = list.filter((m) => m.status === 'not run').length;
  const explained = list.filter((m) => (m.status === 'survived' || m.status === 'no coverage') && reasonOf(m) && !reasonOf(m).startsWith('not yet')).length;
  const pct = (n, d) => (d ? ((100 * n) / d).toFixed(1) : '-');
  return { notRun, total: list.length, killed, timeout, survived, uncovered, explained, score: pct(killed, list.length), covered: pct(killed, killed + survived), unexplained: survived + uncovered - explained };
}

function printSummary(all, seconds) {
  console.log('| Module | Mutants | Killed (timeouts) | Survived | No case reaches | Score | Score of reached | Survivors explained |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const row = (name, list) => {
    const t = tally(list);
    console.log(`| ${name} | ${t.total} | ${t.killed} (${t.timeout}) | ${t.survived} | ${t.uncovered} | ${t.score}% | ${t.covered}% | ${t.explained} of ${t.survived + t.uncovered} |`);
  };
  for (const mod of MODULES) {
    const list = all.filter((m) => moduleOf(m.file) === mod);
    if (list.length) row(mod, list);
  }
  row('**All**', all);
  console.log('');
  for (const file of [...new Set(all.map((m) => m.file))]) {
    const t = tally(all.filter((m) => m.file === file));
    console.log(`# ${file}: ${t.total} mutants, ${t.killed} killed, ${t.survived} survived, ${t.uncovered} not reached, score ${t.score}%`);
  }
  const t = tally(all);
  console.log(`# mutation: ${t.killed} killed of ${t.total} mutants (${t.score}%), ${t.survived} survived, ${t.uncovered} not reached, ${t.notRun ? `${t.notRun} not run (counted as not killed), ` : ''}${t.unexplained} survivors unexplained, ${seconds.toFixed(0)} s`);
}

function survivorsMarkdown(all) {
  const lines = ['# Surviving mutants', '', 'Generated by `npm run conformance:mutate -- --survivors conformance/mutation/survivors.md` (conformance/README.md, "The mutation run"): every mutant no vector kills, with the reason it may stay (explained.mjs). "reached" survived a case that runs it; "not reached" no case runs it.', ''];
  const surv = all.filter((m) => m.status === 'survived' || m.status === 'no coverage');
  for (const file of [...new Set(surv.map((m) => m.file))]) {
    lines.push(`## ${file}`, '');
    const inFile = surv.filter((m) => m.file === file);
    // Survivors sharing one reason (a whole function or file) are listed under it.
    const groups = new Map();
    for (const m of inFile) {
      const reason = reasonOf(m) ?? 'UNEXPLAINED';
      if (!groups.has(reason)) groups.set(reason, []);
      groups.get(reason).push(m);
    }
    for (const [reason, ms] of groups) {
      lines.push(`- ${reason}`);
      for (const m of ms) lines.push(`  - line ${m.line} \`${m.fn}\` ${m.operator}: \`${m.original}\` -> \`${m.replacement}\` (${m.status === 'survived' ? 'reached' : 'not reached'})`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

main()
  .catch((e) => {
    console.error(`mutation run: ${e.stack ?? e.message}`);
    process.exitCode = 2;
  })
  .finally(() => {
    if (ramTmp) rmSync(ramTmp, { recursive: true, force: true });
  });

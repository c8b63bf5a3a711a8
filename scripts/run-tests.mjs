// Runs every compiled *.test.js under dist/test with Node's built-in runner.
// Node 20's `node --test DIR` would also run every helper .js inside a folder named
// "test", so the file list is built here. Extra args narrow by substring, or name one
// file exactly with a leading "=" (its path under dist/test, e.g. =log.test.js):
//   npm test -- vm protocol
// `--unit` (npm run test:unit) keeps only the files that start no process: those whose
// imports, followed through dist/, never reach node:child_process (no node, devnet,
// supervisor or CLI child). The rule is read from the code, so a test that starts a
// process leaves the fast loop by itself. The simulation sweep (test/sim: many seeds of
// the whole ledger, ~2 minutes) is left out too; `npm test -- sim` runs it. Other args
// starting with "-" go to node.
// A whole run (no names, not --unit) first runs the static checks, each a step of its own
// with its time printed: the linter (eslint.config.js, type-aware) and the unused-export
// check (knip.json). `--no-lint` leaves them out. The run fails if any step or test fails.
// After the run, the slowest files and their wall times are printed; all times are in
// dist/test-times.json.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const testRoot = join(root, 'dist', 'test');
const timesFile = join(root, 'dist', 'test-times.json');
// How many of the slowest files to print: enough to see where a run's time goes.
const SLOWEST_SHOWN = 10;
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filters = args.filter((a) => !a.startsWith('-'));
const noLint = args.includes('--no-lint');
const passthrough = args.filter((a) => a.startsWith('-') && a !== '--unit' && a !== '--no-lint');

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const STARTS_PROCESS = /(?:from\s*|import\(\s*)['"](?:node:)?child_process['"]/;
const RELATIVE_IMPORT = /(?:from\s*|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
const reaches = new Map();
/** Whether a compiled module, or any module it imports relatively, imports node:child_process. */
function startsProcess(file, path = new Set()) {
  if (reaches.has(file)) return reaches.get(file);
  if (path.has(file)) return false; // an import cycle: decided where it started
  path.add(file);
  const text = readFileSync(file, 'utf8');
  let found = STARTS_PROCESS.test(text);
  for (const m of text.matchAll(RELATIVE_IMPORT)) {
    if (found) break;
    const dep = resolve(dirname(file), m[1]);
    if (existsSync(dep)) found = startsProcess(dep, path);
  }
  path.delete(file);
  reaches.set(file, found);
  return found;
}

// Folders of sweeps: in-process, but long by design, so not part of the fast loop.
const SWEEPS = ['sim/'];
const isUnit = (f) => !SWEEPS.some((d) => relative(testRoot, f).startsWith(d)) && !startsProcess(f);

// A compiled test whose source is gone (moved or deleted since dist/ was built) would run
// as a stale copy beside its new self: left out, and said once.
const hasSource = (f) => existsSync(join(root, 'test', relative(testRoot, f)).replace(/\.js$/, '.ts'));
const compiled = walk(testRoot);
const stale = compiled.filter((f) => !hasSource(f));
if (stale.length > 0) console.error(`# left out ${stale.length} compiled test files whose source is gone (rm -rf dist/test to clear them): ${stale.map((f) => relative(testRoot, f)).join(' ')}`);
const matches = (rel, s) => (s.startsWith('=') ? rel === s.slice(1) : rel.includes(s));
const files = compiled
  .filter(hasSource)
  .filter((f) => filters.length === 0 || filters.some((s) => matches(relative(testRoot, f), s)))
  .filter((f) => !unitOnly || isUnit(f));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// A reporter named on the command line replaces the runner's own choice, times included.
const ownReporters = passthrough.some((a) => a.startsWith('--test-reporter'))
  ? []
  : [
      // node's default: spec on a terminal, tap otherwise
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
      `--test-reporter=${join(root, 'scripts', 'test-times.mjs')}`, `--test-reporter-destination=${timesFile}`,
    ];
// The static checks: whole runs only, so a narrowed run stays a fast loop.
const STATIC_CHECKS = [
  { name: 'lint (eslint)', args: [join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--max-warnings=0', '.'] },
  { name: 'unused exports (knip)', args: [join(root, 'node_modules', 'knip', 'bin', 'knip.js'), '--include', 'exports,types', '--no-progress'] },
];
let staticFailed = false;
if (filters.length === 0 && !unitOnly && !noLint) {
  for (const step of STATIC_CHECKS) {
    const t0 = Date.now();
    const s = spawnSync(process.execPath, step.args, { stdio: 'inherit', cwd: root });
    console.log(`# ${step.name}: ${s.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (s.status !== 0) staticFailed = true;
  }
}

const started = Date.now();
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...ownReporters, ...passthrough, ...files], { stdio: 'inherit', cwd: root });

if (ownReporters.length > 0 && existsSync(timesFile) && statSync(timesFile).mtimeMs >= started) {
  const times = Object.entries(JSON.parse(readFileSync(timesFile, 'utf8'))).sort((a, b) => b[1] - a[1]);
  const width = Math.max(...times.slice(0, SLOWEST_SHOWN).map(([f]) => f.length));
  console.log(`\n# slowest of ${times.length} files (wall time each; ${((Date.now() - started) / 1000).toFixed(1)} s in all; every file in dist/test-times.json)`);
  for (const [file, ms] of times.slice(0, SLOWEST_SHOWN)) console.log(`# ${file.padEnd(width)} ${(ms / 1000).toFixed(1).padStart(7)} s`);
}
if (staticFailed) console.error('# a static check failed (above)');
process.exit(staticFailed ? 1 : (r.status ?? 1));

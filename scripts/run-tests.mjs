// Runs every compiled *.test.js under dist/test with Node's built-in runner.
// Node 20's `node --test DIR` would also run every helper .js inside a folder named
// "test", so the file list is built here. Extra args narrow by substring, or name one
// file exactly with a leading "=" (its path under dist/test, e.g. =log.test.js):
//   npm test -- vm protocol
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const testRoot = join(root, 'dist', 'test');
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('-'));

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const matches = (rel, s) => (s.startsWith('=') ? rel === s.slice(1) : rel.includes(s));
const files = walk(testRoot).filter((f) => filters.length === 0 || filters.some((s) => matches(relative(testRoot, f), s)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...passthrough, ...files], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);

// The share of the consensus modules' lines the conformance vectors execute: runs the
// vector runner with svc-node's adapter under V8 coverage (NODE_V8_COVERAGE), then counts,
// per compiled file of packages/protocol/dist and dist/src/{vm,state}, the code lines (not blank, not only a
// comment or a brace) whose first character V8 saw run. Lines of compiled JavaScript, so
// type-only TypeScript lines are not counted. Needs `npm run build`.
//   node scripts/conformance-coverage.mjs
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Each area: its name and its compiled folder (the protocol package's subfolders included). */
const AREAS = [
  ['packages/protocol', join(root, 'packages', 'protocol', 'dist')],
  ['src/vm', join(root, 'dist', 'src', 'vm')],
  ['src/state', join(root, 'dist', 'src', 'state')],
];
const compiled = (dir, sub = '') =>
  readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((e) =>
    e.isDirectory() ? compiled(dir, join(sub, e.name)) : e.name.endsWith('.js') ? [join(sub, e.name)] : []);
const dir = mkdtempSync(join(tmpdir(), 'conformance-coverage-'));
try {
  const r = spawnSync(process.execPath, [join(root, 'conformance', 'run.mjs')], { env: { ...process.env, NODE_V8_COVERAGE: dir }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the runner failed:\n${r.stdout.split('\n').filter((l) => l.startsWith('not ok')).join('\n')}`);
  // url -> list of functions' ranges, merged over every process that loaded it
  const ranges = new Map();
  for (const f of readdirSync(dir)) {
    for (const s of JSON.parse(readFileSync(join(dir, f), 'utf8')).result) {
      if (!ranges.has(s.url)) ranges.set(s.url, []);
      ranges.get(s.url).push(...s.functions.flatMap((fn) => fn.ranges));
    }
  }
  const rows = [];
  for (const [area, folder] of AREAS) {
    for (const name of compiled(folder)) {
      const path = join(folder, name);
      const text = readFileSync(path, 'utf8');
      const rs = ranges.get(pathToFileURL(path).href) ?? [];
      /** The count of the innermost range holding `offset`; 0 when the file never loaded. */
      const countAt = (offset) => {
        let best = null;
        for (const x of rs) if (x.startOffset <= offset && offset < x.endOffset && (!best || x.endOffset - x.startOffset <= best.endOffset - best.startOffset)) best = x;
        return best ? best.count : 0;
      };
      let lines = 0;
      let run = 0;
      let offset = 0;
      let inComment = false;
      for (const line of text.split('\n')) {
        const t = line.trim();
        const start = offset + line.indexOf(t);
        offset += line.length + 1;
        if (inComment) { if (t.includes('*/')) inComment = false; continue; }
        if (t.startsWith('/*')) { if (!t.includes('*/')) inComment = true; continue; }
        if (t === '' || t.startsWith('//') || /^[{}()[\];,]+$/.test(t) || t.startsWith('import ') || t.startsWith('export {') || t.startsWith('export *') || t.startsWith('//# sourceMappingURL')) continue;
        lines++;
        if (countAt(start) > 0) run++;
      }
      rows.push({ area, file: `${area}/${area.startsWith('packages/') ? 'src/' : ''}${name.replace(/\.js$/, '.ts')}`, lines, run });
    }
  }
  for (const [area] of AREAS) {
    const of = rows.filter((r) => r.area === area);
    const sum = (k) => of.reduce((n, r) => n + r[k], 0);
    console.log(`${area}: ${sum('run')} of ${sum('lines')} lines (${((100 * sum('run')) / sum('lines')).toFixed(1)}%)`);
    for (const r of of) console.log(`  ${r.file.padEnd(44)} ${String(r.run).padStart(4)} / ${String(r.lines).padStart(4)}  ${((100 * r.run) / Math.max(1, r.lines)).toFixed(0).padStart(3)}%`);
  }
  const all = rows.reduce((a, r) => [a[0] + r.run, a[1] + r.lines], [0, 0]);
  console.log(`consensus modules (packages/protocol, src/vm, src/state): ${all[0]} of ${all[1]} lines (${((100 * all[0]) / all[1]).toFixed(1)}%)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

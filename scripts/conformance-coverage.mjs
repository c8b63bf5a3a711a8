// The share of the consensus modules' lines and branches the conformance vectors execute:
// runs the vector runner with svc-node's adapter under V8 coverage (NODE_V8_COVERAGE), then
// counts, per compiled file of packages/protocol/dist and dist/src/{vm,state,writer/ledger}:
// - lines: the code lines (not blank, not only a comment or a brace) whose first character
//   V8 saw run;
// - branches: the arms of every branch point, found with the TypeScript parser in the
//   compiled file (as istanbul counts them): if (then, and else explicit or not), ?: (both
//   arms), && || ?? (right operand evaluated, and short-circuited), each switch clause. An
//   arm is taken when V8's block count at its start is above 0; an implicit else or a
//   short circuit when the count of the whole statement or expression is above its arm's
//   (V8 leaves out a nested range whose count equals its parent's, so equal counts mean
//   the other arm never ran).
// Lines of compiled JavaScript, so type-only TypeScript lines are not counted. Needs
// `npm run build`.
//   node scripts/conformance-coverage.mjs
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Every branch arm of a compiled file: `taken(countAt)` says whether the vectors ran it. */
function branchArms(text) {
  const sf = ts.createSourceFile('f.js', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const arms = [];
  const at = (n) => n.getStart(sf);
  const visit = (n) => {
    if (ts.isIfStatement(n)) {
      arms.push((c) => c(at(n.thenStatement)) > 0);
      arms.push(n.elseStatement ? (c) => c(at(n.elseStatement)) > 0 : (c) => c(at(n)) > c(at(n.thenStatement)));
    } else if (ts.isConditionalExpression(n)) {
      arms.push((c) => c(at(n.whenTrue)) > 0, (c) => c(at(n.whenFalse)) > 0);
    } else if (ts.isBinaryExpression(n) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(n.operatorToken.kind)) {
      arms.push((c) => c(at(n.right)) > 0, (c) => c(at(n)) > c(at(n.right)));
    } else if (ts.isCaseClause(n) || ts.isDefaultClause(n)) {
      const first = n.statements[0];
      arms.push((c) => c(first ? at(first) : at(n)) > 0);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return arms;
}

const root = fileURLToPath(new URL('..', import.meta.url));
/** Each area: its name and its compiled folder (the protocol package's subfolders included). */
const AREAS = [
  ['packages/protocol', join(root, 'packages', 'protocol', 'dist')],
  ['src/vm', join(root, 'dist', 'src', 'vm')],
  ['src/state', join(root, 'dist', 'src', 'state')],
  ['src/writer/ledger', join(root, 'dist', 'src', 'writer', 'ledger')],
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
      const arms = branchArms(text);
      const taken = arms.filter((taken) => taken(countAt)).length;
      rows.push({ area, file: `${area}/${area.startsWith('packages/') ? 'src/' : ''}${name.replace(/\.js$/, '.ts')}`, lines, run, branches: arms.length, taken });
    }
  }
  const pct = (a, b) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
  for (const [area] of AREAS) {
    const of = rows.filter((r) => r.area === area);
    const sum = (k) => of.reduce((n, r) => n + r[k], 0);
    console.log(`${area}: ${sum('run')} of ${sum('lines')} lines (${pct(sum('run'), sum('lines'))}), ${sum('taken')} of ${sum('branches')} branches (${pct(sum('taken'), sum('branches'))})`);
    for (const r of of) console.log(`  ${r.file.padEnd(44)} lines ${String(r.run).padStart(4)} / ${String(r.lines).padStart(4)} ${pct(r.run, r.lines).padStart(6)}   branches ${String(r.taken).padStart(4)} / ${String(r.branches).padStart(4)} ${pct(r.taken, r.branches).padStart(6)}`);
  }
  const total = (k) => rows.reduce((n, r) => n + r[k], 0);
  console.log(`consensus modules (packages/protocol, src/vm, src/state, src/writer/ledger): ${total('run')} of ${total('lines')} lines (${pct(total('run'), total('lines'))}), ${total('taken')} of ${total('branches')} branches (${pct(total('taken'), total('branches'))})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

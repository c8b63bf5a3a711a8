/**
 * `npm run bench` runs every bench/*.bench.ts (compiled) in turn; `npm run bench -- NAME`
 * runs those whose file name contains NAME. Writes bench/results/latest.json and a table.
 */
import { readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { fmt, type Figure } from './harness.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => filters.length === 0 || filters.some((n) => f.includes(n)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${filters.join(' ')}`);
  process.exit(1);
}

const results: { bench: string; figures: Figure[]; seconds: number; error?: string }[] = [];
for (const f of files) {
  const name = f.replace(/\.bench\.js$/, '');
  process.stderr.write(`bench ${name} ...\n`);
  const t0 = performance.now();
  try {
    const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: () => Promise<Figure[]> };
    const figures = await mod.default();
    results.push({ bench: name, figures, seconds: (performance.now() - t0) / 1000 });
  } catch (e) {
    results.push({ bench: name, figures: [], seconds: (performance.now() - t0) / 1000, error: (e as Error).stack ?? String(e) });
    // The cause too: fetch's own message ("fetch failed") names none.
    const cause = (e as { cause?: unknown }).cause;
    process.stderr.write(`bench ${name} failed: ${(e as Error).stack ?? (e as Error).message}${cause ? `\ncaused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}` : ''}\n`);
  }
}

const rows = results.flatMap((r) =>
  r.figures.map((f) => [
    r.bench,
    f.name,
    `${fmt(f.value.median)} ${f.unit}`,
    `${fmt(f.value.min)}–${fmt(f.value.max)}`,
    `${f.ceiling.name}: ${fmt(f.ceiling.median)}`,
    f.ratio.toFixed(3),
    f.target ? `${f.target}${f.met === undefined ? '' : f.met ? ' ✓' : ' ✗'}` : '',
  ]),
);
const head = ['bench', 'figure', 'median', 'min–max', 'ceiling (same run)', 'ratio', 'target'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]): string => '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
console.log(line(head));
console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
for (const r of rows) console.log(line(r));

mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
const out = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
  results,
};
const path = join(repoRoot, 'bench', 'results', filters.length ? `partial-${filters.join('-')}.json` : 'latest.json');
writeFileSync(path, JSON.stringify(out, null, 2) + '\n');
process.stderr.write(`wrote ${path}\n`);
if (results.some((r) => r.error)) process.exit(1);

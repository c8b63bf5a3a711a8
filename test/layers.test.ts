/**
 * The layers of docs/ARCHITECTURE.md ("Layers") hold for the code: every relative import in
 * src/ stays in its own folder or reaches a layer above its own. The list is read from the
 * document, so the document and the code cannot drift apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from './helpers/paths.js';

const srcRoot = join(repoRoot, 'src');

/** Imports allowed to climb, each by type only, with the reason in ARCHITECTURE.md. */
const TYPE_ONLY_CLIMBS = new Set(['chain/header-follower.ts -> messages.ts']);

/** Each numbered item of the Layers section: its paths under src/ (a folder ends in "/"). */
function layersOfDoc(): string[][] {
  const doc = readFileSync(join(repoRoot, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.split('\n## Layers\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'docs/ARCHITECTURE.md has a "## Layers" section');
  const items = section.split(/\n(?=\d+\. )/).filter((t) => /^\d+\. /.test(t));
  // an item ends at the list's end (a blank line), before the paragraph after it
  return items.map((t) => [...t.split('\n\n')[0]!.matchAll(/`src\/([^`]+)`/g)].map((m) => m[1]!));
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The layer's entry a file under src/ belongs to: its top folder ("chain/") or itself ("messages.ts"). */
const homeOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.indexOf('/') + 1) : rel);

test('every import in src/ stays in its folder or points to a layer above (docs/ARCHITECTURE.md, Layers)', () => {
  const layers = layersOfDoc();
  assert.ok(layers.length >= 5, 'the Layers list has its numbered items');
  const level = new Map<string, number>();
  layers.forEach((paths, i) => paths.forEach((p) => level.set(p, i)));
  const climbs: string[] = [];
  const leaves: string[] = [];
  const unplaced = new Set<string>();
  for (const file of sources(srcRoot)) {
    const rel = relative(srcRoot, file);
    const home = homeOf(rel);
    if (!level.has(home)) unplaced.add(home);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(import|export)(\s+type)?\b[^;]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/gms)) {
      const spec = m[3] ?? m[4]!;
      const target = relative(srcRoot, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      const to = homeOf(target);
      if (target.startsWith('..')) {
        leaves.push(`${rel} -> ${spec}`);
        continue;
      }
      if (to === home) continue;
      if (!level.has(to)) unplaced.add(to);
      const edge = `${rel} -> ${target}`;
      if ((level.get(to) ?? -1) < (level.get(home) ?? -1)) continue;
      if (TYPE_ONLY_CLIMBS.has(edge) && m[2]) continue;
      climbs.push(edge);
    }
  }
  assert.deepEqual([...unplaced], [], 'every folder and file of src/ is in a layer');
  assert.deepEqual(climbs, [], 'no import reaches its own layer or one below it');
  assert.deepEqual(leaves, [], 'src/ reaches the workspace packages by name (@svc-node/...), never by a path out of src/');
});

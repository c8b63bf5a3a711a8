/**
 * The mutation run (conformance/README.md, "The mutation run") judges the vectors by the
 * changed rules they catch: here over one small consensus file, a changed payload size
 * limit must be killed by the vectors, and the report must say which case killed it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers/paths.js';

interface Mutant { file: string; operator: string; original: string; replacement: string; status: string; by?: string }

test('the vectors kill every mutant of the payload size limit', () => {
  const work = mkdtempSync(join(tmpdir(), 'conformance-mutation-'));
  try {
    const r = spawnSync(process.execPath, [join(repoRoot, 'conformance', 'mutation', 'run.mjs'), '--only', 'packages/protocol/src/limits', '--work', work], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const mutants = (JSON.parse(readFileSync(join(work, 'report.json'), 'utf8')) as { mutants: Mutant[] }).mutants;
    // 65_536 one up and one down: a limit one off is a changed rule.
    assert.deepEqual(mutants.map((m) => `${m.operator} ${m.original} -> ${m.replacement}`).sort(), ['literal 65_536 -> 65535', 'literal 65_536 -> 65537']);
    for (const m of mutants) {
      assert.equal(m.status, 'killed', `${m.original} -> ${m.replacement} survived`);
      assert.match(m.by ?? '', /^codec\.envelope-(decode|encode) /, 'killed by a size-limit case');
    }
    assert.match(r.stdout, /# mutation: 2 killed of 2 mutants \(100\.0%\)/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

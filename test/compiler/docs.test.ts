/** Every contract example in docs/LANGUAGE.md compiles and verifies. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSource } from '../../src/compiler/index.js';
import { repoRoot } from '../helpers/paths.js';

test('docs/LANGUAGE.md examples compile', () => {
  const md = readFileSync(join(repoRoot, 'docs', 'LANGUAGE.md'), 'utf8');
  const blocks = [...md.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => /^((\/\/.*|const .*|)\n)*contract /.test(b));
  assert.ok(blocks.length >= 10, `found ${blocks.length} examples`);
  assert.ok(blocks.some((b) => b.startsWith('const ')), 'the constants example is among them');
  for (const b of blocks) {
    const r = compileSource(b, 'doc.svc');
    assert.ok(r.ok, `${b}\n${r.ok ? '' : r.errors.map((e) => `${e.line}:${e.col}: ${e.message}`).join('\n')}`);
  }
});

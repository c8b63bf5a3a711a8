/** docs/openapi.yaml and the server's route table list the same endpoints. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RestServer } from '../../src/rest/http.js';
import { routes } from '../../src/rest/routes.js';
import { BearerAuth } from '../../src/rest/auth.js';
import { repoRoot } from '../helpers/paths.js';
import { redocly } from '../helpers/openapi-check.js';

const doc = readFileSync(join(repoRoot, 'docs', 'openapi.yaml'), 'utf8');

/** "METHOD /path" for every operation under `paths:` (two-space path keys, four-space methods). */
function documented(): string[] {
  const out: string[] = [];
  let inPaths = false;
  let path: string | null = null;
  for (const line of doc.split('\n')) {
    if (/^\S/.test(line)) inPaths = line.startsWith('paths:');
    if (!inPaths) continue;
    const p = /^ {2}(\/\S*):\s*$/.exec(line);
    if (p) path = p[1]!;
    const m = /^ {4}(get|post|put|delete|patch):\s*$/.exec(line);
    if (m && path) out.push(`${m[1]!.toUpperCase()} ${path}`);
  }
  return out.sort();
}

test('every route is documented and every documented operation is served', () => {
  const server = new RestServer(routes({ core: () => { throw new Error('unused'); }, auth: new BearerAuth(null) }));
  const served = server.routeList().sort();
  // The twelve of SERVICE-SPEC section 4 plus metrics, ready, simulate, the scalar field read, the two contract reads and the live feed.
  assert.equal(served.length, 19);
  assert.deepEqual(documented(), served);
});

test('every $ref points at a defined component', () => {
  const refs = [...doc.matchAll(/\$ref: '#\/components\/(\w+)\/(\w+)'/g)];
  assert.ok(refs.length > 20);
  for (const [, kind, name] of refs) {
    const section = doc.indexOf(`\n  ${kind}:\n`);
    assert.ok(section > 0, kind);
    assert.ok(new RegExp(`\\n {4}${name}:\\n`).test(doc.slice(section)), `${kind}/${name}`);
  }
});

test('Redocly\'s linter (recommended rules, redocly.yaml) finds no error and no warning', () => {
  const r = redocly(['lint', 'docs/openapi.yaml', '--format=stylish']);
  assert.equal(r.status, 0, r.output);
  assert.doesNotMatch(r.output, /\b(error|warning)\b\s+[a-z0-9.-]+\s/, r.output);
  assert.match(r.output, /Your API description is valid/);
});

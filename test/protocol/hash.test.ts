import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { taggedHash, toHex, parseHex } from '@svc-node/protocol/hash';
import { fixturesDir } from '../helpers/paths.js';

const vectors = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'tagged_hash.json'), 'utf8'));

test('tagged hash matches every vector', () => {
  for (const c of vectors.cases) {
    assert.equal(toHex(taggedHash(c.tag, parseHex(c.msg)!)), c.hash, c.tag);
  }
});

test('parseHex refuses uppercase, odd length and wrong size', () => {
  assert.equal(parseHex('AB'), null);
  assert.equal(parseHex('abc'), null);
  assert.equal(parseHex('ab', 2), null);
  assert.deepEqual(parseHex('00ff', 2), Uint8Array.of(0, 255));
});

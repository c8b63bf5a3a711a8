/**
 * The state roots' Merkle trie (packages/protocol/src/state/trie.ts, docs/STATE.md): its root is a function
 * of the entry set alone (checked against a direct implementation of the definition),
 * and proofs show a value or an absence and fail when tampered with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EMPTY_ROOT, MerkleTrie, triePath, trieLeafHash, trieNodeHash, verifyTrieProof, type TrieProof } from '@svc-node/protocol/state/trie';
import { taggedHash } from '@svc-node/protocol/hash';

const bytes = (n: number) => fc.uint8Array({ minLength: 1, maxLength: n });
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bitOf = (p: Uint8Array, d: number) => (p[d >> 3]! >> (7 - (d & 7))) & 1;

/** docs/STATE.md's definition, computed from scratch over the set. */
function referenceRoot(entries: [Uint8Array, Uint8Array][]): Uint8Array {
  const items = entries.map(([k, v]) => ({ path: triePath(k), value: v }));
  const sub = (xs: typeof items, depth: number): Uint8Array => {
    if (xs.length === 0) return EMPTY_ROOT;
    if (xs.length === 1) return taggedHash('SVC/leaf', xs[0]!.path, xs[0]!.value);
    const left = xs.filter((x) => bitOf(x.path, depth) === 0);
    const right = xs.filter((x) => bitOf(x.path, depth) === 1);
    return taggedHash('SVC/node', sub(left, depth + 1), sub(right, depth + 1));
  };
  return sub(items, 0);
}

test('the hashes are the tagged hashes of docs/STATE.md', () => {
  const k = Uint8Array.of(1, 2, 3);
  const v = Uint8Array.of(9);
  assert.equal(hex(triePath(k)), hex(taggedHash('SVC/path', k)));
  assert.equal(hex(trieLeafHash(triePath(k), v)), hex(taggedHash('SVC/leaf', triePath(k), v)));
  const a = new Uint8Array(32).fill(1);
  const b = new Uint8Array(32).fill(2);
  assert.equal(hex(trieNodeHash(a, b)), hex(taggedHash('SVC/node', a, b)));
  assert.equal(hex(new MerkleTrie().rootHash()), hex(EMPTY_ROOT));
  // One entry: the root is its leaf.
  assert.equal(hex(new MerkleTrie([[k, v]]).rootHash()), hex(taggedHash('SVC/leaf', triePath(k), v)));
});

test('any sequence of writes and deletes gives the root of the final set, by the definition', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(bytes(3), fc.option(bytes(6), { nil: null })), { maxLength: 80 }), fc.nat(), (ops, every) => {
      const t = new MerkleTrie();
      const model = new Map<string, Uint8Array>();
      ops.forEach(([k, v], i) => {
        t.set(k, v);
        if (i % ((every % 5) + 1) === 0) t.rootHash(); // roots taken between writes, as blocks do
        if (v === null) model.delete(hex(k));
        else model.set(hex(k), v);
        assert.deepEqual(t.get(k), v ?? undefined);
      });
      const finalSet = [...model].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Uint8Array, Uint8Array]);
      assert.equal(hex(t.rootHash()), hex(referenceRoot(finalSet)));
      assert.equal(t.size, model.size);
      // Built in another order, the same root.
      assert.equal(hex(new MerkleTrie([...finalSet].reverse()).rootHash()), hex(t.rootHash()));
    }),
    { numRuns: 300 },
  );
});

test('proofs: present keys prove their value, absent keys their absence', () => {
  fc.assert(
    fc.property(fc.uniqueArray(bytes(3), { maxLength: 60, selector: hex }), bytes(3), (keys, probe) => {
      const t = new MerkleTrie(keys.map((k, i) => [k, Uint8Array.of(i)] as [Uint8Array, Uint8Array]));
      const root = t.rootHash();
      for (const [i, k] of keys.entries()) assert.deepEqual(verifyTrieProof(root, k, t.prove(k)), Uint8Array.of(i));
      const present = keys.some((k) => hex(k) === hex(probe));
      assert.equal(verifyTrieProof(root, probe, t.prove(probe)) === null, !present);
    }),
    { numRuns: 300 },
  );
});

test('tampered proofs fail: value, sibling, depth, another key, absence of a present key', () => {
  const keys = Array.from({ length: 200 }, (_, i) => Uint8Array.of(i, i >> 3));
  const t = new MerkleTrie(keys.map((k, i) => [k, Uint8Array.of(i & 0xff)] as [Uint8Array, Uint8Array]));
  const root = t.rootHash();
  const clone = (p: TrieProof): TrieProof => ({ siblings: p.siblings.map((s) => new Uint8Array(s)), leaf: p.leaf && { path: new Uint8Array(p.leaf.path), value: new Uint8Array(p.leaf.value) } });
  for (const k of keys.slice(0, 50)) {
    const p = t.prove(k);
    assert.ok(p.siblings.length > 0 && p.siblings.length < 40, `depth ${p.siblings.length}`);
    const v = clone(p);
    v.leaf!.value = Uint8Array.of(255, 255);
    assert.throws(() => verifyTrieProof(root, k, v), /root mismatch/);
    const s = clone(p);
    s.siblings[s.siblings.length - 1]![0]! ^= 1;
    assert.throws(() => verifyTrieProof(root, k, s), /root mismatch/);
    const shallow = clone(p);
    shallow.siblings.pop();
    assert.throws(() => verifyTrieProof(root, k, shallow));
    // Claiming the key is absent: an empty subtree where its leaf is.
    const absent = clone(p);
    absent.leaf = null;
    assert.throws(() => verifyTrieProof(root, k, absent), /root mismatch/);
    // Another key's valid proof does not prove this one.
    const other = t.prove(keys[(keys.indexOf(k) + 1) % keys.length]!);
    assert.throws(() => verifyTrieProof(root, k, other));
  }
  assert.throws(() => verifyTrieProof(root, keys[0]!, { siblings: Array.from({ length: 257 }, () => new Uint8Array(32)), leaf: null }), /deeper/);
  assert.equal(verifyTrieProof(EMPTY_ROOT, keys[0]!, { siblings: [], leaf: null }), null);
});

test('a write touches only its path: 20,000 entries, one changed, proofs of the rest still verify under the new root', () => {
  const n = 20_000;
  const key = (i: number) => Uint8Array.of(i & 0xff, (i >> 8) & 0xff, i >> 16);
  const t = new MerkleTrie(Array.from({ length: n }, (_, i) => [key(i), Uint8Array.of(1)] as [Uint8Array, Uint8Array]));
  t.rootHash();
  t.set(key(7), Uint8Array.of(2));
  t.set(key(n), Uint8Array.of(3));
  t.set(key(9), null);
  const root = t.rootHash();
  for (const i of [0, 7, 9, 123, n - 1, n]) {
    const want = i === 7 ? Uint8Array.of(2) : i === n ? Uint8Array.of(3) : i === 9 ? null : Uint8Array.of(1);
    assert.deepEqual(verifyTrieProof(root, key(i), t.prove(key(i))), want);
  }
});

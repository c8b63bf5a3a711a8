import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EMPTY_ROOT, SortedMerkleTree, verifyMembership, leafHash, nodeHash } from '../../src/state/merkle.js';
import { StateTree, verifyFieldProof } from '@svc-node/protocol/state/state-tree';

const bytes = (n: number) => fc.uint8Array({ minLength: 1, maxLength: n });
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('known shape: three leaves hash as ((l0,l1),l2) with the odd leaf carried up', () => {
  const e: [Uint8Array, Uint8Array][] = [[Uint8Array.of(1), Uint8Array.of(10)], [Uint8Array.of(2), Uint8Array.of(20)], [Uint8Array.of(3), Uint8Array.of(30)]];
  const t = new SortedMerkleTree([e[2]!, e[0]!, e[1]!]);
  const l = e.map(([k, v]) => leafHash(k, v));
  assert.equal(hex(t.root()), hex(nodeHash(nodeHash(l[0]!, l[1]!), l[2]!)));
  assert.equal(hex(new SortedMerkleTree().root()), hex(EMPTY_ROOT));
});

test('incremental updates give the same root as a rebuild, in any order of insertion', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(bytes(6), fc.option(bytes(8), { nil: null })), { maxLength: 60 }), (ops) => {
      const t = new SortedMerkleTree();
      const model = new Map<string, Uint8Array>();
      for (const [k, v] of ops) {
        t.set(k, v);
        t.root(); // interleave root computation with updates
        if (v === null) model.delete(hex(k));
        else model.set(hex(k), v);
      }
      const rebuilt = new SortedMerkleTree([...model].map(([k, v]) => [Buffer.from(k, 'hex'), v] as [Uint8Array, Uint8Array]));
      assert.equal(hex(t.root()), hex(rebuilt.root()));
      assert.equal(t.size, model.size);
    }),
    { numRuns: 300 },
  );
});

test('proofs: present keys prove their value, absent keys prove absence, tampering fails', () => {
  fc.assert(
    fc.property(fc.uniqueArray(bytes(4), { maxLength: 40, selector: hex }), bytes(4), (keys, probe) => {
      const t = new SortedMerkleTree(keys.map((k, i) => [k, Uint8Array.of(i)] as [Uint8Array, Uint8Array]));
      const root = t.root();
      for (const [i, k] of keys.entries()) assert.deepEqual(verifyMembership(root, k, t.prove(k)), Uint8Array.of(i));
      const present = keys.some((k) => hex(k) === hex(probe));
      const got = verifyMembership(root, probe, t.prove(probe));
      assert.equal(got === null, !present);
      if (keys.length > 0) {
        const k0 = keys[0]!;
        const p = t.prove(k0);
        p.leaves[0]!.value = Uint8Array.of(255, 255);
        assert.throws(() => verifyMembership(root, k0, p));
      }
    }),
    { numRuns: 300 },
  );
});

test('an absence proof cannot be forged from non-adjacent leaves', () => {
  const t = new SortedMerkleTree([1, 3, 5, 7].map((n) => [Uint8Array.of(n), Uint8Array.of(n)] as [Uint8Array, Uint8Array]));
  const root = t.root();
  const p1 = t.prove(Uint8Array.of(1));
  const p7 = t.prove(Uint8Array.of(7));
  assert.throws(() => verifyMembership(root, Uint8Array.of(3), { size: 4, leaves: [p1.leaves[0]!, p7.leaves[0]!] }), /adjacent/);
  // Claiming "absent" for a present key with its neighbours fails too.
  const p3 = t.prove(Uint8Array.of(3)).leaves[0]!;
  const p5 = t.prove(Uint8Array.of(5)).leaves[0]!;
  assert.throws(() => verifyMembership(root, Uint8Array.of(5), { size: 4, leaves: [p3, p5] }), /bracketed/);
});

test('state tree: field proofs against the state root; roots depend only on content', () => {
  const a = new StateTree();
  const b = new StateTree();
  const idA = new Uint8Array(32).fill(1);
  const idB = new Uint8Array(32).fill(2);
  const code = new Uint8Array(32).fill(9);
  a.addContract(idA, code);
  a.addContract(idB, code);
  a.setStorage(idA, Uint8Array.of(1), Uint8Array.of(42));
  a.setStorage(idB, Uint8Array.of(2), Uint8Array.of(43));
  // b receives the same content in another order, with a detour.
  b.addContract(idB, code);
  b.setStorage(idB, Uint8Array.of(2), Uint8Array.of(43));
  b.addContract(idA, code);
  b.setStorage(idA, Uint8Array.of(7), Uint8Array.of(1));
  b.setStorage(idA, Uint8Array.of(1), Uint8Array.of(42));
  b.setStorage(idA, Uint8Array.of(7), null);
  const root = a.root();
  assert.equal(hex(root), hex(b.root()));
  assert.deepEqual(verifyFieldProof(root, idA, Uint8Array.of(1), a.prove(idA, Uint8Array.of(1))), Uint8Array.of(42));
  assert.equal(verifyFieldProof(root, idA, Uint8Array.of(9), a.prove(idA, Uint8Array.of(9))), null);
  const forged = a.prove(idA, Uint8Array.of(1));
  forged.storage.leaf!.value = Uint8Array.of(41);
  assert.throws(() => verifyFieldProof(root, idA, Uint8Array.of(1), forged));
  a.setStorage(idA, Uint8Array.of(1), Uint8Array.of(41));
  assert.notEqual(hex(a.root()), hex(root));
});

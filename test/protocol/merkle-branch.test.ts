/**
 * Bitcoin merkle branches (packages/protocol/src/merkle-branch.ts): real mainnet proofs fold to
 * their headers' roots, every computed branch folds to the root, and every branch that
 * claims another position (phantom duplicate, altered sibling, wrong index or depth) is
 * refused or leads elsewhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { foldBranch, MAX_BRANCH_DEPTH, merkleBranch, merkleBranches, merkleRoot, merkleRootOf } from '@svc-node/protocol/merkle-branch';
import { internalBytes, parseRawBlock } from '@svc-node/protocol/bitcoin';
import { parseHeader80 } from '@svc-node/protocol/headers';
import { DevnetChain } from '../../src/devnet/chain.js';
import * as bitcoin from 'bitcoinjs-lib';
import { fixtureText } from '../helpers/chain-servers.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const headerOf = (hash: string) => parseHeader80(Buffer.from(fixtureText(`bodies/block/${hash}.header.txt`).trim(), 'hex'));
/** An Esplora /merkle-proof answer: siblings in display hex, leaf level first. */
const esploraProof = (txid: string): { block_height: number; merkle: string[]; pos: number } => JSON.parse(fixtureText(`bodies/tx/${txid}.merkle-proof.json`));

test('mainnet 728,418: tx f2957c19 at 919 of 1,944 folds to the header root, and its merkleblock holds exactly that branch', () => {
  const txid = 'f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b';
  const header = headerOf('00000000000000000006aa48d85e9229454621c0addbd2bbda4e3d280eade466');
  const proof = esploraProof(txid);
  assert.equal(proof.pos, 919);
  const branch = proof.merkle.map(internalBytes);
  const f = foldBranch(internalBytes(txid), 919, branch);
  assert.ok(f.ok);
  assert.equal(hex(f.root), hex(internalBytes(header.merkleRoot)));

  // The recorded merkleblock (BIP37): header | u32le total | varint n | n hashes | flags.
  const mb = Buffer.from(fixtureText(`bodies/tx/${txid}.merkleblock-proof.txt`).trim(), 'hex');
  assert.equal(parseHeader80(mb.subarray(0, 80)).hash, header.hash);
  const total = mb.readUInt32LE(80);
  assert.equal(total, 1944);
  // 1,944 transactions: an 11-level tree, the branch's length.
  assert.equal(branch.length, Math.ceil(Math.log2(total)));
  const n = mb[84]!;
  const hashes = new Set(Array.from({ length: n }, (_, i) => hex(mb.subarray(85 + 32 * i, 117 + 32 * i))));
  assert.deepEqual(hashes, new Set([hex(internalBytes(txid)), ...branch.map(hex)]));
});

test("mainnet 720,514: the coinbase's recorded proof (index 0) folds to the header root", () => {
  const txid = 'dcfdf520e9cf87c76ef3f4cae37dbc5da5bfc5c59d309e10dde2922166b9a38f';
  const header = headerOf('00000000000000000006e0a49103f576090adc289de5d3e965a158929a2887f4');
  const proof = esploraProof(txid);
  const f = foldBranch(internalBytes(txid), proof.pos, proof.merkle.map(internalBytes));
  assert.ok(f.ok);
  assert.equal(hex(f.root), hex(internalBytes(header.merkleRoot)));
  // The same siblings claiming index 1 lead elsewhere.
  const g = foldBranch(internalBytes(txid), 1, proof.merkle.map(internalBytes));
  assert.ok(!g.ok || hex(g.root) !== hex(internalBytes(header.merkleRoot)));
});

test('raw blocks 170 and 542,213: branches computed from the blocks fold to their headers', () => {
  for (const hash of ['00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee', '000000000000000000143a2c56c0214236dadfd30df41d4a0345492ad6d861ec']) {
    const block = parseRawBlock(Buffer.from(fixtureText(`bodies/block/${hash}.raw.hex`).trim(), 'hex'), hash);
    const leaves = block.txids.map(internalBytes);
    const all = merkleBranches(leaves, leaves.map((_, i) => i));
    all.forEach((branch, i) => {
      const f = foldBranch(leaves[i]!, i, branch);
      assert.ok(f.ok);
      assert.equal(hex(f.root), hex(internalBytes(block.header.merkleRoot)), `block ${hash} tx ${i}`);
    });
  }
  // Block 170: Satoshi's payment to Hal Finney is index 1, its sibling the coinbase.
  const b170 = parseRawBlock(Buffer.from(fixtureText('bodies/block/00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee.raw.hex').trim(), 'hex'));
  assert.equal(b170.txids[1], 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16');
  assert.deepEqual(merkleBranch(b170.txids.map(internalBytes), 1).map(hex), [hex(internalBytes(b170.txids[0]!))]);
});

test('a devnet block of 301 transactions: every branch, computed in one pass, folds to the mined root', () => {
  const chain = new DevnetChain();
  chain.mine(101);
  const payee = bitcoin.payments.p2wpkh({ hash: new Uint8Array(20).fill(9), network: chain.network }).address!;
  for (let i = 0; i < 300; i++) chain.faucet(payee, 10_000);
  chain.mine(1);
  const leaves = chain.tip.txids.map(internalBytes);
  const root = internalBytes(chain.tip.header.merkleRoot);
  const branches = merkleBranches(leaves, leaves.map((_, i) => i));
  assert.equal(branches[0]!.length, 9); // 301 leaves: 9 levels
  branches.forEach((b, i) => {
    const f = foldBranch(leaves[i]!, i, b);
    assert.ok(f.ok && hex(f.root) === hex(root), `tx ${i}`);
  });
});

// ------------------------------------------------------------------ properties

const txidLists = fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 130 }).filter((l) => new Set(l.map(hex)).size === l.length);

/** The tree's levels (leaf level first), each odd level padded by its last node as Bitcoin pairs it. */
function levels(leaves: Uint8Array[]): Uint8Array[][] {
  const out = [leaves];
  while (out[out.length - 1]!.length > 1) {
    const l = out[out.length - 1]!;
    const next: Uint8Array[] = [];
    for (let i = 0; i < l.length; i += 2) next.push(merkleRootOf([l[i]!, l[i + 1] ?? l[i]!]));
    out.push(next);
  }
  return out;
}

/**
 * A real position at `level` holding the same subtree as `pos` in the tree Bitcoin's
 * duplication implies: positions past a level's end mirror the last real node's subtree.
 */
function mirror(lv: Uint8Array[][], level: number, pos: number): number {
  const len = lv[level]!.length;
  if (pos < len) return pos;
  const up = mirror(lv, level + 1, pos >> 1);
  const p = 2 * up + (pos & 1);
  return p < len ? p : p - 1;
}

test('every computed branch folds to the root; several indexes in one pass equal one at a time', () => {
  fc.assert(
    fc.property(txidLists, fc.array(fc.nat(), { maxLength: 5 }), (leaves, picks) => {
      const root = merkleRootOf(leaves);
      const idx = picks.map((p) => p % leaves.length);
      const many = merkleBranches(leaves, idx);
      idx.forEach((i, k) => {
        assert.deepEqual(many[k]!.map(hex), merkleBranch(leaves, i).map(hex));
        const f = foldBranch(leaves[i]!, i, many[k]!);
        assert.ok(f.ok);
        assert.equal(hex(f.root), hex(root));
      });
      assert.equal(hex(root), hex(merkleRoot(leaves).root));
    }),
    { numRuns: 200 },
  );
});

test('every phantom position (a duplicated last node at any level, CVE-2012-2459) is refused, though it folds to the root', () => {
  fc.assert(
    fc.property(txidLists, (leaves) => {
      const lv = levels(leaves);
      const depth = lv.length - 1;
      const root = lv[depth]![0]!;
      for (let p = leaves.length; p < 2 ** depth; p++) {
        const leaf = lv[0]![mirror(lv, 0, p)]!;
        const branch = Array.from({ length: depth }, (_, j) => lv[j]![mirror(lv, j, (p >> j) ^ 1)]!);
        // Unchecked, the phantom proof reaches the true root: the check is what stops it.
        let node = leaf;
        branch.forEach((s, j) => (node = (p >> j) & 1 ? merkleRootOf([s, node]) : merkleRootOf([node, s])));
        assert.equal(hex(node), hex(root));
        const f = foldBranch(leaf, p, branch);
        assert.ok(!f.ok && /duplicated last node/.test(f.reason), `position ${p} of ${leaves.length}`);
      }
    }),
    { numRuns: 150 },
  );
});

test('an altered sibling, another index or another depth never leads to the root', () => {
  fc.assert(
    fc.property(txidLists, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat(), (leaves, pick, level, xor, other) => {
      const i = pick % leaves.length;
      const root = hex(merkleRootOf(leaves));
      const branch = merkleBranch(leaves, i);
      const reaches = (leaf: Uint8Array, idx: number, b: Uint8Array[]): boolean => {
        const f = foldBranch(leaf, idx, b);
        return f.ok && hex(f.root) === root;
      };
      assert.ok(reaches(leaves[i]!, i, branch));
      if (branch.length > 0) {
        const k = level % branch.length;
        const altered = branch.map((s, j) => (j === k ? Uint8Array.from(s, (x, n) => (n === 0 ? x ^ xor : x)) : s));
        assert.ok(!reaches(leaves[i]!, i, altered), 'altered sibling');
      }
      const j = other % 2 ** branch.length;
      if (j !== i) assert.ok(!reaches(leaves[i]!, j, branch), `index ${j} instead of ${i}`);
      assert.ok(!reaches(leaves[i]!, i, [...branch, leaves[0]!]), 'one level deeper');
      if (branch.length > 0) assert.ok(!reaches(leaves[i]!, i >> 1, branch.slice(1)), 'one level shallower');
      assert.ok(!reaches(leaves[i]!, i + 2 ** branch.length, branch), 'index bits above the branch');
    }),
    { numRuns: 300 },
  );
});

test('malformed branches are refused with a reason, never thrown', () => {
  const leaf = new Uint8Array(32).fill(1);
  const h = new Uint8Array(32).fill(2);
  assert.match((foldBranch(leaf, 0, Array(MAX_BRANCH_DEPTH + 1).fill(h)) as { reason: string }).reason, /more than any Bitcoin block/);
  assert.ok(foldBranch(leaf, 0, Array(MAX_BRANCH_DEPTH).fill(h)).ok);
  assert.match((foldBranch(leaf, 2, [h]) as { reason: string }).reason, /does not fit/);
  assert.match((foldBranch(leaf, -1, [h]) as { reason: string }).reason, /does not fit/);
  assert.match((foldBranch(leaf, 0.5, [h]) as { reason: string }).reason, /does not fit/);
  assert.match((foldBranch(leaf, 0, [new Uint8Array(31)]) as { reason: string }).reason, /level 0 is not 32 bytes/);
  assert.match((foldBranch(new Uint8Array(33), 0, []) as { reason: string }).reason, /leaf/);
  // A block of one transaction: the root is the txid, the branch empty.
  const one = foldBranch(leaf, 0, []);
  assert.ok(one.ok && hex(one.root) === hex(leaf));
  assert.throws(() => merkleBranches([leaf], [1]), RangeError);
});

test('the inner-node weakness exists at the branch level: an inner node with a shorter branch folds to the root', () => {
  // Why checkEvidence refuses 64-byte transactions (packages/protocol/src/evidence.ts): the fold
  // alone cannot tell a leaf from an inner node whose 64 bytes were presented as one.
  const leaves = Array.from({ length: 8 }, (_, i) => new Uint8Array(32).fill(i + 1));
  const lv = levels(leaves);
  const inner = lv[1]![2]!; // sha256d(leaves[4] || leaves[5])
  const f = foldBranch(inner, 2, merkleBranch(leaves, 4).slice(1));
  assert.ok(f.ok && hex(f.root) === hex(lv[3]![0]!));
});

test("folding a block's branches over and over (memoised inner nodes, past the memo's size) gives its root each time; a root handed out is the caller's", () => {
  const leaves = Array.from({ length: 3000 }, (_, i) => Uint8Array.from(Buffer.alloc(32, 0).fill(i & 0xff, 0, 16).fill(i >> 8, 16)));
  const root = hex(merkleRootOf(leaves));
  const idx = leaves.map((_, i) => i);
  const branches = merkleBranches(leaves, idx);
  for (const order of [idx, [...idx].reverse()]) {
    for (const i of order) {
      const f = foldBranch(leaves[i]!, i, branches[i]!);
      assert.ok(f.ok);
      assert.equal(hex(f.root), root, `index ${i}`);
      // Callers reverse roots to display order in place: no later fold may see it.
      f.root.reverse();
    }
  }
  // An altered sibling high in the tree, after its honest twin was folded: still refused.
  const altered = branches[7]!.map((s, j) => (j === 10 ? Uint8Array.from(s, (x, n) => (n === 31 ? x ^ 1 : x)) : s));
  const f = foldBranch(leaves[7]!, 7, altered);
  assert.ok(f.ok && hex(f.root) !== root);
});

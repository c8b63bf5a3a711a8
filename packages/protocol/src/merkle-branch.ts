/**
 * Bitcoin's transaction merkle tree and the branches that place one transaction in it
 * (docs/STATE.md, "Bitcoin evidence"). Pure: hashes in internal byte order (as inside
 * raw blocks and headers), no chain access.
 *
 * The tree: leaves are txids in block order; each level pairs nodes left to right,
 * parent = sha256d(left || right), and a level with an odd count pairs its last node
 * with itself. A branch lists the sibling of the leaf's ancestor at each level, leaf
 * level first; bit i of the index says whether that ancestor is a right child (1).
 */
import { hash as oneShot } from 'node:crypto';

/**
 * The deepest branch accepted. A transaction's non-witness bytes weigh 4 units each and a
 * block weighs at most 4,000,000, so a block holds at most 1,000,000 non-witness bytes,
 * and the smallest transaction has 60 of them: at most 16,665 transactions, 15 levels.
 * Even counting 4 MB of raw bytes with no weight rule, 4,000,000 / 60 < 2^17. So no
 * Bitcoin block has a deeper tree; 17 keeps that margin and bounds a fold's work to 17
 * double hashes.
 */
export const MAX_BRANCH_DEPTH = 17;

const HASH_BYTES = 32;

/** sha256d of `pair` (left || right, 64 bytes): one inner node. */
function hashPair(pair: Buffer): Uint8Array {
  return new Uint8Array(oneShot('sha256', oneShot('sha256', pair, 'buffer'), 'buffer'));
}

/** sha256d(left || right): one inner node. */
function parent(left: Uint8Array, right: Uint8Array, buf: Buffer): Uint8Array {
  buf.set(left, 0);
  buf.set(right, HASH_BYTES);
  return hashPair(buf);
}

/**
 * Inner nodes foldBranch computed, by their children's 64 bytes (latin1, one char a
 * byte). The branches of one block's transactions share every node above their leaves:
 * a sync batch holds hundreds of one block's payloads, and folded one by one they hashed
 * the same upper nodes again (2 x depth hashes each, ~40 us a fold; a look-up here is
 * ~0.1 us). A memo of a pure function: what it answers is what hashing would. Cleared
 * when full; per thread (module state).
 */
const parentMemo = new Map<string, Uint8Array>();
/** Entries kept at most: ~2,000 inner nodes per full block, so the upper trees of ~8 blocks; ~4 MB. */
const PARENT_MEMO_MAX = 1 << 14;

/** `parent`, answered from the memo when these children were folded before. Its answer is shared: read it, never write it. */
function memoParent(left: Uint8Array, right: Uint8Array, buf: Buffer): Uint8Array {
  buf.set(left, 0);
  buf.set(right, HASH_BYTES);
  const key = buf.toString('latin1');
  let node = parentMemo.get(key);
  if (node === undefined) {
    node = hashPair(buf);
    if (parentMemo.size >= PARENT_MEMO_MAX) parentMemo.clear();
    parentMemo.set(key, node);
  }
  return node;
}

/** One level up; `mutated` is set when two paired nodes are equal (CVE-2012-2459). */
function levelUp(level: readonly Uint8Array[], buf: Buffer, flag: { mutated: boolean }): Uint8Array[] {
  const next: Uint8Array[] = new Array(Math.ceil(level.length / 2));
  for (let i = 0; i < level.length; i += 2) {
    const a = level[i]!;
    const b = i + 1 < level.length ? level[i + 1]! : a;
    if (i + 1 < level.length && Buffer.compare(a, b) === 0) flag.mutated = true;
    next[i >> 1] = parent(a, b, buf);
  }
  return next;
}

/**
 * Merkle root over internal-order hashes, Bitcoin style (odd levels duplicate the last
 * item). `mutated` reports the CVE-2012-2459 pattern (two equal siblings), which lets a
 * different list fold to the same root; callers reject it.
 */
export function merkleRoot(hashes: readonly Uint8Array[]): { root: Uint8Array; mutated: boolean } {
  if (hashes.length === 0) throw new RangeError('merkle root of nothing');
  const flag = { mutated: false };
  const buf = Buffer.allocUnsafe(2 * HASH_BYTES);
  let level: readonly Uint8Array[] = hashes;
  while (level.length > 1) level = levelUp(level, buf, flag);
  return { root: level[0]!, mutated: flag.mutated };
}

/** The merkle root (internal order) of a block's txids (internal order). */
export function merkleRootOf(txidsInternal: readonly Uint8Array[]): Uint8Array {
  return merkleRoot(txidsInternal).root;
}

/**
 * The branches of the transactions at `indexes` in a block whose txids (internal order,
 * block order) are `txidsInternal`: one tree computation for all of them (n - 1 double
 * hashes for n transactions, whatever the number of indexes). Each branch is leaf level
 * first; `foldBranch(txids[i], i, branch)` gives the root. Throws RangeError for an index
 * outside the list.
 */
export function merkleBranches(txidsInternal: readonly Uint8Array[], indexes: readonly number[]): Uint8Array[][] {
  const n = txidsInternal.length;
  for (const i of indexes) if (!Number.isInteger(i) || i < 0 || i >= n) throw new RangeError(`no transaction at index ${i} of ${n}`);
  const branches: Uint8Array[][] = indexes.map(() => []);
  const at = indexes.slice();
  const buf = Buffer.allocUnsafe(2 * HASH_BYTES);
  const flag = { mutated: false };
  let level: readonly Uint8Array[] = txidsInternal;
  while (level.length > 1) {
    for (let k = 0; k < at.length; k++) {
      const p = at[k]!;
      const sibling = p ^ 1;
      // The last node of an odd level is paired with itself.
      branches[k]!.push(sibling < level.length ? level[sibling]! : level[p]!);
      at[k] = p >> 1;
    }
    level = levelUp(level, buf, flag);
  }
  return branches;
}

/** The branch of one transaction (merkleBranches for a single index). */
export function merkleBranch(txidsInternal: readonly Uint8Array[], index: number): Uint8Array[] {
  return merkleBranches(txidsInternal, [index])[0]!;
}

export type FoldResult = { ok: true; root: Uint8Array } | { ok: false; reason: string };

/**
 * The root a branch leads to from `leafInternal` (a txid, internal order) at `index`, or
 * why the branch proves nothing:
 * - deeper than MAX_BRANCH_DEPTH, or any hash not 32 bytes;
 * - `index` not below 2^depth (its bits above the branch would be ignored, so one branch
 *   would "prove" many indexes);
 * - a phantom position: at some level the node is a right child equal to its left
 *   sibling. That is the duplicated last node of an odd level (CVE-2012-2459): it folds
 *   to the true root but sits at a position holding no transaction. In a valid block two
 *   real siblings are never equal (it would be the mutation Bitcoin Core rejects), and
 *   every ancestor of a real leaf is real, so only proofs of phantom positions hit this.
 *
 * The depth is what fixes the index: a branch of another length would place the leaf at
 * another level of the tree. With no 64-byte transactions among the proven ones (the
 * rule of checkEvidence, packages/protocol/src/evidence.ts) no inner node can be presented as a
 * leaf; with none in the block either (or the block's depth proven by its coinbase,
 * coinbaseDepth), a branch that folds to the root has the tree's depth.
 */
export function foldBranch(leafInternal: Uint8Array, index: number, branch: readonly Uint8Array[]): FoldResult {
  if (branch.length > MAX_BRANCH_DEPTH) return { ok: false, reason: `branch has ${branch.length} levels, more than any Bitcoin block (${MAX_BRANCH_DEPTH})` };
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** branch.length) {
    return { ok: false, reason: `index ${index} does not fit a branch of ${branch.length} levels (at most ${2 ** branch.length - 1})` };
  }
  if (!(leafInternal instanceof Uint8Array) || leafInternal.length !== HASH_BYTES) return { ok: false, reason: 'leaf is not 32 bytes' };
  const buf = Buffer.allocUnsafe(2 * HASH_BYTES);
  let node = leafInternal;
  for (let level = 0; level < branch.length; level++) {
    const sibling = branch[level];
    if (!(sibling instanceof Uint8Array) || sibling.length !== HASH_BYTES) return { ok: false, reason: `branch level ${level} is not 32 bytes` };
    if ((index >> level) & 1) {
      if (Buffer.compare(sibling, node) === 0) {
        return { ok: false, reason: `position ${index} is a duplicated last node at level ${level}, not a transaction (CVE-2012-2459)` };
      }
      node = memoParent(sibling, node, buf);
    } else {
      node = memoParent(node, sibling, buf);
    }
  }
  // The root is the caller's to keep (or reverse); the memo's nodes are shared.
  return { ok: true, root: branch.length === 0 ? node : Uint8Array.from(node) };
}

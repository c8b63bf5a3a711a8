/**
 * Sorted Merkle trees for contract summaries (docs/STATE.md, "Contract summaries"); state
 * roots use the Merkle trie of @svc-node/protocol/state/trie.
 *
 * A tree commits to a set of (key, value) entries sorted by key bytes. Leaves are
 * TH("SVC/leaf", u32le(len key) || key || value); inner nodes TH("SVC/node", left || right);
 * a lone node at the end of a level is carried up unchanged (never duplicated, so two
 * different sets cannot share a root). The empty tree's root is 32 zero bytes.
 *
 * The tree is kept level by level so that changing a value costs one hash per level
 * (log n); inserting or deleting a key rebuilds the levels of that one tree.
 */
import { taggedHash } from '@svc-node/protocol/hash';

export const EMPTY_ROOT = new Uint8Array(32);
const LEAF_TAG = 'SVC/leaf';
const NODE_TAG = 'SVC/node';

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

export function leafHash(key: Uint8Array, value: Uint8Array): Uint8Array {
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, key.length, true);
  return taggedHash(LEAF_TAG, len, key, value);
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return taggedHash(NODE_TAG, left, right);
}

/** One step of a Merkle path: the sibling and whether it sits on the left. */
export interface PathStep {
  sibling: Uint8Array;
  left: boolean;
}

export class SortedMerkleTree {
  private keys: Uint8Array[] = [];
  private values: Uint8Array[] = [];
  /** levels[0] = leaf hashes; last level = [root]. Null when the key set changed. */
  private levels: Uint8Array[][] | null = [];
  private dirtyLeaves = new Set<number>();

  constructor(entries: Iterable<[Uint8Array, Uint8Array]> = []) {
    const all = [...entries].sort((a, b) => compareBytes(a[0], b[0]));
    this.keys = all.map((e) => e[0]);
    this.values = all.map((e) => e[1]);
    this.levels = null;
  }

  get size(): number {
    return this.keys.length;
  }

  private find(key: Uint8Array): { found: boolean; index: number } {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareBytes(this.keys[mid]!, key);
      if (c === 0) return { found: true, index: mid };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { found: false, index: lo };
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const f = this.find(key);
    return f.found ? this.values[f.index] : undefined;
  }

  /** Sets (value) or deletes (null) one entry. */
  set(key: Uint8Array, value: Uint8Array | null): void {
    const f = this.find(key);
    if (value === null) {
      if (!f.found) return;
      this.keys.splice(f.index, 1);
      this.values.splice(f.index, 1);
      this.levels = null;
    } else if (f.found) {
      this.values[f.index] = value;
      if (this.levels) this.dirtyLeaves.add(f.index);
    } else {
      this.keys.splice(f.index, 0, key);
      this.values.splice(f.index, 0, value);
      this.levels = null;
    }
  }

  *entries(): IterableIterator<[Uint8Array, Uint8Array]> {
    for (let i = 0; i < this.keys.length; i++) yield [this.keys[i]!, this.values[i]!];
  }

  private rebuild(): Uint8Array[][] {
    const leaves = this.keys.map((k, i) => leafHash(k, this.values[i]!));
    const levels: Uint8Array[][] = [leaves];
    let cur = leaves;
    while (cur.length > 1) {
      const next: Uint8Array[] = [];
      for (let i = 0; i < cur.length; i += 2) next.push(i + 1 < cur.length ? nodeHash(cur[i]!, cur[i + 1]!) : cur[i]!);
      levels.push(next);
      cur = next;
    }
    this.dirtyLeaves.clear();
    return levels;
  }

  private ensureLevels(): Uint8Array[][] {
    if (!this.levels) {
      this.levels = this.rebuild();
      return this.levels;
    }
    if (this.dirtyLeaves.size > 0) {
      const levels = this.levels;
      let dirty = new Set<number>();
      for (const i of this.dirtyLeaves) {
        levels[0]![i] = leafHash(this.keys[i]!, this.values[i]!);
        dirty.add(i >>> 1);
      }
      for (let l = 1; l < levels.length; l++) {
        const below = levels[l - 1]!;
        const next = new Set<number>();
        for (const j of dirty) {
          const a = below[2 * j]!;
          levels[l]![j] = 2 * j + 1 < below.length ? nodeHash(a, below[2 * j + 1]!) : a;
          next.add(j >>> 1);
        }
        dirty = next;
      }
      this.dirtyLeaves.clear();
    }
    return this.levels;
  }

  root(): Uint8Array {
    if (this.keys.length === 0) return EMPTY_ROOT;
    const levels = this.ensureLevels();
    return levels[levels.length - 1]![0]!;
  }

  /** Path from leaf `index` to the root. */
  path(index: number): PathStep[] {
    const levels = this.ensureLevels();
    const out: PathStep[] = [];
    let i = index;
    for (let l = 0; l < levels.length - 1; l++) {
      const level = levels[l]!;
      const sib = i ^ 1;
      if (sib < level.length) out.push({ sibling: level[sib]!, left: sib < i });
      i >>>= 1;
    }
    return out;
  }

  /**
   * A proof that `key` has its value, or is absent: the neighbouring leaves (at most two)
   * that bracket where it would be, each with its index and path.
   */
  prove(key: Uint8Array): MembershipProof {
    const f = this.find(key);
    const leaf = (i: number): ProvenLeaf => ({ index: i, key: this.keys[i]!, value: this.values[i]!, path: this.path(i) });
    if (f.found) return { size: this.keys.length, leaves: [leaf(f.index)] };
    const leaves: ProvenLeaf[] = [];
    if (f.index > 0) leaves.push(leaf(f.index - 1));
    if (f.index < this.keys.length) leaves.push(leaf(f.index));
    return { size: this.keys.length, leaves };
  }
}

export interface ProvenLeaf {
  index: number;
  key: Uint8Array;
  value: Uint8Array;
  path: PathStep[];
}

export interface MembershipProof {
  /** Number of leaves in the tree. */
  size: number;
  /** One leaf (present) or the neighbours bracketing the key (absent). */
  leaves: ProvenLeaf[];
}

/** Expected shape of the path for leaf `index` in a tree of `size` leaves. */
function expectedSides(index: number, size: number): boolean[] {
  const sides: boolean[] = [];
  let i = index;
  let n = size;
  while (n > 1) {
    const sib = i ^ 1;
    if (sib < n) sides.push(sib < i);
    i >>>= 1;
    n = (n + 1) >>> 1;
  }
  return sides;
}

export function rootFromPath(leaf: Uint8Array, path: PathStep[]): Uint8Array {
  let h = leaf;
  for (const s of path) h = s.left ? nodeHash(s.sibling, h) : nodeHash(h, s.sibling);
  return h;
}

/**
 * Checks a proof against `root`. Returns the proven value (present), null (absent), or
 * throws when the proof is not valid for that key and root.
 */
export function verifyMembership(root: Uint8Array, key: Uint8Array, proof: MembershipProof): Uint8Array | null {
  const eq = (a: Uint8Array, b: Uint8Array): boolean => compareBytes(a, b) === 0;
  if (proof.size === 0) {
    if (proof.leaves.length !== 0 || !eq(root, EMPTY_ROOT)) throw new Error('bad proof: empty tree');
    return null;
  }
  for (const l of proof.leaves) {
    if (l.index < 0 || l.index >= proof.size) throw new Error('bad proof: leaf index out of range');
    const sides = expectedSides(l.index, proof.size);
    if (sides.length !== l.path.length || sides.some((s, i) => s !== l.path[i]!.left)) throw new Error('bad proof: path shape');
    if (!eq(rootFromPath(leafHash(l.key, l.value), l.path), root)) throw new Error('bad proof: root mismatch');
  }
  const [a, b] = proof.leaves;
  if (proof.leaves.length === 1 && eq(a!.key, key)) return a!.value;
  // Absence: neighbours adjacent in the tree, bracketing the key, or an edge leaf.
  if (proof.leaves.length === 2) {
    if (b!.index !== a!.index + 1) throw new Error('bad proof: neighbours not adjacent');
    if (!(compareBytes(a!.key, key) < 0 && compareBytes(key, b!.key) < 0)) throw new Error('bad proof: key not bracketed');
    return null;
  }
  if (proof.leaves.length === 1) {
    if (a!.index === 0 && compareBytes(key, a!.key) < 0) return null;
    if (a!.index === proof.size - 1 && compareBytes(a!.key, key) < 0) return null;
  }
  throw new Error('bad proof: does not show the key present or absent');
}

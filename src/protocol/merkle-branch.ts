// TEMPORARY (lead's worktree): replaced by the evidence helper's module at merge.
import { createHash } from 'node:crypto';
const sha256d = (b: Uint8Array): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();
export const MAX_BRANCH_DEPTH = 24;
export function foldBranch(leaf: Uint8Array, index: number, branch: readonly Uint8Array[]): { ok: true; root: Buffer } | { ok: false; reason: string } {
  if (branch.length > MAX_BRANCH_DEPTH) return { ok: false, reason: 'branch too deep' };
  if (index >= 2 ** branch.length) return { ok: false, reason: 'index beyond the branch' };
  let h: Buffer = Buffer.from(leaf);
  let i = index;
  for (const s of branch) {
    if (i & 1) {
      if (Buffer.compare(Buffer.from(s), h) === 0) return { ok: false, reason: 'phantom' };
      h = sha256d(Buffer.concat([s, h]));
    } else h = sha256d(Buffer.concat([h, s]));
    i >>>= 1;
  }
  return { ok: true, root: h };
}
export function merkleBranches(txids: readonly Uint8Array[], indexes: readonly number[]): Uint8Array[][] {
  const out: Uint8Array[][] = indexes.map(() => []);
  let level: Buffer[] = txids.map((t) => Buffer.from(t));
  let pos = [...indexes];
  while (level.length > 1) {
    if (level.length % 2 === 1) level.push(level[level.length - 1]!);
    pos.forEach((p, k) => out[k]!.push(level[p ^ 1]!));
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256d(Buffer.concat([level[i]!, level[i + 1]!])));
    level = next;
    pos = pos.map((p) => p >>> 1);
  }
  return out;
}

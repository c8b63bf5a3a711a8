/**
 * The two merkle proofs Esplora serves for a confirmed transaction, built the way electrs
 * builds them (test/fixtures/esplora/API-NOTES.md):
 * - `GET /tx/:txid/merkle-proof`: electrum's branch (electrs `create_merkle_branch_and_root`):
 *   the sibling at each level, leaf level first, display hex; an odd level pairs its last
 *   node with itself. A block of one transaction has an empty branch.
 * - `GET /tx/:txid/merkleblock-proof`: bitcoind's `merkleblock` for that one transaction
 *   (rust-bitcoin `MerkleBlock::from_header_txids_with_predicate`, Bitcoin Core's
 *   CPartialMerkleTree): header, transaction count (u32 LE), the hashes of the partial
 *   tree in depth-first order (varint count, internal byte order) and its flag bits
 *   (varint byte count, least significant bit first).
 */
import { sha256d } from '@svc-node/protocol/bitcoin';

function pairHash(a: Uint8Array, b: Uint8Array): Uint8Array {
  const buf = new Uint8Array(64);
  buf.set(a, 0);
  buf.set(b, 32);
  return sha256d(buf);
}

/** The electrum branch of leaf `index` over internal-order txids: siblings, leaf level first. */
export function electrumBranch(txids: readonly Uint8Array[], index: number): Uint8Array[] {
  if (index < 0 || index >= txids.length) throw new RangeError('index out of range');
  let level = txids.slice();
  let i = index;
  const branch: Uint8Array[] = [];
  while (level.length > 1) {
    if (level.length % 2 !== 0) level.push(level[level.length - 1]!);
    branch.push(level[i % 2 === 0 ? i + 1 : i - 1]!);
    i >>= 1;
    const next: Uint8Array[] = [];
    for (let k = 0; k < level.length; k += 2) next.push(pairHash(level[k]!, level[k + 1]!));
    level = next;
  }
  return branch;
}

function writeVarint(out: number[], n: number): void {
  if (n < 0xfd) out.push(n);
  else if (n <= 0xffff) out.push(0xfd, n & 0xff, n >>> 8);
  else out.push(0xfe, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
}

/** bitcoind's `merkleblock` proving the transaction at `index` of a block (header: its 80 bytes). */
export function merkleBlockProof(header: Uint8Array, txids: readonly Uint8Array[], index: number): Buffer {
  const n = txids.length;
  if (index < 0 || index >= n) throw new RangeError('index out of range');
  const width = (h: number): number => (n + (1 << h) - 1) >> h;
  let height = 0;
  while (width(height) > 1) height++;
  // Node hashes by level, computed once (level 0: the txids).
  const levels: Uint8Array[][] = [txids.slice()];
  for (let h = 1; h <= height; h++) {
    const below = levels[h - 1]!;
    const row: Uint8Array[] = [];
    for (let p = 0; p < width(h); p++) row.push(pairHash(below[2 * p]!, 2 * p + 1 < below.length ? below[2 * p + 1]! : below[2 * p]!));
    levels.push(row);
  }
  const bits: boolean[] = [];
  const hashes: Uint8Array[] = [];
  const build = (h: number, pos: number): void => {
    // A node is a parent of the match when the matched leaf lies under it.
    const parentOfMatch = index >> h === pos;
    bits.push(parentOfMatch);
    if (h === 0 || !parentOfMatch) {
      hashes.push(levels[h]![pos]!);
      return;
    }
    build(h - 1, pos * 2);
    if (pos * 2 + 1 < width(h - 1)) build(h - 1, pos * 2 + 1);
  };
  build(height, 0);
  const out: number[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32LE(n);
  const flagBytes = new Array<number>((bits.length + 7) >> 3).fill(0);
  bits.forEach((b, i) => {
    if (b) flagBytes[i >> 3]! |= 1 << (i & 7);
  });
  writeVarint(out, hashes.length);
  const tail: number[] = [];
  writeVarint(tail, flagBytes.length);
  return Buffer.concat([Buffer.from(header), count, Buffer.from(out), ...hashes.map((h) => Buffer.from(h)), Buffer.from(tail), Buffer.from(flagBytes)]);
}

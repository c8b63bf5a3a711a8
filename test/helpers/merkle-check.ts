/**
 * Test-side readers of the two merkle proof formats Esplora serves, written from their
 * specifications (electrum's branch; Bitcoin Core's CPartialMerkleTree), to check the
 * devnet's answers and the recorded ones alike.
 */
import { createHash } from 'node:crypto';

const sha256d = (b: Buffer): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();
const rev = (hex: string): Buffer => Buffer.from(hex, 'hex').reverse();

/** Folds an electrum merkle-proof (display hex, leaf level first) from `txid` at `pos`: the root, display hex. */
export function foldElectrum(txid: string, merkle: string[], pos: number): string {
  let h = rev(txid);
  merkle.forEach((sib, level) => {
    const s = rev(sib);
    h = sha256d((pos >> level) & 1 ? Buffer.concat([s, h]) : Buffer.concat([h, s]));
  });
  return Buffer.from(h).reverse().toString('hex');
}

function varint(b: Buffer, at: { i: number }): number {
  const x = b[at.i++]!;
  if (x < 0xfd) return x;
  if (x === 0xfd) return b.readUInt16LE((at.i += 2) - 2);
  if (x === 0xfe) return b.readUInt32LE((at.i += 4) - 4);
  throw new Error('varint too large');
}

/** Reads a bitcoind merkleblock (hex): its header, transaction count, the matched txids (display hex, with positions) and the root the partial tree folds to. */
export function readMerkleBlock(hex: string): { header: Buffer; total: number; matched: { txid: string; pos: number }[]; root: string; usedAll: boolean } {
  const b = Buffer.from(hex, 'hex');
  const header = b.subarray(0, 80);
  const total = b.readUInt32LE(80);
  const at = { i: 84 };
  const nHashes = varint(b, at);
  const hashes: Buffer[] = [];
  for (let k = 0; k < nHashes; k++, at.i += 32) hashes.push(b.subarray(at.i, at.i + 32));
  const nBytes = varint(b, at);
  const flags = b.subarray(at.i, at.i + nBytes);
  const bits: boolean[] = [];
  for (let k = 0; k < nBytes * 8; k++) bits.push(((flags[k >> 3]! >> (k & 7)) & 1) === 1);
  const width = (h: number): number => (total + (1 << h) - 1) >> h;
  let height = 0;
  while (width(height) > 1) height++;
  let bitAt = 0;
  let hashAt = 0;
  const matched: { txid: string; pos: number }[] = [];
  const walk = (h: number, pos: number): Buffer => {
    const parentOfMatch = bits[bitAt++]!;
    if (h === 0 || !parentOfMatch) {
      const x = hashes[hashAt++]!;
      if (h === 0 && parentOfMatch) matched.push({ txid: Buffer.from(x).reverse().toString('hex'), pos });
      return x;
    }
    const left = walk(h - 1, pos * 2);
    const right = pos * 2 + 1 < width(h - 1) ? walk(h - 1, pos * 2 + 1) : left;
    return sha256d(Buffer.concat([left, right]));
  };
  const root = walk(height, 0);
  return { header, total, matched, root: Buffer.from(root).reverse().toString('hex'), usedAll: hashAt === hashes.length && at.i + nBytes === b.length };
}

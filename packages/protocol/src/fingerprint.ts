/**
 * Range fingerprints of a contract's payload set (proto/svc.proto, header section 3;
 * docs/STATE.md, "Contract summaries"): an item is txid (32) || kind (1) || payload_hash
 * (32); its hash is the first 16 bytes of SHA-256(item); a range's fingerprint is the sum
 * of its items' hashes as unsigned 128-bit little-endian integers, modulo 2^128. A sum
 * (not a tree) so that any range's fingerprint is the difference of two prefix sums:
 * O(1) per range after one O(n) pass over the sorted set.
 */
import { createHash } from 'node:crypto';

export const FINGERPRINT_BYTES = 16;
/** Limbs of 32 bits per 128-bit value. */
const LIMBS = 4;

/** The 16-byte hash of one item (its 65 bytes). */
export function itemHash(item: Uint8Array): Buffer {
  return createHash('sha256').update(item).digest().subarray(0, FINGERPRINT_BYTES);
}

/**
 * Prefix sums of item hashes in set order: sum(i) is the sum of the first i hashes, so
 * the fingerprint of items [i, j) is sum(j) - sum(i) mod 2^128. Four 32-bit limbs per
 * sum, least significant first.
 */
export class PrefixFingerprints {
  private readonly sums: Uint32Array;

  /** `hashAt(k)`: the 16-byte hash of the k-th item in set order (k < n). */
  constructor(
    readonly n: number,
    hashAt: (k: number) => Uint8Array,
  ) {
    const s = new Uint32Array((n + 1) * LIMBS);
    for (let k = 0; k < n; k++) {
      const h = hashAt(k);
      const dv = new DataView(h.buffer, h.byteOffset, FINGERPRINT_BYTES);
      const o = k * LIMBS;
      let carry = 0;
      for (let l = 0; l < LIMBS; l++) {
        const v = s[o + l]! + dv.getUint32(l * 4, true) + carry;
        s[o + LIMBS + l] = v >>> 0;
        carry = v > 0xffffffff ? 1 : 0;
      }
    }
    this.sums = s;
  }

  /** The fingerprint of items [i, j) (16 bytes, little-endian). */
  range(i: number, j: number): Buffer {
    const out = Buffer.alloc(FINGERPRINT_BYTES);
    const s = this.sums;
    let borrow = 0;
    for (let l = 0; l < LIMBS; l++) {
      let v = s[j * LIMBS + l]! - s[i * LIMBS + l]! - borrow;
      borrow = v < 0 ? 1 : 0;
      if (v < 0) v += 0x1_0000_0000;
      out.writeUInt32LE(v, l * 4);
    }
    return out;
  }
}

/** The fingerprint of a list of item hashes (tests, second implementations). */
export function sumFingerprint(hashes: Uint8Array[]): Buffer {
  return new PrefixFingerprints(hashes.length, (k) => hashes[k]!).range(0, hashes.length);
}

/** `whole` minus each of `parts`, modulo 2^128 (16-byte little-endian hex fingerprints). */
export function subtractFingerprints(whole: string, parts: string[]): string {
  const le = (h: string): bigint => BigInt(`0x${Buffer.from(h, 'hex').reverse().toString('hex') || '0'}`);
  let v = le(whole);
  for (const p of parts) v -= le(p);
  v = ((v % 2n ** 128n) + 2n ** 128n) % 2n ** 128n;
  return Buffer.from(v.toString(16).padStart(FINGERPRINT_BYTES * 2, '0'), 'hex').reverse().toString('hex');
}

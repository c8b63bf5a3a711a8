/**
 * PROTOCOL.md section 1: H = SHA-256, TH = BIP-340 tagged hash. node:crypto's one-shot
 * hash is about twice @noble/hashes for short messages (CEILINGS.md row 03).
 */
import { createHash, hash as oneShot } from 'node:crypto';

export function sha256(data: Uint8Array): Uint8Array {
  return oneShot('sha256', data, 'buffer') as unknown as Uint8Array;
}

/** Bitcoin's double SHA-256 (txids, block hashes, merkle nodes). */
export function sha256d(data: Uint8Array): Uint8Array {
  // One-shot hashes: a Hash object per call cost 1.7 us more per double hash (3.8 against
  // 2.1 us), and a 3,000-transaction block takes about 12,000 of them.
  return new Uint8Array(oneShot('sha256', oneShot('sha256', data, 'buffer'), 'buffer'));
}

/** Display hex of 32 internal-order bytes (reversed): how explorers and Esplora show a Bitcoin hash. */
export function displayHex(internal: Uint8Array): string {
  return Buffer.from(internal).reverse().toString('hex');
}

const tagPrefixCache = new Map<string, Buffer>();

/** SHA256(tag) || SHA256(tag): the 64-byte prefix of TH(tag, ·), cached per tag. */
export function tagPrefix(tag: string): Buffer {
  let p = tagPrefixCache.get(tag);
  if (!p) {
    const t = createHash('sha256').update(tag, 'utf8').digest();
    p = Buffer.concat([t, t]);
    tagPrefixCache.set(tag, p);
  }
  return p;
}

/** TH(tag, x) = SHA256(SHA256(tag) || SHA256(tag) || x). */
export function taggedHash(tag: string, ...parts: Uint8Array[]): Uint8Array {
  // One contiguous buffer and node:crypto's one-shot hash: cheaper than a Hash object
  // for the short inputs of Merkle leaves and nodes (state roots hash thousands a block).
  const prefix = tagPrefix(tag);
  let len = prefix.length;
  for (const p of parts) len += p.length;
  const buf = Buffer.allocUnsafe(len);
  prefix.copy(buf, 0);
  let off = prefix.length;
  for (const p of parts) {
    buf.set(p, off);
    off += p.length;
  }
  return new Uint8Array(oneShot('sha256', buf, 'buffer') as unknown as Buffer);
}

export const Tags = {
  code: 'SVC/code',
  contract: 'SVC/contract',
  call: 'SVC/call',
  envelope: 'SVC/envelope',
} as const;

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

const HEX_RE = /^(?:[0-9a-f]{2})*$/;

/** Strict lowercase hex (PROTOCOL section 1); returns null when malformed. */
export function parseHex(s: string, bytes?: number): Uint8Array | null {
  if (typeof s !== 'string' || !HEX_RE.test(s)) return null;
  if (bytes !== undefined && s.length !== bytes * 2) return null;
  return new Uint8Array(Buffer.from(s, 'hex'));
}

/** Display-order txid hex -> the 32 protocol bytes (section 1: the display hex's own bytes). */
export function txidBytes(displayHex: string): Uint8Array {
  const b = parseHex(displayHex, 32);
  if (!b) throw new TypeError('txid must be 64 lowercase hex characters');
  return b;
}

/**
 * What the SDK's code takes from node:crypto, for the browser bundle
 * (scripts/browser-bundle.mjs puts this module in node:crypto's place): SHA-256 by
 * @noble/hashes and random bytes from the page's Web Crypto. Under Node the code keeps
 * node:crypto's native hashing (about twice @noble/hashes on short inputs, CEILINGS.md
 * row 03). Only what the SDK's modules use is here: a new use of anything else fails the
 * bundle's build ("No matching export"), not a page at run time.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { Buffer } from 'buffer';

type Encoding = 'buffer' | 'hex';

function only256(algorithm: string): void {
  if (algorithm !== 'sha256') throw new Error(`node:crypto in the browser bundle hashes sha256 only, not ${algorithm}`);
}

function output(digest: Uint8Array, encoding: Encoding | undefined): Buffer | string {
  const b = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
  return encoding === 'hex' ? b.toString('hex') : b;
}

/** node:crypto's one-shot hash(algorithm, data, outputEncoding). */
export function hash(algorithm: string, data: Uint8Array | string, encoding?: Encoding): Buffer | string {
  only256(algorithm);
  return output(sha256(typeof data === 'string' ? Buffer.from(data, 'utf8') : data), encoding);
}

/** node:crypto's createHash('sha256'): update() any number of times, then digest(). */
export function createHash(algorithm: string): { update(data: Uint8Array | string, inputEncoding?: 'utf8'): ReturnType<typeof createHash>; digest(encoding?: Encoding): Buffer | string } {
  only256(algorithm);
  const h = sha256.create();
  const self = {
    update(data: Uint8Array | string) {
      h.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      return self;
    },
    digest: (encoding?: Encoding) => output(h.digest(), encoding),
  };
  return self;
}

/** Web Crypto's getRandomValues: the page's CSPRNG (at most 65,536 bytes a call). */
declare const crypto: { getRandomValues<T extends Uint8Array>(a: T): T };
export function randomBytes(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let off = 0; off < n; off += 65_536) crypto.getRandomValues(b.subarray(off, Math.min(n, off + 65_536)));
  return b;
}

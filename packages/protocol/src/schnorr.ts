/**
 * BIP-340 Schnorr over secp256k1.
 *
 * Hot path (node intake and confirmation): tiny-secp256k1 2.2.4 `verifySchnorr`, the WASM
 * build of libsecp256k1 (~5,100 verifies/s on one core here vs ~830/s for @noble/curves,
 * CEILINGS.md row 01). Signing (SDK, CLI) uses it too, verifying what it produces; the
 * differential check uses @noble/curves, pure JavaScript.
 *
 * Consensus note: every node must pin the same verifier. The two libraries agree on every
 * input that can occur in practice; they can differ only on crafted edge cases that no one
 * can produce without solving a discrete log (r in [n, p) is refused up front by
 * tiny-secp256k1's input validation; s = 0 or r = 0 is refused by noble). Both are mapped
 * to "does not verify" here, never to an exception.
 */
import * as tiny from 'tiny-secp256k1';
import { schnorr } from '@noble/curves/secp256k1.js';
import { randomBytes } from 'node:crypto';

/** Fast path: true only when `sig` is a valid BIP-340 signature of the 32-byte `msg` by x-only `pub`. */
export function verifySchnorrFast(sig: Uint8Array, msg: Uint8Array, pub: Uint8Array): boolean {
  if (sig.length !== 64 || msg.length !== 32 || pub.length !== 32) return false;
  try {
    return tiny.verifySchnorr(msg, pub, sig);
  } catch {
    // tiny-secp256k1 throws on inputs it refuses before verifying (pubkey not on the
    // curve, r or s >= n): none of them can be a valid signature.
    return false;
  }
}

/** Pure-JavaScript reference (noble); used for the differential tests and as a fallback. */
export function verifySchnorrNoble(sig: Uint8Array, msg: Uint8Array, pub: Uint8Array): boolean {
  if (sig.length !== 64 || pub.length !== 32) return false;
  try {
    return schnorr.verify(sig, msg, pub);
  } catch {
    return false;
  }
}

/**
 * BIP-340 sign; auxRand defaults to 32 fresh random bytes. tiny-secp256k1's signer (the
 * same signature as noble's for the same aux: BIP-340 fixes it), checked with its verify
 * before it is returned, as noble's sign checks its own: a client submitting at volume
 * signed with noble at ~6 ms of CPU a call on the bench machine (docs/PERFORMANCE.md,
 * "Client"), most of its time.
 */
export function signSchnorr(msg: Uint8Array, secret: Uint8Array, auxRand?: Uint8Array): Uint8Array {
  const sig = tiny.signSchnorr(msg, secret, auxRand ?? randomBytesPooled(32));
  if (!tiny.verifySchnorr(msg, xOnlyPublicKey(secret), sig)) throw new Error('BIP-340 signature did not verify'); // never expected
  return sig;
}

/**
 * Bytes drawn from the system's CSPRNG RANDOM_POOL_BYTES at a time: a submitter draws 40
 * a call (the call id, BIP-340's aux), and a randomBytes call each was ~2% of its CPU a
 * call. Each byte is handed out once and zeroed in the pool as it is.
 */
const RANDOM_POOL_BYTES = 4096;
let randomPool = new Uint8Array(0);
let randomPoolAt = 0;

/** `n` fresh random bytes (the system's CSPRNG, through a pool: see RANDOM_POOL_BYTES). */
export function randomBytesPooled(n: number): Uint8Array {
  if (n > RANDOM_POOL_BYTES) return new Uint8Array(randomBytes(n));
  if (randomPoolAt + n > randomPool.length) {
    randomPool = new Uint8Array(randomBytes(RANDOM_POOL_BYTES));
    randomPoolAt = 0;
  }
  const out = randomPool.slice(randomPoolAt, randomPoolAt + n);
  randomPool.fill(0, randomPoolAt, randomPoolAt + n);
  randomPoolAt += n;
  return out;
}

/**
 * The last key derived, with a copy of its secret: signing a call derives its caller's
 * key three times (the envelope's caller, signEnvelope's check, the signature's own
 * check), and a submitter signs every call with one secret; a point multiplication each
 * was a tenth of its CPU.
 */
let lastKey: { secret: Uint8Array; pub: Uint8Array } | null = null;

/** x-only public key (32 bytes) of a 32-byte secret key; throws TypeError on an invalid secret. */
export function xOnlyPublicKey(secret: Uint8Array): Uint8Array {
  if (!(secret instanceof Uint8Array) || secret.length !== 32) throw new TypeError('invalid secret key');
  // Compared byte by byte, not with Buffer#equals: the browser's Buffer (the `buffer`
  // package) takes only Buffers there, and a page's secret is a plain Uint8Array.
  const last = lastKey;
  if (last && last.secret.every((b, i) => b === secret[i])) return last.pub.slice();
  if (!tiny.isPrivate(secret)) throw new TypeError('invalid secret key');
  const pub = tiny.xOnlyPointFromScalar(secret);
  lastKey = { secret: secret.slice(), pub: pub.slice() };
  return pub;
}

/** True when `secret` is 32 bytes in [1, n-1]. */
export function isValidSecretKey(secret: Uint8Array): boolean {
  return secret instanceof Uint8Array && secret.length === 32 && tiny.isPrivate(secret);
}

/** True when `pub` is the x coordinate of a secp256k1 point. */
export function isValidXOnlyKey(pub: Uint8Array): boolean {
  return pub instanceof Uint8Array && pub.length === 32 && tiny.isXOnlyPoint(pub);
}

/** A fresh random secret key. */
export function randomSecretKey(): Uint8Array {
  return schnorr.utils.randomSecretKey();
}

/**
 * Signed gossip (SERVICE-SPEC section 5): every request carries the sender's Ed25519
 * public key, its clock and a signature over the bytes that travel, bound to the
 * receiver's key (proto/svc.proto, header section 2).
 * node:crypto signs ~31k/s and verifies ~10k/s with a cached KeyObject, ~11x noble, and
 * importing the raw key per message halves verify throughput (CEILINGS.md row 02): key
 * objects are cached per peer, and payloads are signed per batch (one SubmitPayload).
 */
import { createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { privateKeyFromSeed, rawPublicKey } from './identity.js';
import { encodeBody } from './codec.js';
import type { PeerMethod } from './protocols.js';
import type { PeerRequest, WireInit } from './wire-types.js';
import { BoundedMap } from '../bounded.js';

/** Domain and protocol version of every signature (proto/svc.proto, header section 2). */
const DOMAIN = Buffer.from('SVC/peer/v2\0', 'utf8');
/** SPKI DER prefix of an Ed25519 public key; the raw 32 bytes follow it. */
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Requests whose clock is further than this from ours are refused (bounds replays). */
export const CLOCK_WINDOW_MS = 120_000;
/** Peer keys whose KeyObject is kept; beyond, the least recently used is dropped. */
const KEY_CACHE_SIZE = 1024;

const ED25519_P = 2n ** 255n - 19n;
/** y of two of the four points of order 8 (the other two have y = p - Y8). */
const Y8 = 0x7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7n;
/** y-coordinates of the 8 small-order points: identity (1), order 2 (p-1), order 4 (0), order 8 (Y8, p-Y8). */
const SMALL_ORDER_Y = new Set([0n, 1n, ED25519_P - 1n, Y8, ED25519_P - Y8]);

/**
 * Whether a raw Ed25519 public key encodes a point of small order (any sign bit, and the
 * non-canonical encodings y >= p too). OpenSSL accepts such keys, and for them a
 * signature can be made without any private key: with the identity as key, R = identity
 * and S = 0 verify for every message (checked against node:crypto in
 * test/gossip/units.test.ts). Such an identity belongs to nobody, so it is refused.
 */
export function isSmallOrderKey(raw: Uint8Array): boolean {
  if (raw.length !== 32) return false;
  const le = Buffer.from(raw);
  le[31]! &= 0x7f;
  const y = BigInt(`0x${le.reverse().toString('hex')}`) % ED25519_P;
  return SMALL_ORDER_Y.has(y);
}

export interface Auth {
  public_key: Uint8Array;
  signature: Uint8Array;
  sent_at_ms: string;
  receiver_public_key: Uint8Array;
}

/** A signed request as it travels (proto SignedRequest): the inner request's bytes and their auth. */
export interface SignedRequest {
  body: Uint8Array;
  auth: Auth | null;
}

/**
 * The signed bytes (proto/svc.proto, header section 2): domain and version, method,
 * receiver key, sender key, clock, then the body exactly as sent.
 */
export function signingBytes(method: string, receiverKey: Uint8Array, senderKey: Uint8Array, sentAtMs: bigint, body: Uint8Array): Buffer {
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(sentAtMs, 0);
  return Buffer.concat([DOMAIN, Buffer.from(method, 'utf8'), Buffer.of(0), receiverKey, senderKey, t, body]);
}

/** What a GetIdentity answer signs: proof that the URL's node holds `publicKey`'s private key. */
export function identityProofBytes(publicKey: Uint8Array, challenge: Uint8Array): Buffer {
  return Buffer.concat([DOMAIN, Buffer.from('GetIdentity\0', 'utf8'), publicKey, challenge]);
}

/** SPKI form of a raw Ed25519 public key (throws when it is not one). */
function publicKeyObject(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** Whether `signature` proves `publicKey` over a GetIdentity `challenge`; never throws. */
export function verifyIdentityProof(publicKey: Uint8Array, challenge: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64 || isSmallOrderKey(publicKey)) return false;
  try {
    return edVerify(null, identityProofBytes(publicKey, challenge), publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

export class Signer {
  private readonly key: KeyObject;
  readonly publicKey: Buffer;

  constructor(seed: Uint8Array) {
    this.key = privateKeyFromSeed(seed);
    this.publicKey = rawPublicKey(this.key);
  }

  /** `body` (the serialized inner request) signed for the node holding `receiverKey`. */
  sign(method: PeerMethod, receiverKey: Uint8Array, body: Uint8Array, nowMs = Date.now()): SignedRequest & { auth: Auth } {
    const sentAt = BigInt(Math.floor(nowMs));
    const signature = edSign(null, signingBytes(method, receiverKey, this.publicKey, sentAt, body), this.key);
    return { body, auth: { public_key: this.publicKey, signature, sent_at_ms: sentAt.toString(), receiver_public_key: Buffer.from(receiverKey) } };
  }

  /** `req` encoded as `method`'s inner request and signed for `receiverKey`. */
  request<M extends PeerMethod>(method: M, receiverKey: Uint8Array, req: WireInit<PeerRequest<M>>, nowMs = Date.now()): SignedRequest & { auth: Auth } {
    return this.sign(method, receiverKey, encodeBody(method, req), nowMs);
  }

  /** The GetIdentity proof of possession over an asker's challenge. */
  proveIdentity(challenge: Uint8Array): Buffer {
    return edSign(null, identityProofBytes(this.publicKey, challenge), this.key);
  }
}

export type VerifyResult = { ok: true; key: string } | { ok: false; reason: string };

export class Verifier {
  private readonly keys = new BoundedMap<string, KeyObject>(KEY_CACHE_SIZE);
  private readonly selfHex: string;

  /** `selfKey`: this node's raw public key, the receiver every request must be signed for. */
  constructor(private readonly selfKey: Uint8Array) {
    this.selfHex = Buffer.from(selfKey).toString('hex');
  }

  private keyObject(raw: Uint8Array, hex: string): KeyObject {
    let k = this.keys.get(hex);
    if (k) {
      this.keys.set(hex, k); // refresh its place in the LRU order
      return k;
    }
    k = publicKeyObject(raw);
    this.keys.set(hex, k);
    return k;
  }

  get cachedKeys(): number {
    return this.keys.size;
  }

  /** Checks a SignedRequest as gRPC decoded it, before its body is decoded; never throws. */
  verify(method: PeerMethod, req: Partial<SignedRequest>, nowMs = Date.now()): VerifyResult {
    const auth = req.auth as Partial<Auth> | null | undefined;
    if (!auth || typeof auth !== 'object') return { ok: false, reason: 'unsigned request' };
    const body = req.body instanceof Uint8Array ? req.body : Buffer.alloc(0);
    const pk = auth.public_key;
    const sig = auth.signature;
    if (!(pk instanceof Uint8Array) || pk.length !== 32) return { ok: false, reason: 'public_key must be 32 bytes' };
    if (!(sig instanceof Uint8Array) || sig.length !== 64) return { ok: false, reason: 'signature must be 64 bytes' };
    if (typeof auth.sent_at_ms !== 'string' || !/^\d{1,20}$/.test(auth.sent_at_ms)) return { ok: false, reason: 'sent_at_ms missing' };
    const rk = auth.receiver_public_key;
    if (!(rk instanceof Uint8Array) || !Buffer.from(rk).equals(this.selfKey)) return { ok: false, reason: 'signed for another receiver' };
    const sentAt = BigInt(auth.sent_at_ms);
    if (sentAt > 0xffffffffffffffffn || Math.abs(Number(sentAt) - nowMs) > CLOCK_WINDOW_MS) return { ok: false, reason: 'sent_at_ms is outside the clock window' };
    const hex = Buffer.from(pk).toString('hex');
    if (hex === this.selfHex) return { ok: false, reason: 'request signed with this node own key' };
    if (isSmallOrderKey(pk)) return { ok: false, reason: 'public_key is a small-order point' };
    let keyObj: KeyObject;
    try {
      keyObj = this.keyObject(pk, hex);
    } catch {
      return { ok: false, reason: 'public_key is not an Ed25519 key' };
    }
    let good = false;
    try {
      good = edVerify(null, signingBytes(method, this.selfKey, pk, sentAt, body), keyObj, sig);
    } catch {
      good = false;
    }
    return good ? { ok: true, key: hex } : { ok: false, reason: 'signature does not verify' };
  }
}

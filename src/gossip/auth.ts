/**
 * Signed gossip (SERVICE-SPEC section 5): every request carries the sender's Ed25519
 * public key, its clock and a signature over the request (proto/svc.proto, header).
 * node:crypto signs ~31k/s and verifies ~10k/s with a cached KeyObject, ~11x noble, and
 * importing the raw key per message halves verify throughput (CEILINGS.md row 02): key
 * objects are cached per peer, and payloads are signed per batch (one SubmitPayload).
 */
import { createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { privateKeyFromSeed, rawPublicKey } from './identity.js';
import { requestCodec, type PeerMethod } from './server.js';

const DOMAIN = Buffer.from('SVC/gossip/v1\0', 'utf8');
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
}

/** The signed bytes: domain, method, key, clock, then the request encoded with auth unset. */
export function signingBytes(method: PeerMethod, publicKey: Uint8Array, sentAtMs: bigint, body: Buffer): Buffer {
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(sentAtMs, 0);
  return Buffer.concat([DOMAIN, Buffer.from(method, 'utf8'), Buffer.of(0), publicKey, t, body]);
}

/** The request's own fields as the receiver re-encodes them: decoded once, auth unset. */
function canonicalBody(method: PeerMethod, req: Record<string, unknown>, alreadyDecoded: boolean): Buffer {
  const codec = requestCodec(method);
  const decoded = alreadyDecoded ? req : codec.deserialize(codec.serialize({ ...req, auth: null }));
  return codec.serialize({ ...decoded, auth: null });
}

export class Signer {
  private readonly key: KeyObject;
  readonly publicKey: Buffer;

  constructor(seed: Uint8Array) {
    this.key = privateKeyFromSeed(seed);
    this.publicKey = rawPublicKey(this.key);
  }

  /** The request with `auth` filled in. */
  sign<T extends Record<string, unknown>>(method: PeerMethod, req: T, nowMs = Date.now()): T & { auth: Auth } {
    const sentAt = BigInt(Math.floor(nowMs));
    const msg = signingBytes(method, this.publicKey, sentAt, canonicalBody(method, req, false));
    const signature = edSign(null, msg, this.key);
    return { ...req, auth: { public_key: this.publicKey, signature, sent_at_ms: sentAt.toString() } };
  }
}

export type VerifyResult = { ok: true; key: string } | { ok: false; reason: string };

export class Verifier {
  private readonly keys = new Map<string, KeyObject>();

  constructor(private readonly selfKey: string | null = null) {}

  private keyObject(raw: Uint8Array, hex: string): KeyObject {
    let k = this.keys.get(hex);
    if (k) {
      this.keys.delete(hex); // refresh its place in the LRU order
      this.keys.set(hex, k);
      return k;
    }
    k = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
    this.keys.set(hex, k);
    if (this.keys.size > KEY_CACHE_SIZE) this.keys.delete(this.keys.keys().next().value!);
    return k;
  }

  get cachedKeys(): number {
    return this.keys.size;
  }

  /** Checks a request as decoded by gRPC; never throws. */
  verify(method: PeerMethod, req: Record<string, unknown>, nowMs = Date.now()): VerifyResult {
    const auth = req['auth'] as Partial<Auth> | null | undefined;
    if (!auth || typeof auth !== 'object') return { ok: false, reason: 'unsigned request' };
    const pk = auth.public_key;
    const sig = auth.signature;
    if (!(pk instanceof Uint8Array) || pk.length !== 32) return { ok: false, reason: 'public_key must be 32 bytes' };
    if (!(sig instanceof Uint8Array) || sig.length !== 64) return { ok: false, reason: 'signature must be 64 bytes' };
    if (typeof auth.sent_at_ms !== 'string' || !/^\d{1,20}$/.test(auth.sent_at_ms)) return { ok: false, reason: 'sent_at_ms missing' };
    const sentAt = BigInt(auth.sent_at_ms);
    if (sentAt > 0xffffffffffffffffn || Math.abs(Number(sentAt) - nowMs) > CLOCK_WINDOW_MS) return { ok: false, reason: 'sent_at_ms is outside the clock window' };
    const hex = Buffer.from(pk).toString('hex');
    if (hex === this.selfKey) return { ok: false, reason: 'request signed with this node own key' };
    if (isSmallOrderKey(pk)) return { ok: false, reason: 'public_key is a small-order point' };
    let keyObj: KeyObject;
    try {
      keyObj = this.keyObject(pk, hex);
    } catch {
      return { ok: false, reason: 'public_key is not an Ed25519 key' };
    }
    let good = false;
    try {
      good = edVerify(null, signingBytes(method, pk, sentAt, canonicalBody(method, req, true)), keyObj, sig);
    } catch {
      good = false;
    }
    return good ? { ok: true, key: hex } : { ok: false, reason: 'signature does not verify' };
  }
}

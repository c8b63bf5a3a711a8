/**
 * The node's Ed25519 gossip identity (SERVICE-SPEC section 5): stable when
 * gossip_private_key is set, ephemeral otherwise. node:crypto signs and verifies about
 * ten times faster than a pure-JavaScript Ed25519 here (CEILINGS.md row 02).
 */
import { createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import type { GossipIdentity } from '../messages/supervisor.js';

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, Buffer.from(seed)]), format: 'der', type: 'pkcs8' });
}

export function rawPublicKey(priv: KeyObject): Buffer {
  const der = createPublicKey(priv).export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32);
}

export function makeIdentity(seed: Uint8Array | null): GossipIdentity {
  const s = seed ?? new Uint8Array(randomBytes(32));
  return { seed: s, publicKeyHex: rawPublicKey(privateKeyFromSeed(s)).toString('hex'), stable: seed !== null };
}

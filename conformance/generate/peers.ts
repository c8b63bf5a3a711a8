/**
 * Peer signatures (proto/svc.proto, header section 2): the bytes a gossip request signs,
 * and signed requests as a receiver checks them (receiver key, clock window, small-order
 * keys, the signature), and the GetIdentity proof of possession. Ed25519 keys from fixed
 * seeds; the receiver's clock is part of each case's input.
 */
import { CLOCK_WINDOW_MS, Signer } from '../../src/gossip/auth.js';
import { hex, type Area, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

const NOW = 1_800_000_000_000;
const sender = new Signer(seeded('conformance peer sender'));
const receiver = new Signer(seeded('conformance peer receiver'));
const body = Uint8Array.from(Buffer.from('0a0568656c6c6f', 'hex'));

type AuthJson = { public_key: string; signature: string; sent_at_ms: string; receiver_public_key: string };

function signed(method: 'SubmitPayload' | 'GetStateRoots', at: number, by = sender, to = receiver.publicKey, b = body): { body: string; auth: AuthJson } {
  const r = by.sign(method as never, to, b, at);
  return { body: hex(r.body), auth: { public_key: hex(r.auth.public_key), signature: hex(r.auth.signature), sent_at_ms: r.auth.sent_at_ms, receiver_public_key: hex(r.auth.receiver_public_key) } };
}

function verifyCases(): CaseInput[] {
  const c = (id: string, request: { body: string; auth: AuthJson | null }, pins: string, method = 'SubmitPayload', now = NOW): CaseInput => ({
    id, pins, input: { method, receiver_public_key: hex(receiver.publicKey), now_ms: now, request },
  });
  const good = signed('SubmitPayload', NOW);
  const flip = (h: string, i: number) => h.slice(0, 2 * i) + ((parseInt(h.slice(2 * i, 2 * i + 2), 16) ^ 1).toString(16).padStart(2, '0')) + h.slice(2 * i + 2);
  const identityPoint = '01' + '00'.repeat(31);
  return [
    c('valid', good, 'a request signed by the sender for this receiver, within the clock window, verifies'),
    c('empty-body', signed('SubmitPayload', NOW, sender, receiver.publicKey, new Uint8Array(0)), 'an empty body is signed like any other'),
    c('body-changed', { ...good, body: flip(good.body, 0) }, 'one changed body byte: the signature does not verify'),
    c('other-method', good, 'a signature is bound to its method', 'GetStateRoots'),
    c('other-receiver', signed('SubmitPayload', NOW, sender, sender.publicKey), 'a request signed for another receiver is refused'),
    c('own-key', signed('SubmitPayload', NOW, receiver), 'a request signed with the receiver\'s own key is refused'),
    c('clock-at-window-past', signed('SubmitPayload', NOW - CLOCK_WINDOW_MS), `sent ${CLOCK_WINDOW_MS} ms before the receiver's clock: accepted`),
    c('clock-past-window-past', signed('SubmitPayload', NOW - CLOCK_WINDOW_MS - 1), `sent ${CLOCK_WINDOW_MS + 1} ms before: refused`),
    c('clock-at-window-future', signed('SubmitPayload', NOW + CLOCK_WINDOW_MS), `sent ${CLOCK_WINDOW_MS} ms after the receiver's clock: accepted`),
    c('clock-past-window-future', signed('SubmitPayload', NOW + CLOCK_WINDOW_MS + 1), `sent ${CLOCK_WINDOW_MS + 1} ms after: refused`),
    c('sent-at-changed', { ...good, auth: { ...good.auth, sent_at_ms: String(NOW + 1) } }, 'the clock is signed: another sent_at_ms does not verify'),
    c('sent-at-not-decimal', { ...good, auth: { ...good.auth, sent_at_ms: '1.8e12' } }, 'sent_at_ms must be a decimal string'),
    c('signature-63-bytes', { ...good, auth: { ...good.auth, signature: good.auth.signature.slice(2) } }, 'a signature must be 64 bytes'),
    c('public-key-31-bytes', { ...good, auth: { ...good.auth, public_key: good.auth.public_key.slice(2) } }, 'a public key must be 32 bytes'),
    c('small-order-key', { ...good, auth: { ...good.auth, public_key: identityPoint, signature: identityPoint + '00'.repeat(32) } }, 'the identity point as key (R = identity, S = 0 verifies any message) is refused'),
    c('unsigned', { body: good.body, auth: null }, 'a request without auth is refused'),
    c('key-not-signer', { ...good, auth: { ...good.auth, public_key: hex(new Signer(seeded('conformance peer third')).publicKey) } }, 'a signature by one key presented under another key is refused'),
    c('signature-s-changed', { ...good, auth: { ...good.auth, signature: flip(good.auth.signature, 63) } }, 'one changed byte of S: the signature does not verify'),
    c('sent-at-max', signed('SubmitPayload', Number.MAX_SAFE_INTEGER), 'a request signed for a time far past the receiver\'s clock (2^53-1 ms) is refused'),
    c('receiver-field-other', { ...good, auth: { ...good.auth, receiver_public_key: hex(sender.publicKey) } }, 'auth naming another receiver than the one signed for is refused'),
  ];
}

function signingBytesCases(): CaseInput[] {
  const c = (id: string, method: string, sentAt: string, b: string, pins: string): CaseInput => ({
    id, pins, input: { method, receiver_public_key: hex(receiver.publicKey), sender_public_key: hex(sender.publicKey), sent_at_ms: sentAt, body: b },
  });
  return [
    c('submit-payload', 'SubmitPayload', String(NOW), hex(body), '"SVC/peer/v2\\0" || method || 0x00 || receiver key || sender key || u64be sent_at_ms || body'),
    c('max-clock', 'GetStateRoots', '18446744073709551615', '', 'sent_at_ms is 8 bytes big-endian, up to 2^64-1; an empty body adds nothing'),
  ];
}

function identityCases(): CaseInput[] {
  const challenge = hex(seeded('conformance challenge'));
  const proof = hex(receiver.proveIdentity(Buffer.from(challenge, 'hex')));
  const c = (id: string, key: string, ch: string, sig: string, pins: string): CaseInput => ({ id, pins, input: { public_key: key, challenge: ch, signature: sig } });
  return [
    c('valid', hex(receiver.publicKey), challenge, proof, 'a GetIdentity answer signs "SVC/peer/v2\\0GetIdentity\\0" || its key || the challenge'),
    c('other-challenge', hex(receiver.publicKey), hex(seeded('another challenge')), proof, 'a proof answers one challenge only'),
    c('other-key', hex(sender.publicKey), challenge, proof, 'a proof made by another key does not verify'),
    c('small-order-key', '01' + '00'.repeat(31), challenge, '01' + '00'.repeat(63), 'a small-order key proves nothing'),
  ];
}

export function peersArea(): Area {
  return { 'peer.verify': verifyCases(), 'peer.signing-bytes': signingBytesCases(), 'peer.identity-proof': identityCases() };
}

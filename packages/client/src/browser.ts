/**
 * The SDK in a browser, reading (`npm run bundle:browser`, docs/CLI.md "The SDK in a
 * browser"): REST reads, field and call proofs checked in the page, the live feed.
 * Signing and anchoring are packages/client/src/browser-sign.ts, a separate entry, so a page that
 * only reads does not carry secp256k1 signing and bitcoinjs-lib's transaction building.
 */
export { NodeClient, verifyFieldAnswer, verifyCallProof, FINAL_STATUSES } from './node.js';
export type { FieldAnswer, ProvenFieldAnswer, CallStatus, ProvenCallStatus, VerifiedCall, CallProofOptions, EventsQuery, EventsAnswer, WaitOptions } from './node.js';
export { stream } from './stream.js';
export type { StreamMessage, StreamOptions, StreamSubscription } from './stream.js';
export { ClientError } from './errors.js';
export { verifyEnvelopeSignature, decodeEnvelope, envelopeHash, decodePayload } from '@svc-node/protocol/envelope';
export type { CallEnvelope } from '@svc-node/protocol/envelope';
export { toHex, parseHex } from '@svc-node/protocol/hash';

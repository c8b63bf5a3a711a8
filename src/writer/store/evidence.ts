/**
 * Bucket `evidence`: the Bitcoin evidence the node holds for a payload, key txid (32,
 * display order): the anchoring transaction as received and, when known, the claims that
 * place it on chain or drop it (packages/protocol/src/evidence.ts codec). What the node serves
 * with the payload to peers and clients (docs/STATE.md, "Bitcoin evidence"); a confirmed
 * payload's placement is read from the journal, which holds its branch.
 */
import { decodeEvidence, encodeEvidence, type Evidence } from '@svc-node/protocol/evidence';
import { Bucket } from './buckets.js';
import { bucketRange, idBytes, keyOfId, type KeyRange } from './keys.js';

export const key = (txid: string | Uint8Array): Buffer => keyOfId(Bucket.evidence, typeof txid === 'string' ? idBytes(txid) : txid);
export const all = (): KeyRange => bucketRange(Bucket.evidence);
export const encode = (e: Evidence): Buffer => encodeEvidence(e);
export const decode = (b: Buffer): Evidence => decodeEvidence(b);

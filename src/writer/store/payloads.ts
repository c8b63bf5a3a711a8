/**
 * Bucket `payload`: what the node holds under a txid (32 bytes): a deploy or a call, its
 * contract and its body hash, JSON. Append-only: nothing deletes or rewrites an entry
 * (src/writer/peer-queries.ts indexes it from the writer's announcements).
 */
import type { HeldPayload } from '@svc-node/protocol/rules';
import { Bucket } from './buckets.js';
import { bucketRange, idBytes, jsonValue, keyOfId, parseJson } from './keys.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.payload, txid);
export const keyOf = (txidHex: string): Buffer => key(idBytes(txidHex));
export const all = () => bucketRange(Bucket.payload);
export const txidOf = (k: Buffer): Buffer => k.subarray(1);

export const encode = (p: HeldPayload): Buffer => jsonValue({ kind: p.kind, contract_id: p.contract_id, body_hash: p.body_hash });
export const decode = (b: Buffer): HeldPayload => parseJson<HeldPayload>(b);

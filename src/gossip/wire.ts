/** Conversions between the proto messages (as proto-loader decodes them, wire-types.ts) and node types. */
import { NodeError } from '../errors.js';
import type { WirePayload } from '../messages.js';
import type { ProtoPayload } from './wire-types.js';

const KIND_TO_PROTO = { call: 'PAYLOAD_KIND_CALL', deploy: 'PAYLOAD_KIND_DEPLOY' } as const;

export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

export function bytes32(b: unknown, field: string): string {
  if (!(b instanceof Uint8Array) || b.length !== 32) throw new NodeError('bad_request', `${field} must be 32 bytes`, { field });
  return hex(b);
}

export function toProtoPayload(p: WirePayload): ProtoPayload {
  return {
    kind: KIND_TO_PROTO[p.kind],
    txid: Buffer.from(p.txid, 'hex'),
    contract_id: p.contract_id ? Buffer.from(p.contract_id, 'hex') : Buffer.alloc(0),
    body: Buffer.from(p.body.buffer, p.body.byteOffset, p.body.byteLength),
  };
}

/** A decoded proto Payload as the node's WirePayload; shape errors are bad_request. */
export function fromProtoPayload(p: unknown): WirePayload {
  if (!p || typeof p !== 'object') throw new NodeError('bad_request', 'payload is missing');
  const q = p as Partial<ProtoPayload>;
  const kind = q.kind === 'PAYLOAD_KIND_CALL' ? 'call' : q.kind === 'PAYLOAD_KIND_DEPLOY' ? 'deploy' : null;
  if (!kind) throw new NodeError('bad_request', 'payload kind must be CALL or DEPLOY', { field: 'kind' });
  if (!(q.body instanceof Uint8Array)) throw new NodeError('bad_request', 'payload body is missing', { field: 'body' });
  const txid = bytes32(q.txid, 'txid');
  const contractId = kind === 'call' ? bytes32(q.contract_id, 'contract_id') : '';
  return { kind, txid, contract_id: contractId, body: new Uint8Array(q.body.buffer, q.body.byteOffset, q.body.byteLength) };
}

/** Approximate encoded size of a payload inside a SubmitPayload (for batch splitting). */
export function encodedSize(p: WirePayload): number {
  return p.body.length + 96;
}

/** `payloads` cut into SubmitPayload batches of at most `maxCount` payloads and `maxBytes` encoded bytes. */
export function submitBatches(payloads: WirePayload[], maxCount: number, maxBytes: number): WirePayload[][] {
  const out: WirePayload[][] = [];
  let cur: WirePayload[] = [];
  let bytes = 0;
  for (const p of payloads) {
    if (cur.length > 0 && (cur.length >= maxCount || bytes + encodedSize(p) > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(p);
    bytes += encodedSize(p);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

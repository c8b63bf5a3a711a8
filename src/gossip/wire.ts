/** Conversions between the proto messages (as proto-loader decodes them, wire-types.ts) and node types. */
import { NodeError } from '@svc-node/protocol/errors';
import type { WirePayload } from '../messages/gossip.js';
import { decodeInclusion, MAX_EVIDENCE_TX_BYTES, type Evidence, type Inclusion } from '@svc-node/protocol/evidence';
import { MAX_COIN_PREV_TXS } from '@svc-node/protocol/coin';
import type { ProtoEvidence, ProtoInclusion, ProtoPayload } from './wire-types.js';
import { PAGE_MAX } from './limits.js';
import { toHex } from '@svc-node/protocol/bytes';
import { ensureBytes32 } from '@svc-node/protocol/fields';

const KIND_TO_PROTO = { call: 'PAYLOAD_KIND_CALL', deploy: 'PAYLOAD_KIND_DEPLOY' } as const;

export const hex = toHex;

export function bytes32(b: unknown, field: string): string {
  return hex(ensureBytes32(field, b));
}

/** An optional bound or cursor of at most 32 bytes, as hex ('' when empty). */
export function boundHex(b: unknown, field: string): string {
  if (b === undefined || b === null) return '';
  if (!(b instanceof Uint8Array) || b.length > 32) throw new NodeError('bad_request', `${field} must be at most 32 bytes`, { field });
  return hex(b);
}

/** A page size as asked: 0 or above PAGE_MAX means PAGE_MAX. */
export const pageLimit = (v: unknown): number => {
  const n = Number(v ?? 0);
  return n > 0 && n < PAGE_MAX ? n : PAGE_MAX;
};

const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function toProtoInclusion(i: Inclusion): ProtoInclusion {
  return { block_hash: Buffer.from(i.blockHash, 'hex'), height: i.height, tx_index: i.txIndex, branch: i.branch.map(buf) };
}

function toProtoEvidence(e: Evidence): ProtoEvidence {
  return {
    anchor_tx: buf(e.anchorTx),
    confirmed: e.confirmed ? toProtoInclusion(e.confirmed) : null,
    spent_by: e.spentBy ? { tx: buf(e.spentBy.tx), vin: e.spentBy.vin, at: toProtoInclusion(e.spentBy.at) } : null,
    coin: e.coin ? e.coin.prevTxs.map((p) => ({ tx: buf(p.tx), at: p.at ? toProtoInclusion(p.at) : null })) : [],
  };
}

export function toProtoPayload(p: WirePayload): ProtoPayload {
  return {
    kind: KIND_TO_PROTO[p.kind],
    txid: Buffer.from(p.txid, 'hex'),
    contract_id: p.contract_id ? Buffer.from(p.contract_id, 'hex') : Buffer.alloc(0),
    body: buf(p.body),
    evidence: p.evidence ? toProtoEvidence(p.evidence) : null,
  };
}

const view = (b: Uint8Array): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

function evidenceTx(b: unknown, field: string): Uint8Array {
  if (!(b instanceof Uint8Array) || b.length === 0 || b.length > MAX_EVIDENCE_TX_BYTES) {
    throw new NodeError('bad_request', `${field} must be 1 to ${MAX_EVIDENCE_TX_BYTES} bytes`, { field });
  }
  return view(b);
}

function u32(n: unknown, field: string): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new NodeError('bad_request', `${field} must be a 32-bit unsigned integer`, { field });
  return n;
}

function fromProtoInclusion(i: unknown, field: string): Inclusion {
  if (!i || typeof i !== 'object') throw new NodeError('bad_request', `${field} is missing`, { field });
  const d = decodeInclusion(i, 'bytes');
  if (d.ok) return d.inclusion;
  const at = d.fault.member ? `${field}.${d.fault.member}` : field;
  throw new NodeError('bad_request', `${at} ${d.fault.what}`, { field: at });
}

/** A decoded proto Evidence as the node's Evidence (every length and count checked); absent: null. */
export function fromProtoEvidence(e: unknown): Evidence | null {
  if (e === null || e === undefined) return null;
  if (typeof e !== 'object') throw new NodeError('bad_request', 'evidence is malformed', { field: 'evidence' });
  const q = e as Partial<ProtoEvidence>;
  let spentBy: Evidence['spentBy'] = null;
  if (q.spent_by) {
    spentBy = {
      tx: evidenceTx(q.spent_by.tx, 'evidence.spent_by.tx'),
      vin: u32(q.spent_by.vin, 'evidence.spent_by.vin'),
      at: fromProtoInclusion(q.spent_by.at, 'evidence.spent_by.at'),
    };
  }
  const out: Evidence = {
    anchorTx: evidenceTx(q.anchor_tx, 'evidence.anchor_tx'),
    confirmed: q.confirmed ? fromProtoInclusion(q.confirmed, 'evidence.confirmed') : null,
    spentBy,
  };
  const coin = q.coin ?? [];
  if (!Array.isArray(coin) || coin.length > MAX_COIN_PREV_TXS) throw new NodeError('bad_request', `evidence.coin must be at most ${MAX_COIN_PREV_TXS} prev txs`, { field: 'evidence.coin' });
  if (coin.length > 0) {
    out.coin = {
      prevTxs: coin.map((p) => {
        if (!p || typeof p !== 'object') throw new NodeError('bad_request', 'evidence.coin entry is malformed', { field: 'evidence.coin' });
        return { tx: evidenceTx(p.tx, 'evidence.coin.tx'), at: p.at ? fromProtoInclusion(p.at, 'evidence.coin.at') : null };
      }),
    };
  }
  return out;
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
  return { kind, txid, contract_id: contractId, body: view(q.body), evidence: fromProtoEvidence(q.evidence) };
}

/** Approximate encoded size of a payload inside a SubmitPayload (for batch splitting). */
export function encodedSize(p: WirePayload): number {
  return p.body.length + 96 + (p.evidence ? evidenceSize(p.evidence) : 0);
}

/** Upper bound of an Evidence's encoded size (bytes, tags and length prefixes). */
function evidenceSize(e: Evidence): number {
  const inclusion = (i: Inclusion): number => 48 + 34 * i.branch.length;
  let coin = 0;
  for (const p of e.coin?.prevTxs ?? []) coin += 12 + p.tx.length + (p.at ? inclusion(p.at) : 0);
  return 8 + e.anchorTx.length + (e.confirmed ? inclusion(e.confirmed) : 0) + (e.spentBy ? 16 + e.spentBy.tx.length + inclusion(e.spentBy.at) : 0) + coin;
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

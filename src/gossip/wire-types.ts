/**
 * The proto messages several peer RPCs share (proto/svc.proto: Payload, Evidence,
 * Inclusion, a heartbeat's tip, a payload's position) as proto-loader and codec.ts decode
 * them, how a sender may write a message (`WireInit`), and the field checks every
 * answer's check is made of (protocols.ts).
 */
import { NodeError } from '@svc-node/protocol/errors';

/** A bytes field (decoded: a Buffer). */
export type Bytes = Uint8Array;
/** A uint64 field: a decimal string (proto-loader's `longs: String`). */
export type U64 = string;

/** The sender's best verified block header (a hint: the receiver asks its endpoint). */
export interface TipAnnouncement {
  tip_height: U64;
  /** 80 bytes, or empty when the sender holds no header. */
  tip_header: Bytes;
}

/** proto Payload; `kind` is the enum's name (PAYLOAD_KIND_CALL or PAYLOAD_KIND_DEPLOY). */
export interface ProtoPayload {
  kind: string;
  txid: Bytes;
  contract_id: Bytes;
  body: Bytes;
  /** Absent: none. Checked where it becomes the node's Evidence (wire.ts, fromProtoPayload). */
  evidence: ProtoEvidence | null;
}

/** proto Inclusion (header section 6). */
export interface ProtoInclusion {
  block_hash: Bytes;
  height: number;
  tx_index: number;
  branch: Bytes[];
}
/** proto SpentBy. */
export interface ProtoSpentBy {
  tx: Bytes;
  vin: number;
  at: ProtoInclusion | null;
}
/** proto PrevTx (header section 9). */
export interface ProtoPrevTx {
  tx: Bytes;
  at: ProtoInclusion | null;
}
/** proto Evidence. */
export interface ProtoEvidence {
  anchor_tx: Bytes;
  confirmed: ProtoInclusion | null;
  spent_by: ProtoSpentBy | null;
  /** Empty: no coin evidence. */
  coin: ProtoPrevTx[];
}

export interface PayloadPosition {
  height: number;
  tx_index: number;
}

/** A message as a sender may write it: any field left out is sent as its default. */
export type WireInit<T> = { [K in keyof T]?: WireField<T[K]> };
type WireField<V> = V extends Uint8Array ? Uint8Array : V extends readonly (infer E)[] ? WireField<E>[] : V extends object ? WireInit<V> : V;

export function malformed(method: string, field: string, what: string): NodeError {
  return new NodeError('bad_request', `${method} answer: ${field} ${what}`, { field });
}

export function bytesOf(method: string, field: string, b: Bytes, lengths: readonly number[]): void {
  if (!lengths.includes(b.length)) throw malformed(method, field, `must be ${lengths.join(' or ')} bytes, not ${b.length}`);
}

export const id32 = (method: string, field: string, b: Bytes): void => bytesOf(method, field, b, [32]);

export function u64(method: string, field: string, v: U64): void {
  if (!/^\d{1,16}$/.test(v) || !Number.isSafeInteger(Number(v))) throw malformed(method, field, `must be a height, not ${JSON.stringify(v.slice(0, 24))}`);
}

/** A heartbeat's tip, in a request or an answer: a height and an 80-byte header, or neither. */
export function checkTipAnnouncement(t: TipAnnouncement, side: 'request' | 'answer'): void {
  const bad = (field: string, what: string): NodeError => new NodeError('bad_request', `Heartbeat ${side}: ${field} ${what}`, { field });
  if (!/^\d{1,16}$/.test(t.tip_height) || !Number.isSafeInteger(Number(t.tip_height))) throw bad('tip_height', `must be a height, not ${JSON.stringify(t.tip_height.slice(0, 24))}`);
  if (t.tip_header.length !== 0 && t.tip_header.length !== 80) throw bad('tip_header', `must be 0 or 80 bytes, not ${t.tip_header.length}`);
}

/**
 * The peer service's messages (proto/svc.proto) as proto-loader and codec.ts decode them:
 * field names as in the proto, bytes as Buffers, uint64 as decimal strings, enums by name,
 * absent fields filled with their defaults, an absent message as null. First the messages
 * several RPCs share (Payload, Evidence, Inclusion, a heartbeat's tip, a payload's
 * position), how a sender may write a message (`WireInit`) and the field checks every
 * answer's check is made of; then each RPC's request and answer (`PeerWire`), whose
 * descriptors are in protocols.ts.
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

export interface GetIdentityRequest {
  challenge: Bytes;
}
export interface GetIdentityResponse {
  public_key: Bytes;
  node_id: string;
  signature: Bytes;
}

export interface HeartbeatRequest extends TipAnnouncement {
  node_id: string;
  url: string;
  height: U64;
}
export interface HeartbeatResponse extends TipAnnouncement {
  node_id: string;
  height: U64;
  public_key: Bytes;
  peers: number;
}

export interface SubmitPayloadRequest {
  payloads: ProtoPayload[];
}
export interface SubmitPayloadResponse {
  results: PayloadResult[];
}
export interface PayloadResult {
  txid: Bytes;
  accepted: boolean;
  error_code: string;
  error_message: string;
}

export interface PreparePayloadRequest {
  payload: ProtoPayload | null;
}
export interface PreparePayloadResponse {
  valid: boolean;
  error_code: string;
  error_message: string;
}

export interface GetContractIdsRequest {
  after: Bytes;
  limit: number;
}
export interface GetContractIdsResponse {
  contract_ids: Bytes[];
  more: boolean;
}

export interface GetContractSummaryRequest {
  contract_id: Bytes;
  after_txid: Bytes;
  limit: number;
}
export interface GetContractSummaryResponse {
  contract_id: Bytes;
  merkle_root: Bytes;
  payloads: PayloadHash[];
  count: number;
  more: boolean;
}
export interface PayloadHash {
  txid: Bytes;
  payload_hash: Bytes;
}

export interface GetContractTxidsRequest {
  contract_id: Bytes;
  offset: number;
  limit: number;
}
export interface GetContractTxidsResponse {
  txids: Bytes[];
  positions: PayloadPosition[];
  total: number;
  more: boolean;
}

export interface GetContractMerkleRootRequest {
  contract_id: Bytes;
}
export interface GetContractMerkleRootResponse {
  merkle_root: Bytes;
  count: number;
}

export interface GetPayloadByTxidRequest {
  txid: Bytes;
}
export interface GetPayloadByTxidResponse {
  /** Present: an answer without it is refused (its check in PEER_PROTOCOLS). */
  payload: ProtoPayload;
  position: PayloadPosition | null;
}

export interface GetPayloadsRequest {
  txids: Bytes[];
}
export interface GetPayloadsResponse {
  payloads: FoundPayload[];
  answered: number;
}
export interface FoundPayload {
  payload: ProtoPayload | null;
  position: PayloadPosition | null;
}

export interface GetHeadersRequest {
  from_height: number;
  count: number;
}
export interface GetHeadersResponse {
  from_height: number;
  /** 80 bytes per header, heights from_height upward. */
  headers: Bytes;
  /** The peer's highest verified header (0: none). */
  tip_height: number;
}

export interface GetStateRootsRequest {
  from_height: U64;
  to_height: U64;
}
export interface GetStateRootsResponse {
  roots: StateRootAt[];
  anchor_height: U64;
  tip_height: U64;
  /** docs/STATE.md, "Root version" (0: a node of an earlier release, version 1). */
  root_version: number;
}
export interface StateRootAt {
  height: U64;
  block_hash: Bytes;
  state_root: Bytes;
}

export interface GetContractRangesRequest {
  contract_id: Bytes;
  ranges: TxidRange[];
}
export interface TxidRange {
  lower: Bytes;
  upper: Bytes;
  list_up_to: number;
}
export interface GetContractRangesResponse {
  ranges: RangeAnswer[];
}
export interface RangeAnswer {
  count: number;
  fingerprint: Bytes;
  txids: Bytes[];
  listed: boolean;
}

/** Every RPC of the peer service: its request and its response. */
export interface PeerWire {
  GetIdentity: { request: GetIdentityRequest; response: GetIdentityResponse };
  Heartbeat: { request: HeartbeatRequest; response: HeartbeatResponse };
  SubmitPayload: { request: SubmitPayloadRequest; response: SubmitPayloadResponse };
  PreparePayload: { request: PreparePayloadRequest; response: PreparePayloadResponse };
  GetContractIds: { request: GetContractIdsRequest; response: GetContractIdsResponse };
  GetContractSummary: { request: GetContractSummaryRequest; response: GetContractSummaryResponse };
  GetContractTxids: { request: GetContractTxidsRequest; response: GetContractTxidsResponse };
  GetContractMerkleRoot: { request: GetContractMerkleRootRequest; response: GetContractMerkleRootResponse };
  GetPayloadByTxid: { request: GetPayloadByTxidRequest; response: GetPayloadByTxidResponse };
  GetStateRoots: { request: GetStateRootsRequest; response: GetStateRootsResponse };
  GetContractRanges: { request: GetContractRangesRequest; response: GetContractRangesResponse };
  GetPayloads: { request: GetPayloadsRequest; response: GetPayloadsResponse };
  GetHeaders: { request: GetHeadersRequest; response: GetHeadersResponse };
}

/** Every RPC: the signed ones (PeerMethod) and the unsigned GetIdentity. */
export type PeerRpc = keyof PeerWire;
export type PeerRequest<M extends PeerRpc> = PeerWire[M]['request'];
export type PeerResponse<M extends PeerRpc> = PeerWire[M]['response'];

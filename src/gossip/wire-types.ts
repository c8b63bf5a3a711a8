/**
 * The peer wire, typed: every RPC of proto/svc.proto with its request and response as
 * proto-loader and codec.ts decode them (field names as in the proto, bytes as Buffers,
 * uint64 as decimal strings, enums by name, absent fields filled with their defaults,
 * an absent message as null). The client (client.ts) and the server's handler table
 * (service.ts) are both typed by `PeerWire`; a sender may leave any field out (`WireInit`).
 *
 * What decoding cannot guarantee (byte lengths, numbers in range, parallel lists) is
 * checked once per response message here (`checkResponse`, called by the client for
 * every answer), so a peer's malformed answer is a NodeError `bad_request` naming the
 * field, never a TypeError where the answer is used. Payload messages are checked where
 * they become the node's WirePayload (wire.ts, fromProtoPayload), one at a time, so one
 * bad payload in an answer does not spoil the others.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { FINGERPRINT_BYTES } from '@svc-node/protocol/fingerprint';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import { GET_HEADERS_MAX } from './limits.js';
import type { PeerMethod } from './server.js';

/** A bytes field (decoded: a Buffer). */
type Bytes = Uint8Array;
/** A uint64 field: a decimal string (proto-loader's `longs: String`). */
type U64 = string;

export interface GetIdentityRequest {
  challenge: Bytes;
}
export interface GetIdentityResponse {
  public_key: Bytes;
  node_id: string;
  signature: Bytes;
}

/** The sender's best verified block header (a hint: the receiver asks its endpoint). */
export interface TipAnnouncement {
  tip_height: U64;
  /** 80 bytes, or empty when the sender holds no header. */
  tip_header: Bytes;
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
export interface PayloadPosition {
  height: number;
  tx_index: number;
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
  /** Present: an answer without it is refused (RESPONSE_CHECKS). */
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

// The map and the list of signed methods (server.ts, PEER_METHODS) name the same RPCs.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameRpcs: Same<PeerRpc, PeerMethod | 'GetIdentity'> = true;
void sameRpcs;

/** A message as a sender may write it: any field left out is sent as its default. */
export type WireInit<T> = { [K in keyof T]?: WireField<T[K]> };
type WireField<V> = V extends Uint8Array ? Uint8Array : V extends readonly (infer E)[] ? WireField<E>[] : V extends object ? WireInit<V> : V;

// ------------------------------------------------------------------ response checks

function malformed(method: PeerRpc, field: string, what: string): NodeError {
  return new NodeError('bad_request', `${method} answer: ${field} ${what}`, { field });
}

function bytesOf(method: PeerRpc, field: string, b: Bytes, lengths: readonly number[]): void {
  if (!lengths.includes(b.length)) throw malformed(method, field, `must be ${lengths.join(' or ')} bytes, not ${b.length}`);
}

const id32 = (method: PeerRpc, field: string, b: Bytes): void => bytesOf(method, field, b, [32]);

function u64(method: PeerRpc, field: string, v: U64): void {
  if (!/^\d{1,16}$/.test(v) || !Number.isSafeInteger(Number(v))) throw malformed(method, field, `must be a height, not ${JSON.stringify(v.slice(0, 24))}`);
}

/** A heartbeat's tip, in a request or an answer: a height and an 80-byte header, or neither. */
export function checkTipAnnouncement(t: TipAnnouncement, side: 'request' | 'answer'): void {
  const bad = (field: string, what: string): NodeError => new NodeError('bad_request', `Heartbeat ${side}: ${field} ${what}`, { field });
  if (!/^\d{1,16}$/.test(t.tip_height) || !Number.isSafeInteger(Number(t.tip_height))) throw bad('tip_height', `must be a height, not ${JSON.stringify(t.tip_height.slice(0, 24))}`);
  if (t.tip_header.length !== 0 && t.tip_header.length !== 80) throw bad('tip_header', `must be 0 or 80 bytes, not ${t.tip_header.length}`);
}

/**
 * What decoding leaves unchecked in each response, by the rules of proto/svc.proto.
 * `req` is the request answered (some answers are bounded by it).
 */
const RESPONSE_CHECKS: { [M in PeerRpc]: (r: PeerResponse<M>, req: WireInit<PeerRequest<M>>) => void } = {
  GetIdentity: (r) => {
    bytesOf('GetIdentity', 'public_key', r.public_key, [32]);
    bytesOf('GetIdentity', 'signature', r.signature, [64]);
  },
  // An empty key: the peer did not say (the heartbeat then learns no key).
  Heartbeat: (r) => {
    u64('Heartbeat', 'height', r.height);
    bytesOf('Heartbeat', 'public_key', r.public_key, [0, 32]);
    checkTipAnnouncement(r, 'answer');
  },
  // An empty txid answers a payload that did not decode.
  SubmitPayload: (r, req) => {
    if (r.results.length !== (req.payloads?.length ?? 0)) throw malformed('SubmitPayload', 'results', `must be one per payload sent (${req.payloads?.length ?? 0}), not ${r.results.length}`);
    for (const x of r.results) bytesOf('SubmitPayload', 'results.txid', x.txid, [0, 32]);
  },
  PreparePayload: () => undefined,
  GetContractIds: (r) => {
    for (const id of r.contract_ids) id32('GetContractIds', 'contract_ids', id);
  },
  GetContractSummary: (r) => {
    id32('GetContractSummary', 'contract_id', r.contract_id);
    id32('GetContractSummary', 'merkle_root', r.merkle_root);
    for (const p of r.payloads) {
      id32('GetContractSummary', 'payloads.txid', p.txid);
      id32('GetContractSummary', 'payloads.payload_hash', p.payload_hash);
    }
  },
  GetContractTxids: (r) => {
    for (const t of r.txids) id32('GetContractTxids', 'txids', t);
    if (r.positions.length !== r.txids.length) throw malformed('GetContractTxids', 'positions', `must be parallel to txids (${r.txids.length}), not ${r.positions.length}`);
  },
  GetContractMerkleRoot: (r) => id32('GetContractMerkleRoot', 'merkle_root', r.merkle_root),
  GetPayloadByTxid: (r) => {
    if ((r.payload as ProtoPayload | null) === null) throw malformed('GetPayloadByTxid', 'payload', 'is missing');
  },
  GetStateRoots: (r) => {
    u64('GetStateRoots', 'anchor_height', r.anchor_height);
    u64('GetStateRoots', 'tip_height', r.tip_height);
    for (const x of r.roots) {
      u64('GetStateRoots', 'roots.height', x.height);
      id32('GetStateRoots', 'roots.block_hash', x.block_hash);
      id32('GetStateRoots', 'roots.state_root', x.state_root);
    }
  },
  GetContractRanges: (r, req) => {
    if (r.ranges.length !== (req.ranges?.length ?? 0)) throw malformed('GetContractRanges', 'ranges', `must be one per range asked (${req.ranges?.length ?? 0}), not ${r.ranges.length}`);
    for (const a of r.ranges) {
      if (a.listed) for (const t of a.txids) id32('GetContractRanges', 'ranges.txids', t);
      else bytesOf('GetContractRanges', 'ranges.fingerprint', a.fingerprint, [FINGERPRINT_BYTES]);
    }
  },
  GetPayloads: (r, req) => {
    const asked = req.txids?.length ?? 0;
    if (r.answered > asked) throw malformed('GetPayloads', 'answered', `must be at most the ${asked} txids asked, not ${r.answered}`);
  },
  // The run answered is the one asked for: from the asked height, whole headers, at most the count.
  GetHeaders: (r, req) => {
    const from = req.from_height ?? 0;
    const asked = req.count && req.count < GET_HEADERS_MAX ? req.count : GET_HEADERS_MAX;
    if (r.from_height !== from) throw malformed('GetHeaders', 'from_height', `must be the height asked (${from}), not ${r.from_height}`);
    if (r.headers.length % HEADER_BYTES !== 0 || r.headers.length / HEADER_BYTES > asked) {
      throw malformed('GetHeaders', 'headers', `must be at most ${asked} headers of ${HEADER_BYTES} bytes, not ${r.headers.length} bytes`);
    }
    if (r.headers.length > 0 && r.tip_height < from + r.headers.length / HEADER_BYTES - 1) throw malformed('GetHeaders', 'tip_height', `must be at least the last height answered, not ${r.tip_height}`);
  },
};

/** Every RPC of the wire map (the proto's service, test/gossip/wire-types.test.ts). */
export const PEER_RPCS = Object.keys(RESPONSE_CHECKS) as PeerRpc[];

/** `r` as decoded, once checked against the rules decoding leaves to the receiver; throws NodeError `bad_request`. */
export function checkResponse<M extends PeerRpc>(method: M, r: PeerResponse<M>, req: WireInit<PeerRequest<M>>): PeerResponse<M> {
  (RESPONSE_CHECKS[method] as (r: PeerResponse<M>, req: WireInit<PeerRequest<M>>) => void)(r, req);
  return r;
}

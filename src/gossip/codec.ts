/**
 * The inner request messages of the peer service (proto/svc.proto, header section 2):
 * every signed RPC carries its request as `SignedRequest.body`, the bytes the signature
 * covers. gRPC (via proto-loader) decodes only the wrapper; the body is decoded here,
 * after the signature verified, with the same conventions as proto-loader (field names
 * as in the proto, uint64 as decimal strings, enums by name, defaults filled in).
 */
import protobuf from 'protobufjs';
import { PROTO_PATH, type PeerMethod } from './server.js';

/** The inner request message of each signed method. */
const BODY_TYPE: Record<PeerMethod, string> = {
  Heartbeat: 'HeartbeatRequest',
  SubmitPayload: 'SubmitPayloadRequest',
  PreparePayload: 'PreparePayloadRequest',
  GetContractIds: 'GetContractIdsRequest',
  GetContractSummary: 'GetContractSummaryRequest',
  GetContractTxids: 'GetContractTxidsRequest',
  GetContractMerkleRoot: 'GetContractMerkleRootRequest',
  GetPayloadByTxid: 'GetPayloadByTxidRequest',
  GetStateRoots: 'GetStateRootsRequest',
  GetContractRanges: 'GetContractRangesRequest',
  GetPayloads: 'GetPayloadsRequest',
  GetHeaders: 'GetHeadersRequest',
};

const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let root: protobuf.Root | null = null;

function bodyType(method: PeerMethod): protobuf.Type {
  root ??= new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true });
  return root.lookupType(`svc.v2.${BODY_TYPE[method]}`);
}

/** The serialized inner request of `method` (protobufjs's encoder; any proto3 encoder will do). */
export function encodeBody(method: PeerMethod, req: Record<string, unknown>): Buffer {
  const t = bodyType(method);
  const bytes = t.encode(t.fromObject(req)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The inner request decoded; throws (with protobufjs's description) on bytes that are not one. */
export function decodeBody(method: PeerMethod, body: Uint8Array): Record<string, unknown> {
  const t = bodyType(method);
  return t.toObject(t.decode(body), TO_OBJECT) as Record<string, unknown>;
}

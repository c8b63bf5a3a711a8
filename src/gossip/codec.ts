/**
 * The inner request messages of the peer service (proto/svc.proto, header section 2):
 * every signed RPC carries its request as `SignedRequest.body`, the bytes the signature
 * covers. gRPC (via proto-loader) decodes only the wrapper; the body is decoded here,
 * after the signature verified, typed by the method's descriptor (protocols.ts), with the same conventions as proto-loader (field names
 * as in the proto, uint64 as decimal strings, enums by name, defaults filled in).
 */
import protobuf from 'protobufjs';
import { PROTO_PATH } from './server.js';
import { protocolOf, type PeerMethod } from './protocols.js';
import type { PeerRequest, WireInit } from './wire-types.js';

const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let root: protobuf.Root | null = null;

function bodyType(method: PeerMethod): protobuf.Type {
  root ??= new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true });
  // Every signed method names its body message (PEER_PROTOCOLS).
  return root.lookupType(`svc.v2.${protocolOf(method).body!}`);
}

/** The serialized inner request of `method` (protobufjs's encoder; any proto3 encoder will do). */
export function encodeBody<M extends PeerMethod>(method: M, req: WireInit<PeerRequest<M>>): Buffer {
  const t = bodyType(method);
  const bytes = t.encode(t.fromObject(req)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The inner request decoded; throws (with protobufjs's description) on bytes that are not one. */
export function decodeBody<M extends PeerMethod>(method: M, body: Uint8Array): PeerRequest<M> {
  const t = bodyType(method);
  // protobufjs fills every field in (defaults included) with the conventions above: the shape PeerWire declares.
  return t.toObject(t.decode(body), TO_OBJECT) as PeerRequest<M>;
}

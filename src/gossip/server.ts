/** The gRPC peer service definition (proto/svc.proto via @grpc/proto-loader) and server setup. */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { MAX_GRPC_MESSAGE_BYTES, MAX_GRPC_RESPONSE_BYTES } from './limits.js';
import { BindError, formatAddress, probeListen } from '../supervisor/address.js';
import type { PeerRpc } from './wire-types.js';

export const PROTO_PATH = fileURLToPath(new URL('../../../proto/svc.proto', import.meta.url));

/** keepCase: field names as in the proto; uint64 as decimal strings; enums by name; defaults filled. */
const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

let cached: protoLoader.PackageDefinition | null = null;

export function packageDefinition(): protoLoader.PackageDefinition {
  cached ??= protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
  return cached;
}

/** The request codec of a method (the SignedRequest wrapper but for GetIdentity): the exact functions gRPC uses on the wire. */
export function requestCodec(method: PeerRpc): { serialize: (v: object) => Buffer; deserialize: (b: Buffer) => Record<string, unknown> } {
  const svc = packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>;
  const m = svc[method]!;
  return { serialize: m.requestSerialize as (v: object) => Buffer, deserialize: m.requestDeserialize as (b: Buffer) => Record<string, unknown> };
}

/**
 * What the server's handlers receive for bytes that are not a protobuf message of the
 * method. grpc-js itself would answer those INTERNAL ("Error deserializing request"), as
 * if the node had a bug; the handler answers INVALID_ARGUMENT `bad_request` instead.
 */
export class MalformedRequest {
  constructor(readonly reason: string) {}
}

/** The peer service as the server registers it: request decoding never throws (see MalformedRequest). */
export function loadPeerService(): grpc.ServiceDefinition {
  const pkg = grpc.loadPackageDefinition(packageDefinition()) as unknown as { svc: { v2: { Peer: { service: grpc.ServiceDefinition } } } };
  const out: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const [name, def] of Object.entries(pkg.svc.v2.Peer.service)) {
    const decode = def.requestDeserialize;
    out[name] = {
      ...def,
      requestDeserialize: (b: Buffer): object => {
        try {
          return decode(b);
        } catch (e) {
          // protobufjs names the wire problem ("index out of range", "invalid wire type"):
          // public, and about the peer's own bytes.
          return new MalformedRequest(String((e as Error).message ?? 'undecodable').slice(0, 200));
        }
      },
    };
  }
  return out as grpc.ServiceDefinition;
}

export function loadPeerClientCtor(): grpc.ServiceClientConstructor {
  const pkg = grpc.loadPackageDefinition(packageDefinition()) as unknown as { svc: { v2: { Peer: grpc.ServiceClientConstructor } } };
  return pkg.svc.v2.Peer;
}

export function serverOptions(): grpc.ServerOptions {
  return {
    // The 64 KiB payload limit plus one message's framing: larger requests are refused
    // by gRPC (RESOURCE_EXHAUSTED) before they are decoded.
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_GRPC_RESPONSE_BYTES,
  };
}

/**
 * Binds the peer service. grpc-js listens without SO_REUSEPORT, so a busy address fails;
 * the failure rejects with a BindError naming bind_address and the cause (grpc-js folds
 * the errno into a message, so the cause comes from one exclusive bind of node:net).
 */
export function bind(server: grpc.Server, host: string, port: number): Promise<number> {
  const addr = formatAddress(host, port);
  return new Promise((resolve, reject) =>
    server.bindAsync(addr, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (!err) return resolve(bound);
      const m = /\b(E[A-Z]{3,})\b/.exec(err.message);
      void probeListen(host, port).then((errno) => reject(new BindError('bind_address', addr, errno ?? m?.[1] ?? 'EBIND')));
    }),
  );
}

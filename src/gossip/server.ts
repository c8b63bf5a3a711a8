/** The gRPC peer service on bind_address (@grpc/grpc-js with the proto in proto/). */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import { MAX_BODY_BYTES } from '../rest/http.js';

export const PROTO_PATH = fileURLToPath(new URL('../../../proto/svc.proto', import.meta.url));

/** A payload of 64 KiB plus the envelope of one gRPC message (auth, ids, field tags). */
export const MAX_GRPC_MESSAGE_BYTES = MAX_BODY_BYTES + 1024;

export function loadPeerService(): grpc.ServiceDefinition {
  const def = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { svc: { v1: { Peer: { service: grpc.ServiceDefinition } } } };
  return pkg.svc.v1.Peer.service;
}

export function loadPeerClientCtor(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { svc: { v1: { Peer: grpc.ServiceClientConstructor } } };
  return pkg.svc.v1.Peer;
}

export function serverOptions(): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
    'grpc.max_send_message_length': 16 * 1024 * 1024,
  };
}

export function bind(server: grpc.Server, host: string, port: number): Promise<number> {
  const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) =>
    server.bindAsync(addr, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
}

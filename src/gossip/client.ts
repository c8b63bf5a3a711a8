/** An outbound connection to one peer: every request signed, one deadline per call. */
import * as grpc from '@grpc/grpc-js';
import { NodeError } from '../errors.js';
import { loadPeerClientCtor, type PeerMethod } from './server.js';
import { MAX_GRPC_MESSAGE_BYTES, MAX_GRPC_RESPONSE_BYTES } from './limits.js';
import type { Signer } from './auth.js';

/** "http://host:port" (or grpc://, https://) -> gRPC target and credentials. */
export function grpcTarget(url: string): { target: string; secure: boolean } {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  const port = u.port || (secure ? '443' : u.protocol === 'http:' ? '80' : '50051');
  const host = u.hostname.startsWith('[') ? u.hostname : u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname;
  return { target: `${host}:${port}`, secure };
}

export class RpcFailure extends Error {
  constructor(
    readonly method: PeerMethod,
    readonly grpcCode: number,
    readonly details: string,
  ) {
    super(`${method} failed: ${grpc.status[grpcCode] ?? grpcCode} ${details}`);
  }
}

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: Record<string, unknown>) => void) => void;

export class PeerClient {
  private readonly client: grpc.Client;

  constructor(
    readonly url: string,
    private readonly signer: Signer,
    private readonly timeoutMs: number,
  ) {
    const Ctor = loadPeerClientCtor();
    const { target, secure } = grpcTarget(url);
    this.client = new Ctor(target, secure ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(), {
      // Never send more than a peer accepts; answers (txid lists) may be large.
      'grpc.max_send_message_length': MAX_GRPC_MESSAGE_BYTES,
      'grpc.max_receive_message_length': MAX_GRPC_RESPONSE_BYTES,
      // A peer that went away is reconnected with backoff, at least every 2 s once it is
      // back, so gossip to a restarted peer resumes quickly.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2_000,
    });
  }

  /**
   * Signs `req` and calls `method`; rejects with RpcFailure (gRPC status) or a NodeError.
   * `waitForReady`: wait (within the deadline) for a connection that is being
   * re-established instead of failing at once; used for peers known to be alive.
   */
  call<R = Record<string, unknown>>(method: PeerMethod, req: Record<string, unknown>, timeoutMs = this.timeoutMs, waitForReady = false): Promise<R> {
    const signed = this.signer.sign(method, req);
    const fn = (this.client as unknown as Record<string, Unary>)[method];
    if (typeof fn !== 'function') return Promise.reject(new NodeError('internal', `no RPC ${method}`));
    return new Promise((resolve, reject) => {
      const md = new grpc.Metadata();
      if (waitForReady) md.setOptions({ waitForReady: true });
      fn.call(this.client, signed, md, { deadline: Date.now() + timeoutMs }, (e, r) => {
        if (e) reject(new RpcFailure(method, e.code, e.details));
        else resolve(r as R);
      });
    });
  }

  close(): void {
    this.client.close();
  }
}

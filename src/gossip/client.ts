/**
 * An outbound connection to one peer: every request signed for the peer's key, one
 * deadline per call. The key is learned with GetIdentity (its proof checked) on the
 * first call and cached; a peer that answers "signed for another receiver" (it restarted
 * with a new identity) is asked again, and the call retried once. Requests and answers
 * are typed by the RPC's descriptor (protocols.ts), and every answer is checked by it
 * before a caller sees it.
 */
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { NodeError } from '@svc-node/protocol/errors';
import { verifyIdentityProof } from './auth.js';
import { loadPeerClientCtor } from './server.js';
import { checkResponse, type PeerMethod } from './protocols.js';
import type { PeerRequest, PeerResponse, PeerRpc, WireInit } from './wire-types.js';
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
    readonly method: PeerRpc,
    readonly grpcCode: number,
    readonly details: string,
  ) {
    super(`${method} failed: ${grpc.status[grpcCode] ?? grpcCode} ${details}`);
  }
}

/** Bytes of the GetIdentity challenge this client sends (the proto allows 16 to 64). */
const IDENTITY_CHALLENGE_BYTES = 32;

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: object) => void) => void;

export class PeerClient {
  private readonly client: grpc.Client;
  /** The peer's proven identity, once asked (GetIdentity). */
  private identityKnown: Promise<{ publicKey: Buffer; nodeId: string }> | null = null;

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
   * Calls one RPC with the wire object `wire` (the request `req`, signed but for
   * GetIdentity); rejects with RpcFailure, or NodeError `bad_request` for a malformed answer.
   */
  private invoke<M extends PeerRpc>(method: M, req: WireInit<PeerRequest<M>>, wire: object, timeoutMs: number, waitForReady: boolean): Promise<PeerResponse<M>> {
    const fn = (this.client as unknown as Record<string, Unary>)[method];
    if (typeof fn !== 'function') return Promise.reject(new NodeError('internal', `no RPC ${method}`));
    return new Promise((resolve, reject) => {
      const md = new grpc.Metadata();
      if (waitForReady) md.setOptions({ waitForReady: true });
      fn.call(this.client, wire, md, { deadline: Date.now() + timeoutMs }, (e, r) => {
        if (e) return reject(new RpcFailure(method, e.code, e.details));
        try {
          // Decoded by proto-loader into the shape PeerWire declares; checked by the descriptor for the rest.
          resolve(checkResponse(method, r as PeerResponse<M>, req));
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  /** The peer's public key and node id, proven over a fresh challenge; cached once known. */
  identity(timeoutMs = this.timeoutMs, waitForReady = false): Promise<{ publicKey: Buffer; nodeId: string }> {
    this.identityKnown ??= (async () => {
      const challenge = randomBytes(IDENTITY_CHALLENGE_BYTES);
      const req = { challenge };
      const r = await this.invoke('GetIdentity', req, req, timeoutMs, waitForReady);
      if (!verifyIdentityProof(r.public_key, challenge, r.signature)) throw new NodeError('unauthorized', `${this.url} did not prove its identity`);
      return { publicKey: Buffer.from(r.public_key), nodeId: r.node_id };
    })();
    // A failed attempt is forgotten, so the next call asks again.
    this.identityKnown.catch(() => (this.identityKnown = null));
    return this.identityKnown;
  }

  /**
   * Signs `req` (the inner request of `method`) for the peer and calls `method`; rejects
   * with RpcFailure (gRPC status) or a NodeError (`bad_request`: a malformed answer,
   * protocols.ts). `waitForReady`: wait (within the
   * deadline) for a connection that is being re-established instead of failing at once;
   * used for peers known to be alive.
   */
  async call<M extends PeerMethod>(method: M, req: WireInit<PeerRequest<M>>, timeoutMs = this.timeoutMs, waitForReady = false): Promise<PeerResponse<M>> {
    for (let attempt = 0; ; attempt++) {
      const known = this.identityKnown;
      const { publicKey } = await this.identity(timeoutMs, waitForReady);
      try {
        return await this.invoke(method, req, this.signer.request(method, publicKey, req), timeoutMs, waitForReady);
      } catch (e) {
        // The peer's identity changed (a restart with an ephemeral key): learn it again.
        const stale = e instanceof RpcFailure && e.grpcCode === grpc.status.UNAUTHENTICATED && e.details.includes('signed for another receiver');
        if (!stale || attempt > 0) throw e;
        if (this.identityKnown === known || known === null) this.identityKnown = null;
      }
    }
  }

  close(): void {
    this.client.close();
  }
}

/**
 * The server side of the peer service. Every request passes, in this order (cheap checks
 * first, signature next, per-peer budget last; which budgets is its descriptor's `rate`,
 * protocols.ts):
 *   1. the global token bucket (gossip.global_rate_per_s), before any signature work;
 *      the unsigned GetIdentity stops here (one signature of ours per answer);
 *   2. the Ed25519 signature over the SignedRequest's body bytes, the receiver key and
 *      the clock window (auth.ts): unsigned, forged, stale or other-receiver requests are
 *      refused UNAUTHENTICATED; only then is the body decoded (codec.ts);
 *   3. the sender's budget (peer-limiter.ts: gossip.inbound_rate_per_s, queue of
 *      gossip.inbound_queue; beyond it the request is dropped: RESOURCE_EXHAUSTED), at
 *      most PEER_LIMITER_KEYS keys tracked;
 *   4. for the list pages (GetContractSummary, GetContractTxids) and the fetches
 *      (GetPayloads, GetHeaders), the largest answers (up to PAGE_MAX entries, 1 MiB of
 *      payloads or GET_HEADERS_MAX headers): a second budget per key, for lists smaller
 *      than the general one (LIST_RATE_PER_S, queue LIST_QUEUE), for fetches
 *      FETCH_RATE_PER_S (queue FETCH_QUEUE), so a peer catching up is bound by its own
 *      verification; and at most LIST_CONCURRENCY of either in the core at once across
 *      all peers (LIST_WAITING more may wait);
 *   5. the handler. Payloads go to the core's intake (the REST checks); nothing a peer
 *      says is trusted for a result.
 */
import * as grpc from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import { NodeError } from '@svc-node/protocol/errors';
import { refusalIsRetryable } from '@svc-node/protocol/rules';
import PQueue from 'p-queue';
import {
  GET_HEADERS_MAX,
  GET_PAYLOADS_ANSWER_BYTES,
  payloadsThatFit,
  GET_PAYLOADS_MAX,
  LIST_CONCURRENCY,
  FETCH_QUEUE,
  FETCH_RATE_PER_S,
  LIST_QUEUE,
  LIST_RATE_PER_S,
  LIST_WAITING,
  MAX_BATCH_PAYLOADS,
  UNPAID_PAYLOAD_COST,
  PEER_LIMITER_KEYS,
} from './limits.js';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import { PeerLimiter } from './peer-limiter.js';
import { BoundedMap, TokenBucket } from './seen.js';
import { bytes32, encodedSize, fromProtoPayload, hex, toProtoPayload } from './wire.js';
import { packPayload, unpackPayload } from '../packed-payload.js';
import type { Signer, Verifier } from './auth.js';
import { decodeBody } from './codec.js';
import { sourceOf, type PeerSet } from './peers.js';
import type { Forwarder } from './forwarder.js';
import { MalformedRequest } from './server.js';
import { PEER_METHODS, protocolOf, type FoundPayload, type PeerMethod, type PeerRequest, type PeerResponse, type ServedBy, type ServedRpc, type SubmitPayloadRequest, type SubmitPayloadResponse } from './protocols.js';
import type { ForwardedPeerQueries } from '../messages/writer.js';
import { checkTipAnnouncement, type TipAnnouncement, type WireInit } from './wire-types.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi } from '../messages/core.js';
import type { GossipCounters, WirePayload } from '../messages/gossip.js';
import type { GossipOptions } from '../config/options.js';
import type { Logger } from '../log.js';

/**
 * Refusals of a payload that shows no coin paying for its wait (docs/STATE.md, "Coin
 * evidence"): none sent, one that does not hold, or one not provable here (a made-up
 * transaction, or one placed at or below this node's journal anchor). An honest peer sends
 * the last two only when this node lacks a header or a parent payload the peer holds, or
 * the peer is anchored lower: rare, and costing it one request's worth each.
 */
const UNPAID: ReadonlySet<string> = new Set(['coin_missing', 'bad_coin', 'coin_unproven', 'coin_before_anchor']);

/** What this node's heartbeats carry: its processed height and its header tip. */
export interface LocalAdvert {
  height: number;
  tip: { height: number; header: Uint8Array } | null;
}

/** A LocalAdvert as heartbeat fields (HeartbeatRequest and HeartbeatResponse alike). */
export function advertFields(a: LocalAdvert): { height: string } & TipAnnouncement {
  return { height: String(a.height), tip_height: String(a.tip?.height ?? 0), tip_header: a.tip?.header ?? new Uint8Array(0) };
}

export interface PayloadVerdict {
  txid: string;
  accepted: boolean;
  error_code: string;
  error_message: string;
}


export interface ServiceDeps {
  core: () => RpcClient<CoreApi>;
  verifier: Verifier;
  /** This node's identity (GetIdentity proofs). */
  signer: Signer;
  peers: PeerSet;
  forwarder: Forwarder;
  counters: GossipCounters;
  opts: GossipOptions;
  nodeId: string;
  publicKey: Buffer;
  /** What this node's heartbeats carry now, read when one is answered (main.ts asks the core). */
  localAdvert: () => LocalAdvert | Promise<LocalAdvert>;
  /** A peer's heartbeat announced its header tip (main.ts passes one above this node's to the core). */
  peerTip?: (t: TipAnnouncement, announcer: string) => void;
  log: Logger;
  /** The limiters' clock (tests: a fixed one). */
  now?: () => number;
}

export function grpcError(e: unknown): Partial<grpc.StatusObject> {
  if (e instanceof NodeError) return { code: e.grpcStatus, details: `${e.code}: ${e.message}` };
  return { code: grpc.status.INTERNAL, details: 'internal: internal error' };
}

/** Seen-set key: the txid and a hash of everything the payload carries. */
export function seenKey(p: WirePayload): string {
  return `${p.txid}:${createHash('sha256').update(p.kind).update(p.contract_id).update(p.body).digest('hex')}`;
}

/** A signed RPC's wrapper (SignedRequest) as gRPC decodes it; its body is decoded after the signature checks. */
type Signed = Record<string, unknown>;

/** A signed RPC's handler: its request decoded, the sender's key, and `from`, the sender's transport address (grpc-js `getPeer()`). */
type Handler<M extends PeerMethod> = (req: PeerRequest<M>, peerKey: string, from: string) => Promise<WireInit<PeerResponse<M>>>;
/** The handlers of the signed RPCs no writer query answers (the others: `served`, from their descriptor). */
type HandlerTable = { [M in Exclude<PeerMethod, ServedRpc>]: Handler<M> };

export class PeerService {
  readonly seen: BoundedMap<string, Promise<PayloadVerdict>>;
  private readonly global: TokenBucket;
  readonly limiter: PeerLimiter;
  readonly listLimiter: PeerLimiter;
  readonly fetchLimiter: PeerLimiter;
  /** List requests in the core now (at most LIST_CONCURRENCY) and waiting for a slot. */
  readonly listQueue = new PQueue({ concurrency: LIST_CONCURRENCY });

  constructor(private readonly d: ServiceDeps) {
    this.seen = new BoundedMap(d.opts.seenCapacity);
    // Burst of one second's worth: short spikes pass, sustained floods do not.
    this.global = new TokenBucket(d.opts.globalRatePerS, d.opts.globalRatePerS);
    this.limiter = new PeerLimiter({ ratePerS: d.opts.inboundRatePerS, queue: d.opts.inboundQueue, capacity: PEER_LIMITER_KEYS }, d.now);
    this.listLimiter = new PeerLimiter({ ratePerS: LIST_RATE_PER_S, queue: LIST_QUEUE, capacity: PEER_LIMITER_KEYS }, d.now);
    this.fetchLimiter = new PeerLimiter({ ratePerS: FETCH_RATE_PER_S, queue: FETCH_QUEUE, capacity: PEER_LIMITER_KEYS }, d.now);
  }

  /** Stops the limiters' timers (shutdown). */
  close(): void {
    this.limiter.close();
    this.listLimiter.close();
    this.fetchLimiter.close();
    this.listQueue.clear();
  }

  /** A list request: the per-key list budget, then a slot of the global list queue. */
  private listed<M extends PeerMethod>(fn: Handler<M>): Handler<M> {
    return this.bulk(fn, this.listLimiter, 'summary and txid list requests');
  }

  /** GetPayloads and GetHeaders: as `listed`, on the fetch budget (FETCH_RATE_PER_S). */
  private fetched<M extends PeerMethod>(fn: Handler<M>): Handler<M> {
    return this.bulk(fn, this.fetchLimiter, 'payload and header fetches');
  }

  /** A handler behind `limiter` (per key) and the list slots shared by every peer (LIST_CONCURRENCY, LIST_WAITING). */
  private bulk<M extends PeerMethod>(fn: Handler<M>, limiter: PeerLimiter, what: string): Handler<M> {
    return (req, key, from) =>
      new Promise((resolve, reject) => {
        const refuse = (message: string): void => {
          this.d.counters.requests_rate_limited++;
          reject(new NodeError('rate_limited', message));
        };
        const run = (): void => {
          if (this.listQueue.size >= LIST_WAITING) return refuse('the node is answering too many summary, txid list, payload and header requests');
          this.listQueue.add(() => fn(req, key, from)).then((r) => resolve(r!), reject);
        };
        if (!limiter.admit(key, run)) refuse(`too many ${what} from this peer`);
      });
  }

  /** Marks a payload this node stored by another path (REST, sync) as seen and accepted. */
  markAccepted(p: WirePayload): void {
    this.seen.set(seenKey(p), Promise.resolve({ txid: p.txid, accepted: true, error_code: '', error_message: '' }));
  }

  /**
   * The service as gRPC registers it: GetIdentity, and every signed RPC through `unary`
   * (the global and the sender's budget) to its handler behind the budget its descriptor
   * names (PEER_PROTOCOLS).
   */
  handlers(): grpc.UntypedServiceImplementation {
    const table = this.handlerTable();
    const out: grpc.UntypedServiceImplementation = { GetIdentity: (call: grpc.ServerUnaryCall<Signed, object>, cb: grpc.sendUnaryData<object>) => this.identity(call, cb) };
    const add = <M extends PeerMethod>(m: M): void => {
      const p = protocolOf(m);
      const own = (table as Partial<{ [K in PeerMethod]: Handler<K> }>)[m];
      const fn = own ?? this.served(p.serve as unknown as ServedBy<M, keyof ForwardedPeerQueries>);
      out[m] = this.unary(m, p.rate === 'list' ? this.listed(fn) : p.rate === 'fetch' ? this.fetched(fn) : fn);
    };
    for (const m of PEER_METHODS) add(m);
    return out;
  }

  /** An RPC a writer query answers: its params from the request, the core's forward of the query, its answer on the wire. */
  private served<M extends PeerMethod, Q extends keyof ForwardedPeerQueries>(s: ServedBy<M, Q>): Handler<M> {
    // The core's PeerApi holds every forwarded query (messages/gossip.ts).
    const core = (): RpcClient<ForwardedPeerQueries> => this.d.core() as unknown as RpcClient<ForwardedPeerQueries>;
    return async (req) => s.answer(await core().call(s.query, s.params(req)), req);
  }

  /** The handlers of the signed RPCs that do more than forward a writer query. */
  private handlerTable(): HandlerTable {
    return {
      Heartbeat: async (req, key, from) => {
        checkTipAnnouncement(req, 'request');
        if (req.url.length > 0 && req.url.length <= 512) this.d.peers.learn(req.url, key, req.node_id, sourceOf(from));
        this.d.peerTip?.(req, key);
        return { node_id: this.d.nodeId, ...advertFields(await this.d.localAdvert()), public_key: this.d.publicKey, peers: this.d.peers.active().length };
      },
      SubmitPayload: (req, key) => this.submit(req, key),
      PreparePayload: async (req) => {
        try {
          await this.d.core().call('peerPrepare', { payload: packPayload(this.payloadOf(req.payload)) });
          return { valid: true, error_code: '', error_message: '' };
        } catch (e) {
          const n = e instanceof NodeError ? e : new NodeError('internal', 'internal error');
          return { valid: false, error_code: n.code, error_message: n.message };
        }
      },
      GetPayloadByTxid: async (req) => {
        const txid = bytes32(req.txid, 'txid');
        const p = await this.d.core().call('peerPayload', { txid });
        if (!p) throw new NodeError('not_found', `no payload with txid ${txid}`);
        this.d.counters.payloads_served++;
        return { payload: toProtoPayload(unpackPayload(p.payload)), position: { height: p.height ?? 0, tx_index: p.tx_index ?? 0 } };
      },
      GetPayloads: async (req) => {
        const list = req.txids;
        if (list.length === 0 || list.length > GET_PAYLOADS_MAX) throw new NodeError('bad_request', `1 to ${GET_PAYLOADS_MAX} txids per request`, { field: 'txids' });
        const txids = list.map((t) => bytes32(t, 'txid'));
        const payloads: WireInit<FoundPayload>[] = [];
        let bytes = 0;
        let answered = 0;
        // From the core a few first, then as many as the answer's room holds at their size:
        // few round trips, and little read past the answer's byte bound.
        for (let i = 0; i < txids.length; ) {
          const n = payloadsThatFit(txids.length - i, GET_PAYLOADS_ANSWER_BYTES - bytes, bytes, payloads.length);
          const got = await this.d.core().call('peerPayloads', { txids: txids.slice(i, i + n) });
          i += n;
          for (const p of got) {
            if (p) {
              const payload = unpackPayload(p.payload);
              // One payload at least; then stop before the answer passes its bound.
              if (payloads.length > 0 && bytes + encodedSize(payload) > GET_PAYLOADS_ANSWER_BYTES) return { payloads, answered };
              bytes += encodedSize(payload);
              payloads.push({ payload: toProtoPayload(payload), position: { height: p.height ?? 0, tx_index: p.tx_index ?? 0 } });
              this.d.counters.payloads_served++;
            }
            answered++;
          }
        }
        return { payloads, answered };
      },
      GetHeaders: async (req) => {
        const from = req.from_height;
        const count = req.count > 0 && req.count < GET_HEADERS_MAX ? req.count : GET_HEADERS_MAX;
        const r = await this.d.core().call('peerHeaders', { from, count });
        this.d.counters.headers_served += r.headers.length;
        return { from_height: from, headers: Buffer.concat(r.headers), tip_height: r.tip ?? 0 };
      },
    };
  }

  /** GetIdentity: unsigned, so only the global budget stands before our signature. */
  private identity(call: grpc.ServerUnaryCall<Signed, object>, cb: grpc.sendUnaryData<object>): void {
    const c = this.d.counters;
    if (!this.global.take()) {
      c.requests_rate_limited++;
      cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'rate_limited: the node is receiving too many peer requests' });
      return;
    }
    const challenge = call.request instanceof MalformedRequest ? null : call.request?.['challenge'];
    if (!(challenge instanceof Uint8Array) || challenge.length < 16 || challenge.length > 64) {
      c.requests_malformed++;
      cb({ code: grpc.status.INVALID_ARGUMENT, details: 'bad_request: challenge must be 16 to 64 bytes' });
      return;
    }
    cb(null, { public_key: this.d.publicKey, node_id: this.d.nodeId, signature: this.d.signer.proveIdentity(challenge) });
  }

  private unary<M extends PeerMethod>(method: M, fn: Handler<M>): grpc.handleUnaryCall<Signed, object> {
    return (call, cb) => {
      const c = this.d.counters;
      if (!this.global.take()) {
        c.requests_rate_limited++;
        cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'rate_limited: the node is receiving too many peer requests' });
        return;
      }
      if (call.request instanceof MalformedRequest) {
        c.requests_malformed++;
        cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad_request: not a SignedRequest message: ${call.request.reason}` });
        return;
      }
      const wire = call.request ?? {};
      const v = this.d.verifier.verify(method, wire);
      if (!v.ok) {
        c.requests_unauthenticated++;
        this.d.log.debug('peer request refused', { method, reason: v.reason, from: call.getPeer() });
        cb({ code: grpc.status.UNAUTHENTICATED, details: `unauthorized: ${v.reason}` });
        return;
      }
      // Decoded only now, from exactly the bytes the signature covers.
      let req: PeerRequest<M>;
      try {
        // protobufjs decodes into the shape the descriptor's types declare (defaults filled in).
        req = decodeBody(method, wire['body'] instanceof Uint8Array ? wire['body'] : Buffer.alloc(0));
      } catch (e) {
        c.requests_malformed++;
        cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad_request: not a ${method} request body: ${String((e as Error).message ?? 'undecodable').slice(0, 200)}` });
        return;
      }
      this.d.peers.heard(v.key);
      const run = (): void => {
        let p: Promise<WireInit<PeerResponse<M>>>;
        try {
          p = fn(req, v.key, call.getPeer());
        } catch (e) {
          p = Promise.reject(e);
        }
        p.then(
          (r) => cb(null, r),
          (e: unknown) => {
            if (!(e instanceof NodeError)) this.d.log.error('peer handler bug', { method, error: e });
            cb(grpcError(e));
          },
        );
      };
      if (!this.limiter.admit(v.key, run)) {
        c.requests_rate_limited++;
        cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'rate_limited: too many requests from this peer' });
      }
    };
  }

  private payloadOf(p: unknown): WirePayload {
    // The body limit first, exactly as REST intake refuses a body over 64 KiB.
    const body = (p as { body?: unknown } | null)?.body;
    if (body instanceof Uint8Array && body.length > MAX_PAYLOAD_BYTES) throw new NodeError('payload_too_large', `payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
    return fromProtoPayload(p);
  }

  private async submit(req: SubmitPayloadRequest, fromKey: string): Promise<WireInit<SubmitPayloadResponse>> {
    const list = req.payloads;
    if (list.length > MAX_BATCH_PAYLOADS) throw new NodeError('bad_request', `at most ${MAX_BATCH_PAYLOADS} payloads per request`);
    const results: PayloadVerdict[] = new Array(list.length);
    const parsed = list.map((raw) => {
      try {
        return { ok: true as const, p: this.payloadOf(raw) };
      } catch (e) {
        return { ok: false as const, e: e instanceof NodeError ? e : new NodeError('bad_request', 'malformed payload') };
      }
    });
    const run = async (i: number): Promise<void> => {
      const x = parsed[i]!;
      this.d.counters.payloads_received++;
      if (!x.ok) {
        this.d.counters.payloads_refused++;
        const raw = list[i];
        results[i] = { txid: raw?.txid instanceof Uint8Array ? hex(raw.txid) : '', accepted: false, error_code: x.e.code, error_message: x.e.message };
        return;
      }
      results[i] = await this.intakeOnce(x.p, fromKey);
    };
    // Deploys first and one at a time (a call to an unknown contract is refused), then calls.
    for (let i = 0; i < parsed.length; i++) if (parsed[i]!.ok && (parsed[i] as { p: WirePayload }).p.kind === 'deploy') await run(i);
    await Promise.all(parsed.map((x, i) => (x.ok && x.p.kind === 'deploy' ? undefined : run(i))));
    return { results: results.map((r) => ({ ...r, txid: r.txid ? Buffer.from(r.txid, 'hex') : Buffer.alloc(0) })) };
  }

  /** Intake of one peer payload, at most once while it is remembered; forwards what is new. */
  private intakeOnce(p: WirePayload, fromKey: string): Promise<PayloadVerdict> {
    const c = this.d.counters;
    const k = seenKey(p);
    const prior = this.seen.get(k);
    if (prior) {
      c.payloads_duplicate++;
      return prior;
    }
    const verdict = (async (): Promise<PayloadVerdict> => {
      try {
        const r = await this.d.core().call('peerSubmit', { payload: packPayload(p), from: fromKey });
        if (r.created) {
          c.payloads_accepted++;
          this.d.forwarder.forward(p, fromKey);
        } else c.payloads_duplicate++;
        return { txid: p.txid, accepted: true, error_code: '', error_message: '' };
      } catch (e) {
        c.payloads_refused++;
        const n = e instanceof NodeError ? e : new NodeError('internal', 'internal error');
        // A retryable refusal (packages/protocol/src/rules.ts: the anchor not visible yet, the
        // deploy not here yet, the node busy) is forgotten, so a later copy is checked again.
        // So is false evidence: the seen key covers the payload, not the evidence it came
        // with, and another sender's copy may carry the true one.
        if (refusalIsRetryable(n.code) || n.code === 'bad_evidence' || n.code === 'bad_coin' || n.code === 'coin_missing') this.seen.delete(k);
        // A payload that shows no coin paying for its wait costs its sender inbound budget,
        // as much as a request, so a peer that keeps sending them is slowed as a flood is.
        if (UNPAID.has(n.code)) {
          c.payloads_unpaid++;
          this.limiter.charge(fromKey, UNPAID_PAYLOAD_COST);
        }
        this.d.log.debug('peer payload refused', { txid: p.txid, kind: p.kind, code: n.code, reason: n.message });
        return { txid: p.txid, accepted: false, error_code: n.code, error_message: n.message };
      }
    })();
    this.seen.set(k, verdict);
    return verdict;
  }
}

/**
 * The peer protocols, one descriptor per RPC of proto/svc.proto (`PEER_PROTOCOLS`; its
 * request and answer types are `PeerWire`, wire-types.ts): the inner body message the
 * signature covers, the rate budget the server spends on it, the check of its answer, and
 * for the queries the writer answers, how the server serves it. The client (client.ts),
 * the server (service.ts), the body codec and the signer (codec.ts, auth.ts) all read
 * this table; a sender may leave any field out (`WireInit`).
 *
 * What decoding cannot guarantee (byte lengths, numbers in range, parallel lists) is
 * checked once per answer here (`checkResponse`, called by the client for every answer),
 * so a peer's malformed answer is a NodeError `bad_request` naming the field, never a
 * TypeError where the answer is used. Payload messages are checked where they become the
 * node's WirePayload (wire.ts, fromProtoPayload), one at a time, so one bad payload in an
 * answer does not spoil the others. Adding a peer RPC: docs/GOSSIP.md.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { bytesOf, checkTipAnnouncement, id32, malformed, u64, type PeerRequest, type PeerResponse, type PeerRpc, type ProtoPayload, type RangeAnswer, type TxidRange, type WireInit } from './wire-types.js';
import { FINGERPRINT_BYTES } from '@svc-node/protocol/fingerprint';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import { GET_HEADERS_MAX, RANGE_LIST_MAX, RANGES_MAX } from './limits.js';
import { STATE_ROOT_VERSION } from '@svc-node/protocol/state/decisions';
import { boundHex, bytes32, pageLimit } from './wire.js';
import type { ForwardedPeerQueries } from '../messages/writer.js';

/**
 * The budgets a request spends on the server (service.ts, in this order): `global`, the
 * node's token bucket alone (GetIdentity, before the signature any answer costs us);
 * `peer`, that and the sender's budget; `list` and `fetch`, those and a second budget per
 * sender for the largest answers (list pages; payload and header fetches) with the slots
 * they share across all peers.
 */
export type PeerRate = 'global' | 'peer' | 'list' | 'fetch';

/**
 * How the server answers an RPC the writer answers: the writer query's params from the
 * decoded request (with its field checks), and the answer on the wire from the query's
 * (forwarded by the core as it is, a contract-scoped null refused not_found).
 */
export interface ServedBy<M extends PeerRpc, Q extends keyof ForwardedPeerQueries> {
  query: Q;
  params: (req: PeerRequest<M>) => Parameters<ForwardedPeerQueries[Q]>[0];
  answer: (a: Awaited<ReturnType<ForwardedPeerQueries[Q]>>, req: PeerRequest<M>) => WireInit<PeerResponse<M>>;
}
export type WriterServed<M extends PeerRpc> = { [Q in keyof ForwardedPeerQueries]: ServedBy<M, Q> }[keyof ForwardedPeerQueries];

/** One RPC of the peer service. */
export interface PeerProtocol<M extends PeerRpc> {
  /** The inner request message `SignedRequest.body` carries, the bytes signed; null: unsigned, the request travels bare (GetIdentity). */
  body: string | null;
  rate: PeerRate;
  /** What decoding leaves unchecked in an answer, by the rules of proto/svc.proto; `req` is the request answered (some answers are bounded by it). */
  check: (r: PeerResponse<M>, req: WireInit<PeerRequest<M>>) => void;
  /** Answered by a writer query; absent: by its own handler in service.ts. */
  serve?: WriterServed<M>;
}

/**
 * A listed range answer is the whole range (proto/svc.proto, RangeAnswer): as many txids
 * as its count, at most the list limit asked, ascending, each inside the range asked.
 */
function checkListedRange(a: RangeAnswer, asked: WireInit<TxidRange>): void {
  const limit = Math.min(asked.list_up_to ?? 0, RANGE_LIST_MAX);
  if (a.txids.length !== a.count || a.count > limit) throw malformed('GetContractRanges', 'ranges.txids', `must list the range's ${a.count} txids, at most the ${limit} asked, not ${a.txids.length}`);
  const lower = asked.lower ?? new Uint8Array(0);
  const upper = asked.upper ?? new Uint8Array(0);
  let prev: Uint8Array | null = null;
  for (const t of a.txids) {
    id32('GetContractRanges', 'ranges.txids', t);
    if (prev && Buffer.compare(prev, t) >= 0) throw malformed('GetContractRanges', 'ranges.txids', 'must be ascending');
    if (Buffer.compare(t, lower) < 0 || (upper.length > 0 && Buffer.compare(t, upper) >= 0)) throw malformed('GetContractRanges', 'ranges.txids', 'must lie inside the range asked');
    prev = t;
  }
}

/** Every RPC of the peer service: one descriptor each. */
export const PEER_PROTOCOLS = {
  GetIdentity: {
    body: null,
    rate: 'global',
    check: (r) => {
      bytesOf('GetIdentity', 'public_key', r.public_key, [32]);
      bytesOf('GetIdentity', 'signature', r.signature, [64]);
    },
  },
  Heartbeat: {
    body: 'HeartbeatRequest',
    rate: 'peer',
    // An empty key: the peer did not say (the heartbeat then learns no key).
    check: (r) => {
      u64('Heartbeat', 'height', r.height);
      bytesOf('Heartbeat', 'public_key', r.public_key, [0, 32]);
      checkTipAnnouncement(r, 'answer');
    },
  },
  SubmitPayload: {
    body: 'SubmitPayloadRequest',
    rate: 'peer',
    // An empty txid answers a payload that did not decode.
    check: (r, req) => {
      if (r.results.length !== (req.payloads?.length ?? 0)) throw malformed('SubmitPayload', 'results', `must be one per payload sent (${req.payloads?.length ?? 0}), not ${r.results.length}`);
      for (const x of r.results) bytesOf('SubmitPayload', 'results.txid', x.txid, [0, 32]);
    },
  },
  PreparePayload: { body: 'PreparePayloadRequest', rate: 'peer', check: () => undefined },
  GetContractIds: {
    body: 'GetContractIdsRequest',
    rate: 'peer',
    check: (r) => {
      for (const id of r.contract_ids) id32('GetContractIds', 'contract_ids', id);
    },
    serve: {
      query: 'peerContractIds',
      params: (req) => ({ after: boundHex(req.after, 'after'), limit: pageLimit(req.limit) }),
      answer: (page) => ({ contract_ids: page.ids.map((id) => Buffer.from(id, 'hex')), more: page.more }),
    },
  },
  GetContractSummary: {
    body: 'GetContractSummaryRequest',
    rate: 'list',
    check: (r) => {
      id32('GetContractSummary', 'contract_id', r.contract_id);
      id32('GetContractSummary', 'merkle_root', r.merkle_root);
      for (const p of r.payloads) {
        id32('GetContractSummary', 'payloads.txid', p.txid);
        id32('GetContractSummary', 'payloads.payload_hash', p.payload_hash);
      }
    },
    serve: {
      query: 'peerSummary',
      params: (req) => ({ contract_id: bytes32(req.contract_id, 'contract_id'), after_txid: boundHex(req.after_txid, 'after_txid'), limit: pageLimit(req.limit) }),
      answer: (s) => ({
        contract_id: Buffer.from(s.contract_id, 'hex'),
        merkle_root: Buffer.from(s.root, 'hex'),
        payloads: s.payloads.map((p) => ({ txid: Buffer.from(p.txid, 'hex'), payload_hash: Buffer.from(p.payload_hash, 'hex') })),
        count: s.count,
        more: s.more,
      }),
    },
  },
  GetContractTxids: {
    body: 'GetContractTxidsRequest',
    rate: 'list',
    check: (r) => {
      for (const t of r.txids) id32('GetContractTxids', 'txids', t);
      if (r.positions.length !== r.txids.length) throw malformed('GetContractTxids', 'positions', `must be parallel to txids (${r.txids.length}), not ${r.positions.length}`);
    },
    serve: {
      query: 'peerTxids',
      params: (req) => ({ contract_id: bytes32(req.contract_id, 'contract_id'), offset: req.offset, limit: pageLimit(req.limit) }),
      answer: (t, req) => ({
        txids: t.refs.map((r) => Buffer.from(r.txid, 'hex')),
        positions: t.refs.map((r) => ({ height: r.height ?? 0, tx_index: r.tx_index ?? 0 })),
        total: t.total,
        more: req.offset + t.refs.length < t.total,
      }),
    },
  },
  GetContractMerkleRoot: {
    body: 'GetContractMerkleRootRequest',
    rate: 'peer',
    check: (r) => id32('GetContractMerkleRoot', 'merkle_root', r.merkle_root),
    // The root alone: cached in the writer per contract, not the whole list.
    serve: {
      query: 'peerRoot',
      params: (req) => ({ contract_id: bytes32(req.contract_id, 'contract_id') }),
      answer: (r) => ({ merkle_root: Buffer.from(r.root, 'hex'), count: r.count }),
    },
  },
  GetPayloadByTxid: {
    body: 'GetPayloadByTxidRequest',
    rate: 'peer',
    check: (r) => {
      if ((r.payload as ProtoPayload | null) === null) throw malformed('GetPayloadByTxid', 'payload', 'is missing');
    },
  },
  GetStateRoots: {
    body: 'GetStateRootsRequest',
    rate: 'peer',
    check: (r) => {
      u64('GetStateRoots', 'anchor_height', r.anchor_height);
      u64('GetStateRoots', 'tip_height', r.tip_height);
      for (const x of r.roots) {
        u64('GetStateRoots', 'roots.height', x.height);
        id32('GetStateRoots', 'roots.block_hash', x.block_hash);
        id32('GetStateRoots', 'roots.state_root', x.state_root);
      }
    },
    serve: {
      query: 'peerStateRoots',
      params: (req) => {
        const from = Number(req.from_height);
        const to = Number(req.to_height);
        if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from) throw new NodeError('bad_request', 'need from_height <= to_height');
        return { from: Math.min(from, 0xffffffff), to: Math.min(to, 0xffffffff) };
      },
      answer: (r) => ({
        roots: r.roots.map((x) => ({ height: String(x.height), block_hash: Buffer.from(x.block_hash, 'hex'), state_root: Buffer.from(x.state_root, 'hex') })),
        anchor_height: String(r.anchor_height ?? 0),
        tip_height: String(r.tip_height ?? 0),
        root_version: STATE_ROOT_VERSION,
      }),
    },
  },
  GetContractRanges: {
    body: 'GetContractRangesRequest',
    rate: 'peer',
    check: (r, req) => {
      if (r.ranges.length !== (req.ranges?.length ?? 0)) throw malformed('GetContractRanges', 'ranges', `must be one per range asked (${req.ranges?.length ?? 0}), not ${r.ranges.length}`);
      r.ranges.forEach((a, i) => {
        if (a.listed) checkListedRange(a, req.ranges?.[i] ?? {});
        else bytesOf('GetContractRanges', 'ranges.fingerprint', a.fingerprint, [FINGERPRINT_BYTES]);
      });
    },
    serve: {
      query: 'peerRanges',
      params: (req) => {
        const list = req.ranges;
        if (list.length === 0 || list.length > RANGES_MAX) throw new NodeError('bad_request', `1 to ${RANGES_MAX} ranges per request`, { field: 'ranges' });
        const ranges = list.map((r) => ({ lower: boundHex(r.lower, 'lower'), upper: boundHex(r.upper, 'upper'), list_up_to: Math.min(r.list_up_to, RANGE_LIST_MAX) }));
        return { contract_id: bytes32(req.contract_id, 'contract_id'), ranges };
      },
      answer: (answers) => ({
        ranges: answers.map((a) => (a.txids ? { count: a.count, listed: true, txids: a.txids.map((t) => Buffer.from(t, 'hex')) } : { count: a.count, fingerprint: Buffer.from(a.fingerprint, 'hex') })),
      }),
    },
  },
  GetPayloads: {
    body: 'GetPayloadsRequest',
    rate: 'fetch',
    check: (r, req) => {
      const asked = req.txids?.length ?? 0;
      if (r.answered > asked) throw malformed('GetPayloads', 'answered', `must be at most the ${asked} txids asked, not ${r.answered}`);
    },
  },
  GetHeaders: {
    body: 'GetHeadersRequest',
    rate: 'fetch',
    // The run answered is the one asked for: from the asked height, whole headers, at most the count.
    check: (r, req) => {
      const from = req.from_height ?? 0;
      const asked = req.count && req.count < GET_HEADERS_MAX ? req.count : GET_HEADERS_MAX;
      if (r.from_height !== from) throw malformed('GetHeaders', 'from_height', `must be the height asked (${from}), not ${r.from_height}`);
      if (r.headers.length % HEADER_BYTES !== 0 || r.headers.length / HEADER_BYTES > asked) {
        throw malformed('GetHeaders', 'headers', `must be at most ${asked} headers of ${HEADER_BYTES} bytes, not ${r.headers.length} bytes`);
      }
      if (r.headers.length > 0 && r.tip_height < from + r.headers.length / HEADER_BYTES - 1) throw malformed('GetHeaders', 'tip_height', `must be at least the last height answered, not ${r.tip_height}`);
    },
  },
} satisfies { [M in PeerRpc]: PeerProtocol<M> };

type Protocols = typeof PEER_PROTOCOLS;
/** The signed RPCs: every one whose request travels as a SignedRequest body. */
export type PeerMethod = { [M in PeerRpc]: Protocols[M]['body'] extends string ? M : never }[PeerRpc];
/** The RPCs a writer query answers (the server's generic path). */
export type ServedRpc = { [M in PeerRpc]: Protocols[M] extends { serve: object } ? M : never }[PeerRpc];

/** Every RPC of the proto's service (test/gossip/protocols.test.ts holds the two together). */
export const PEER_RPCS = Object.keys(PEER_PROTOCOLS) as PeerRpc[];
/** The signed RPCs. */
export const PEER_METHODS = PEER_RPCS.filter((m): m is PeerMethod => PEER_PROTOCOLS[m].body !== null);

/** The descriptor of `method`, typed by it. */
export function protocolOf<M extends PeerRpc>(method: M): PeerProtocol<M> {
  return PEER_PROTOCOLS[method] as PeerProtocol<M>;
}

/** `r` as decoded, once checked against the rules decoding leaves to the receiver; throws NodeError `bad_request`. */
export function checkResponse<M extends PeerRpc>(method: M, r: PeerResponse<M>, req: WireInit<PeerRequest<M>>): PeerResponse<M> {
  protocolOf(method).check(r, req);
  return r;
}

/**
 * Range reconciliation between two in-process stores through the real wire format
 * (bench/reconcile.bench.ts, test/gossip/reconcile.test.ts): the local store is asked
 * directly, as sync asks its own writer; the remote one through exactly what would
 * travel, each request encoded as a signed SignedRequest (proto codec, Ed25519),
 * verified and decoded by the receiver's code, answered, the answer encoded and decoded.
 * Bytes are counted on the encoded messages (gRPC adds 5 bytes of framing per message
 * and HTTP/2 its frames; neither is counted).
 */
import type * as protoLoader from '@grpc/proto-loader';
import { Signer, Verifier } from '../../src/gossip/auth.js';
import { decodeBody } from '../../src/gossip/codec.js';
import { packageDefinition, requestCodec } from '../../src/gossip/server.js';
import type { PeerMethod } from '../../src/gossip/protocols.js';
import { GET_PAYLOADS_ANSWER_BYTES, GET_PAYLOADS_MAX, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES, RANGE_LIST_MAX, RANGES_MAX } from '../../src/gossip/limits.js';
import { encodedSize, submitBatches, toProtoPayload } from '../../src/gossip/wire.js';
import type { AskRanges } from '../../src/gossip/reconcile.js';
import type { ContractIndex } from '../../src/writer/peer-queries.js';
import type { WirePayload } from '../../src/messages/gossip.js';

export interface WireTally {
  requests: number;
  requestBytes: number;
  responseBytes: number;
  /** Largest single message either way. */
  largest: number;
}

export const newTally = (): WireTally => ({ requests: 0, requestBytes: 0, responseBytes: 0, largest: 0 });

const sender = new Signer(new Uint8Array(32).fill(1));
const receiver = new Signer(new Uint8Array(32).fill(2));
const verifier = new Verifier(receiver.publicKey);

function responseCodec(method: PeerMethod): { serialize: (v: object) => Buffer; deserialize: (b: Buffer) => Record<string, unknown> } {
  const m = (packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>)[method]!;
  return { serialize: m.responseSerialize as (v: object) => Buffer, deserialize: m.responseDeserialize as (b: Buffer) => Record<string, unknown> };
}

/** One RPC through the wire format: the receiver's inner request in, `answer`'s response out (decoded as the asker sees it). */
function overWire(method: PeerMethod, req: Record<string, unknown>, answer: (inner: Record<string, unknown>) => object, tally: WireTally): Record<string, unknown> {
  const reqCodec = requestCodec(method);
  const sent = reqCodec.serialize(sender.request(method, receiver.publicKey, req));
  const got = reqCodec.deserialize(sent);
  const v = verifier.verify(method, got);
  if (!v.ok) throw new Error(`${method}: ${v.reason}`);
  const resCodec = responseCodec(method);
  const back = resCodec.serialize(answer(decodeBody(method, got['body'] as Uint8Array) as unknown as Record<string, unknown>));
  tally.requests++;
  tally.requestBytes += sent.length;
  tally.responseBytes += back.length;
  tally.largest = Math.max(tally.largest, sent.length, back.length);
  return resCodec.deserialize(back);
}

/** The local store's answers (no wire). */
export function localAsker(index: ContractIndex): AskRanges {
  return async (ranges) => ranges.map((r) => index.range(Buffer.from(r.lower, 'hex'), Buffer.from(r.upper, 'hex'), r.list_up_to));
}

/** The remote store's answers through GetContractRanges, with the server's limits, counted in `tally`. */
export function remoteAsker(index: ContractIndex, contractId: string, tally: WireTally): AskRanges {
  return async (ranges) => {
    const req = { contract_id: Buffer.from(contractId, 'hex'), ranges: ranges.map((r) => ({ lower: Buffer.from(r.lower, 'hex'), upper: Buffer.from(r.upper, 'hex'), list_up_to: r.list_up_to })) };
    const res = overWire(
      'GetContractRanges',
      req,
      (inner) => {
        const rs = inner['ranges'] as { lower: Buffer; upper: Buffer; list_up_to: number }[];
        if (rs.length > RANGES_MAX) throw new Error('too many ranges');
        return {
          ranges: rs.map((r) => {
            const a = index.range(Buffer.from(r.lower), Buffer.from(r.upper), Math.min(r.list_up_to, RANGE_LIST_MAX));
            return a.txids ? { count: a.count, listed: true, txids: a.txids.map((t) => Buffer.from(t, 'hex')) } : { count: a.count, fingerprint: Buffer.from(a.fingerprint, 'hex') };
          }),
        };
      },
      tally,
    );
    return (res['ranges'] as { count: number; fingerprint: Uint8Array; txids: Uint8Array[]; listed: boolean }[]).map((a) => ({
      count: a.count,
      fingerprint: a.listed ? '' : Buffer.from(a.fingerprint).toString('hex'),
      txids: a.listed ? a.txids.map((t) => Buffer.from(t).toString('hex')) : null,
    }));
  };
}

/** Fetching `payloads` as sync does (GetPayloads, GET_PAYLOADS_MAX txids a request, answers cut at their bound), counted in `tally`. */
export function fetchOverWire(payloads: WirePayload[], tally: WireTally): void {
  for (let rest = payloads; rest.length > 0; ) {
    const res = overWire(
      'GetPayloads',
      { txids: rest.slice(0, GET_PAYLOADS_MAX).map((p) => Buffer.from(p.txid, 'hex')) },
      (inner) => {
        const out: object[] = [];
        let bytes = 0;
        let answered = 0;
        for (const p of rest.slice(0, (inner['txids'] as unknown[]).length)) {
          if (out.length > 0 && bytes + encodedSize(p) > GET_PAYLOADS_ANSWER_BYTES) break;
          bytes += encodedSize(p);
          out.push({ payload: toProtoPayload(p), position: { height: 0, tx_index: 0 } });
          answered++;
        }
        return { payloads: out, answered };
      },
      tally,
    );
    rest = rest.slice(res['answered'] as number);
  }
}

/** Pushing `payloads` as sync does (SubmitPayload batches), counted in `tally`. */
export function pushOverWire(payloads: WirePayload[], tally: WireTally): void {
  for (const batch of submitBatches(payloads, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES - 512)) {
    overWire('SubmitPayload', { payloads: batch.map(toProtoPayload) }, () => ({ results: batch.map((p) => ({ txid: Buffer.from(p.txid, 'hex'), accepted: true })) }), tally);
  }
}

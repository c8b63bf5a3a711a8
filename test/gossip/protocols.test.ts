/**
 * The peer protocols (src/gossip/protocols.ts): the descriptor table names every RPC of
 * proto/svc.proto, each body message and served query exists, and the server answers
 * each; and a peer's malformed answer reaches the caller of PeerClient.call as one
 * NodeError `bad_request` naming the field, whatever the RPC, over a real gRPC connection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { Signer, Verifier } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';
import { PeerService } from '../../src/gossip/service.js';
import { bind, loadPeerService, packageDefinition } from '../../src/gossip/server.js';
import { PEER_METHODS, PEER_RPCS, protocolOf } from '../../src/gossip/protocols.js';
import type { PeerResponse, PeerRpc } from '../../src/gossip/wire-types.js';
import { encodeBody } from '../../src/gossip/codec.js';
import { PEER_QUERIES } from '../../src/messages/writer.js';
import type { WireInit } from '../../src/gossip/wire-types.js';
import { zeroCounters } from '../../src/messages/gossip.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../src/log.js';
import type { GossipOptions } from '../../src/config/options.js';

/** The RPCs SERVICE-SPEC section 5 names: served and documented whatever sync uses. */
const SPEC_RPCS = ['Heartbeat', 'SubmitPayload', 'PreparePayload', 'GetContractIds', 'GetContractSummary', 'GetContractTxids', 'GetContractMerkleRoot', 'GetPayloadByTxid'];

test('the wire map names every RPC of proto/svc.proto, the specification eight among them, and the server answers each', () => {
  const inProto = Object.keys(packageDefinition()['svc.v2.Peer'] as object).sort();
  assert.deepEqual([...PEER_RPCS].sort(), inProto);
  assert.deepEqual([...PEER_METHODS, 'GetIdentity'].sort(), inProto);
  for (const m of SPEC_RPCS) assert.ok(inProto.includes(m), m);
  // Each signed RPC's body names a message of the proto (encoding an empty one finds it);
  // each served one names a query the core forwards.
  for (const m of PEER_METHODS) {
    assert.ok(encodeBody(m, {}) instanceof Buffer, m);
    const served = protocolOf(m).serve;
    if (served) assert.ok(served.query in PEER_QUERIES, `${m}: ${served.query}`);
  }
  assert.equal(protocolOf('GetIdentity').body, null, 'GetIdentity travels unsigned');
  const service = new PeerService({
    core: () => ({}) as never,
    verifier: new Verifier(new Signer(new Uint8Array(32).fill(1)).publicKey),
    signer: new Signer(new Uint8Array(32).fill(1)),
    peers: {} as never,
    forwarder: {} as never,
    counters: zeroCounters(),
    opts: { seenCapacity: 16, globalRatePerS: 10, inboundRatePerS: 10, inboundQueue: 10 } as GossipOptions,
    nodeId: 'n',
    publicKey: Buffer.alloc(32),
    localAdvert: () => ({ height: 0, tip: null }),
    log: logger('test'),
  });
  try {
    assert.deepEqual(Object.keys(service.handlers()).sort(), inProto);
  } finally {
    service.close();
  }
});

/** An answer of one RPC, as a (broken) server writes it. */
type PeerMethodAnswer = { [M in PeerRpc]: { method: M; answer: WireInit<PeerResponse<M>> } }[PeerRpc];

const b = (n: number, fill = 7): Buffer => Buffer.alloc(n, fill);
const root = { height: '1', block_hash: b(32), state_root: b(32) };

/** Per RPC, answers a broken peer might give, each with the field the refusal must name. */
const MALFORMED: [PeerMethodAnswer, string][] = [
  [{ method: 'Heartbeat', answer: { node_id: 'x', height: '1', public_key: b(5), peers: 0 } }, 'public_key'],
  [{ method: 'Heartbeat', answer: { node_id: 'x', height: '1', public_key: b(32), peers: 0, tip_height: '2', tip_header: b(79) } }, 'tip_header'],
  [{ method: 'Heartbeat', answer: { node_id: 'x', height: '1', public_key: b(32), peers: 0, tip_height: '18446744073709551615', tip_header: b(80) } }, 'tip_height'],
  [{ method: 'SubmitPayload', answer: { results: [] } }, 'results'],
  [{ method: 'SubmitPayload', answer: { results: [{ txid: b(31), accepted: true }] } }, 'results.txid'],
  [{ method: 'GetContractIds', answer: { contract_ids: [b(32), b(31)], more: false } }, 'contract_ids'],
  [{ method: 'GetContractSummary', answer: { contract_id: b(32), merkle_root: b(16), payloads: [], count: 0 } }, 'merkle_root'],
  [{ method: 'GetContractSummary', answer: { contract_id: b(32), merkle_root: b(32), payloads: [{ txid: b(32), payload_hash: b(0) }], count: 1 } }, 'payloads.payload_hash'],
  [{ method: 'GetContractTxids', answer: { txids: [b(32), b(32)], positions: [{ height: 1, tx_index: 1 }], total: 2 } }, 'positions'],
  [{ method: 'GetContractTxids', answer: { txids: [b(33)], positions: [{ height: 1, tx_index: 1 }], total: 1 } }, 'txids'],
  [{ method: 'GetContractMerkleRoot', answer: { count: 3 } }, 'merkle_root'],
  [{ method: 'GetPayloadByTxid', answer: { position: { height: 1, tx_index: 0 } } }, 'payload'],
  [{ method: 'GetStateRoots', answer: { roots: [{ ...root, state_root: b(31) }], anchor_height: '0', tip_height: '1' } }, 'roots.state_root'],
  [{ method: 'GetStateRoots', answer: { roots: [root], anchor_height: '0', tip_height: '18446744073709551615' } }, 'tip_height'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 3, fingerprint: b(15) }] } }, 'ranges.fingerprint'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 1, listed: true, txids: [b(32, 1)] }, { count: 0, listed: true }] } }, 'ranges'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 1, listed: true, txids: [b(8)] }] } }, 'ranges.txids'],
  // A listed range is the whole range: its count, within the limit asked (2), ascending.
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 3, listed: true, txids: [b(32, 1), b(32, 2), b(32, 3)] }] } }, 'ranges.txids'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 2, listed: true, txids: [b(32, 1)] }] } }, 'ranges.txids'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 2, listed: true, txids: [b(32, 2), b(32, 1)] }] } }, 'ranges.txids'],
  [{ method: 'GetContractRanges', answer: { ranges: [{ count: 2, listed: true, txids: [b(32, 1), b(32, 1)] }] } }, 'ranges.txids'],
  [{ method: 'GetPayloads', answer: { payloads: [], answered: 2 } }, 'answered'],
  [{ method: 'GetHeaders', answer: { from_height: 7, headers: b(160), tip_height: 9 } }, 'from_height'],
  [{ method: 'GetHeaders', answer: { from_height: 5, headers: b(81), tip_height: 9 } }, 'headers'],
  [{ method: 'GetHeaders', answer: { from_height: 5, headers: b(80 * 3), tip_height: 9 } }, 'headers'],
  [{ method: 'GetHeaders', answer: { from_height: 5, headers: b(160), tip_height: 5 } }, 'tip_height'],
];

/** A request for each RPC, as sync sends them (one payload, one range, one txid). */
const REQUESTS: Record<string, object> = {
  Heartbeat: { node_id: 'asker', url: '', height: '0' },
  SubmitPayload: { payloads: [{ kind: 'PAYLOAD_KIND_CALL', txid: b(32), contract_id: b(32), body: b(10) }] },
  GetContractIds: {},
  GetContractSummary: { contract_id: b(32) },
  GetContractTxids: { contract_id: b(32) },
  GetContractMerkleRoot: { contract_id: b(32) },
  GetPayloadByTxid: { txid: b(32) },
  GetStateRoots: { from_height: '0', to_height: '1' },
  GetContractRanges: { contract_id: b(32), ranges: [{ list_up_to: 2 }] },
  GetPayloads: { txids: [b(32)] },
  GetHeaders: { from_height: 5, count: 2 },
};

test("a peer's malformed answer is one bad_request naming the field, for every RPC; a well-formed one passes", async () => {
  const peerKey = new Signer(new Uint8Array(32).fill(5));
  let next: PeerMethodAnswer | null = null;
  const impl: grpc.UntypedServiceImplementation = {
    GetIdentity: (call: grpc.ServerUnaryCall<{ challenge: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      const proof = peerKey.proveIdentity(call.request.challenge);
      cb(null, next?.method === 'GetIdentity' ? next.answer : { public_key: peerKey.publicKey, node_id: 'broken', signature: proof });
    },
  };
  for (const m of PEER_METHODS) impl[m] = (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, next!.answer);
  const server = new grpc.Server();
  server.addService(loadPeerService(), impl);
  const port = await bind(server, '127.0.0.1', 0);
  const client = new PeerClient(`http://127.0.0.1:${port}`, new Signer(new Uint8Array(32).fill(6)), 10_000);
  try {
    for (const [case_, field] of MALFORMED) {
      next = case_;
      await assert.rejects(
        client.call(case_.method as never, REQUESTS[case_.method] as never),
        (e: unknown) => e instanceof NodeError && e.code === 'bad_request' && e.message.startsWith(`${case_.method} answer: ${field} `),
        `${case_.method} ${field}`,
      );
    }
    // The identity answer too, before any proof is checked.
    const fresh = new PeerClient(`http://127.0.0.1:${port}`, new Signer(new Uint8Array(32).fill(8)), 10_000);
    next = { method: 'GetIdentity', answer: { public_key: peerKey.publicKey, node_id: 'x', signature: b(63) } };
    await assert.rejects(fresh.identity(), (e: unknown) => e instanceof NodeError && e.code === 'bad_request' && /GetIdentity answer: signature /.test(e.message));
    fresh.close();
    // Well formed: typed as the map says, defaults filled in.
    next = { method: 'GetContractRanges', answer: { ranges: [{ count: 2, listed: true, txids: [b(32, 1), b(32, 2)] }] } };
    const r = await client.call('GetContractRanges', { contract_id: b(32), ranges: [{ list_up_to: 2 }] });
    assert.deepEqual(r.ranges.map((a) => [a.count, a.listed, a.fingerprint.length, a.txids.map((t) => t[0])]), [[2, true, 0, [1, 2]]]);
    // Listed txids outside the range asked: below its lower bound, at its upper bound.
    for (const range of [{ lower: b(1, 5), list_up_to: 2 }, { upper: b(1, 2), list_up_to: 2 }]) {
      next = { method: 'GetContractRanges', answer: { ranges: [{ count: 1, listed: true, txids: [b(32, range.lower ? 1 : 2)] }] } };
      await assert.rejects(client.call('GetContractRanges', { contract_id: b(32), ranges: [range] }), (e: unknown) => e instanceof NodeError && /ranges\.txids must lie inside the range asked/.test(e.message));
    }
    next = { method: 'GetContractRanges', answer: { ranges: [{ count: 1, listed: true, txids: [b(32, 5)] }] } };
    assert.equal((await client.call('GetContractRanges', { contract_id: b(32), ranges: [{ lower: b(1, 5), upper: b(1, 6), list_up_to: 2 }] })).ranges[0]?.count, 1);
  } finally {
    client.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }
});

/** Unit tests of the gossip building blocks: signatures, bounded sets, summaries, limits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createPublicKey, verify as edVerify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Signer, Verifier, CLOCK_WINDOW_MS, isSmallOrderKey, signingBytes } from '../../src/gossip/auth.js';
import { PeerLimiter } from '../../src/gossip/peer-limiter.js';
import { requestCodec } from '../../src/gossip/server.js';
import type { PeerMethod } from '../../src/gossip/protocols.js';
import { grpcTarget } from '../../src/gossip/client.js';
import { summaryTree } from '../../src/writer/peer-queries.js';
import { intakeInput } from '../../src/core/peer-handlers.js';
import { FETCH_QUEUE, FETCH_RATE_PER_S, LIST_CONCURRENCY, LIST_QUEUE, LIST_RATE_PER_S, LIST_WAITING, MAX_GRPC_MESSAGE_BYTES } from '../../src/gossip/limits.js';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import { PeerService } from '../../src/gossip/service.js';
import { zeroCounters } from '../../src/messages/gossip.js';
import { logger } from '../../src/log.js';
import type { GossipOptions } from '../../src/config/options.js';
import * as grpc from '@grpc/grpc-js';
import { NodeError } from '@svc-node/protocol/errors';
import { packPayload, unpackPayload } from '../../src/packed-payload.js';

const seed = (n: number): Uint8Array => new Uint8Array(32).fill(n);

/** The node the requests below are sent to. */
const RECEIVER = new Signer(seed(99)).publicKey;

/**
 * The receiving node's peer service over `core`. Its general budgets are far above the
 * list ones, so only the list bounds act; its clock is stopped, so no budget comes back
 * while a test runs, however slow the machine.
 */
function peerService(core: { call: (method: string, params: never) => Promise<unknown> }, counters = zeroCounters()): PeerService {
  return new PeerService({
    core: () => core as never,
    verifier: new Verifier(RECEIVER),
    signer: new Signer(seed(99)),
    peers: { heard: () => undefined } as never,
    forwarder: { forward: () => 0 } as never,
    counters,
    opts: { seenCapacity: 16, globalRatePerS: 100_000, inboundRatePerS: 10_000, inboundQueue: 100 } as GossipOptions,
    nodeId: 'n',
    publicKey: Buffer.alloc(32),
    localAdvert: () => ({ height: 0, tip: null }),
    log: logger('test'),
    now: () => 0,
  });
}

/** What the receiving server sees: the SignedRequest after a trip over the wire. */
function overWire(method: Parameters<typeof requestCodec>[0], req: object): Record<string, unknown> {
  const c = requestCodec(method);
  return c.deserialize(c.serialize(req));
}

test('a signed request verifies after the wire round trip; any change to it, or another receiver, does not', () => {
  const s = new Signer(seed(1));
  const v = new Verifier(RECEIVER);
  const req = s.request('SubmitPayload', RECEIVER, {
    payloads: [{ kind: 'PAYLOAD_KIND_CALL', txid: Buffer.alloc(32, 1), contract_id: Buffer.alloc(32, 2), body: Buffer.from('abc') }],
  });
  const got = overWire('SubmitPayload', req);
  assert.deepEqual(v.verify('SubmitPayload', got), { ok: true, key: s.publicKey.toString('hex') });
  // Another method name, a changed body byte, a changed key: refused.
  assert.equal(v.verify('PreparePayload', got).ok, false);
  const body = Buffer.from(req.body);
  body[body.length - 1]! ^= 1;
  assert.deepEqual(v.verify('SubmitPayload', overWire('SubmitPayload', { ...req, body })), { ok: false, reason: 'signature does not verify' });
  const other = new Signer(seed(2));
  const swapped = overWire('SubmitPayload', { ...req, auth: { ...req.auth, public_key: other.publicKey } });
  assert.equal(v.verify('SubmitPayload', swapped).ok, false);
  // Signed for another node: refused there by the field, and by the signature when the field is rewritten.
  const elsewhere = new Verifier(other.publicKey);
  assert.deepEqual(elsewhere.verify('SubmitPayload', got), { ok: false, reason: 'signed for another receiver' });
  const relabeled = overWire('SubmitPayload', { ...req, auth: { ...req.auth, receiver_public_key: other.publicKey } });
  assert.deepEqual(elsewhere.verify('SubmitPayload', relabeled), { ok: false, reason: 'signature does not verify' });
  // Unsigned, short signature, stale clock.
  assert.deepEqual(v.verify('SubmitPayload', overWire('SubmitPayload', { body: req.body })), { ok: false, reason: 'unsigned request' });
  const short = overWire('SubmitPayload', { ...req, auth: { ...req.auth, signature: Buffer.alloc(10) } });
  assert.equal(v.verify('SubmitPayload', short).ok, false);
  const old = overWire('Heartbeat', s.request('Heartbeat', RECEIVER, { node_id: 'x', url: '', height: '1' }, Date.now() - CLOCK_WINDOW_MS - 5_000));
  assert.deepEqual(v.verify('Heartbeat', old), { ok: false, reason: 'sent_at_ms is outside the clock window' });
  // Own key is refused (a node never talks to itself).
  const self = new Verifier(s.publicKey);
  assert.equal(self.verify('SubmitPayload', overWire('SubmitPayload', s.request('SubmitPayload', s.publicKey, { payloads: [] }))).ok, false);
});

test('every method signs and verifies, default values included', () => {
  const s = new Signer(seed(3));
  const v = new Verifier(RECEIVER);
  const cases: [PeerMethod, Record<string, unknown>][] = [
    ['Heartbeat', { node_id: '', url: '', height: '0' }],
    ['Heartbeat', { node_id: 'n', url: 'http://127.0.0.1:1', height: '18446744073709551615' }],
    ['PreparePayload', { payload: { kind: 'PAYLOAD_KIND_DEPLOY', txid: Buffer.alloc(32), contract_id: Buffer.alloc(0), body: Buffer.from('{}') } }],
    ['GetContractIds', {}],
    ['GetContractSummary', { contract_id: Buffer.alloc(32, 9) }],
    ['GetContractTxids', { contract_id: Buffer.alloc(32, 9) }],
    ['GetContractMerkleRoot', { contract_id: Buffer.alloc(32, 9) }],
    ['GetPayloadByTxid', { txid: Buffer.alloc(32, 7) }],
    ['GetStateRoots', { from_height: '100', to_height: '200' }],
    ['GetContractRanges', { contract_id: Buffer.alloc(32, 9), ranges: [{ lower: Buffer.alloc(0), upper: Buffer.of(0x80), list_up_to: 0 }] }],
  ];
  for (const [m, r] of cases) assert.equal(v.verify(m, overWire(m, s.request(m, RECEIVER, r))).ok, true, m);
});

test('the verifier caches one KeyObject per peer, bounded', () => {
  const v = new Verifier(RECEIVER);
  const signers = Array.from({ length: 5 }, (_, i) => new Signer(seed(10 + i)));
  for (let round = 0; round < 3; round++) {
    for (const s of signers) assert.equal(v.verify('GetContractIds', overWire('GetContractIds', s.request('GetContractIds', RECEIVER, {}))).ok, true);
  }
  assert.equal(v.cachedKeys, 5);
});

test('peer limiter: burst then queue then refusal per key; queued jobs run in order as tokens come', async () => {
  let t = 0;
  const l = new PeerLimiter({ ratePerS: 100, queue: 3, capacity: 10 }, () => t);
  const ran: number[] = [];
  const admitted = Array.from({ length: 110 }, (_, i) => l.admit('a', () => ran.push(i))).filter(Boolean).length;
  assert.equal(admitted, 103, 'one second of budget plus the queue');
  assert.equal(ran.length, 100, 'the burst ran at once');
  assert.equal(l.waiting, 3);
  assert.equal(l.admit('b', () => ran.push(-1)), true, 'another key has its own budget');
  // Tokens come back with the (fake) clock; the timer then runs the queue in order.
  t += 30;
  await new Promise<void>((resolve) => {
    const check = (): void => (ran.length === 104 ? resolve() : void setTimeout(check, 5));
    check();
  });
  assert.deepEqual(ran.slice(100), [-1, 100, 101, 102]);
  assert.equal(l.waiting, 0);
  l.close();
});

test('peer limiter: the key table is bounded; idle keys are forgotten first, busy ones never', () => {
  const t = 0;
  const l = new PeerLimiter({ ratePerS: 1, queue: 2, capacity: 16 }, () => t);
  for (let i = 0; i < 10_000; i++) assert.equal(l.admit(`k${i}`, () => undefined), true, 'a fresh key is served');
  assert.equal(l.size, 16, 'at most capacity keys tracked');
  // Sixteen busy keys (each spent its token and has a request waiting).
  const busy = new PeerLimiter({ ratePerS: 1, queue: 2, capacity: 16 }, () => t);
  for (let i = 0; i < 16; i++) {
    busy.admit(`b${i}`, () => undefined);
    assert.equal(busy.admit(`b${i}`, () => undefined), true, 'queued');
  }
  assert.equal(busy.waiting, 16);
  assert.equal(busy.admit('new', () => undefined), false, 'no idle key to forget: refused');
  assert.equal(busy.size, 16);
  assert.equal(busy.waiting, 16, 'nothing waiting was dropped');
  l.close();
  busy.close();
});

test('small-order Ed25519 keys are refused: node:crypto accepts a signature made without a private key for them', () => {
  const P = ed25519.Point;
  const order8 = P.fromBytes(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex'));
  const torsion: Uint8Array[] = [];
  let q = order8;
  for (let i = 0; i < 8; i++, q = q.add(order8)) {
    assert.ok(q.isSmallOrder());
    const b = q.toBytes();
    torsion.push(b, Uint8Array.from(b, (x, j) => (j === 31 ? x ^ 0x80 : x)));
  }
  // Non-canonical y >= p encodings of y = 0 and y = 1.
  torsion.push(Buffer.from('ed' + 'ff'.repeat(30) + '7f', 'hex'), Buffer.from('ee' + 'ff'.repeat(30) + '7f', 'hex'));
  for (const k of torsion) assert.equal(isSmallOrderKey(k), true, Buffer.from(k).toString('hex'));
  for (let i = 0; i < 200; i++) assert.equal(isSmallOrderKey(new Signer(ed25519.utils.randomSecretKey()).publicKey), false);

  // The forgery: key = identity, signature = (R = identity, S = 0), any message.
  const identity = Buffer.from('01' + '00'.repeat(31), 'hex');
  const forged = Buffer.concat([identity, Buffer.alloc(32)]);
  const now = Date.now();
  const msg = signingBytes('GetContractIds', RECEIVER, identity, BigInt(now), Buffer.alloc(0));
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]), format: 'der', type: 'spki' });
  assert.equal(edVerify(null, msg, spki, forged), true, 'OpenSSL accepts it');
  const req = overWire('GetContractIds', { body: Buffer.alloc(0), auth: { public_key: identity, signature: forged, sent_at_ms: String(now), receiver_public_key: RECEIVER } });
  assert.deepEqual(new Verifier(RECEIVER).verify('GetContractIds', req), { ok: false, reason: 'public_key is a small-order point' });
});

test('contract summary root: independent of arrival order, sensitive to every txid and hash', () => {
  const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
  const entry = fc.record({ txid: hex32, kind: fc.constantFrom('deploy' as const, 'call' as const), payload_hash: hex32 });
  fc.assert(
    fc.property(fc.uniqueArray(entry, { minLength: 1, maxLength: 20, selector: (e) => e.txid }), fc.nat(), (entries, k) => {
      const root = Buffer.from(summaryTree(entries).root()).toString('hex');
      const shuffled = [...entries].sort(() => 0).reverse();
      assert.equal(Buffer.from(summaryTree(shuffled).root()).toString('hex'), root);
      const i = k % entries.length;
      const changed = entries.map((e, j) => (j === i ? { ...e, payload_hash: e.payload_hash.replace(/^./, (c) => (c === '0' ? '1' : '0')) } : e));
      assert.notEqual(Buffer.from(summaryTree(changed).root()).toString('hex'), root);
      assert.notEqual(Buffer.from(summaryTree(entries.filter((_, j) => j !== i)).root()).toString('hex'), root);
    }),
    { numRuns: 100 },
  );
});

test('peer payloads: the same 64 KiB limit as REST, and shape checks', () => {
  const txid = 'ab'.repeat(32);
  const cid = 'cd'.repeat(32);
  const at = intakeInput({ kind: 'call', txid, contract_id: cid, body: new Uint8Array(MAX_PAYLOAD_BYTES), evidence: null });
  assert.equal(at.kind, 'call');
  assert.throws(() => intakeInput({ kind: 'call', txid, contract_id: cid, body: new Uint8Array(MAX_PAYLOAD_BYTES + 1), evidence: null }), (e: NodeError) => e.code === 'payload_too_large');
  assert.throws(() => intakeInput({ kind: 'deploy', txid, contract_id: '', body: Buffer.from('{"txid":"00"}'), evidence: null }), (e: NodeError) => e.code === 'bad_request');
  assert.throws(() => intakeInput({ kind: 'deploy', txid, contract_id: '', body: Buffer.from([0xff, 0xfe]), evidence: null }), (e: NodeError) => e.code === 'bad_request');
  const d = intakeInput({ kind: 'deploy', txid, contract_id: '', body: Buffer.from(JSON.stringify({ txid, bytecode: '' })), evidence: null });
  assert.equal(d.kind, 'deploy');
  assert.equal(MAX_PAYLOAD_BYTES, 65_536);
  assert.ok(MAX_GRPC_MESSAGE_BYTES > MAX_PAYLOAD_BYTES && MAX_GRPC_MESSAGE_BYTES <= MAX_PAYLOAD_BYTES + 1024);
});

test('peer URLs map to gRPC targets', () => {
  assert.deepEqual(grpcTarget('http://127.0.0.1:50051'), { target: '127.0.0.1:50051', secure: false });
  assert.deepEqual(grpcTarget('grpc://node-b'), { target: 'node-b:50051', secure: false });
  assert.deepEqual(grpcTarget('https://node-c.example'), { target: 'node-c.example:443', secure: true });
  assert.deepEqual(grpcTarget('http://[::1]:7000'), { target: '[::1]:7000', secure: false });
});

test('summary and txid list requests: a budget per key and at most LIST_CONCURRENCY in the core at once, other requests unaffected', async () => {
  // A core whose list answers are held until released, counting how many it holds at once.
  let inFlight = 0;
  let maxInFlight = 0;
  let held: (() => void)[] = [];
  const core = {
    call: (method: string): Promise<unknown> => {
      if (method === 'peerContractIds') return Promise.resolve({ ids: [], more: false });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve) =>
        held.push(() => {
          inFlight--;
          resolve(method === 'peerTxids' ? { refs: [], total: 0 } : { contract_id: '09'.repeat(32), root: '00'.repeat(32), count: 0, payloads: [], more: false });
        }),
      );
    },
  };
  const release = async <T>(answers: Promise<T>): Promise<T> => {
    const drain = setInterval(() => {
      const h = held;
      held = [];
      for (const f of h) f();
    }, 1);
    try {
      return await answers;
    } finally {
      clearInterval(drain);
    }
  };
  const make = (): { service: PeerService; counters: ReturnType<typeof zeroCounters> } => {
    const counters = zeroCounters();
    return { service: peerService(core, counters), counters };
  };
  const send = (service: PeerService, s: Signer, m: 'GetContractTxids' | 'GetContractSummary' | 'GetContractIds'): Promise<grpc.StatusObject | null> =>
    new Promise((resolve) => {
      const req = overWire(m, s.request(m, RECEIVER, m === 'GetContractIds' ? {} : { contract_id: Buffer.alloc(32, 9) }));
      (service.handlers()[m] as grpc.handleUnaryCall<unknown, unknown>)({ request: req, getPeer: () => 'test' } as never, (e) => resolve(e as grpc.StatusObject | null));
    });
  const status = (all: (grpc.StatusObject | null)[]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const e of all) {
      const k = e === null ? 'OK' : `${grpc.status[e.code]} ${e.details?.split(':')[0]}`;
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  };

  // One key, its list burst, its queue and 10 more at once (its general budget would let
  // all of them through to the core).
  const one = make();
  try {
    const a = new Signer(seed(40));
    const n = LIST_RATE_PER_S + LIST_QUEUE + 10;
    const burst = Array.from({ length: n }, (_, i) => send(one.service, a, i % 2 ? 'GetContractTxids' : 'GetContractSummary'));
    assert.deepEqual(status(await Promise.all(burst.slice(LIST_RATE_PER_S + LIST_QUEUE))), { 'RESOURCE_EXHAUSTED rate_limited': 10 }, 'beyond the burst and the queue: refused at once');
    assert.equal(maxInFlight, LIST_CONCURRENCY, `the core holds at most ${LIST_CONCURRENCY}`);
    assert.equal(one.counters.requests_rate_limited, 10);
    // Other requests of the same key still pass while the list slots are taken.
    assert.equal(await send(one.service, a, 'GetContractIds'), null);
    assert.deepEqual(status(await release(Promise.all(burst.slice(0, LIST_RATE_PER_S)))), { OK: LIST_RATE_PER_S });
  } finally {
    one.service.close();
  }

  // Many fresh keys, each within its own budget: the global slots and waiting room bound them.
  const many = make();
  maxInFlight = 0;
  try {
    const keys = Array.from({ length: 30 }, (_, i) => new Signer(seed(100 + i)));
    const wave = keys.flatMap((k) => Array.from({ length: 5 }, () => send(many.service, k, 'GetContractTxids')));
    const admitted = LIST_CONCURRENCY + LIST_WAITING;
    assert.deepEqual(status(await Promise.all(wave.slice(admitted))), { 'RESOURCE_EXHAUSTED rate_limited': wave.length - admitted });
    assert.equal(maxInFlight, LIST_CONCURRENCY);
    assert.deepEqual(status(await release(Promise.all(wave.slice(0, admitted)))), { OK: admitted });
    assert.equal(maxInFlight, LIST_CONCURRENCY, 'never more at once while draining');
    assert.equal(many.counters.requests_rate_limited, wave.length - admitted);
  } finally {
    many.service.close();
  }
});

test('payload and header fetches: a budget per key of their own, larger than the list one, so a peer catching up is not held to list pages; the same global slots', async () => {
  // A core whose answers are held until released, counting how many it holds at once.
  let inFlight = 0;
  let maxInFlight = 0;
  let held: (() => void)[] = [];
  const core = {
    call: (method: string, params: { txids?: string[] }): Promise<unknown> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve) =>
        held.push(() => {
          inFlight--;
          resolve(method === 'peerPayloads' ? params.txids!.map(() => null) : method === 'peerHeaders' ? { headers: [], tip: 0 } : { refs: [], total: 0 });
        }),
      );
    },
  };
  const counters = zeroCounters();
  const service = peerService(core, counters);
  const send = (s: Signer, m: 'GetPayloads' | 'GetHeaders' | 'GetContractTxids'): Promise<grpc.StatusObject | null> =>
    new Promise((resolve) => {
      const params = m === 'GetPayloads' ? { txids: [Buffer.alloc(32, 1)] } : m === 'GetHeaders' ? { from_height: 1, count: 10 } : { contract_id: Buffer.alloc(32, 9) };
      const req = overWire(m, s.request(m, RECEIVER, params));
      (service.handlers()[m] as grpc.handleUnaryCall<unknown, unknown>)({ request: req, getPeer: () => 'test' } as never, (e) => resolve(e as grpc.StatusObject | null));
    });
  const drain = setInterval(() => {
    const h = held;
    held = [];
    for (const f of h) f();
  }, 1);
  const refusals = (all: (grpc.StatusObject | null)[]): number => all.filter((e) => e?.code === grpc.status.RESOURCE_EXHAUSTED && e.details?.includes('too many payload and header fetches from this peer')).length;
  try {
    assert.ok(FETCH_RATE_PER_S >= 3 * LIST_RATE_PER_S, 'a catching-up peer fetches faster than it may list');
    const a = new Signer(seed(42));
    // One key: its fetch burst is answered and its queue waits for tokens (a list budget
    // would have refused most of them); 10 more are refused at once. (This service's clock
    // stands still: the queue is never served here.)
    const n = FETCH_RATE_PER_S + FETCH_QUEUE + 10;
    const refused: (grpc.StatusObject | null)[] = [];
    const burst = Array.from({ length: n }, (_, i) => send(a, i % 2 ? 'GetPayloads' : 'GetHeaders').then((e) => (refused.push(e), e)));
    // A refusal is answered at once: by the time the last ones are, all of them are.
    await Promise.all(burst.slice(FETCH_RATE_PER_S + FETCH_QUEUE));
    assert.equal(refusals(refused), 10, 'beyond the burst and the queue: refused at once, and no more');
    assert.deepEqual(await Promise.all(burst.slice(0, FETCH_RATE_PER_S)), Array(FETCH_RATE_PER_S).fill(null), 'the burst is answered');
    assert.equal(counters.requests_rate_limited, 10);
    assert.ok(maxInFlight <= LIST_CONCURRENCY, `the core holds at most ${LIST_CONCURRENCY}`);
    // Its list budget is its own: the fetches spent none of it.
    assert.equal(await send(a, 'GetContractTxids'), null);
  } finally {
    clearInterval(drain);
    service.close();
  }
});

test('a payload refused for its evidence is not remembered as seen: a copy with other evidence is checked again; an intrinsic refusal stays', async () => {
  const txid = (n: number): Buffer => Buffer.alloc(32, n);
  const submitted: { txid: string; anchorByte: number }[] = [];
  const core = {
    call: async (method: string, params: { payload: Uint8Array }): Promise<unknown> => {
      assert.equal(method, 'peerSubmit');
      const p = unpackPayload(params.payload);
      submitted.push({ txid: p.txid, anchorByte: p.evidence!.anchorTx[0]! });
      // Anchor bytes starting 0xee stand for false evidence; txid 2 is wrong in itself.
      if (p.txid === txid(2).toString('hex')) throw new NodeError('anchor_mismatch', 'binding fails');
      if (p.evidence!.anchorTx[0] === 0xee) throw new NodeError('bad_evidence', 'bad evidence (anchor_tx): not the payload\'s transaction');
      return { created: true };
    },
  };
  const service = peerService(core);
  const payload = (n: number, anchorByte: number): object => ({ kind: 'PAYLOAD_KIND_CALL', txid: txid(n), contract_id: Buffer.alloc(32, 9), body: Buffer.of(1), evidence: { anchor_tx: Buffer.of(anchorByte, 1, 2) } });
  const send = (payloads: object[]): Promise<{ accepted: boolean; error_code: string }[]> =>
    new Promise((resolve, reject) => {
      const req = overWire('SubmitPayload', new Signer(seed(41)).request('SubmitPayload', RECEIVER, { payloads }));
      (service.handlers()['SubmitPayload'] as grpc.handleUnaryCall<unknown, unknown>)({ request: req, getPeer: () => 'test' } as never, (e, r) =>
        e ? reject(new Error(e.details)) : resolve((r as { results: { accepted: boolean; error_code: string }[] }).results),
      );
    });
  try {
    const first = await send([payload(1, 0xee), payload(2, 0x01)]);
    assert.deepEqual(first.map((r) => [r.accepted, r.error_code]), [[false, 'bad_evidence'], [false, 'anchor_mismatch']]);
    const again = await send([payload(1, 0x01), payload(2, 0x01)]);
    assert.deepEqual(again.map((r) => [r.accepted, r.error_code]), [[true, ''], [false, 'anchor_mismatch']], 'the true copy taken; the intrinsic refusal answered from memory');
    assert.deepEqual(submitted.map((s) => [s.txid.slice(0, 2), s.anchorByte]), [['01', 0xee], ['02', 0x01], ['01', 0x01]], 'the core asked once per verdict');
  } finally {
    service.close();
  }
});

test('GetPayloads asks the core for a few payloads, then as many as the answer has room for; never far past its byte bound', async () => {
  const asked: number[] = [];
  let bodyBytes = 0;
  const core = {
    call: async (method: string, params: { txids: string[] }): Promise<unknown> => {
      assert.equal(method, 'peerPayloads');
      asked.push(params.txids.length);
      return params.txids.map((txid) => ({ payload: packPayload({ kind: 'call', txid, contract_id: '09'.repeat(32), body: new Uint8Array(bodyBytes), evidence: null }), height: 5, tx_index: 1 }));
    },
  };
  const service = peerService(core);
  const a = new Signer(seed(41));
  const ask = (n: number): Promise<{ answered: number; payloads: unknown[] }> =>
    new Promise((resolve, reject) => {
      const req = overWire('GetPayloads', a.request('GetPayloads', RECEIVER, { txids: Array.from({ length: n }, (_, i) => Buffer.alloc(32, i + 1)) }));
      (service.handlers()['GetPayloads'] as grpc.handleUnaryCall<unknown, { answered: number; payloads: unknown[] }>)({ request: req, getPeer: () => 'test' } as never, (e, r) => (e ? reject(e) : resolve(r!)));
    });
  try {
    // 256 payloads of ~1 KB: 32, then the other 224 in one round trip.
    bodyBytes = 900;
    const small = await ask(256);
    assert.deepEqual(asked, [32, 224]);
    assert.equal(small.answered, 256);
    assert.equal(small.payloads.length, 256);
    // 60 KB bodies: the answer stops at its 1 MiB bound; the core is asked 32 at a time.
    asked.length = 0;
    bodyBytes = 60_000;
    const large = await ask(256);
    assert.deepEqual(asked, [32]);
    assert.equal(large.payloads.length, 17);
    assert.equal(large.answered, 17);
  } finally {
    service.close();
  }
});

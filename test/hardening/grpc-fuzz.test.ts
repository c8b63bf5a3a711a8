/**
 * Hostile gRPC input against a real node's gossip process over a real socket (issue 10).
 * test/gossip/hostile.test.ts has one example of each kind (garbage bytes, unsigned, one
 * flipped signature byte, a 100 KiB SubmitPayload, a single-key flood); this file makes
 * them properties over EVERY RPC of proto/svc.proto: random bytes, mutated signed
 * messages, signed requests with random field values, every size around the message
 * limit, a decompression bomb, wrong identities and clocks, floods from thousands of
 * fresh identities and past the global limit, the seen set and the peer set driven past
 * their bounds. The gossip child must never restart, every answer must carry a status of
 * packages/protocol/src/errors.ts (or one of the two grpc-js answers documented in docs/RELIABILITY.md),
 * nothing must be stored, a well-formed peer must still be served, and the gossip
 * process's memory must stay near its baseline.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign as edSign } from 'node:crypto';
import fc from 'fast-check';
import * as grpc from '@grpc/grpc-js';
import type * as protoLoader from '@grpc/proto-loader';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, urlOf, waitStatus } from '../helpers/gossip.js';
import { Signer, CLOCK_WINDOW_MS, signingBytes } from '../../src/gossip/auth.js';
import { encodeBody } from '../../src/gossip/codec.js';
import { PeerClient } from '../../src/gossip/client.js';
import { PEER_METHODS, packageDefinition, requestCodec, type PeerMethod } from '../../src/gossip/server.js';
import { MAX_GRPC_MESSAGE_BYTES } from '../../src/gossip/limits.js';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import { grpcStatusOf, isErrorCode } from '@svc-node/protocol/errors';
import { rssKiB } from '../helpers/raw-http.js';

/** The node's gossip seed, so the test can sign as the node itself. */
const SEED = '9a'.repeat(32);
const MAX_PEERS = 8;
const SEEN_CAPACITY = 64;
/** Per-peer budget, and the global one (below its 2,000/s default, so a loaded test client still exceeds it). */
const RATE = 100;
const QUEUE = 20;
const GLOBAL = 1_000;
/**
 * Ceiling on the gossip process's RSS growth over the whole file (KiB): a guard against
 * gross leaks. RSS keeps the allocator's high-water mark (the 32 MiB messages below are
 * received and dropped by node's HTTP/2 layer) and V8 collects lazily, so the bounds
 * themselves are checked by behaviour (seen-set eviction, peer count) and exactly in
 * test/gossip/units.test.ts (the per-key table); repeated rounds of each flood plateau
 * (docs/RELIABILITY.md).
 */
const RSS_CEILING_KIB = 160 * 1024;
/** Fresh identities in the identity flood (a multiple of 250, the batch). */
const FRESH_KEYS = 1_500;

let devnet: DevnetChainHandle;
let node: NodeProcess;
let port = 0;
let gossipPid = 0;
let rssBase = 0;
let cid = '';
let callTxid = '';
let deployTxid = '';
let rootBefore = '';
let pendingBefore = 0;
const good = new Signer(new Uint8Array(randomBytes(32)));
let pc: PeerClient;
let raw: grpc.Client;
/** Status codes seen per section, printed as `# hardening/grpc-fuzz` lines. */
const tallies: Record<string, Record<string, number>> = {};

before(async () => {
  devnet = await startDevnet();
  port = await freePort();
  node = await startPeerNode(devnet, {
    name: 'grpc-fuzz-target',
    port,
    peers: [],
    env: {
      SVC_GOSSIP_PRIVATE_KEY: SEED,
      SVC_GOSSIP_MAX_PEERS: String(MAX_PEERS),
      SVC_GOSSIP_SEEN_CAPACITY: String(SEEN_CAPACITY),
      SVC_GOSSIP_INBOUND_RATE_PER_S: String(RATE),
      SVC_GOSSIP_INBOUND_QUEUE: String(QUEUE),
      SVC_GOSSIP_GLOBAL_RATE_PER_S: String(GLOBAL),
    },
  });
  const started = await node.waitFor((l) => l.msg === 'child started' && l['role'] === 'gossip', 5_000, 'gossip child pid');
  gossipPid = Number(started['child_pid']);
  pc = new PeerClient(urlOf(port), good, 10_000);
  // No send limit of its own, so the server's limits are what is tested.
  raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1 });
  const wallet = testWallet(33);
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
  const svc = client(node, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const dep = await svc.deploy(counter);
  cid = dep.contractId;
  deployTxid = dep.anchor.txid;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const c = await svc.call({ contractId: cid, function: 'bump', args: ['u64:3'], abi: counter.abi });
  callTxid = c.anchor.txid;
  devnet.chain.mine(1);
  const synced = await waitSynced(node, devnet);
  rootBefore = synced.stateRoot;
  pendingBefore = (await status(node)).pending_calls;
  // Warm the server (JIT, HTTP/2 buffers) before the baseline.
  for (let i = 0; i < 200; i++) await pc.call('GetContractIds', {});
  rssBase = rssKiB(gossipPid);
});

after(async () => {
  for (const [k, v] of Object.entries(tallies)) console.log(`# hardening/grpc-fuzz ${k}: ${JSON.stringify(v)}`);
  pc?.close();
  raw?.close();
  await node?.stop();
  await devnet?.close();
});

// --- sending and judging ------------------------------------------------------------------

interface Answer {
  code: number;
  details: string;
  resp: Record<string, unknown> | null;
}

const svcDef = (): Record<string, protoLoader.MethodDefinition<object, object>> =>
  packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>;

/** Sends `bytes` as the request of `path` (e.g. /svc.v2.Peer/Heartbeat) on the raw client. */
function sendRaw(path: string, bytes: Buffer, c: grpc.Client = raw): Promise<Answer> {
  const name = path.split('/').pop() as PeerMethod;
  const def = path.startsWith('/svc.v2.Peer/') && (PEER_METHODS as readonly string[]).includes(name) ? svcDef()[name] : undefined;
  const decode = def ? (b: Buffer) => def.responseDeserialize(b) as Record<string, unknown> : (b: Buffer) => ({ raw: b }) as Record<string, unknown>;
  return new Promise((resolve) => {
    c.makeUnaryRequest(path, (b: Buffer) => b, decode, bytes, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, r) =>
      resolve(e ? { code: e.code, details: e.details ?? '', resp: null } : { code: grpc.status.OK, details: '', resp: r ?? null }),
    );
  });
}

const encode = (m: PeerMethod, req: object): Buffer => requestCodec(m).serialize(req);
/** The node's gossip key (its SVC_GOSSIP_PRIVATE_KEY is SEED): requests are signed for it. */
const NODE_KEY = new Signer(new Uint8Array(Buffer.from(SEED, 'hex'))).publicKey;
const signedBytes = (s: Signer, m: PeerMethod, req: Record<string, unknown>, nowMs?: number): Buffer => encode(m, s.request(m, NODE_KEY, req, nowMs));

function tally(section: string, a: Answer): void {
  const t = (tallies[section] ??= {});
  const k = grpc.status[a.code] ?? String(a.code);
  t[k] = (t[k] ?? 0) + 1;
}

/**
 * Every answer is OK, or carries `<code>: <message>` details whose PROTOCOL code maps to
 * the status sent (packages/protocol/src/errors.ts), or is one of grpc-js's own two refusals: a message over
 * the receive limit (RESOURCE_EXHAUSTED) and an unknown method (UNIMPLEMENTED). INTERNAL
 * (a handler bug) and transport failures (the process died) never pass.
 */
function judge(a: Answer, where: string): void {
  if (a.code === grpc.status.OK) return;
  const m = /^([a-z_]+): /.exec(a.details);
  if (m && isErrorCode(m[1])) {
    assert.notEqual(m[1], 'internal', `${where}: internal error: ${a.details}`);
    assert.equal(a.code, grpcStatusOf(m[1]), `${where}: status ${grpc.status[a.code]} does not match code ${m[1]} (${a.details})`);
    return;
  }
  if (a.code === grpc.status.RESOURCE_EXHAUSTED && /^Received message (larger than max|that decompresses to a size larger than)/.test(a.details)) return;
  if (a.code === grpc.status.UNIMPLEMENTED && /does not implement the method/.test(a.details)) return;
  assert.fail(`${where}: undocumented answer ${grpc.status[a.code] ?? a.code}: ${a.details}`);
}

/** The peer, the node and its data are as before: same gossip pid, served, nothing stored. */
async function healthy(section: string): Promise<void> {
  assert.equal(node.lines.filter((l) => l.msg === 'child started' && l['role'] === 'gossip').length, 1, `${section}: the gossip child was never restarted`);
  assert.deepEqual(node.lines.filter((l) => l.msg === 'peer handler bug'), [], `${section}: no handler bug logged`);
  assert.equal((await fetch(`${node.restUrl}/health`)).status, 200);
  // The global bucket may still be empty after a flood: a well-formed peer is served within 2 s.
  const deadline = Date.now() + 2_000;
  let ids: { contract_ids: Uint8Array[] } | null = null;
  while (!ids) {
    try {
      ids = await pc.call('GetContractIds', {});
    } catch (e) {
      if (Date.now() > deadline || (e as { grpcCode?: number }).grpcCode !== grpc.status.RESOURCE_EXHAUSTED) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  assert.deepEqual(ids.contract_ids.map((b) => Buffer.from(b).toString('hex')), [cid], `${section}: contract ids unchanged`);
  const p = await pc.call('GetPayloadByTxid', { txid: Buffer.from(callTxid, 'hex') });
  assert.equal(Buffer.from(p.payload.txid).toString('hex'), callTxid);
  const s = await status(node);
  assert.equal(s.state_root, rootBefore, `${section}: state root unchanged`);
  assert.equal(s.pending_calls, pendingBefore, `${section}: nothing stored`);
  assert.equal(s.halted, false);
  const rss = rssKiB(gossipPid);
  console.log(`# hardening/grpc-fuzz rss after ${section}: ${Math.round(rss / 1024)} MiB (baseline ${Math.round(rssBase / 1024)} MiB)`);
  assert.ok(rss - rssBase < RSS_CEILING_KIB, `${section}: gossip RSS ${rss} KiB vs baseline ${rssBase} KiB`);
}

// --- generators ---------------------------------------------------------------------------

const u64 = fc.oneof(fc.constantFrom(0n, 1n, 100n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 64n - 1n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(String);
const bytesOf = (min: number, max: number): fc.Arbitrary<Buffer> => fc.uint8Array({ minLength: min, maxLength: max }).map((b) => Buffer.from(b));
/** 32-byte ids mostly, sometimes real ones, sometimes the wrong length. */
const idArb = (): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 3, arbitrary: bytesOf(32, 32) },
    { weight: 2, arbitrary: fc.constantFrom(cid, callTxid, deployTxid).map((h) => Buffer.from(h, 'hex')) },
    { weight: 1, arbitrary: bytesOf(0, 40) },
  );
const kindArb = fc.oneof(fc.constantFrom('PAYLOAD_KIND_CALL', 'PAYLOAD_KIND_DEPLOY', 'PAYLOAD_KIND_UNSPECIFIED'), fc.integer({ min: 3, max: 1000 }));
/** Bodies; `big` adds ones at the 64 KiB payload limit and one byte over it. */
const bodyArb = (big: boolean): fc.Arbitrary<Buffer> =>
  fc.oneof(
    bytesOf(0, 300),
    fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
    fc.constant(Buffer.from(JSON.stringify({ txid: deployTxid }))),
    big ? fc.constantFrom(MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES + 1).map((n) => Buffer.alloc(n, 7)) : bytesOf(0, 16),
  );
const payloadArb = (big: boolean): fc.Arbitrary<Record<string, unknown>> => fc.record({ kind: kindArb, txid: idArb(), contract_id: fc.oneof(idArb(), fc.constant(Buffer.alloc(0))), body: bodyArb(big) });
const urlArb = fc.oneof(
  fc.constantFrom('', 'http://127.0.0.1:1', 'grpc://127.0.0.1:2', 'https://[::1]:3', 'ftp://127.0.0.1:4', 'http://', 'not a url', 'http://127.0.0.1:1/' + 'x'.repeat(600)),
  fc.string({ maxLength: 80 }),
);

/** Signed requests with random field values, for every method. */
function requestArb(big: boolean): fc.Arbitrary<[PeerMethod, Record<string, unknown>]> {
  const one = <T extends Record<string, unknown>>(m: PeerMethod, a: fc.Arbitrary<T>): fc.Arbitrary<[PeerMethod, Record<string, unknown>]> => a.map((r) => [m, r]);
  return fc.oneof(
    one('Heartbeat', fc.record({ node_id: fc.string({ unit: 'binary', maxLength: 100 }), url: urlArb, height: u64 })),
    one('SubmitPayload', fc.record({ payloads: fc.oneof({ weight: 5, arbitrary: fc.array(payloadArb(big), { maxLength: 4 }) }, { weight: 1, arbitrary: fc.array(fc.record({ kind: kindArb, txid: bytesOf(32, 32), contract_id: fc.constant(Buffer.alloc(0)), body: bytesOf(0, 8) }), { minLength: 63, maxLength: 70 }) }) })),
    one('PreparePayload', fc.record({ payload: fc.oneof(payloadArb(big), fc.constant(null)) })),
    one('GetContractIds', fc.record({ after: bytesOf(0, 40), limit: fc.nat() })),
    one('GetContractSummary', fc.record({ contract_id: idArb(), after_txid: bytesOf(0, 40), limit: fc.nat() })),
    one('GetContractTxids', fc.record({ contract_id: idArb(), offset: fc.nat(), limit: fc.nat() })),
    one('GetContractRanges', fc.record({ contract_id: idArb(), ranges: fc.array(fc.record({ lower: bytesOf(0, 40), upper: bytesOf(0, 40), list_up_to: fc.nat() }), { maxLength: 140 }) })),
    one('GetContractMerkleRoot', fc.record({ contract_id: idArb() })),
    one('GetPayloadByTxid', fc.record({ txid: idArb() })),
    one('GetPayloads', fc.record({ txids: fc.array(idArb(), { maxLength: 300 }) })),
    one('GetStateRoots', fc.record({ from_height: u64, to_height: u64 })),
  );
}

/** Byte-level mutations of an encoded message. */
const mutationArb = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat({ max: 7 }) }),
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), v: fc.nat({ max: 255 }) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), b: bytesOf(1, 8) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('append' as const), b: bytesOf(1, 40) }),
  fc.record({ op: fc.constant('repeat' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 40 }) }),
);
type Mutation = typeof mutationArb extends fc.Arbitrary<infer T> ? T : never;

function mutate(b: Buffer, m: Mutation): Buffer {
  const at = 'at' in m ? m.at % (b.length + 1) : 0;
  switch (m.op) {
    case 'flip': {
      if (b.length === 0) return b;
      const c = Buffer.from(b);
      c[at % b.length]! ^= 1 << m.bit;
      return c;
    }
    case 'set': {
      if (b.length === 0) return b;
      const c = Buffer.from(b);
      c[at % b.length] = m.v;
      return c;
    }
    case 'truncate':
      return b.subarray(0, at);
    case 'insert':
      return Buffer.concat([b.subarray(0, at), m.b, b.subarray(at)]);
    case 'delete':
      return Buffer.concat([b.subarray(0, at), b.subarray(at + m.n)]);
    case 'append':
      return Buffer.concat([b, m.b]);
    case 'repeat':
      return Buffer.concat([b.subarray(0, at), b.subarray(at, at + m.n), b.subarray(at)]);
  }
}

/** The SignedRequest (body bytes and auth) as the server decodes it, re-encoded; null when it does not decode. */
function canonical(m: PeerMethod, b: Buffer): Buffer | null {
  try {
    const c = requestCodec(m);
    return c.serialize(c.deserialize(b));
  } catch {
    return null;
  }
}

const seeds = fc.uint8Array({ minLength: 32, maxLength: 32 });
const signerCache = new Map<string, Signer>();
function signerOf(seed: Uint8Array): Signer {
  const k = Buffer.from(seed).toString('hex');
  let s = signerCache.get(k);
  if (!s) {
    s = new Signer(seed);
    signerCache.set(k, s);
  }
  return s;
}

// --- properties ---------------------------------------------------------------------------

test('random bytes to every method (and to unknown ones): refused with a documented status, never served', async () => {
  const paths = [...PEER_METHODS.map((m) => `/svc.v2.Peer/${m}`), '/svc.v2.Peer/Nope', '/svc.v2.Other/Heartbeat', '/grpc.health.v1.Health/Check'];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...paths), fc.oneof(bytesOf(0, 64), bytesOf(0, 2048)), async (path, bytes) => {
      const a = await sendRaw(path, bytes);
      tally('random-bytes', a);
      judge(a, `${path} with ${bytes.length} random bytes`);
      assert.notEqual(a.code, grpc.status.OK, `${path}: random bytes were served`);
      if (!path.startsWith('/svc.v2.Peer/') || path.endsWith('/Nope')) assert.equal(a.code, grpc.status.UNIMPLEMENTED);
    }),
    { numRuns: 800, interruptAfterTimeLimit: 5_000 },
  );
  const s = await status(node);
  assert.ok(s.gossip.requests_malformed > 0, 'undecodable bytes were answered INVALID_ARGUMENT and counted');
  await healthy('random-bytes');
});

test('mutated signed messages of every method: served only when they decode to exactly what was signed', async () => {
  let passed = 0;
  await fc.assert(
    fc.asyncProperty(requestArb(false), seeds, mutationArb, async ([m, req], seed, mut) => {
      const signer = signerOf(seed);
      const orig = signedBytes(signer, m, req);
      const bytes = mutate(orig, mut);
      const a = await sendRaw(`/svc.v2.Peer/${m}`, bytes);
      tally('mutated', a);
      judge(a, `${m} mutated by ${mut.op}`);
      const same = canonical(m, bytes);
      const authentic = same !== null && same.equals(canonical(m, orig)!);
      if (a.code === grpc.status.UNAUTHENTICATED) assert.ok(!authentic, `${m}: an unchanged request was refused as unauthenticated`);
      else if (a.code === grpc.status.INVALID_ARGUMENT && a.details.startsWith('bad_request: not a ')) assert.equal(same, null, `${m}: decodable bytes called malformed`);
      else if (!(a.code === grpc.status.RESOURCE_EXHAUSTED && a.details.startsWith('rate_limited'))) {
        // It reached the handler: it must be byte-for-byte the request that was signed.
        assert.ok(authentic, `${m}: a changed request (${mut.op}) passed authentication: ${grpc.status[a.code]} ${a.details}`);
        passed++;
      }
    }),
    { numRuns: 600, interruptAfterTimeLimit: 6_000 },
  );
  console.log(`# hardening/grpc-fuzz mutated: ${passed} mutations left the signed request unchanged and were served`);
  await healthy('mutated');
});

test('signed requests with random field values on every method: documented answers, nothing stored', async () => {
  const perMethod: Record<string, number> = {};
  await fc.assert(
    fc.asyncProperty(requestArb(true), seeds, async ([m, req], seed) => {
      perMethod[m] = (perMethod[m] ?? 0) + 1;
      const a = await sendRaw(`/svc.v2.Peer/${m}`, signedBytes(signerOf(seed), m, req));
      tally('random-fields', a);
      judge(a, m);
      assert.notEqual(a.code, grpc.status.UNAUTHENTICATED, `${m}: a correctly signed request was refused: ${a.details}`);
      if (a.code !== grpc.status.OK) return;
      const r = a.resp!;
      if (m === 'SubmitPayload') {
        const sent = req['payloads'] as unknown[];
        const results = r['results'] as { accepted: boolean; error_code: string }[];
        assert.equal(results.length, sent.length, 'one result per payload');
        for (const x of results) {
          if (x.accepted) assert.equal(x.error_code, '');
          else assert.ok(isErrorCode(x.error_code) && x.error_code !== 'internal', `result code ${x.error_code}`);
        }
      } else if (m === 'PreparePayload') {
        if (!r['valid']) assert.ok(isErrorCode(r['error_code']) && r['error_code'] !== 'internal', `prepare code ${String(r['error_code'])}`);
      } else if (m === 'GetStateRoots') {
        const roots = r['roots'] as { height: string }[];
        assert.ok(roots.length <= 1000);
        for (const x of roots) assert.ok(BigInt(x.height) >= BigInt(req['from_height'] as string) && BigInt(x.height) <= BigInt(req['to_height'] as string));
      }
    }),
    { numRuns: 700, interruptAfterTimeLimit: 7_000 },
  );
  console.log(`# hardening/grpc-fuzz random-fields per method: ${JSON.stringify(perMethod)}`);
  // Heartbeats with random URLs taught it peers; never more than gossip.max_peers.
  const s = await status(node);
  assert.ok(s.peers <= MAX_PEERS, `peer set bounded: ${s.peers}`);
  await healthy('random-fields');
});

test('every method at the message limit is decoded, one byte over is refused by gRPC; large messages and a decompression bomb are refused', async () => {
  /** An unsigned message of exactly `n` bytes: one unknown length-delimited field (number 15). */
  const sized = (n: number): Buffer => {
    for (let pad = n - 2; pad >= 0; pad--) {
      const len = Buffer.alloc(5);
      let v = pad;
      let i = 0;
      do {
        len[i++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        v >>>= 7;
      } while (v > 0);
      if (1 + i + pad === n) return Buffer.concat([Buffer.of((15 << 3) | 2), len.subarray(0, i), Buffer.alloc(pad, 0x61)]);
    }
    throw new Error(`cannot size ${n}`);
  };
  for (const m of PEER_METHODS) {
    const at = await sendRaw(`/svc.v2.Peer/${m}`, sized(MAX_GRPC_MESSAGE_BYTES));
    tally('sizes', at);
    judge(at, `${m} at the limit`);
    assert.equal(at.code, grpc.status.UNAUTHENTICATED, `${m} at the limit: decoded, then refused as unsigned (${at.details})`);
    const over = await sendRaw(`/svc.v2.Peer/${m}`, sized(MAX_GRPC_MESSAGE_BYTES + 1));
    tally('sizes', over);
    judge(over, `${m} over the limit`);
    assert.equal(over.code, grpc.status.RESOURCE_EXHAUSTED, `${m} one byte over the limit`);
  }
  // A signed SubmitPayload as large as the limit allows: its payload is checked like REST's.
  const body = MAX_GRPC_MESSAGE_BYTES - 400;
  const big = await sendRaw('/svc.v2.Peer/SubmitPayload', signedBytes(good, 'SubmitPayload', { payloads: [{ kind: 'PAYLOAD_KIND_CALL', txid: randomBytes(32), contract_id: Buffer.from(cid, 'hex'), body: randomBytes(body) }] }));
  judge(big, 'signed SubmitPayload near the limit');
  assert.equal(big.code, grpc.status.OK);
  assert.deepEqual((big.resp!['results'] as { error_code: string }[]).map((x) => x.error_code), ['payload_too_large']);
  // 4 MiB (grpc-js's default limit) and 32 MiB, 20 of them at once.
  const huge = await Promise.all([...Array.from({ length: 10 }, () => sendRaw('/svc.v2.Peer/SubmitPayload', Buffer.alloc(4 * 1024 * 1024, 1))), ...Array.from({ length: 10 }, () => sendRaw('/svc.v2.Peer/Heartbeat', Buffer.alloc(32 * 1024 * 1024, 2)))]);
  for (const a of huge) {
    tally('sizes', a);
    judge(a, 'huge message');
    assert.equal(a.code, grpc.status.RESOURCE_EXHAUSTED);
  }
  // 64 MiB of zeros, gzip-compressed to ~64 KiB: refused while decompressing, never inflated whole.
  const gz = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1, 'grpc.default_compression_algorithm': 2 });
  try {
    const bomb = await sendRaw('/svc.v2.Peer/GetContractIds', Buffer.alloc(64 * 1024 * 1024), gz);
    tally('sizes', bomb);
    judge(bomb, 'decompression bomb');
    assert.equal(bomb.code, grpc.status.RESOURCE_EXHAUSTED);
    // A small compressed, signed request is still served.
    const ok = await sendRaw('/svc.v2.Peer/GetContractIds', signedBytes(good, 'GetContractIds', {}), gz);
    assert.equal(ok.code, grpc.status.OK, ok.details);
  } finally {
    gz.close();
  }
  await healthy('sizes');
});

test('wrong identities, signatures and clocks are refused UNAUTHENTICATED; replays inside the window are served', async () => {
  const self = new Signer(new Uint8Array(Buffer.from(SEED, 'hex')));
  const other = new Signer(new Uint8Array(randomBytes(32)));
  const req = { contract_id: Buffer.from(cid, 'hex') };
  const signed = good.request('GetContractMerkleRoot', NODE_KEY, req);
  const forOther = good.request('GetContractMerkleRoot', other.publicKey, req);
  const now = Date.now();
  const cases: [string, object][] = [
    ['signed with the node own key', self.request('GetContractMerkleRoot', NODE_KEY, req)],
    ['clock 5 s beyond the window, past', good.request('GetContractMerkleRoot', NODE_KEY, req, now - CLOCK_WINDOW_MS - 5_000)],
    ['clock 5 s beyond the window, future', good.request('GetContractMerkleRoot', NODE_KEY, req, now + CLOCK_WINDOW_MS + 5_000)],
    ['clock 0', good.request('GetContractMerkleRoot', NODE_KEY, req, 0)],
    ['clock u64 max', { ...signed, auth: { ...signed.auth, sent_at_ms: '18446744073709551615' } }],
    ['another key claimed', { ...signed, auth: { ...signed.auth, public_key: other.publicKey } }],
    ['all-zero key', { ...signed, auth: { ...signed.auth, public_key: Buffer.alloc(32) } }],
    ['all-0xff key (not a point encoding)', { ...signed, auth: { ...signed.auth, public_key: Buffer.alloc(32, 0xff) } }],
    ['low-order point key', { ...signed, auth: { ...signed.auth, public_key: Buffer.from('0100000000000000000000000000000000000000000000000000000000000000', 'hex') } }],
    // OpenSSL verifies (R = identity, S = 0) under the identity key for any message: a
    // signature made without a private key (test/gossip/units.test.ts).
    ['forged signature under the identity key', { ...signed, auth: { ...signed.auth, public_key: Buffer.from('01' + '00'.repeat(31), 'hex'), signature: Buffer.concat([Buffer.from('01' + '00'.repeat(31), 'hex'), Buffer.alloc(32)]) } }],
    ['all-zero signature', { ...signed, auth: { ...signed.auth, signature: Buffer.alloc(64) } }],
    ['signature of another key', { ...signed, auth: { ...signed.auth, signature: other.request('GetContractMerkleRoot', NODE_KEY, req).auth.signature } }],
    ['signature over another contract id', { ...signed, body: encodeBody('GetContractMerkleRoot', { contract_id: randomBytes(32) }) }],
    ['signed for another node (a replay)', forOther],
    ['signed for another node, relabeled for this one', { ...forOther, auth: { ...forOther.auth, receiver_public_key: NODE_KEY } }],
    ['signature from another method', { ...good.request('GetContractSummary', NODE_KEY, req) }],
    ['clock changed after signing', { ...signed, auth: { ...signed.auth, sent_at_ms: String(BigInt(signed.auth.sent_at_ms) + 1n) } }],
  ];
  for (const len of [0, 31, 33]) cases.push([`key of ${len} bytes`, { ...signed, auth: { ...signed.auth, public_key: Buffer.alloc(len, 1) } }]);
  for (const len of [0, 63, 65]) cases.push([`signature of ${len} bytes`, { ...signed, auth: { ...signed.auth, signature: Buffer.alloc(len, 1) } }]);
  for (const [what, r] of cases) {
    const a = await sendRaw('/svc.v2.Peer/GetContractMerkleRoot', encode('GetContractMerkleRoot', r));
    tally('identities', a);
    judge(a, what);
    assert.equal(a.code, grpc.status.UNAUTHENTICATED, `${what}: ${grpc.status[a.code]} ${a.details}`);
  }
  // Inside the window either side: served.
  for (const skew of [-(CLOCK_WINDOW_MS - 5_000), CLOCK_WINDOW_MS - 5_000]) {
    const a = await sendRaw('/svc.v2.Peer/GetContractMerkleRoot', encode('GetContractMerkleRoot', good.request('GetContractMerkleRoot', NODE_KEY, req, Date.now() + skew)));
    assert.equal(a.code, grpc.status.OK, `skew ${skew} ms: ${a.details}`);
  }
  // No nonce: the same signed bytes replayed are served each time (every RPC is
  // idempotent); a replayed heartbeat does not add peers.
  const hb = signedBytes(other, 'Heartbeat', { node_id: 'replayed', url: 'http://127.0.0.1:7', height: '1' });
  const peersBefore = (await status(node)).peers;
  for (let i = 0; i < 30; i++) assert.equal((await sendRaw('/svc.v2.Peer/Heartbeat', hb)).code, grpc.status.OK);
  assert.ok((await status(node)).peers <= Math.min(MAX_PEERS, peersBefore + 1));
  await healthy('identities');
});

test('floods: thousands of fresh identities, unsigned traffic past the global limit, one peer past its own: refused, bounded, served after', async () => {
  // 1. Fresh identities, each signing one Heartbeat (answered without the core): every one
  //    gets a per-key budget. With one Bottleneck limiter per key (the first version) each
  //    key kept ~18 KiB and a 250 ms timer for 5 minutes: 4 rounds of 2,000 grew the process
  //    150 -> 255 MiB (docs/RELIABILITY.md). That the table stops at PEER_LIMITER_KEYS is
  //    checked exactly in test/gossip/units.test.ts; RSS here is printed, and bounded by the
  //    file's ceiling only, as V8 collects lazily and a per-round bound would be noise.
  // node:crypto key pairs and one shared request body: ~10x cheaper than new Signer().
  const hbReq = { node_id: 'fresh', url: '', height: '0' };
  const hbBody = encodeBody('Heartbeat', hbReq);
  const freshHeartbeat = (): Buffer => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const pk = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    const at = BigInt(Date.now());
    const signature = edSign(null, signingBytes('Heartbeat', NODE_KEY, pk, at, hbBody), privateKey);
    return encode('Heartbeat', { body: hbBody, auth: { public_key: pk, signature, sent_at_ms: at.toString(), receiver_public_key: NODE_KEY } });
  };
  const t0 = performance.now();
  const codes: Record<string, number> = {};
  let admitted = 0;
  const r0 = rssKiB(gossipPid);
  for (let batches = 0; admitted < FRESH_KEYS && batches < 4 * (FRESH_KEYS / 250); batches++) {
    const batch = await Promise.all(Array.from({ length: 250 }, freshHeartbeat).map((r) => sendRaw('/svc.v2.Peer/Heartbeat', r)));
    for (const a of batch) {
      judge(a, 'fresh identity');
      const k = grpc.status[a.code]!;
      codes[k] = (codes[k] ?? 0) + 1;
      if (a.code === grpc.status.OK) admitted++;
    }
  }
  const r1 = rssKiB(gossipPid);
  console.log(`# hardening/grpc-fuzz fresh identities: ${JSON.stringify(codes)} in ${Math.round(performance.now() - t0)} ms; gossip RSS ${Math.round(r0 / 1024)} -> ${Math.round(r1 / 1024)} MiB`);
  assert.ok(admitted >= FRESH_KEYS, `fresh keys served: ${admitted}`);
  assert.deepEqual(Object.keys(codes).filter((k) => k !== 'OK' && k !== 'RESOURCE_EXHAUSTED'), []);
  assert.deepEqual(Object.keys(codes).filter((k) => k !== 'OK' && k !== 'RESOURCE_EXHAUSTED'), []);
  await healthy('fresh-identities');

  // 2. Unsigned garbage past gossip.global_rate_per_s, 2,000 at a time until the global
  //    bucket has refused some: refused before any signature work, and never more let
  //    through than its burst plus what refills meanwhile.
  const limitedBefore = (await status(node)).gossip.requests_rate_limited;
  const unsigned = encode('SubmitPayload', { body: encodeBody('SubmitPayload', { payloads: [] }) });
  const fc2: Record<string, number> = {};
  const tu = performance.now();
  for (let i = 0; i < 8 && !fc2['RESOURCE_EXHAUSTED']; i++) {
    const flood = await Promise.all(Array.from({ length: 2_000 }, () => sendRaw('/svc.v2.Peer/SubmitPayload', unsigned)));
    for (const a of flood) {
      judge(a, 'unsigned flood');
      fc2[grpc.status[a.code]!] = (fc2[grpc.status[a.code]!] ?? 0) + 1;
    }
  }
  const usecs = (performance.now() - tu) / 1000;
  const passed = fc2['UNAUTHENTICATED'] ?? 0;
  console.log(`# hardening/grpc-fuzz unsigned flood: ${JSON.stringify(fc2)} in ${usecs.toFixed(2)} s`);
  assert.deepEqual(Object.keys(fc2).filter((k) => k !== 'UNAUTHENTICATED' && k !== 'RESOURCE_EXHAUSTED'), []);
  assert.ok((fc2['RESOURCE_EXHAUSTED'] ?? 0) > 0, 'the global bucket refused part of the flood');
  assert.ok(passed <= GLOBAL + Math.ceil(GLOBAL * usecs) + 50, `no more past the global bucket than it allows: ${passed}`);
  await waitStatus(node, (x) => x.gossip.requests_rate_limited >= limitedBefore + (fc2['RESOURCE_EXHAUSTED'] ?? 0), 'the refusals counted');

  // 3. One signed peer, 10x its budget at once, on every read method: at most its burst,
  //    its queue and what refills while the requests arrive are served; the rest refused.
  const flooder = new Signer(new Uint8Array(randomBytes(32)));
  const reads: [PeerMethod, Record<string, unknown>][] = [
    ['GetContractIds', {}],
    ['GetContractSummary', { contract_id: Buffer.from(cid, 'hex') }],
    ['GetContractTxids', { contract_id: Buffer.from(cid, 'hex') }],
    ['GetContractMerkleRoot', { contract_id: Buffer.from(cid, 'hex') }],
    ['GetPayloadByTxid', { txid: Buffer.from(callTxid, 'hex') }],
    ['GetStateRoots', { from_height: '0', to_height: '100000' }],
    ['Heartbeat', { node_id: 'flooder', url: '', height: '0' }],
    ['PreparePayload', { payload: null }],
  ];
  const burstReqs = Array.from({ length: 10 * RATE }, (_, i) => reads[i % reads.length]!).map(([m, r]) => [m, signedBytes(flooder, m, r)] as const);
  await new Promise((r) => setTimeout(r, 1_100)); // the global bucket refills (1 s of budget, above the burst)
  const tb = performance.now();
  const burst = await Promise.all(burstReqs.map(([m, b]) => sendRaw(`/svc.v2.Peer/${m}`, b)));
  const secs = (performance.now() - tb) / 1000;
  const fc3: Record<string, number> = {};
  for (const a of burst) {
    judge(a, 'per-peer flood');
    fc3[grpc.status[a.code]!] = (fc3[grpc.status[a.code]!] ?? 0) + 1;
  }
  const served = burst.filter((a) => a.code !== grpc.status.RESOURCE_EXHAUSTED).length;
  const allowed = RATE + QUEUE + Math.ceil(RATE * secs) + 5;
  console.log(`# hardening/grpc-fuzz one peer at 10x its budget: ${JSON.stringify(fc3)} in ${secs.toFixed(2)} s (budget allowed ${allowed})`);
  assert.ok(served >= RATE, `at least the burst served: ${served}`);
  assert.ok(served <= allowed, `no more than the budget over ${secs.toFixed(2)} s: ${served} > ${allowed}`);
  assert.ok((fc3['RESOURCE_EXHAUSTED'] ?? 0) > 0, 'the rest refused');
  await healthy('floods');
});

test('the seen set is bounded: thousands of distinct refused payloads evict the oldest verdicts', async () => {
  const peer = new Signer(new Uint8Array(randomBytes(32)));
  const junk = (): Record<string, unknown> => ({ kind: 'PAYLOAD_KIND_CALL', txid: randomBytes(32), contract_id: Buffer.from(cid, 'hex'), body: randomBytes(200) });
  const submit = async (payloads: Record<string, unknown>[]): Promise<{ error_code: string }[]> => {
    for (;;) {
      const a = await sendRaw('/svc.v2.Peer/SubmitPayload', signedBytes(peer, 'SubmitPayload', { payloads }));
      judge(a, 'seen flood');
      if (a.code === grpc.status.RESOURCE_EXHAUSTED) {
        await new Promise((r) => setTimeout(r, 50)); // per-peer budget: wait for tokens
        continue;
      }
      assert.equal(a.code, grpc.status.OK, a.details);
      return a.resp!['results'] as { error_code: string }[];
    }
  };
  const first = junk();
  assert.deepEqual((await submit([first])).map((r) => r.error_code), ['bad_request']);
  const s0 = (await status(node)).gossip;
  // The same payload again: remembered, not verified again.
  await submit([first]);
  const s1 = await waitStatus(node, (x) => x.gossip.payloads_duplicate > s0.payloads_duplicate, 'the repeat counted as duplicate');
  // 4,000 distinct payloads (64 per request), far past gossip.seen_capacity.
  let sent = 0;
  while (sent < 4_000) {
    const rs = await submit(Array.from({ length: 64 }, junk));
    for (const r of rs) assert.equal(r.error_code, 'bad_request');
    sent += 64;
  }
  // The first verdict is forgotten: a third copy is verified again (refused, not duplicate).
  const s2 = (await waitStatus(node, (x) => x.gossip.payloads_refused >= s1.gossip.payloads_refused + sent, 'the flood counted')).gossip;
  await submit([first]);
  const s3 = (await waitStatus(node, (x) => x.gossip.payloads_refused === s2.payloads_refused + 1, 'the third copy verified again')).gossip;
  assert.equal(s3.payloads_duplicate, s2.payloads_duplicate, 'evicted from the seen set');
  console.log(`# hardening/grpc-fuzz seen set: ${sent} distinct payloads through a ${SEEN_CAPACITY}-entry set`);
  await healthy('seen');
});

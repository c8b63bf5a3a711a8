/**
 * Hostile REST input while the verification pool is saturated (issue 10). One node on a
 * devnet with one pool thread and a queue of QUEUE_LIMIT; at the same time:
 * - SATURATORS clients post a real call's envelope with its signature broken (the pool
 *   decodes it and verifies the signature before refusing it), and SIMULATORS clients
 *   post simulations (pool tasks too), without pause;
 * - a peer pushes such payloads over gossip (intake through the same pool);
 * - random and mutated requests on every endpoint, on raw sockets (as rest-fuzz).
 * What must hold: every answer is a documented status with the JSON error body (PROTOCOL
 * section 6), a 503 only `overloaded` (or `chain_unavailable` / `halted`), the pool is
 * seen saturated, no child restarts, no handler bug is logged; after the load a real
 * call is accepted and executes, and the state root moves on.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { ErrorCode, httpStatusOf } from '@svc-node/protocol/errors';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf } from '../helpers/gossip.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';

const TOKEN = 'saturated-token-41d2';
/** A queue this short is full at once under the saturating clients. */
const QUEUE_LIMIT = 2;
/** Concurrent submitters: enough to fill the pool's batches (up to 32 calls a task) and its queue. */
const SATURATORS = 64;
const SIMULATORS = 2;
/** Hostile requests: at most RUNS, and the load lasts at most LIMIT_MS of them. */
const RUNS = 1200;
const LIMIT_MS = 10_000;
/** Hostile requests sent at once per property case. */
const HOSTILE_AT_ONCE = 8;

let devnet: DevnetChainHandle;
let node: NodeProcess;
let restPort = 0;
let gossipPort = 0;
let svc: SvcClient;
let cid = '';
let callTxid = '';
let forged = '';
const counter = compileFixture('counter.svc');
const CODES = new Set<string>(Object.values(ErrorCode));
const tally: Record<string, Record<string, number>> = {};
const count = (what: string, k: string): void => {
  const t = (tally[what] ??= {});
  t[k] = (t[k] ?? 0) + 1;
};

before(async () => {
  devnet = await startDevnet();
  gossipPort = await freePort();
  node = await startPeerNode(devnet, { name: 'saturated', port: gossipPort, peers: [], env: { SVC_API_TOKEN: TOKEN, SVC_WORKERS_POOL_SIZE: '1', SVC_WORKERS_QUEUE_LIMIT: String(QUEUE_LIMIT) } });
  restPort = Number(new URL(node.restUrl).port);
  const wallet = testWallet(44);
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
  svc = client(node, devnet, wallet);
  cid = (await svc.deploy(counter)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const c = await svc.call({ contractId: cid, function: 'bump', args: ['u64:3'], abi: counter.abi });
  callTxid = c.anchor.txid;
  // The same envelope with its last byte (in the signature) changed: the pool decodes it
  // and verifies the signature (the costly part of intake) before refusing it.
  const env = Buffer.from(c.call.payload, 'base64');
  env[env.length - 1]! ^= 0x01;
  forged = env.toString('base64');
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  for (const [k, v] of Object.entries(tally)) console.log(`# hardening/saturated-pool ${k}: ${JSON.stringify(v)}`);
  await node?.stop();
  await devnet?.close();
});

/** PROTOCOL section 6: a documented status; errors as exactly {"error":{code,message}} with the mapped status. */
function checkAnswer(a: RawAnswer, what: string): void {
  assert.ok([200, 202, 400, 401, 403, 404, 405, 409, 413, 422, 503].includes(a.status), `${what}: status ${a.status} ${a.body}`);
  if (a.status === 200 && a.headers['content-type']?.startsWith('text/plain')) return; // /metrics
  assert.equal(a.headers['content-type'], 'application/json', what);
  const j = JSON.parse(a.body) as { error?: { code: unknown; message: unknown } };
  if (a.status < 400) return;
  assert.deepEqual(Object.keys(j), ['error'], `${what}: ${a.body}`);
  assert.ok(j.error && typeof j.error.code === 'string' && typeof j.error.message === 'string', `${what}: ${a.body}`);
  assert.ok(CODES.has(j.error.code) && j.error.code !== 'internal', `${what}: code ${String(j.error.code)}`);
  assert.equal(httpStatusOf(j.error.code as ErrorCode), a.status, `${what}: ${a.body}`);
  if (a.status === 503) assert.ok(['overloaded', 'chain_unavailable', 'halted'].includes(j.error.code), `${what}: ${a.body}`);
}

const post = async (path: string, body: unknown): Promise<{ status: number; code: string }> => {
  const r = await fetch(`${node.restUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = (await r.json()) as { error?: { code: string } };
  return { status: r.status, code: j.error?.code ?? 'ok' };
};

test('hostile requests while the pool is saturated: documented answers only, no crash, the node recovers', { timeout: 90_000 }, async () => {
  const starts = (): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const l of node.lines) if (l.msg === 'child started') out[String(l['role'])] = (out[String(l['role'])] ?? 0) + 1;
    return out;
  };
  const startsBefore = starts();
  let stop = false;
  let sawSaturated = 0;
  const load: Promise<void>[] = [];
  /** A load loop: what it sees is tallied; a failed request or a wrong answer ends the test (checked once the load stops). */
  const loop = (what: string, body: () => Promise<void>): void => {
    load.push(
      (async () => {
        while (!stop) {
          try {
            await body();
          } catch (e) {
            count(what, `error: ${String((e as Error).message).slice(0, 120)}`);
            throw e;
          }
        }
      })(),
    );
  };

  // Saturating calls: a broken signature, found by the pool.
  for (let i = 0; i < SATURATORS; i++) {
    loop('saturating calls', async () => {
      const r = await post('/contract_call', { txid: randomBytes(32).toString('hex'), contract_id: cid, payload: forged });
      count('saturating calls', `${r.status} ${r.code}`);
      assert.ok(r.code === 'overloaded' || r.code === 'bad_signature', `saturating call: ${r.status} ${r.code}`);
    });
  }
  for (let i = 0; i < SIMULATORS; i++) {
    loop('simulations', async () => {
      const r = await post(`/v2/${cid}/simulate`, { function: 'bump', args: [{ type: 'u64', value: '1' }] });
      count('simulations', `${r.status} ${r.code}`);
      assert.ok(r.status === 200 || r.code === 'overloaded', `simulation: ${r.status} ${r.code}`);
    });
  }
  // A peer pushing the same forged envelopes: a result per payload, a PROTOCOL code.
  const peer = new PeerClient(urlOf(gossipPort), new Signer(new Uint8Array(randomBytes(32))), 20_000);
  loop('gossip payloads', async () => {
    const payloads = Array.from({ length: 8 }, () => ({ kind: 'PAYLOAD_KIND_CALL', txid: randomBytes(32), contract_id: Buffer.from(cid, 'hex'), body: Buffer.from(forged, 'base64') }));
    const r = await peer.call('SubmitPayload', { payloads });
    for (const x of r.results) {
      count('gossip payloads', x.accepted ? 'accepted' : x.error_code);
      assert.ok(!x.accepted && (x.error_code === 'overloaded' || x.error_code === 'bad_signature'), `gossip payload: ${x.error_code}`);
    }
  });
  // Watching the pool: it must be seen saturated while the hostile requests run.
  loop('node_status', async () => {
    const s = (await (await fetch(`${node.restUrl}/node_status`)).json()) as { pool: { saturated: boolean; queued: number } };
    if (s.pool.saturated) sawSaturated++;
    count('node_status', s.pool.saturated ? 'saturated' : 'not saturated');
  });

  try {
    // The hostile requests, on raw sockets, over the saturated node.
    const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
    const junk = fc.oneof(fc.string({ maxLength: 30 }).map(encodeURIComponent), fc.constantFrom('', '%', '%zz', '%C3%28', '%00', '..', '-1', '4294967296'), hex64);
    const seg = (v: string): fc.Arbitrary<string> => fc.oneof({ weight: 2, arbitrary: fc.constant(v) }, { weight: 1, arbitrary: junk });
    const pathArb = fc.oneof(
      fc.constantFrom('/health', '/node_status', '/metrics', '/contracts', '/v2/state_root', '/deploy_contract', '/contract_call', '/admin/clear_halt', '/'),
      fc.tuple(seg(cid), seg('count')).map(([c, f]) => `/v2/${c}/${f}`),
      seg(cid).map((c) => `/v2/${c}/simulate`),
      seg(cid).map((c) => `/events/${c}`),
      seg(cid).map((c) => `/calls/${c}`),
      seg(callTxid).map((t) => `/contract_call/${t}/status`),
      fc.array(junk, { maxLength: 5 }).map((p) => `/${p.join('/')}`),
    );
    const validBodies = [
      { txid: callTxid, contract_id: cid, payload: randomBytes(300).toString('base64') },
      { function: 'bump', args: [{ type: 'u64', value: '1' }] },
      { function: 'get', args: [] },
      {},
    ];
    const bodyArb = fc.oneof(
      fc.constant(null),
      fc.constantFrom(...validBodies).map((o) => Buffer.from(JSON.stringify(o))),
      fc.tuple(fc.constantFrom(...validBodies), fc.constantFrom('txid', 'contract_id', 'payload', 'function', 'args', 'extra'), fc.jsonValue({ maxDepth: 2 })).map(([o, k, v]) => Buffer.from(JSON.stringify({ ...o, [k]: v }))),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    );
    const methodArb = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'OPTIONS', 'Post', 'BREW') });
    const authArb = fc.constantFrom('', `Authorization: Bearer ${TOKEN}\r\n`, 'Authorization: Bearer nope\r\n');
    let cases = 0;
    const one = async ([method, path, auth, body]: [string, string, string, Buffer | null]): Promise<void> => {
      cases++;
      const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${auth}${body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''}\r\n`;
      const r = await rawRequest(restPort, Buffer.concat([Buffer.from(head, 'latin1'), body ?? Buffer.alloc(0)]), { timeoutMs: 20_000 });
      const what = `${method} ${path} body=${body?.toString('latin1').slice(0, 80)}`;
      assert.equal(r.answers.length, 1, `${what}: no answer`);
      count('hostile', String(r.answers[0]!.status));
      checkAnswer(r.answers[0]!, what);
    };
    // HOSTILE_AT_ONCE requests per case, sent together, as many clients would.
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(methodArb, pathArb, authArb, bodyArb), { minLength: HOSTILE_AT_ONCE, maxLength: HOSTILE_AT_ONCE }), async (reqs) => {
        await Promise.all(reqs.map(one));
      }),
      { numRuns: RUNS / HOSTILE_AT_ONCE, interruptAfterTimeLimit: LIMIT_MS },
    );
    console.log(`# hardening/saturated-pool hostile requests: ${cases}`);
    // The pool refusing work (503 overloaded from intake) is what proves it saturated; a
    // node_status poll sees the flag only when it lands in the instant the queue is full
    // (none of 24 polls did in one run with 187 refusals), so it is reported, not required.
    assert.ok((tally['saturating calls']?.['503 overloaded'] ?? 0) > 0, 'the pool was saturated: intake answered 503 overloaded');
    console.log(`# hardening/saturated-pool node_status polls that saw the pool saturated: ${sawSaturated}`);
  } finally {
    stop = true;
    await Promise.allSettled(load);
    peer.close();
  }
  // Load settled: any assertion inside a load loop fails the test here.
  for (const r of await Promise.allSettled(load)) if (r.status === 'rejected') throw r.reason;

  // Recovery: the pool drains, no child restarted, no bug logged, a real call goes through.
  await waitUntil(node, async () => ((await (await fetch(`${node.restUrl}/node_status`)).json()) as { pool: { queued: number } }).pool.queued === 0, 'pool drained', 20_000);
  assert.deepEqual(starts(), startsBefore, 'no child restarted');
  assert.deepEqual(node.lines.filter((l) => /bug/.test(String(l.msg))).map((l) => l.msg), [], 'no handler bug logged');
  const rootBefore = (await waitSynced(node, devnet)).stateRoot;
  const c = await svc.call({ contractId: cid, function: 'bump', args: ['u64:5'], abi: counter.abi });
  devnet.chain.mine(1);
  const after = await waitSynced(node, devnet);
  assert.notEqual(after.stateRoot, rootBefore);
  const st = (await (await fetch(`${node.restUrl}/contract_call/${c.anchor.txid}/status`)).json()) as { status: string };
  assert.equal(st.status, 'executed');
});

/** The client against a deliberately misbehaving local server. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeError } from '@svc-node/protocol/errors';
import { EsploraClient, parseRetryAfter, type EsploraClientOptions } from '../../src/chain/esplora-client.js';
import { entryBody, listen, manifest, type Listening } from '../helpers/chain-servers.js';

type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;
/** Per path, a queue of behaviours; the last one repeats. */
const script = new Map<string, Behaviour[]>();
const hits = new Map<string, number>();
let srv: Listening;

const GENESIS = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const GENESIS_TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';
const rawGenesis = entryBody(manifest.find((e) => e.path === `/block/${GENESIS}/raw`)!);
const genesisTxHex = entryBody(manifest.find((e) => e.path === `/tx/${GENESIS_TXID}/hex`)!).toString('utf8');

const text = (status: number, body: string, headers: Record<string, string> = {}): Behaviour => (_q, r) => {
  r.writeHead(status, { 'content-type': 'text/plain', ...headers });
  r.end(body);
};
const bytes = (b: Uint8Array): Behaviour => (_q, r) => {
  r.writeHead(200, { 'content-type': 'application/octet-stream' });
  r.end(b);
};
const hang: Behaviour = () => undefined; // never answers
const slowBody: Behaviour = (_q, r) => {
  r.writeHead(200, { 'content-type': 'text/plain' });
  r.write('12'); // then stalls
};

function on(path: string, ...bs: Behaviour[]): void {
  script.set(path, bs);
  hits.set(path, 0);
}

before(async () => {
  srv = await listen((req, res) => {
    const path = req.url ?? '/';
    const q = script.get(path);
    const n = hits.get(path) ?? 0;
    hits.set(path, n + 1);
    if (!q) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`endpoint does not exist "${path}"`);
    q[Math.min(n, q.length - 1)]!(req, res);
  });
});
after(() => srv.close());

function mk(o: Partial<EsploraClientOptions> = {}): EsploraClient {
  return new EsploraClient({ baseUrl: srv.url, budget: false, retries: 3, backoffBaseMs: 5, backoffMaxMs: 20, timeoutMs: 500, ...o });
}

async function unavailable(p: Promise<unknown>, reason?: string): Promise<NodeError> {
  let got: unknown;
  try {
    await p;
  } catch (e) {
    got = e;
  }
  assert.ok(got instanceof NodeError, `expected a NodeError, got ${String(got)}`);
  assert.equal(got.code, 'chain_unavailable');
  if (reason) assert.equal(got.detail?.reason, reason);
  return got;
}

test('500s are retried, then the answer is used', async () => {
  on('/blocks/tip/height', text(500, 'oops'), text(503, 'busy'), text(200, '812345'));
  const c = mk();
  assert.equal(await c.tipHeight(), 812345);
  assert.equal(hits.get('/blocks/tip/height'), 3);
});

test('a server that keeps failing gives chain_unavailable after the retries', async () => {
  on('/blocks/tip/hash', text(502, 'bad gateway'));
  const c = mk({ retries: 2 });
  await unavailable(c.tipHash(), 'http_502');
  assert.equal(hits.get('/blocks/tip/hash'), 3);
});

test('429 with Retry-After is honoured', async () => {
  on('/block-height/5', text(429, 'Too Many Requests', { 'retry-after': '1' }), text(200, GENESIS));
  const c = mk();
  const t0 = Date.now();
  assert.equal(await c.blockHashAt(5), GENESIS);
  assert.ok(Date.now() - t0 >= 950, 'waited for Retry-After');
  assert.equal(parseRetryAfter('2'), 2000);
  assert.ok((parseRetryAfter(new Date(Date.now() + 3000).toUTCString()) ?? 0) > 1000);
  assert.equal(parseRetryAfter('soon'), null);
});

test('close() ends requests waiting out a Retry-After or hanging on an answer at once: a stopping node is not held', async () => {
  on('/block-height/16', text(429, 'Too Many Requests', { 'retry-after': '30' }));
  on('/block-height/17', hang);
  const c = mk({ timeoutMs: 60_000 });
  const waiting = c.blockHashAt(16);
  const hanging = c.blockHashAt(17);
  // Both requests have reached the server: one now waits 30 s to retry, one for an answer.
  for (;;) {
    if (hits.get('/block-height/16') === 1 && hits.get('/block-height/17') === 1) break;
    await new Promise((r) => setImmediate(r));
  }
  const t0 = Date.now();
  await c.close();
  await unavailable(waiting, 'closed');
  await unavailable(hanging);
  assert.ok(Date.now() - t0 < 1_000, `both ended ${Date.now() - t0} ms after close()`);
  assert.equal(hits.get('/block-height/16'), 1, 'no retry after close()');
});

test('a Retry-After beyond the cap fails at once', async () => {
  on('/block-height/6', text(429, 'Too Many Requests', { 'retry-after': '3600' }));
  await unavailable(mk().blockHashAt(6), 'http_429');
  assert.equal(hits.get('/block-height/6'), 1);
});

test('answers slower than the timeout (no headers, or a stalled body) are timeouts', async () => {
  on('/block-height/7', hang);
  on('/block-height/8', slowBody);
  const c = mk({ timeoutMs: 80, retries: 1 });
  await unavailable(c.blockHashAt(7), 'timeout');
  await unavailable(c.blockHashAt(8), 'timeout');
  assert.equal(hits.get('/block-height/7'), 2);
});

test('a request budget bounds attempts, backoff and the wait for a request slot', async () => {
  const hung = 'aa'.repeat(32);
  const queued = 'bb'.repeat(32);
  on(`/tx/${hung}/hex`, hang);
  on(`/tx/${queued}/hex`, hang);
  // Per-attempt timeout 10 s and 4 retries: without a budget this would wait ~57 s.
  const c = mk({ timeoutMs: 10_000, retries: 4, budget: { requestsPerHour: 1e9, burst: 1000, maxConcurrent: 1 } });
  const t0 = performance.now();
  const first = unavailable(c.txHex(hung, { budgetMs: 400 }), 'timeout').then(() => performance.now() - t0);
  // The only slot is taken by the first request: this one times out in the queue.
  const second = unavailable(c.txHex(queued, { budgetMs: 150 }), 'timeout').then(() => performance.now() - t0);
  // A second asker of the same txid shares the first request but keeps its own budget.
  const joined = unavailable(c.txHex(hung, { budgetMs: 100 }), 'timeout').then(() => performance.now() - t0);
  const [a, b, j] = await Promise.all([first, second, joined]);
  assert.ok(a >= 380 && a < 2_000, `first: ${Math.round(a)} ms for a 400 ms budget`);
  assert.ok(b >= 140 && b < 1_500, `queued: ${Math.round(b)} ms for a 150 ms budget`);
  assert.ok(j >= 90 && j < 1_500, `joined: ${Math.round(j)} ms for a 100 ms budget`);
  assert.equal(hits.get(`/tx/${hung}/hex`), 1, 'one attempt: no time was left for a retry');
  assert.equal(hits.get(`/tx/${queued}/hex`), 0, 'the queued request never got a slot');
  await c.close();
});

test('a kept-alive connection the server drops as it is reused is resent at once, not counted as a failure', async () => {
  const served = new WeakMap<object, number>();
  // The first request on each connection is answered (kept alive); a second one on the
  // same connection finds it closed, as when a server's idle timeout fires at reuse.
  on('/blocks/tip/height', (req, res) => {
    const n = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, n);
    if (n > 1) return void req.socket.destroy();
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive' });
    res.end('812345');
  });
  const c = mk({ retries: 0 });
  assert.equal(await c.tipHeight(), 812345);
  assert.equal(await c.tipHeight(), 812345, 'resent on a fresh connection within the same attempt');
  assert.equal(hits.get('/blocks/tip/height'), 3);
  await c.close();
});

test('fast failures are still retried inside the budget', async () => {
  on(`/tx/${GENESIS_TXID}/hex`, text(500, 'oops'), text(200, genesisTxHex));
  const c = mk({ retries: 4 });
  assert.equal(await c.txHex(GENESIS_TXID, { budgetMs: 2_000 }), genesisTxHex);
  assert.equal(hits.get(`/tx/${GENESIS_TXID}/hex`), 2);
});

test('garbage JSON and wrong shapes are errors, never results', async () => {
  on(`/tx/${GENESIS_TXID}/status`, text(200, '{"confirmed":tru'));
  on(`/tx/${GENESIS_TXID}/outspend/0`, text(200, '{"spent":"yes"}'));
  on(`/block/${GENESIS}/status`, text(200, '{"in_best_chain":true,"height":null,"next_best":null}'));
  on(`/block/${GENESIS}`, text(200, '{"id":"' + GENESIS + '","height":0}'));
  on(`/tx/${GENESIS_TXID}/outspends`, text(200, '<html>502</html>'));
  const c = mk({ retries: 1 });
  await unavailable(c.txStatus(GENESIS_TXID), 'invalid_answer');
  await unavailable(c.outspend(GENESIS_TXID, 0), 'invalid_answer');
  await unavailable(c.blockStatus(GENESIS), 'invalid_answer');
  await unavailable(c.block(GENESIS), 'invalid_answer');
  await unavailable(c.outspends(GENESIS_TXID), 'invalid_answer');
  on('/blocks/tip/height', text(200, '-1'));
  await unavailable(c.tipHeight(), 'invalid_answer');
});

test('truncated or foreign transaction hex is refused', async () => {
  on(`/tx/${GENESIS_TXID}/hex`, text(200, genesisTxHex.slice(0, genesisTxHex.length - 10)));
  const c = mk({ retries: 0 });
  await unavailable(c.txHex(GENESIS_TXID), 'invalid_answer');
  const other = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';
  on(`/tx/${other}/hex`, text(200, genesisTxHex)); // parses, but hashes to another txid
  await unavailable(c.txHex(other), 'invalid_answer');
  on(`/tx/${GENESIS_TXID}/hex`, text(200, genesisTxHex));
  assert.equal(await c.txHex(GENESIS_TXID), genesisTxHex);
});

test('a block whose txids do not match its merkle root, or another block, or a truncated one, is refused', async () => {
  const tampered = Buffer.from(rawGenesis);
  tampered[tampered.length - 10] ^= 0x01; // inside the coinbase output script: header intact, merkle root wrong
  on(`/block/${GENESIS}/raw`, bytes(tampered));
  const c = mk({ retries: 0 });
  const e = await unavailable(c.rawBlock(GENESIS), 'invalid_answer');
  assert.match(String(e.detail?.message), /merkle/);
  on(`/block/${GENESIS}/raw`, bytes(rawGenesis.subarray(0, rawGenesis.length - 5)));
  await unavailable(c.rawBlock(GENESIS), 'invalid_answer');
  on(`/block/${GENESIS}/raw`, bytes(Buffer.concat([rawGenesis, Buffer.from([0])])));
  await unavailable(c.rawBlock(GENESIS), 'invalid_answer');
  const block1 = '00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048';
  on(`/block/${block1}/raw`, bytes(rawGenesis));
  await unavailable(c.rawBlock(block1), 'invalid_answer');
  on(`/block/${GENESIS}/header`, text(200, rawGenesis.subarray(0, 79).toString('hex')));
  await unavailable(c.blockHeader(GENESIS), 'invalid_answer');
});

test('a /txids list that does not fold to the header merkle root is refused', async () => {
  on(`/block/${GENESIS}/txids`, text(200, JSON.stringify([GENESIS])));
  const c = mk({ retries: 0 });
  const { parseHeaderBytes } = await import('@svc-node/protocol/bitcoin');
  await unavailable(c.blockTxids(GENESIS, parseHeaderBytes(rawGenesis.subarray(0, 80))), 'invalid_answer');
});

test('immutable data is cached: one request per raw block', async () => {
  on(`/block/${GENESIS}/raw`, bytes(rawGenesis));
  const c = mk({ retries: 0 });
  const [a, b] = await Promise.all([c.rawBlock(GENESIS), c.rawBlock(GENESIS)]);
  assert.equal(a, b);
  await c.rawBlock(GENESIS);
  assert.equal(hits.get(`/block/${GENESIS}/raw`), 1);
  const tiny = mk({ retries: 0, cacheBytes: 10 });
  await tiny.rawBlock(GENESIS);
  await tiny.rawBlock(GENESIS);
  assert.equal(hits.get(`/block/${GENESIS}/raw`), 3, 'over-bound entries are not kept');
});

test('an unreachable endpoint is chain_unavailable; a refused broadcast is bad_request', async () => {
  const c = new EsploraClient({ baseUrl: 'http://127.0.0.1:1', budget: false, retries: 1, backoffBaseMs: 1 });
  await unavailable(c.tipHeight(), 'network_error');
  on('/tx', text(400, 'sendrawtransaction RPC error: {"code":-26,"message":"txn-mempool-conflict"}'));
  await assert.rejects(mk().broadcast(genesisTxHex), (e: unknown) => {
    assert.ok(e instanceof NodeError);
    assert.equal(e.code, 'bad_request');
    assert.match(String(e.detail?.server_message), /txn-mempool-conflict/);
    return true;
  });
  await assert.rejects(mk().txStatus('ABC'), (e: unknown) => e instanceof NodeError && e.code === 'bad_request');
});

test('the request budget lets a burst through at once, then one request per refilled token', async () => {
  on('/blocks/tip/height', text(200, '1'));
  // 36,000 an hour: a token every 100 ms; a burst of 2.
  const c = mk({ budget: { requestsPerHour: 36_000, burst: 2, maxConcurrent: 4 } });
  const t0 = Date.now();
  await Promise.all([1, 2, 3, 4, 5].map(() => c.tipHeight({ priority: 'tip' })));
  assert.ok(Date.now() - t0 >= 290, `5 requests with a burst of 2 and a token per 100 ms took ${Date.now() - t0} ms`);
  const st = c.budgetStatus()!;
  assert.equal(st.started_total.tip, 5);
  assert.equal(st.used_last_hour, 5);
  await c.close();
});

test('an answer larger than the cap is refused without reading it all', async () => {
  on(`/block/${GENESIS}/raw`, bytes(rawGenesis));
  const c = mk({ retries: 0, maxResponseBytes: 100 });
  await unavailable(c.rawBlock(GENESIS), 'invalid_answer');
  on('/blocks/tip/hash', (_q, r) => {
    r.writeHead(200, { 'content-type': 'text/plain' }); // no content-length: chunked
    r.write('a'.repeat(80));
    r.end('a'.repeat(80));
  });
  await unavailable(c.tipHash(), 'invalid_answer');
});

test('a 429 pauses every request of the budget until its Retry-After and is counted; each retry spends a token', async () => {
  const at: Record<string, number[]> = { hash: [], height: [] };
  let first = true;
  on('/blocks/tip/hash', (_q, r) => {
    at.hash!.push(performance.now());
    if (first) {
      first = false;
      r.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1' });
      return void r.end('Too Many Requests');
    }
    r.writeHead(200, { 'content-type': 'text/plain' });
    r.end('00'.repeat(32));
  });
  on('/blocks/tip/height', (_q, r) => {
    at.height!.push(performance.now());
    r.writeHead(200, { 'content-type': 'text/plain' });
    r.end('7');
  });
  const c = mk({ retries: 2, budget: { requestsPerHour: 1_000_000, burst: 100, maxConcurrent: 4 } });
  const hash = c.tipHash({ priority: 'tip' });
  // Sent once the 429 is in: it waits for the pause like the retry does.
  await new Promise<void>((r) => {
    const poll = (): void => void (at.hash!.length > 0 && c.budgetStatus()!.throttled_total === 1 ? r() : setImmediate(poll));
    poll();
  });
  const height = c.tipHeight({ priority: 'intake' });
  assert.equal(await hash, '00'.repeat(32));
  assert.equal(await height, 7);
  assert.ok(at.height![0]! - at.hash![0]! >= 950, `the other request went ${Math.round(at.height![0]! - at.hash![0]!)} ms after the 429 (Retry-After: 1)`);
  assert.ok(at.hash![1]! - at.hash![0]! >= 950, 'the retry waited for the Retry-After too');
  const st = c.budgetStatus()!;
  assert.equal(st.throttled_total, 1);
  assert.deepEqual(st.started_total, { tip: 2, intake: 1, deferred: 0 }, 'the 429 and its retry each spent a token');
  await c.close();
});

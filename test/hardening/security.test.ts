/**
 * Security review, with tests: the private endpoints against every bypass we could
 * think of, secrets (api_token, gossip_private_key) absent from logs, answers, node_status and
 * metrics, and the client-driven bounds (REST read cache, Esplora cache, metric labels).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startNode, type NodeProcess } from '../helpers/node-process.js';
import { rawRequest } from '../helpers/raw-http.js';
import { ReadCache, CACHE_MAX_ENTRIES, CACHE_MAX_BYTES } from '../../src/rest/read-cache.js';
import { BoundedCache } from '../../src/bounded.js';
import { RestMetrics } from '../../src/rest/metrics.js';

const TOKEN = 'S3cr3t-Token_value.42';
const SEED = 'c0ffee'.repeat(10) + 'c0ff';
const CID = 'ab'.repeat(32);

let node: NodeProcess;
let port = 0;
const answers: string[] = [];

before(async () => {
  node = await startNode({ env: { SVC_API_TOKEN: TOKEN, SVC_GOSSIP_PRIVATE_KEY: SEED } });
  port = Number(new URL(node.restUrl).port);
});
after(async () => {
  await node?.stop();
});

async function send(method: string, target: string, headerLines: string[]): Promise<{ status: number; body: string; wwwAuth?: string }> {
  const body = method === 'POST' ? 'Content-Length: 0\r\n' : '';
  const r = await rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: x\r\n${headerLines.map((h) => `${h}\r\n`).join('')}${body}\r\n`, { timeoutMs: 5_000 });
  const a = r.answers[0];
  assert.ok(a, `no answer to ${method} ${target} ${JSON.stringify(headerLines)}: ${r.raw.toString('latin1').slice(0, 200)}`);
  answers.push(a.body);
  return { status: a.status, body: a.body, wwwAuth: a.headers['www-authenticate'] };
}

/** Requests that do not carry the token as "Bearer <token>": every one must be refused. */
const BYPASSES: [string, string[]][] = [
  ['no header', []],
  ['empty header', ['Authorization:']],
  ['scheme only', ['Authorization: Bearer']],
  ['empty token', ['Authorization: Bearer ']],
  ['two spaces', [`Authorization: Bearer  ${TOKEN}`]],
  ['tab separator', [`Authorization: Bearer\t${TOKEN}`]],
  ['no separator', [`Authorization: Bearer${TOKEN}`]],
  ['equals separator', [`Authorization: Bearer=${TOKEN}`]],
  ['token prefix', [`Authorization: Bearer ${TOKEN.slice(0, -1)}`]],
  ['token suffix', [`Authorization: Bearer ${TOKEN}x`]],
  ['token with inner space', [`Authorization: Bearer ${TOKEN} x`]],
  ['token twice', [`Authorization: Bearer ${TOKEN}${TOKEN}`]],
  ['token upper-cased', [`Authorization: Bearer ${TOKEN.toUpperCase()}`]],
  ['token quoted', [`Authorization: Bearer "${TOKEN}"`]],
  ['token percent-encoded', [`Authorization: Bearer ${encodeURIComponent(TOKEN).replace('S', '%53')}`]],
  ['token base64', [`Authorization: Bearer ${Buffer.from(TOKEN).toString('base64')}`]],
  ['Basic scheme', [`Authorization: Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`]],
  ['Basic with raw token', [`Authorization: Basic ${TOKEN}`]],
  ['Token scheme', [`Authorization: Token ${TOKEN}`]],
  ['Digest scheme', [`Authorization: Digest ${TOKEN}`]],
  ['no scheme', [`Authorization: ${TOKEN}`]],
  ['Bearer misspelt', [`Authorization: Bearr ${TOKEN}`]],
  ['scheme with NBSP', [`Authorization: Bearer\u00a0${TOKEN}`]],
  ['token in another header', [`X-Api-Token: ${TOKEN}`]],
  ['token in Proxy-Authorization', [`Proxy-Authorization: Bearer ${TOKEN}`]],
  ['token in a cookie', [`Cookie: token=${TOKEN}`]],
  ['header name misspelt', [`Authorisation: Bearer ${TOKEN}`]],
  ['wrong then right (duplicate headers)', ['Authorization: Bearer wrong', `Authorization: Bearer ${TOKEN}`]],
];
const QUERY_BYPASSES = [`?token=${TOKEN}`, `?access_token=${TOKEN}`, `?authorization=Bearer%20${TOKEN}`, `?api_token=${TOKEN}`];
/** Forms that do carry the token: HTTP header names are case-insensitive, the scheme too (RFC 7235). */
const ACCEPTED: [string, string[]][] = [
  ['canonical', [`Authorization: Bearer ${TOKEN}`]],
  ['lower-case header name', [`authorization: Bearer ${TOKEN}`]],
  ['upper-case header name', [`AUTHORIZATION: Bearer ${TOKEN}`]],
  ['lower-case scheme', [`Authorization: bearer ${TOKEN}`]],
  ['upper-case scheme', [`Authorization: BEARER ${TOKEN}`]],
  // Leading and trailing whitespace around a header value is not part of it (RFC 9110 5.5).
  ['surrounding spaces', [`Authorization:    Bearer ${TOKEN}   `]],
  // uWS hands over the first of duplicate headers; the sender holds the token, so no bypass.
  ['right then wrong (duplicate headers)', [`Authorization: Bearer ${TOKEN}`, 'Authorization: Bearer wrong']],
];

const PRIVATE: [string, string][] = [
  ['GET', `/calls/${CID}`],
  ['POST', '/admin/clear_halt'],
];

test(`private endpoints refuse ${BYPASSES.length + QUERY_BYPASSES.length} bypass attempts with 401 and WWW-Authenticate`, async () => {
  for (const [method, path] of PRIVATE) {
    for (const [what, hs] of BYPASSES) {
      const r = await send(method, path, hs);
      assert.equal(r.status, 401, `${method} ${path} ${what}: ${r.status} ${r.body}`);
      assert.equal(JSON.parse(r.body).error.code, 'unauthorized', what);
      assert.equal(r.wwwAuth, 'Bearer', what);
    }
    for (const q of QUERY_BYPASSES) {
      const r = await send(method, path + q, []);
      assert.equal(r.status, 401, `${method} ${path}${q}`);
    }
    // Other methods on the private paths never reach the handler.
    for (const m of ['PUT', 'DELETE', 'PATCH', method === 'GET' ? 'POST' : 'GET']) {
      const r = await send(m, path, [`Authorization: Bearer ${TOKEN}`]);
      assert.equal(r.status, 405, `${m} ${path}`);
    }
  }
});

test('private endpoints accept the token in every legitimate form', async () => {
  for (const [method, path] of PRIVATE) {
    for (const [what, hs] of ACCEPTED) {
      const r = await send(method, path, hs);
      assert.ok(r.status !== 401 && r.status !== 403, `${method} ${path} ${what}: ${r.status} ${r.body}`);
      if (method === 'POST') assert.deepEqual(JSON.parse(r.body), { halted: false }, what);
    }
  }
});

test('secrets are absent from logs, answers, node_status and metrics, even when a client sends them', async () => {
  // A client echoing the secrets in the path, the query and other headers.
  await send('GET', `/v2/${TOKEN}/${SEED}`, [`X-Leak: ${TOKEN}`]);
  await send('GET', `/nope/${TOKEN}?t=${TOKEN}`, []);
  await send('POST', `/admin/clear_halt?${SEED}`, [`Authorization: Bearer ${SEED}`]);
  const status = await fetch(`${node.restUrl}/node_status`).then((r) => r.text());
  const metrics = await fetch(`${node.restUrl}/metrics`).then((r) => r.text());
  // Logs are asynchronous: flush the REST log sink by a last request and wait for its access line.
  const last = await fetch(`${node.restUrl}/health`);
  const rid = last.headers.get('x-request-id');
  await node.waitFor((l) => l['request_id'] === rid, 5_000, 'last access line');
  const secrets = [TOKEN, SEED, SEED.toUpperCase()];
  for (const s of secrets) {
    assert.ok(!status.includes(s), 'node_status carries a secret');
    assert.ok(!metrics.includes(s), 'metrics carry a secret');
    const logged = node.raw.filter((l) => l.includes(s));
    assert.deepEqual(logged, [], `a log line carries a secret`);
  }
  // Answers: only the 404 echoes the path the client sent itself; no other answer carries a secret.
  const leaking = answers.filter((b) => secrets.some((s) => b.includes(s)) && !b.includes('no route'));
  assert.deepEqual(leaking, []);
  console.log(`# hardening/security: ${node.raw.length} log lines and ${answers.length} answers scanned`);
});

test('client-driven caches and metric labels stay within their bounds', async () => {
  const rc = new ReadCache();
  rc.setVersion({ height: 1, state_root: 'r', block_hash: 'h' } as never);
  for (let i = 0; i < CACHE_MAX_ENTRIES + 5_000; i++) {
    rc.put(`/v2/${CID}/by_caller/${i.toString(16).padStart(64, '0')}`, '{"x":1}', 1, 'r');
    assert.ok(rc.size <= CACHE_MAX_ENTRIES);
  }
  const big = 'x'.repeat(65_536);
  let maxSize = 0;
  rc.setVersion({ height: 2, state_root: 'r2', block_hash: 'h2' } as never);
  for (let i = 0; i < 2_000; i++) {
    rc.put(`k${i}`, big, 2, 'r2');
    maxSize = Math.max(maxSize, rc.size);
  }
  assert.ok(maxSize * big.length <= CACHE_MAX_BYTES + big.length, `read cache held ${maxSize} answers of 64 KiB`);
  const bc = new BoundedCache<string>(100, 10_000);
  for (let i = 0; i < 10_000; i++) {
    bc.set(`k${i}`, 'v', 1 + (i % 500));
    assert.ok(bc.size <= 100 && bc.totalBytes <= 10_000);
  }
  const m = new RestMetrics(rc);
  for (let i = 0; i < 5_000; i++) m.observeHttp(`M${i}`, '(unmatched)', 404 + (i % 2), 0.001);
  const text = await m.render(() => Promise.reject(new Error('no core')));
  assert.ok(!/M4999/.test(text) && /method="OTHER"/.test(text), 'odd methods are folded into OTHER');
});

/**
 * cors_origins (docs/OPERATING.md, "Browsers"): a page on an allowed origin may read the
 * REST answers (the browser SDK's reads, proofs and submissions); any other page may not,
 * and without the option the node sends no CORS header at all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { RestServer } from '../../src/rest/http.js';

const APP = 'http://127.0.0.1:5173';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

function ask(port: number, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function withServer(corsOrigins: string[] | undefined, body: (port: number) => Promise<void>): Promise<void> {
  const server = new RestServer(
    [
      { method: 'GET', pattern: '/node_status', handler: () => ({ status: 200, body: { ok: true } }) },
      // A route on uWS's own fast path answers with the same headers as the generic one.
      { method: 'GET', pattern: '/health', handler: () => ({ status: 200, body: { status: 'ok' } }), fast: () => '{"status":"ok"}' },
      { method: 'POST', pattern: '/contract_call', body: true, handler: () => ({ status: 429, body: { error: 'rate_limited' }, headers: { 'retry-after': '2' } }) },
    ],
    { corsOrigins },
  );
  const port = await server.listen('127.0.0.1', 0);
  try {
    await body(port);
  } finally {
    await server.drain(1_000);
  }
}

test('an allowed origin reads answers and error answers, with Retry-After exposed; a preflight names methods and headers', async () => {
  await withServer([APP, 'https://other.example'], async (port) => {
    for (const [method, path] of [['GET', '/node_status'], ['GET', '/health'], ['POST', '/contract_call']] as const) {
      const a = await ask(port, method, path, { origin: APP });
      assert.equal(a.headers['access-control-allow-origin'], APP, `${method} ${path}`);
      assert.equal(a.headers['vary'], 'origin', `${method} ${path}: a cache keeps answers per origin`);
      assert.equal(a.headers['access-control-expose-headers'], 'retry-after, x-request-id');
    }
    const pre = await ask(port, 'OPTIONS', '/contract_call', { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], APP);
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type');
    assert.equal(pre.headers['access-control-max-age'], '600');
  });
});

test('another origin gets no CORS header, and its preflight the 405 every OPTIONS gets', async () => {
  await withServer([APP], async (port) => {
    const a = await ask(port, 'GET', '/node_status', { origin: 'http://evil.example' });
    assert.equal(a.status, 200);
    assert.equal(a.headers['access-control-allow-origin'], undefined);
    const fast = await ask(port, 'GET', '/health', { origin: 'http://evil.example' });
    assert.equal(fast.headers['access-control-allow-origin'], undefined);
    const pre = await ask(port, 'OPTIONS', '/contract_call', { origin: 'http://evil.example', 'access-control-request-method': 'POST' });
    assert.equal(pre.status, 405);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
  });
});

test('"*" lets any page read, without Vary; no option sends no CORS header', async () => {
  await withServer(['*'], async (port) => {
    const a = await ask(port, 'GET', '/node_status', { origin: 'http://any.example' });
    assert.equal(a.headers['access-control-allow-origin'], '*');
    assert.equal(a.headers['vary'], undefined);
  });
  await withServer(undefined, async (port) => {
    const a = await ask(port, 'GET', '/node_status', { origin: APP });
    assert.equal(a.headers['access-control-allow-origin'], undefined);
    const pre = await ask(port, 'OPTIONS', '/node_status', { origin: APP, 'access-control-request-method': 'GET' });
    assert.equal(pre.status, 405);
  });
});

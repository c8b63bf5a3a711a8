/**
 * A node with no api_token (private endpoints locked) and no reachable chain: the 64 KiB
 * body limit on both POST endpoints (with content-length and chunked), locked private
 * endpoints, and malformed requests that must not hurt the front.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startNode, type NodeProcess } from '../helpers/node-process.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

let node: NodeProcess;
let host = '';
let port = 0;

before(async () => {
  node = await startNode();
  const u = new URL(node.restUrl);
  host = u.hostname;
  port = Number(u.port);
});

after(async () => {
  await node?.stop();
});

/** A JSON object body of exactly `n` bytes whose txid is malformed (so a read body answers 400). */
function bodyOf(n: number): Buffer {
  const head = '{"txid":"zz","pad":"';
  const tail = '"}';
  return Buffer.from(head + 'x'.repeat(n - head.length - tail.length) + tail, 'utf8');
}

/**
 * Sends one raw HTTP/1.1 request (keep-alive, as clients do) and resolves with the status
 * code and body text as soon as one whole response has arrived.
 */
function raw(path: string, body: Buffer, chunked: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host);
    let got = '';
    let settled = false;
    const finish = (): boolean => {
      const end = got.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      const len = /content-length: (\d+)/i.exec(got.slice(0, end));
      if (end < 0 || !m || !len || got.length < end + 4 + Number(len[1])) return false;
      settled = true;
      s.destroy();
      resolve({ status: Number(m[1]), text: got.slice(end + 4, end + 4 + Number(len[1])) });
      return true;
    };
    s.on('data', (d) => {
      got += d.toString('latin1');
      finish();
    });
    s.on('error', () => undefined); // the answer may come before the upload ends
    s.on('close', () => {
      if (!settled && !finish()) reject(new Error(`no HTTP answer to ${path} (${body.length} bytes, ${chunked ? 'chunked' : 'content-length'}): ${JSON.stringify(got.slice(0, 200))}`));
    });
    const headers = chunked
      ? `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
      : `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    s.write(headers);
    if (chunked) {
      for (let i = 0; i < body.length; i += 8192) {
        const part = body.subarray(i, i + 8192);
        s.write(`${part.length.toString(16)}\r\n`);
        s.write(part);
        s.write('\r\n');
      }
      s.write('0\r\n\r\n');
    } else s.write(body);
    setTimeout(() => s.destroy(), 5000).unref();
  });
}

for (const path of ['/contract_call', '/deploy_contract']) {
  for (const chunked of [false, true]) {
    test(`${path} ${chunked ? 'chunked' : 'content-length'}: 65,536 bytes pass, 65,537 answer 413`, async () => {
      const ok = await raw(path, bodyOf(65_536), chunked);
      assert.equal(ok.status, 400, ok.text);
      assert.match(ok.text, /txid/);
      const big = await raw(path, bodyOf(65_537), chunked);
      assert.equal(big.status, 413, big.text);
      assert.match(big.text, /payload_too_large/);
      // Far larger bodies are cut off the same way, and the front keeps serving.
      const huge = await raw(path, bodyOf(1_000_000), chunked);
      assert.equal(huge.status, 413);
      assert.equal((await fetch(`${node.restUrl}/health`)).status, 200);
    });
  }
}

test('private endpoints are locked (403) when no token is configured, whatever is sent', async () => {
  const id = 'ab'.repeat(32);
  for (const headers of [{}, { authorization: 'Bearer anything' }, { authorization: 'Bearer ' }, { authorization: 'Basic x' }] as Record<string, string>[]) {
    const a = await fetch(`${node.restUrl}/calls/${id}`, { headers });
    assert.equal(a.status, 403);
    assert.equal(((await a.json()) as JsonAnswer).error.code, 'locked');
    const b = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST', headers });
    assert.equal(b.status, 403);
    assert.equal(((await b.json()) as JsonAnswer).error.code, 'locked');
  }
});

test('malformed requests answer JSON errors with request ids and never stop the front', async () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${node.restUrl}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const cases: [Promise<Response>, number, string][] = [
    [post('/contract_call', '{'), 400, 'JSON'],
    [post('/contract_call', '[1]'), 400, 'object'],
    [post('/contract_call', ''), 400, 'empty'],
    [post('/contract_call', JSON.stringify({ txid: 'ab'.repeat(32), contract_id: 'ab'.repeat(32), payload: '***' })), 400, 'payload'],
    [post('/contract_call', JSON.stringify({ txid: 'ab'.repeat(32), contract_id: 'xx', payload: 'AA==' })), 400, 'contract_id'],
    [post('/contract_call', JSON.stringify({ txid: 'ab'.repeat(32), contract_id: 'ab'.repeat(32), payload: 'AAAA' })), 400, ''],
    [post('/deploy_contract', JSON.stringify({ txid: 'ab'.repeat(32), bytecode: 'zz' })), 400, ''],
    [fetch(`${node.restUrl}/v2/state_root/abc`), 400, 'height'],
    [fetch(`${node.restUrl}/contract_call/xyz/status`), 400, 'txid'],
    [fetch(`${node.restUrl}/v2/${'ab'.repeat(32)}/f%ZZ`), 400, 'percent'],
    [fetch(`${node.restUrl}/contracts/x/y/z`), 404, ''],
    [fetch(`${node.restUrl}/health`, { method: 'PUT' }), 405, ''],
    [fetch(`${node.restUrl}/v2/${'ab'.repeat(32)}/total`, { method: 'POST' }), 405, ''],
  ];
  for (const [p, status, mention] of cases) {
    const r = await p;
    const j = (await r.json()) as JsonAnswer;
    assert.equal(r.status, status, JSON.stringify(j));
    assert.ok(typeof j.error.code === 'string' && typeof j.error.message === 'string');
    assert.match(j.error.message, new RegExp(mention));
    assert.ok(r.headers.get('x-request-id'));
  }
  const put = await fetch(`${node.restUrl}/health`, { method: 'PUT' });
  assert.equal(put.headers.get('allow'), 'GET');
  const getPost = await fetch(`${node.restUrl}/contract_call`);
  assert.equal(getPost.status, 405);
  assert.equal(getPost.headers.get('allow'), 'POST');
  // An aborted upload mid-body leaves nothing behind.
  await new Promise<void>((resolve) => {
    const s = connect(port, host, () => {
      s.write(`POST /contract_call HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n${'x'.repeat(1000)}`);
      setTimeout(() => {
        s.destroy();
        resolve();
      }, 50);
    });
  });
  assert.equal((await fetch(`${node.restUrl}/health`)).status, 200);
  const access = node.lines.filter((l) => l.msg === 'request' && l.level === 'info');
  assert.ok(access.some((l) => l['status'] === 413 && typeof l['ms'] === 'number' && l['method'] === 'POST'));
});

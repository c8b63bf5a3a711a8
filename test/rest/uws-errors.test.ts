/**
 * What a client sees when uWebSockets.js's own HTTP parser refuses a request (docs/RELIABILITY.md
 * section 1). Pinned byte for byte, so an upgrade of uWS that changes
 * them (or lets us answer them) is noticed:
 * - the answers are constants of the native addon (uws_linux_x64_*.node of uws-pack
 *   20.0.8), written by the C++ parser before any JavaScript runs; the JS API has no hook
 *   for them (App options are TLS only; `filter` sees connections, not requests);
 * - a request head over 4 KiB gets 431 (the addon reads UWS_HTTP_MAX_HEADERS_SIZE, default
 *   4096, once at load);
 * - requests that arrived before the bad bytes in the same read are dispatched (their
 *   handlers run, POST bodies included) but their answers are replaced by the error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestServer } from '../../src/rest/http.js';
import { rawRequest } from '../helpers/raw-http.js';

const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>';
const VERSION = 'HTTP/1.1 505 HTTP Version Not Supported\r\nConnection: close\r\n\r\n<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>';
const TOO_LARGE = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n<h1>Request Header Fields Too Large</h1><hr><i>uWebSockets/20 Server</i>';

test("uWS's own answers to malformed HTTP: fixed HTML, no content type or length, the connection closed", async () => {
  const seen: string[] = [];
  const server = new RestServer([
    { method: 'GET', pattern: '/health', handler: () => (seen.push('GET /health'), { status: 200, body: { status: 'ok' } }) },
    { method: 'POST', pattern: '/echo', body: true, handler: (ctx) => (seen.push(`POST /echo ${ctx.body?.toString()}`), { status: 200, body: { ok: true } }) },
  ]);
  const port = await server.listen('127.0.0.1', 0);
  // The whole answer is read up to the server's close (no Content-Length: close ends it).
  const send = async (data: string): Promise<string> => {
    const r = await rawRequest(port, Buffer.from(data, 'latin1'), { expect: 99, timeoutMs: 5_000 });
    assert.equal(r.closed, true, `closed after ${JSON.stringify(data.slice(0, 40))}`);
    return r.raw.toString('latin1');
  };
  try {
    assert.equal(await send('GET /health HTTP/1.0\r\n\r\n'), VERSION, 'HTTP/1.0 (e.g. HAProxy httpchk, ApacheBench)');
    assert.equal(await send('GET / HTTP/9.9\r\nHost: x\r\n\r\n'), VERSION);
    assert.equal(await send('G\0T /health HTTP/1.1\r\nHost: x\r\n\r\n'), VERSION, 'a NUL in the method');
    assert.equal(await send('POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'), BAD_REQUEST, 'bad chunk framing');
    assert.equal(await send('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{"a":1}'), BAD_REQUEST, 'a negative Content-Length');
    // RFC 9112 section 3.2: an HTTP/1.1 request without Host gets 400 (uWS's, before any JavaScript).
    assert.equal(await send('GET /health HTTP/1.1\r\nUser-Agent: x\r\n\r\n'), BAD_REQUEST, 'no Host header');
    assert.equal(await send('POST /echo HTTP/1.1\r\nContent-Length: 7\r\n\r\n{"a":1}'), BAD_REQUEST, 'no Host header, with a body');
    assert.deepEqual(seen, [], 'no handler ran for any of these');

    // The head limit: 4,096 bytes of request line, headers and the blank line, not one more.
    const head = (n: number): string => `GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(n - 42)}\r\n\r\n`;
    assert.equal(head(4096).length, 4096);
    const ok = await rawRequest(port, head(4096), { timeoutMs: 5_000 });
    assert.equal(ok.answers[0]?.status, 200);
    assert.equal(await send(head(4097)), TOO_LARGE);
    assert.equal(await send(`GET /health?${'q'.repeat(100 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`), TOO_LARGE, 'a 100 KiB URL');

    // Valid requests in the same read as bad bytes: dispatched, answers replaced by the error.
    seen.length = 0;
    assert.equal(await send('GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{"a":1}GET / HTTP/1.0\r\n\r\n'), VERSION);
    assert.deepEqual(seen, ['GET /health', 'POST /echo {"a":1}'], 'both handlers ran; neither answer was sent');
  } finally {
    await server.drain(100);
  }
});

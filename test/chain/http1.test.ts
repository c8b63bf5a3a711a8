/**
 * The minimal HTTP/1.1 GET client (src/chain/http1.ts) against a raw socket server that
 * answers each request with scripted bytes: framing by Content-Length, chunked coding and
 * close; interim 1xx answers; reuse of kept-alive connections and not of closed ones; the
 * socket bound; the body cap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Http1Client, type Http1Result } from '../../src/chain/http1.js';

/** A server answering request number k (over all connections) with `answers(path, k)`; counts connections. */
async function scripted(answer: (path: string, k: number, sock: Socket) => void): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let k = 0;
  let conns = 0;
  const socks = new Set<Socket>();
  const server = createServer((sock) => {
    conns++;
    socks.add(sock);
    sock.on('close', () => socks.delete(sock));
    let buf = '';
    sock.on('data', (c) => {
      buf += c.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const path = buf.slice(0, end).split(' ')[1]!;
        buf = buf.slice(end + 4);
        answer(path, k++, sock);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    connections: () => conns,
    close: () => {
      for (const s of socks) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const body = (r: Http1Result): string => {
  assert.equal(r.type, 'answer', JSON.stringify(r));
  return (r as { body: Buffer }).body.toString();
};

test('framing: content-length, chunked (extensions, trailers), close-delimited; 1xx skipped; keep-alive reuse', async () => {
  const srv = await scripted((path, k, sock) => {
    if (path === '/api/cl') sock.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello');
    else if (path === '/api/chunked') {
      sock.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n');
      setImmediate(() => sock.write('4\r\ndefg\r\n0\r\nX-Trailer: 1\r\n\r\n'));
    } else if (path === '/api/close') {
      sock.write(`HTTP/1.1 404 Not Found\r\nRetry-After: 7\r\nConnection: close\r\n\r\nnot ${k}`);
      sock.end();
    }
  });
  const c = new Http1Client({ baseUrl: srv.url, maxSockets: 4, idleMs: 10_000, maxBodyBytes: 1024 });
  try {
    assert.equal(body(await c.get('/cl', 5000)), 'hello');
    assert.equal(body(await c.get('/chunked', 5000)), 'abcdefg');
    assert.equal(body(await c.get('/cl', 5000)), 'hello');
    assert.equal(srv.connections(), 1, 'one kept-alive connection for the three');
    const closed = await c.get('/close', 5000);
    assert.deepEqual([closed.type === 'answer' && closed.status, closed.type === 'answer' && closed.retryAfter, body(closed)], [404, '7', 'not 3']);
    assert.equal(body(await c.get('/cl', 5000)), 'hello');
    assert.equal(srv.connections(), 2, 'a connection the server closed is not reused');
  } finally {
    c.close();
    await srv.close();
  }
});

test('at most maxSockets connections; the others wait their turn', async () => {
  const held: Socket[] = [];
  const srv = await scripted((_p, _k, sock) => {
    held.push(sock);
    if (held.length === 2) for (const s of held.splice(0)) s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  const c = new Http1Client({ baseUrl: srv.url, maxSockets: 2, idleMs: 10_000, maxBodyBytes: 1024 });
  try {
    const all = await Promise.all([1, 2, 3, 4].map(() => c.get('/x', 5000)));
    assert.deepEqual(all.map(body), ['ok', 'ok', 'ok', 'ok']);
    assert.equal(srv.connections(), 2);
  } finally {
    c.close();
    await srv.close();
  }
});

test('the body cap, a truncated answer, a stalled one, and a reused connection dropped by the server', async () => {
  const srv = await scripted((path, _k, sock) => {
    if (path === '/api/big') sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n' + 'a'.repeat(1024) + '\r\n400\r\n');
    else if (path === '/api/cut') sock.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    else if (path === '/api/stall') sock.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    else if (path === '/api/ok') sock.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    else if (path === '/api/drop') sock.destroy();
  });
  const c = new Http1Client({ baseUrl: srv.url, maxSockets: 1, idleMs: 10_000, maxBodyBytes: 1500 });
  try {
    assert.equal((await c.get('/big', 5000)).type, 'too_large');
    const cut = await c.get('/cut', 5000);
    assert.equal(cut.type, 'error');
    assert.equal((await c.get('/stall', 200)).type, 'timeout');
    assert.equal(body(await c.get('/ok', 5000)), 'ok');
    // The connection that answered /ok is reused and dropped before any answer: stale.
    assert.deepEqual(await c.get('/drop', 5000), { type: 'error', message: 'connection closed before the answer', stale: true });
    // A fresh connection dropped the same way is a plain error.
    const fresh = await c.get('/drop', 5000);
    assert.equal(fresh.type === 'error' && fresh.stale, false);
  } finally {
    c.close();
    await srv.close();
  }
});

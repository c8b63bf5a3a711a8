/**
 * A real node whose stdout reader stops reading (a stuck log shipper), while clients keep
 * the REST front busy (docs/RELIABILITY.md section 6): the front keeps answering, its
 * access log stops growing its memory (lines beyond the sink's cap are dropped and
 * counted), nothing but access lines is lost, and once the reader resumes one warning
 * gives the count: every request is either in the access log or in that count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startNode } from '../helpers/node-process.js';
import { STALL_BYTES } from '../../src/rest/log-sink.js';
import { rssKiB } from '../helpers/raw-http.js';

/** Requests on each of CONNS connections, pipelined: ~10 MB of access log in all (STALL_BYTES is 4 MiB). */
const CONNS = 20;
const PER_CONN = 2_500;

/** Sends `n` pipelined GET /health on one connection; resolves with the 200s counted. */
function pipelined(port: number, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let ok = 0;
    let tail = '';
    s.on('data', (b: Buffer) => {
      const text = tail + b.toString('latin1');
      ok += text.split('HTTP/1.1 200 ').length - 1;
      tail = text.slice(-12);
      if (ok >= n) s.end();
    });
    s.on('error', reject);
    s.on('close', () => resolve(ok));
    s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(n));
  });
}

test('stdout not read: the REST front keeps answering, access lines beyond the cap are dropped and counted, one warning after', { timeout: 90_000 }, async () => {
  const node = await startNode();
  try {
    const port = Number(new URL(node.restUrl).port);
    const restPid = Number((await node.waitFor((l) => l.msg === 'child started' && l['role'] === 'rest'))['child_pid']);
    const before = node.lines.filter((l) => l.target === 'rest::access' && l['path'] === '/health').length;
    const rss0 = rssKiB(restPid);
    node.proc.stdout!.pause();
    const t0 = performance.now();
    const counts = await Promise.all(Array.from({ length: CONNS }, () => pipelined(port, PER_CONN)));
    const ms = Math.round(performance.now() - t0);
    const sent = CONNS * PER_CONN;
    assert.equal(counts.reduce((a, b) => a + b, 0), sent, 'every request answered 200 while stdout was stalled');
    const rss1 = rssKiB(restPid);
    node.proc.stdout!.resume();
    const warning = 'access log lines dropped while stdout was not being read';
    const warn = await node.waitFor((l) => l.msg === warning, 30_000, 'the drop warning');
    // Writing resumed: new requests are logged again.
    assert.equal((await fetch(`${node.restUrl}/contracts`)).status, 200);
    await node.waitFor((l) => l.target === 'rest::access' && l['path'] === '/contracts', 10_000, 'an access line after the warning');
    // Count once the node has exited: a line dropped after the first warning is reported by
    // the warning the sink writes at exit.
    await node.stop();
    const flood = node.lines.filter((l) => l.target === 'rest::access' && l['path'] === '/health').slice(before);
    const warnings = node.lines.filter((l) => l.msg === warning);
    // Other processes share the stdout pipe: while it is full, a write longer than
    // PIPE_BUF (4 KiB) goes in pieces and another process's line can land inside one of
    // the REST front's lines, which then no longer parses. Those lines are counted apart.
    const mangled = node.raw.filter((r) => !r.startsWith('{') || !r.endsWith('}')).reduce((n, r) => n + (r.split('"path":"/health"').length - 1), 0);
    const logged = flood.length + mangled;
    const dropped = warnings.reduce((n, l) => n + Number(l['dropped']), 0);
    const loggedBytes = flood.reduce((n, l) => n + JSON.stringify(l).length + 1, 0);
    console.log(`# hardening/log-stall: ${sent} requests in ${ms} ms while stdout was stalled; ${logged} access lines written (${mangled} of them interleaved with another process's line), ${dropped} dropped (${warnings.length} warning(s), the first with ${Number(warn['dropped'])}); REST RSS ${Math.round(rss0 / 1024)} -> ${Math.round(rss1 / 1024)} MiB`);
    assert.ok(dropped > 0, 'lines beyond the cap were dropped');
    assert.equal(logged + dropped, sent, 'every request is in the access log or in a warning count');
    // What was buffered is bounded by the cap, one batch (256 KiB) and the kernel's socket
    // buffer (at most a few hundred KiB), not by the requests sent.
    assert.ok(loggedBytes <= STALL_BYTES + 256 * 1024 + 1024 * 1024, `written access lines fit the cap: ${loggedBytes} bytes`);
  } finally {
    node.proc.stdout!.resume();
    await node.stop();
  }
});

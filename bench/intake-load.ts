/**
 * Load generator for bench/intake.bench.ts, run in its own process:
 *   node dist/bench/intake-load.js URL BODIES_FILE CONNECTIONS
 * Sends every body of BODIES_FILE (a JSON array of POST /contract_call bodies) once, over
 * CONNECTIONS keep-alive connections, one request in flight per connection (intake
 * answers are asynchronous; uWebSockets.js closes a connection that pipelines behind a
 * pending asynchronous answer). Prints one JSON line with counts and the accepted rate.
 *
 * Raw sockets with the requests serialised up front and answers framed by
 * Content-Length, like bench/loadgen.ts: the load generator shares the node's 2 cores,
 * and node:http's client cost ~0.6 ms of CPU per request here, more than the node's REST
 * process spends on the same request.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

const [url, file, connsText] = process.argv.slice(2);
const target = new URL('/contract_call', url);
const host = target.hostname.replace(/^\[|\]$/g, '');
const port = Number(target.port || 80);
const requests = (JSON.parse(readFileSync(file!, 'utf8')) as unknown[]).map((b) => {
  const body = Buffer.from(JSON.stringify(b), 'utf8');
  const head = `POST /contract_call HTTP/1.1\r\nHost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
});
const conns = Number(connsText ?? 16);
const statuses: Record<string, number> = {};
let next = 0;
let errors = 0;

const CRLF2 = Buffer.from('\r\n\r\n');

/** Content-Length of the header block buf[0..end) (0 when absent); names are case-insensitive. */
function bodyLength(buf: Buffer, end: number): number {
  const head = buf.toString('latin1', 0, end).toLowerCase();
  const at = head.indexOf('\r\ncontent-length:');
  if (at < 0) return 0;
  return Number.parseInt(head.slice(at + 17).trimStart(), 10) || 0;
}

/** Sends this connection's share of the bodies one at a time; resolves when none are left. */
function drive(): Promise<void> {
  return new Promise((resolve) => {
    const s: Socket = connect(port, host);
    let buf: Buffer = Buffer.alloc(0);
    let inFlight = false;
    const sendNext = (): void => {
      if (next >= requests.length) {
        s.end();
        return resolve();
      }
      inFlight = true;
      s.write(requests[next++]!);
    };
    s.setNoDelay(true);
    s.on('connect', sendNext);
    s.on('error', () => {
      if (inFlight) errors++;
      inFlight = false;
      resolve();
    });
    s.on('close', () => {
      if (inFlight) errors++;
      inFlight = false;
      resolve();
    });
    s.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const end = buf.indexOf(CRLF2);
      if (end < 0) return;
      const len = bodyLength(buf, end);
      if (buf.length < end + 4 + len) return;
      const status = buf.toString('latin1', 9, 12);
      statuses[status] = (statuses[status] ?? 0) + 1;
      buf = buf.subarray(end + 4 + len);
      inFlight = false;
      sendNext();
    });
  });
}

const t0 = performance.now();
await Promise.all(Array.from({ length: conns }, () => drive()));
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ sent: requests.length, statuses, errors, seconds, accepted_per_s: (statuses['202'] ?? 0) / seconds }) + '\n');

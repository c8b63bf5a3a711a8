/**
 * Load generator for bench/intake.bench.ts, run in its own process:
 *   node dist/bench/intake-load.js URL BODIES_FILE CONNECTIONS [CHAIN_URL]
 * Sends every body of BODIES_FILE (a JSON array of POST /contract_call bodies) once, over
 * CONNECTIONS keep-alive connections, one request in flight per connection (intake
 * answers are asynchronous; uWebSockets.js closes a connection that pipelines behind a
 * pending asynchronous answer). With CHAIN_URL (an Esplora-compatible endpoint), each
 * accepted body's anchor_tx is then broadcast (POST CHAIN_URL/tx, a keep-alive
 * connection of its own per connection) before the next body goes, as a submitting
 * client does (bench/client.bench.ts: the chain's share of the work in both runs).
 * Prints one JSON line with counts and the accepted rate.
 *
 * Raw sockets with the requests serialised up front and answers framed by
 * Content-Length, like bench/loadgen.ts: the load generator shares the node's 2 cores,
 * and node:http's client cost ~0.6 ms of CPU per request here, more than the node's REST
 * process spends on the same request.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

const [url, file, connsText, chainUrl] = process.argv.slice(2);
const target = new URL('/contract_call', url);
const host = target.hostname.replace(/^\[|\]$/g, '');
const port = Number(target.port || 80);
/** A raw POST request: head and body serialised up front. */
function post(t: URL, contentType: string, text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const head = `POST ${t.pathname} HTTP/1.1\r\nHost: ${t.host}\r\ncontent-type: ${contentType}\r\ncontent-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}
const bodies = JSON.parse(readFileSync(file!, 'utf8')) as { anchor_tx?: string }[];
const requests = bodies.map((b) => post(target, 'application/json', JSON.stringify(b)));
const chain = chainUrl === undefined ? null : new URL(`${chainUrl.replace(/\/+$/, '')}/tx`);
const broadcasts = chain === null ? null : bodies.map((b) => post(chain, 'text/plain', b.anchor_tx ?? ''));
const conns = Number(connsText ?? 16);
const statuses: Record<string, number> = {};
/** Statuses of the broadcasts (CHAIN_URL given). */
const broadcastStatuses: Record<string, number> = {};
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

/**
 * One keep-alive connection to host:port answering one request at a time: `send` writes a
 * request and resolves with the status of its answer (framed by Content-Length), null
 * when the connection failed.
 */
function connection(h: string, p: number): { send(req: Buffer): Promise<string | null>; end(): void } {
  const s: Socket = connect(p, h);
  let buf: Buffer = Buffer.alloc(0);
  let waiting: ((status: string | null) => void) | null = null;
  const fail = (): void => {
    waiting?.(null);
    waiting = null;
  };
  s.setNoDelay(true);
  s.on('error', fail);
  s.on('close', fail);
  s.on('data', (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    const end = buf.indexOf(CRLF2);
    if (end < 0) return;
    const len = bodyLength(buf, end);
    if (buf.length < end + 4 + len) return;
    const status = buf.toString('latin1', 9, 12);
    buf = buf.subarray(end + 4 + len);
    const w = waiting;
    waiting = null;
    w?.(status);
  });
  return {
    send: (req) =>
      new Promise((resolve) => {
        waiting = resolve;
        s.write(req);
      }),
    end: () => s.end(),
  };
}

/** Sends this connection's share of the bodies one at a time (each accepted one's anchor broadcast, with CHAIN_URL); resolves when none are left. */
async function drive(): Promise<void> {
  const node = connection(host, port);
  const toChain = chain === null ? null : connection(chain.hostname.replace(/^\[|\]$/g, ''), Number(chain.port || 80));
  try {
    while (next < requests.length) {
      const i = next++;
      const status = await node.send(requests[i]!);
      if (status === null) {
        errors++;
        return;
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (toChain === null || status !== '202') continue;
      const sent = await toChain.send(broadcasts![i]!);
      if (sent === null) {
        errors++;
        return;
      }
      broadcastStatuses[sent] = (broadcastStatuses[sent] ?? 0) + 1;
    }
  } finally {
    node.end();
    toChain?.end();
  }
}

const t0 = performance.now();
await Promise.all(Array.from({ length: conns }, () => drive()));
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ sent: requests.length, statuses, ...(chain === null ? {} : { broadcast: broadcastStatuses }), errors, seconds, accepted_per_s: (statuses['202'] ?? 0) / seconds }) + '\n');

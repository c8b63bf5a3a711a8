/**
 * A small HTTP/1.1 load generator for bench/rest.bench.ts, run in its own process:
 *   node dist/bench/loadgen.js HOST PORT PATH CONNECTIONS DEPTH WARMUP_MS WINDOW_MS WINDOWS
 * Raw keep-alive sockets; each connection keeps DEPTH requests in flight (DEPTH 1 = no
 * pipelining). Responses are framed by Content-Length. Prints one JSON line:
 * {"rates":[req/s per window], "total": answers including warm-up, "non200": n, "errors": n}.
 */
import { connect, type Socket } from 'node:net';

const [host, portText, path, connsText, depthText, warmupText, windowText, windowsText] = process.argv.slice(2);
const port = Number(portText);
const conns = Number(connsText ?? 32);
const depth = Number(depthText ?? 1);
const warmupMs = Number(warmupText ?? 500);
const windowMs = Number(windowText ?? 1000);
const windows = Number(windowsText ?? 5);

const one = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 'latin1');
const batches: Buffer[] = [Buffer.alloc(0)];
for (let i = 1; i <= Math.max(depth, 64); i++) batches.push(Buffer.concat(Array.from({ length: i }, () => one)));

let done = 0;
let non200 = 0;
let errors = 0;
let running = true;
const CRLF2 = Buffer.from('\r\n\r\n');
const CL_UPPER = Buffer.from('Content-Length: ');
const CL_LOWER = Buffer.from('content-length: ');

/** Body length from the header block buf[0..end), by its Content-Length (0 when absent). */
function bodyLength(buf: Buffer, end: number): number {
  let at = buf.indexOf(CL_UPPER);
  if (at < 0 || at > end) at = buf.indexOf(CL_LOWER);
  if (at < 0 || at > end) return 0;
  let n = 0;
  for (let i = at + CL_UPPER.length; i < end; i++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

function drive(s: Socket): void {
  let buf: Buffer = Buffer.alloc(0);
  s.setNoDelay(true);
  s.on('connect', () => s.write(batches[depth]!));
  s.on('error', () => errors++);
  s.on('data', (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    let n = 0;
    for (;;) {
      const end = buf.indexOf(CRLF2);
      if (end < 0) break;
      const len = bodyLength(buf, end);
      if (buf.length < end + 4 + len) break;
      if (buf[9] !== 0x32 || buf[10] !== 0x30 || buf[11] !== 0x30) non200++;
      buf = buf.subarray(end + 4 + len);
      n++;
    }
    done += n;
    if (running && n > 0) {
      for (let k = n; k > 0; k -= 64) s.write(batches[Math.min(k, 64)]!);
    }
  });
}

const sockets: Socket[] = [];
for (let i = 0; i < conns; i++) {
  const s = connect(port, host);
  sockets.push(s);
  drive(s);
}

await new Promise((r) => setTimeout(r, warmupMs));
const rates: number[] = [];
for (let w = 0; w < windows; w++) {
  const d0 = done;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, windowMs));
  rates.push(((done - d0) * 1000) / (performance.now() - t0));
}
running = false;
for (const s of sockets) s.destroy();
process.stdout.write(JSON.stringify({ rates, total: done, non200, errors }) + '\n');
process.exit(0);

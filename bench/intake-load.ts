/**
 * Load generator for bench/intake.bench.ts, run in its own process:
 *   node dist/bench/intake-load.js URL BODIES_FILE CONNECTIONS
 * Sends every body of BODIES_FILE (a JSON array of POST /contract_call bodies) once, over
 * CONNECTIONS keep-alive connections, one request in flight per connection (intake
 * answers are asynchronous). Prints one JSON line with counts and the accepted rate.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [url, file, connsText] = process.argv.slice(2);
const bodies = (JSON.parse(readFileSync(file!, 'utf8')) as unknown[]).map((b) => JSON.stringify(b));
const conns = Number(connsText ?? 16);
const target = new URL('/contract_call', url);
const agent = new Agent({ keepAlive: true, maxSockets: conns });
const statuses: Record<string, number> = {};
let next = 0;
let errors = 0;

function post(body: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => {
        statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(body);
  });
}

async function worker(): Promise<void> {
  while (next < bodies.length) await post(bodies[next++]!);
}

const t0 = performance.now();
await Promise.all(Array.from({ length: conns }, () => worker()));
const seconds = (performance.now() - t0) / 1000;
agent.destroy();
process.stdout.write(JSON.stringify({ sent: bodies.length, statuses, errors, seconds, accepted_per_s: (statuses['202'] ?? 0) / seconds }) + '\n');

/**
 * The live feed (GET /v2/stream, docs/STREAM.md) with SUBSCRIBERS WebSocket subscribers of
 * one contract's events, against a bare uWebSockets.js broadcast server measured in the
 * same run with the same clients (bench/ws-broadcast-server.ts):
 *
 * - latency: from a block being durable (the core's "block applied" log line, written
 *   once the writer answered the chain update, i.e. after the block's write finished; its
 *   timestamp has 1 ms resolution) to its event reaching the last of the subscribers;
 *   ceiling: from the broadcast command to the last subscriber receiving one message;
 * - messages/s: a block with BURST events (BURST calls of the counter fixture), delivered
 *   to every subscriber, per second from durable to the last subscriber's last event;
 *   ceiling: BURST messages of the same size to every subscriber.
 *
 * The node runs as in production (supervisor, core, writer thread, REST process) on a
 * devnet chain; clients are `ws` connections in this process. Rounds alternate ceiling and
 * subject so machine noise hits both alike.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { figure, stat, type Figure } from './harness.js';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../test/helpers/devnet-node.js';

const here = fileURLToPath(new URL('.', import.meta.url));

const SUBSCRIBERS = 1000;
/** Events in the throughput block (one call each, one event per call). */
const BURST = 20;
const ROUNDS = 3;

/** SUBSCRIBERS connections; `onMessage(f)` sets the handler called per message. */
async function openClients(url: string): Promise<{ sockets: WebSocket[]; onMessage: (f: (i: number, data: Buffer) => void) => void }> {
  let handler: (i: number, data: Buffer) => void = () => undefined;
  const sockets: WebSocket[] = [];
  // Opened in groups so the listen backlog never overflows.
  for (let g = 0; g < SUBSCRIBERS; g += 100) {
    const group = await Promise.all(
      Array.from({ length: Math.min(100, SUBSCRIBERS - g) }, (_, k) =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(url, { perMessageDeflate: false });
          const i = g + k;
          ws.on('message', (d) => handler(i, d as Buffer));
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        }),
      ),
    );
    sockets.push(...group);
  }
  return { sockets, onMessage: (f) => (handler = f) };
}

/** Resolves with the time the last of SUBSCRIBERS has seen `count` messages matching `match`. */
function lastArrival(c: { onMessage: (f: (i: number, data: Buffer) => void) => void }, match: (d: Buffer) => boolean, count: number): Promise<number> {
  return new Promise((resolve) => {
    const seen = new Uint32Array(SUBSCRIBERS);
    let complete = 0;
    c.onMessage((i, d) => {
      if (!match(d)) return;
      if (++seen[i]! === count && ++complete === SUBSCRIBERS) resolve(Date.now());
    });
  });
}

export default async function streamBench(): Promise<Figure[]> {
  // ---- ceiling: bare uWS broadcast
  const server = spawn(process.execPath, [join(here, 'ws-broadcast-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => server.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  const bare = await openClients(`ws://127.0.0.1:${port}/`);
  const control = await new Promise<WebSocket>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    ws.once('open', () => resolve(ws));
  });
  const ceiling = async (count: number): Promise<{ ms: number }> => {
    const done = lastArrival(bare, () => true, count);
    const t0 = Date.now();
    control.send(`go ${count} 200`);
    return { ms: (await done) - t0 };
  };

  // ---- subject: a node on the devnet, SUBSCRIBERS live subscriptions to one contract
  const devnet = await startDevnet();
  const node = await startDevnetNode(devnet);
  const wallet = testWallet(9);
  const figures: Figure[] = [];
  try {
    await fund(devnet, wallet, ROUNDS * (BURST + 1) + 4);
    const svc = client(node, devnet, wallet);
    const artifact = compileFixture('counter.svc');
    const contractId = (await svc.deploy(artifact)).contractId;
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    const feed = await openClients(`${node.restUrl.replace(/^http/, 'ws')}/v2/stream`);
    const synced = lastArrival(feed, (d) => d.includes('"type":"synced"'), 1);
    for (const ws of feed.sockets) ws.send(JSON.stringify({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId }));
    await synced;

    /** Mines `calls` bump calls in one block; ms from its durable log line to the last subscriber's last event. */
    const subject = async (calls: number): Promise<{ ms: number; bytes: number }> => {
      const txids: string[] = [];
      for (let i = 0; i < calls; i++) txids.push((await svc.call({ contractId, function: 'bump', args: ['u64:1'], abi: artifact.abi })).anchor.txid);
      let bytes = 0;
      const done = lastArrival(feed, (d) => {
        if (!d.includes('"type":"event"')) return false;
        bytes = d.length;
        return true;
      }, calls);
      devnet.chain.mine(1, txids);
      const height = devnet.chain.height;
      const at = await done;
      const line = await node.waitFor((l) => l.msg === 'block applied' && l['height'] === height, 30_000, 'block applied');
      return { ms: at - Date.parse(String(line.ts)), bytes };
    };

    const lat = { c: [] as number[], s: [] as number[] };
    const rate = { c: [] as number[], s: [] as number[] };
    let size = 0;
    for (let r = 0; r < ROUNDS; r++) {
      lat.c.push((await ceiling(1)).ms);
      lat.s.push((await subject(1)).ms);
      rate.c.push((BURST * SUBSCRIBERS) / (Math.max(1, (await ceiling(BURST)).ms) / 1000));
      const s = await subject(BURST);
      size = s.bytes;
      rate.s.push((BURST * SUBSCRIBERS) / (Math.max(1, s.ms) / 1000));
    }
    for (const ws of feed.sockets) ws.terminate();
    figures.push(
      figure({
        name: `event delivery latency, block durable -> ${SUBSCRIBERS} subscribers`,
        unit: 'ms',
        value: stat(lat.s),
        ceiling: { name: `bare uWS send -> ${SUBSCRIBERS} subscribers`, ...stat(lat.c) },
        notes: `lower is better; ratio = feed / bare; event message ${size} bytes; 1 ms timestamp resolution`,
      }),
      figure({
        name: `messages/s to ${SUBSCRIBERS} subscribers (block of ${BURST} events)`,
        unit: 'msg/s',
        value: stat(rate.s),
        ceiling: { name: `bare uWS ${BURST} x ${SUBSCRIBERS} sends of 200 bytes`, ...stat(rate.c) },
        notes: 'from the block durable (feed) or the send command (bare) to the last subscriber receiving its last message',
      }),
    );
  } finally {
    for (const ws of bare.sockets) ws.terminate();
    control.terminate();
    server.kill();
    await node.stop();
    await devnet.close();
  }
  return figures;
}

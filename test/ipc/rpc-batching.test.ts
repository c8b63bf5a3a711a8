/**
 * The RPC transports send the frames of one event-loop turn together (src/ipc/rpc.ts):
 * every request still gets its own answer, answers and events keep their order, errors
 * cross as NodeError, and closing sends what is queued. A broadcast goes only to the
 * connections that listen for its event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { createConnection, type Socket } from 'node:net';
import { RpcClient, RpcServer, connectRpc, emit, portTransport, serveTransport, socketTransport, type Handlers, type Transport } from '../../src/ipc/rpc.js';
import { NodeError } from '@svc-node/protocol/errors';

type Api = {
  echo(p: { n: number }): { n: number };
  later(p: { n: number }): { n: number };
  fail(p: { n: number }): never;
  bytes(p: { items: Uint8Array[]; buf: Buffer }): { backing: number[]; bufIsBuffer: boolean; bufBacking: number; sums: number[] };
};

const handlers = (onEcho?: (n: number) => void): Handlers<Api> => ({
  echo: (p) => {
    onEcho?.(p.n);
    return { n: p.n };
  },
  later: async (p) => {
    await new Promise((r) => setImmediate(r));
    return { n: p.n * 2 };
  },
  fail: (p) => {
    throw new NodeError('conflict', `no ${p.n}`);
  },
  bytes: (p) => ({
    backing: p.items.map((b) => b.buffer.byteLength),
    bufIsBuffer: Buffer.isBuffer(p.buf),
    bufBacking: p.buf.buffer.byteLength,
    sums: p.items.map((b) => b.reduce((a, x) => a + x, 0)),
  }),
});

async function burst(client: RpcClient<Api>): Promise<void> {
  const calls = Array.from({ length: 600 }, (_, i) =>
    i % 3 === 0 ? client.call('echo', { n: i }) : i % 3 === 1 ? client.call('later', { n: i }) : client.call('fail', { n: i }).then(() => 'resolved', (e: unknown) => e),
  );
  const out = await Promise.all(calls);
  out.forEach((r, i) => {
    if (i % 3 === 0) assert.deepEqual(r, { n: i });
    else if (i % 3 === 1) assert.deepEqual(r, { n: 2 * i });
    else {
      assert.ok(r instanceof NodeError, `call ${i}`);
      assert.equal(r.code, 'conflict');
      assert.equal(r.message, `no ${i}`);
    }
  });
}

test('socket transport: a burst of calls in one turn, each answered; events keep their order', async () => {
  const path = `\0svc-rpc-test-${process.pid}`;
  const server = new RpcServer<Api>(handlers((n) => server.broadcast('seen', n)));
  await server.listen(path);
  const client = await connectRpc<Api>(path);
  try {
    const seen: number[] = [];
    client.on('seen', (n) => seen.push(n as number));
    await burst(client);
    // Each 'seen' event was sent before the echo answer it belongs to: all have arrived, in order.
    assert.deepEqual(seen, Array.from({ length: 200 }, (_, k) => 3 * k));
  } finally {
    client.close();
    await server.close();
  }
});

test("socket transport: a frame's byte arrays are views of that frame alone, not of the socket's read; a frame of many reads arrives whole", async () => {
  const path = `\0svc-rpc-bytes-test-${process.pid}`;
  const server = new RpcServer<Api>(handlers());
  await server.listen(path);
  const client = await connectRpc<Api>(path);
  try {
    // 300 calls in one turn leave in one write (~250 KB), read in 64 KiB pieces.
    const small = await Promise.all(Array.from({ length: 300 }, (_, i) => client.call('bytes', { items: [new Uint8Array(700).fill(i % 251)], buf: Buffer.alloc(40, 3) })));
    small.forEach((r, i) => {
      // The frame (~800 bytes), never the read it came in: a view handed on to a thread clones it all.
      assert.ok(r.backing[0]! < 1024 && r.bufBacking < 1024, `call ${i}: backing ${r.backing[0]}, ${r.bufBacking}`);
      assert.deepEqual(r.sums, [700 * (i % 251)]);
      assert.equal(r.bufIsBuffer, true);
    });
    // 2,000 arrays of 700 bytes: a 1.4 MB frame, read from the socket in many chunks.
    const items = Array.from({ length: 2000 }, (_, i) => new Uint8Array(700).fill(i % 251));
    const r = await client.call('bytes', { items, buf: Buffer.alloc(40, 3) });
    assert.deepEqual(r.sums, items.map((_, i) => 700 * (i % 251)));
  } finally {
    client.close();
    await server.close();
  }
});

test('socket transport: a broadcast reaches only connections that listen for its event', async () => {
  const path = `\0svc-rpc-sub-test-${process.pid}`;
  const server = new RpcServer<Api>(handlers((n) => server.broadcast('seen', n)));
  await server.listen(path);
  const listener = await connectRpc<Api>(path);
  // A raw connection that never subscribes records every frame it receives.
  const sock = await new Promise<Socket>((resolve, reject) => {
    const s = createConnection(path);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
  const raw = socketTransport(sock);
  const frames: { k: string }[] = [];
  const answered = new Promise<void>((resolve) =>
    raw.onFrame((f) => {
      frames.push(f);
      if (f.k === 'res') resolve();
    }),
  );
  try {
    const seen: number[] = [];
    listener.on('seen', (n) => seen.push(n as number));
    await burst(listener);
    assert.equal(seen.length, 200);
    // Any event sent to the raw connection would arrive before this answer (one socket, in order).
    raw.send({ k: 'req', id: 1, m: 'echo', p: { n: 1 } } as never);
    await answered;
    assert.deepEqual(frames.map((f) => f.k), ['res']);
  } finally {
    raw.close();
    listener.close();
    await server.close();
  }
});

test('port transport: the same over a MessagePort; close sends what is queued', async () => {
  const { port1, port2 } = new MessageChannel();
  const serverSide: Transport = portTransport(port2);
  serveTransport<Api>(serverSide, handlers());
  const client = new RpcClient<Api>(portTransport(port1));
  try {
    await burst(client);
    const got: unknown[] = [];
    client.on('bye', (d) => got.push(d));
    const closed = new Promise<void>((r) => client.onClose(r));
    emit(serverSide, 'bye', 1);
    emit(serverSide, 'bye', 2);
    serverSide.close(); // queued in this turn: must still be delivered before the close
    await closed;
    assert.deepEqual(got, [1, 2]);
  } finally {
    port1.close();
  }
});

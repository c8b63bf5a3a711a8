/**
 * A small typed request/response channel used between processes (REST front and gossip
 * to the core, over a local socket) and between threads (core to the writer, over a
 * MessagePort). Errors cross as WireError plain objects and come back as NodeError.
 * An API is an object type whose members take one params object and return a value or
 * a promise; the method names and types are declared in src/messages.ts.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { deserialize as v8deserialize, serialize } from 'node:v8';
import type { MessagePort, Worker } from 'node:worker_threads';
import { NodeError, toWire, fromWire, type WireError } from '@svc-node/protocol/errors';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApiShape = { [method: string]: (params: any) => unknown };
export type Handlers<A extends ApiShape> = { [K in keyof A]: (params: Parameters<A[K]>[0]) => ReturnType<A[K]> | Awaited<ReturnType<A[K]>> | Promise<Awaited<ReturnType<A[K]>>> };

type Frame =
  | { k: 'req'; id: number; m: string; p: unknown }
  | { k: 'res'; id: number; ok: true; r: unknown }
  | { k: 'res'; id: number; ok: false; e: WireError }
  | { k: 'evt'; n: string; d: unknown }
  /** Client to server: send me `RpcServer.broadcast`s of event n (sent by `RpcClient.on`). */
  | { k: 'sub'; n: string };

/** Several frames sent in one event-loop turn travel as one port message. */
type PortMessage = Frame | { k: 'batch'; f: Frame[] };

export interface Transport {
  send(frame: Frame): void;
  onFrame(cb: (frame: Frame) => void): void;
  onClose(cb: () => void): void;
  close(): void;
}

/**
 * A frame's value, its byte arrays views into a copy of the frame alone. Node's
 * deserializer makes each a view into the buffer it reads, here the socket's read (64 KiB
 * and more), and structured clone copies a view's whole backing buffer: every message the
 * core sent on to the writer or the pool carried that read again. Payloads that travel in
 * batches are unpacked one by one from copies of their own where they are taken in
 * (src/packed-payload.ts, unpackOwn).
 */
function deserialize(body: Buffer): unknown {
  const own = new Uint8Array(body.length);
  own.set(body);
  return v8deserialize(Buffer.from(own.buffer));
}

/** Largest frame accepted on a socket; payloads are at most 64 KiB, blocks of state more. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export function socketTransport(sock: Socket): Transport {
  let buf: Buffer = Buffer.alloc(0);
  const frameCbs: ((f: Frame) => void)[] = [];
  const closeCbs: (() => void)[] = [];
  let closed = false;
  sock.setNoDelay(true);
  // A frame larger than one chunk (a GetPayloads answer: megabytes) waits in `parts` and
  // is joined once it is whole, not re-copied with every chunk.
  let parts: Buffer[] = [];
  let partBytes = 0;
  let need = 4;
  sock.on('data', (chunk: Buffer) => {
    if (buf.length + partBytes + chunk.length < need) {
      parts.push(chunk);
      partBytes += chunk.length;
      return;
    }
    if (parts.length > 0) {
      buf = Buffer.concat([buf, ...parts, chunk]);
      parts = [];
      partBytes = 0;
    } else buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    need = 4;
    while (buf.length >= 4) {
      const len = buf.readUInt32LE(0);
      if (len > MAX_FRAME_BYTES) {
        sock.destroy();
        return;
      }
      if (buf.length < 4 + len) {
        need = 4 + len;
        break;
      }
      const body = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      let frame: Frame;
      try {
        frame = deserialize(body) as Frame;
      } catch {
        sock.destroy();
        return;
      }
      for (const cb of frameCbs) cb(frame);
    }
  });
  const fireClose = (): void => {
    if (closed) return;
    closed = true;
    for (const cb of closeCbs) cb();
  };
  sock.on('close', fireClose);
  sock.on('error', () => sock.destroy());
  // Frames sent during one event-loop turn leave in one write (one syscall) at the end
  // of the turn: under load the core answers many requests per turn, and a write per
  // frame was a tenth of its main thread. Order is kept; latency grows by at most the
  // rest of the current turn.
  let out: Buffer[] = [];
  let outBytes = 0;
  const flush = (): void => {
    const parts = out;
    const bytes = outBytes;
    out = [];
    outBytes = 0;
    if (closed || parts.length === 0) return;
    sock.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes));
  };
  return {
    send(frame) {
      if (closed) return;
      const body = serialize(frame);
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32LE(body.length, 0);
      if (out.length === 0) setImmediate(flush);
      out.push(head, body);
      outBytes += 4 + body.length;
    },
    onFrame: (cb) => void frameCbs.push(cb),
    onClose: (cb) => void closeCbs.push(cb),
    close: () => {
      flush();
      sock.end();
    },
  };
}

export function portTransport(port: MessagePort | Worker): Transport {
  const closeCbs: (() => void)[] = [];
  const p = port as MessagePort;
  p.on('close', () => closeCbs.forEach((cb) => cb()));
  if ('threadId' in port) (port as Worker).on('exit', () => closeCbs.forEach((cb) => cb()));
  // As on sockets: the frames of one event-loop turn go as one message, so the other
  // thread is woken once per turn rather than once per frame (intake makes several
  // writer calls per submission, many submissions per turn under load).
  let out: Frame[] = [];
  const flush = (): void => {
    const frames = out;
    out = [];
    if (frames.length === 1) p.postMessage(frames[0]);
    else if (frames.length > 1) p.postMessage({ k: 'batch', f: frames } satisfies PortMessage);
  };
  return {
    send: (frame) => {
      if (out.length === 0) setImmediate(flush);
      out.push(frame);
    },
    onFrame: (cb) =>
      void p.on('message', (m: PortMessage) => {
        if (m.k === 'batch') for (const f of m.f) cb(f);
        else cb(m);
      }),
    onClose: (cb) => void closeCbs.push(cb),
    close: () => {
      flush();
      if (typeof p.close === 'function') p.close();
    },
  };
}

export class RpcClient<A extends ApiShape> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout }>();
  private readonly eventCbs = new Map<string, ((d: unknown) => void)[]>();
  private closed = false;
  private readonly closeCbs: (() => void)[] = [];

  constructor(private readonly transport: Transport) {
    transport.onFrame((f) => this.onFrame(f));
    transport.onClose(() => {
      this.closed = true;
      for (const cb of this.closeCbs) cb();
      for (const [, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(new NodeError('overloaded', 'node core unavailable'));
      }
      this.pending.clear();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** `timeoutError`: what a timeout rejects with (default: 503 overloaded "<method> timed out"). */
  call<K extends keyof A & string>(method: K, params: Parameters<A[K]>[0], timeoutMs = 0, timeoutError?: () => Error): Promise<Awaited<ReturnType<A[K]>>> {
    if (this.closed) return Promise.reject(new NodeError('overloaded', 'node core unavailable'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry: { resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout } = {
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(timeoutError ? timeoutError() : new NodeError('overloaded', `${method} timed out`));
        }, timeoutMs);
      }
      this.pending.set(id, entry);
      this.transport.send({ k: 'req', id, m: method, p: params });
    });
  }

  onClose(cb: () => void): void {
    if (this.closed) cb();
    else this.closeCbs.push(cb);
  }

  /**
   * Listens for `event`. The first listener of an event also subscribes this connection
   * to the server's broadcasts of it (a 'sub' frame, ordered with this client's
   * requests): a broadcast goes only to connections that listen for it. Events emitted
   * directly on a transport (`emit`) need no subscription.
   */
  on(event: string, cb: (data: unknown) => void): void {
    const list = this.eventCbs.get(event);
    if (list) list.push(cb);
    else {
      this.eventCbs.set(event, [cb]);
      if (!this.closed) this.transport.send({ k: 'sub', n: event });
    }
  }

  close(): void {
    this.transport.close();
  }

  private onFrame(f: Frame): void {
    if (f.k === 'res') {
      const p = this.pending.get(f.id);
      if (!p) return;
      this.pending.delete(f.id);
      if (p.timer) clearTimeout(p.timer);
      if (f.ok) p.resolve(f.r);
      else p.reject(fromWire(f.e));
    } else if (f.k === 'evt') {
      for (const cb of this.eventCbs.get(f.n) ?? []) cb(f.d);
    }
  }
}

/** Serves `handlers` on one transport; unknown methods answer not_found. */
export function serveTransport<A extends ApiShape>(transport: Transport, handlers: Handlers<A>, onBug?: (e: unknown, method: string) => void): void {
  transport.onFrame((f) => {
    if (f.k !== 'req') return;
    const h = Object.prototype.hasOwnProperty.call(handlers, f.m) ? (handlers as Record<string, (p: unknown) => unknown>)[f.m] : undefined;
    if (!h) {
      transport.send({ k: 'res', id: f.id, ok: false, e: { code: 'not_found', message: `unknown method ${f.m}` } });
      return;
    }
    let out: unknown;
    try {
      out = h(f.p);
    } catch (e) {
      if (!(e instanceof NodeError)) onBug?.(e, f.m);
      transport.send({ k: 'res', id: f.id, ok: false, e: toWire(e) });
      return;
    }
    if (out instanceof Promise) {
      out.then(
        (r) => transport.send({ k: 'res', id: f.id, ok: true, r }),
        (e) => {
          if (!(e instanceof NodeError)) onBug?.(e, f.m);
          transport.send({ k: 'res', id: f.id, ok: false, e: toWire(e) });
        },
      );
    } else transport.send({ k: 'res', id: f.id, ok: true, r: out });
  });
}

export function emit(transport: Transport, event: string, data: unknown): void {
  transport.send({ k: 'evt', n: event, d: data });
}

/** A socket server where every connection is served with the same handlers. */
export class RpcServer<A extends ApiShape> {
  private readonly server: Server;
  /** Every connection, with the events it subscribed to (see `RpcClient.on`). */
  private readonly transports = new Map<Transport, Set<string>>();

  constructor(handlers: Handlers<A>, onBug?: (e: unknown, method: string) => void) {
    this.server = createServer((sock) => {
      const t = socketTransport(sock);
      const subs = new Set<string>();
      this.transports.set(t, subs);
      t.onClose(() => this.transports.delete(t));
      t.onFrame((f) => {
        if (f.k === 'sub') subs.add(f.n);
      });
      serveTransport(t, handlers, onBug);
    });
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * Sends `event` to the connections subscribed to it. The core broadcasts every newly
   * stored payload; only the gossip process listens, and sending it to the REST front
   * too cost a serialisation, a socket write and a parse per accepted call for nothing.
   */
  broadcast(event: string, data: unknown): void {
    for (const [t, subs] of this.transports) if (subs.has(event)) emit(t, event, data);
  }

  close(): Promise<void> {
    for (const t of this.transports.keys()) t.close();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Connects to a local RPC socket, retrying until `deadlineMs` passes. */
export async function connectRpc<A extends ApiShape>(path: string, deadlineMs = 15_000): Promise<RpcClient<A>> {
  const start = Date.now();
  let delay = 20;
  for (;;) {
    try {
      const sock = await new Promise<Socket>((resolve, reject) => {
        const s = createConnection(path);
        s.once('connect', () => {
          s.off('error', reject);
          resolve(s);
        });
        s.once('error', reject);
      });
      return new RpcClient<A>(socketTransport(sock));
    } catch (e) {
      if (Date.now() - start > deadlineMs) throw e;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 500);
    }
  }
}

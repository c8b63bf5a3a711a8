/**
 * A minimal HTTP/1.1 GET client over plain keep-alive sockets, for the Esplora client's
 * GETs to an `http:` endpoint (src/chain/esplora-client.ts; https and the broadcast POST
 * stay on node:http/node:https).
 *
 * Why: intake makes one GET per call (the anchoring transaction, PROTOCOL section 3), and
 * node:http's ClientRequest/IncomingMessage machinery cost ~110-130 us of the core main
 * thread's CPU per GET against the devnet, where this costs ~10 (docs/PERFORMANCE.md,
 * "Intake"); its per-request objects also fed the core's garbage collector.
 *
 * What it does: at most `maxSockets` connections (others wait in FIFO order), reused
 * most-recently-idle first, closed after `idleMs` idle; one request per connection at a
 * time (no pipelining). Answers are framed by Content-Length, chunked transfer coding, or
 * the connection's close; 1xx answers are skipped; a connection that says `close`, speaks
 * HTTP/1.0 without keep-alive, or sends bytes beyond its answer is not reused. A request
 * on a reused connection that fails before any answer byte is reported `stale` (the
 * server closed it while idle) so the caller may resend it once, as with node:http.
 */
import { connect, type Socket } from 'node:net';

export type Http1Result =
  | { type: 'answer'; status: number; retryAfter: string | undefined; body: Buffer }
  | { type: 'error'; message: string; stale: boolean }
  | { type: 'timeout' }
  | { type: 'too_large' };

export interface Http1Options {
  /** `http://host:port/prefix`: host, port and the path prefix every request starts with. */
  baseUrl: string;
  maxSockets: number;
  /** An idle connection is closed after this long (the server may close it sooner). */
  idleMs: number;
  /** Largest answer body read; beyond it the answer is `too_large` and the connection closed. */
  maxBodyBytes: number;
}

/** Longest status line plus headers accepted: Esplora's are a few hundred bytes. */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');

interface Conn {
  sock: Socket;
  /** Requests sent on it so far (a failure before any answer on a reused one is `stale`). */
  used: number;
  idleTimer: NodeJS.Timeout | null;
  /** The request in flight: gets every chunk, the close and errors. */
  onData: ((chunk: Buffer) => void) | null;
  onEnd: ((err: Error | null) => void) | null;
  /** Still counted in `open` (cleared once when it is dropped). */
  counted: boolean;
}

/** The parsed head of an answer. */
interface Head {
  status: number;
  http10: boolean;
  contentLength: number | null;
  chunked: boolean;
  close: boolean;
  keepAlive: boolean;
  retryAfter: string | undefined;
}

function parseHead(text: string): Head | string {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) return 'malformed status line';
  const head: Head = { status: Number(m[2]), http10: m[1] === '0', contentLength: null, chunked: false, close: false, keepAlive: false, retryAfter: undefined };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return 'malformed header line';
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d{1,15}$/.test(value)) return 'malformed content-length';
      const n = Number(value);
      if (head.contentLength !== null && head.contentLength !== n) return 'conflicting content-length';
      head.contentLength = n;
    } else if (name === 'transfer-encoding') {
      const codings = value.toLowerCase().split(',').map((s) => s.trim());
      if (codings[codings.length - 1] !== 'chunked' || codings.length > 1) return `unsupported transfer-encoding ${value}`;
      head.chunked = true;
    } else if (name === 'connection') {
      const v = value.toLowerCase();
      if (v.includes('close')) head.close = true;
      if (v.includes('keep-alive')) head.keepAlive = true;
    } else if (name === 'retry-after') head.retryAfter = value;
  }
  return head;
}

export class Http1Client {
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private readonly prefix: string;
  private readonly idle: Conn[] = [];
  private readonly waiting: ((c: Conn | null) => void)[] = [];
  private open = 0;
  private closed = false;

  constructor(private readonly opts: Http1Options) {
    const u = new URL(opts.baseUrl);
    if (u.protocol !== 'http:') throw new Error('Http1Client speaks plain http only');
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port || 80);
    this.hostHeader = u.host;
    this.prefix = u.pathname.replace(/\/+$/, '');
  }

  /** GET prefix + `path`; never rejects. `timeoutMs` bounds the wait for a connection, the head and the body. */
  get(path: string, timeoutMs: number): Promise<Http1Result> {
    return new Promise<Http1Result>((resolve) => {
      let settled = false;
      let conn: Conn | null = null;
      const finish = (r: Http1Result, reuse: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (conn) {
          conn.onData = null;
          conn.onEnd = null;
          if (reuse) this.release(conn);
          else this.discard(conn);
        }
        resolve(r);
      };
      const timer = setTimeout(() => finish({ type: 'timeout' }, false), timeoutMs);
      void this.acquire().then((c) => {
        if (c === null) return finish({ type: 'error', message: 'the chain client is closed', stale: false }, false);
        if (settled) return this.release(c);
        conn = c;
        this.exchange(c, path, finish);
      });
    });
  }

  /** Closes every connection; requests in flight end with an error, waiting ones too. */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w(null);
    for (const c of this.idle.splice(0)) this.discard(c);
  }

  private exchange(c: Conn, path: string, finish: (r: Http1Result, reuse: boolean) => void): void {
    const reused = c.used > 0;
    c.used++;
    const max = this.opts.maxBodyBytes;
    // Bytes received and not yet consumed are kept as a list and joined only once enough
    // have arrived for the parse to progress (`need`), so a large answer (a raw block,
    // up to 4 MB in 64 KiB reads) is copied once, not once per read.
    let chunks: Buffer[] = [];
    let total = 0;
    let need = 0;
    let buf: Buffer = Buffer.alloc(0);
    let received = false;
    let head: Head | null = null;
    /** Offset in `buf` of the body (or, chunked, of the next chunk-size line). */
    let at = 0;
    const parts: Buffer[] = [];
    let partsBytes = 0;

    const join = (): void => {
      buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      chunks = [buf];
    };
    /** Drops the consumed bytes before `at`. */
    const trim = (): void => {
      buf = buf.subarray(at);
      at = 0;
      chunks = [buf];
      total = buf.length;
    };

    /** Progresses the parse of `buf`; `ended`: no more bytes will come. */
    const advance = (ended: boolean): void => {
      if (head === null) {
        const end = buf.indexOf(CRLF2);
        if (end < 0) {
          if (buf.length > MAX_HEAD_BYTES) return fail('answer head too long');
          if (ended) return fail('connection closed before the answer head');
          need = 0;
          return;
        }
        const h = parseHead(buf.toString('latin1', 0, end));
        if (typeof h === 'string') return fail(h);
        at = end + 4;
        if (h.status < 200) {
          // 1xx: an interim answer without a body; the real one follows.
          trim();
          return advance(ended);
        }
        head = h;
        if (h.contentLength !== null && h.contentLength > max) return tooLarge();
      }
      const h = head;
      if (h.status === 204 || h.status === 304) return done(Buffer.alloc(0), buf.length === at);
      if (h.chunked) return chunked(ended);
      if (h.contentLength !== null) {
        const have = buf.length - at;
        if (have >= h.contentLength) return done(buf.subarray(at, at + h.contentLength), have === h.contentLength);
        if (ended) return fail('answer cut short');
        need = at + h.contentLength;
        return;
      }
      // Neither: the body runs to the connection's close.
      if (buf.length - at > max) return tooLarge();
      if (ended) return done(buf.subarray(at), false);
      need = Number.POSITIVE_INFINITY;
    };

    const chunked = (ended: boolean): void => {
      for (;;) {
        const eol = buf.indexOf(CRLF, at);
        if (eol < 0) {
          if (buf.length - at > 1024) return fail('malformed chunk size');
          if (ended) return fail('answer cut short');
          trim();
          need = 0;
          return;
        }
        const sizeText = buf.toString('latin1', at, eol).split(';')[0]!.trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return fail('malformed chunk size');
        const size = parseInt(sizeText, 16);
        if (size === 0) {
          // The last chunk; trailers (ignored) end with an empty line.
          let end: number;
          if (buf.length >= eol + 4 && buf[eol + 2] === 0x0d && buf[eol + 3] === 0x0a) end = eol + 4;
          else {
            const t = buf.indexOf(CRLF2, eol + 2);
            if (t < 0) {
              if (ended) return fail('answer cut short');
              need = 0;
              return;
            }
            end = t + 4;
          }
          return done(Buffer.concat(parts, partsBytes), buf.length === end);
        }
        if (partsBytes + size > max) return tooLarge();
        if (buf.length < eol + 2 + size + 2) {
          if (ended) return fail('answer cut short');
          const chunkEnd = eol + 2 + size + 2 - at;
          trim();
          need = chunkEnd;
          return;
        }
        if (buf[eol + 2 + size] !== 0x0d || buf[eol + 3 + size] !== 0x0a) return fail('malformed chunk');
        parts.push(buf.subarray(eol + 2, eol + 2 + size));
        partsBytes += size;
        at = eol + 2 + size + 2;
      }
    };

    const done = (body: Buffer, exact: boolean): void => {
      const h = head!;
      const framed = h.chunked || h.contentLength !== null || h.status === 204 || h.status === 304;
      finish({ type: 'answer', status: h.status, retryAfter: h.retryAfter, body }, exact && framed && !h.close && (!h.http10 || h.keepAlive));
    };
    const fail = (message: string): void => finish({ type: 'error', message, stale: false }, false);
    const tooLarge = (): void => finish({ type: 'too_large' }, false);

    c.onData = (chunk) => {
      received = true;
      chunks.push(chunk);
      total += chunk.length;
      if (need === Number.POSITIVE_INFINITY) {
        if (total - at > max) tooLarge();
        return;
      }
      if (total < need) return;
      join();
      advance(false);
    };
    c.onEnd = (err) => {
      if (!received) return finish({ type: 'error', message: err?.message ?? 'connection closed before the answer', stale: reused }, false);
      if (err) return finish({ type: 'error', message: err.message, stale: false }, false);
      join();
      advance(true);
    };
    c.sock.ref();
    c.sock.write(`GET ${this.prefix}${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nConnection: keep-alive\r\n\r\n`, 'latin1');
  }

  private acquire(): Promise<Conn | null> {
    if (this.closed) return Promise.resolve(null);
    const c = this.idle.pop();
    if (c) {
      if (c.idleTimer) clearTimeout(c.idleTimer);
      c.idleTimer = null;
      return Promise.resolve(c);
    }
    if (this.open < this.opts.maxSockets) return Promise.resolve(this.connect());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private connect(): Conn {
    this.open++;
    const sock = connect(this.port, this.host);
    sock.setNoDelay(true);
    const c: Conn = { sock, used: 0, idleTimer: null, onData: null, onEnd: null, counted: true };
    let ended = false;
    const end = (err: Error | null): void => {
      if (ended) return;
      ended = true;
      this.forget(c);
      c.onEnd?.(err);
    };
    sock.on('data', (chunk: Buffer) => {
      if (c.onData) c.onData(chunk);
      else sock.destroy(); // bytes nobody asked for: the connection cannot be trusted
    });
    sock.on('error', (e) => end(e));
    sock.on('close', () => end(null));
    return c;
  }

  /** A connection that finished an exchange cleanly: to a waiting request, or idle. */
  private release(c: Conn): void {
    if (this.closed || c.sock.destroyed) return this.discard(c);
    const w = this.waiting.shift();
    if (w) return w(c);
    c.sock.unref(); // an idle connection does not keep the process alive
    c.idleTimer = setTimeout(() => this.discard(c), this.opts.idleMs);
    c.idleTimer.unref();
    this.idle.push(c);
  }

  private discard(c: Conn): void {
    c.sock.destroy();
    this.forget(c);
  }

  /** Drops `c` from the books (once) and lets a waiting request open a connection in its place. */
  private forget(c: Conn): void {
    if (c.idleTimer) clearTimeout(c.idleTimer);
    c.idleTimer = null;
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    if (!c.counted) return;
    c.counted = false;
    this.open--;
    const w = this.waiting.shift();
    if (w) w(this.closed ? null : this.connect());
  }
}

/**
 * A thin layer over uWebSockets.js: one route table, JSON 404/405 for everything else,
 * the body limit enforced while the body streams in, every error as the JSON error body
 * with the status mapped from its code (packages/protocol/src/errors.ts), a request id on every response
 * and an access-log line per request.
 */
import { App, us_listen_socket_close, us_socket_local_port, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import { randomBytes } from 'node:crypto';
import { NodeError, asNodeError } from '@svc-node/protocol/errors';
import { logger, redact, type Logger } from '../log.js';
import { BindError, formatAddress, probeListen } from '../supervisor/address.js';
import { MAX_BODY_BYTES } from '@svc-node/protocol/limits';


export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: { authorization: string; contentType: string };
  body: Buffer | null;
  requestId: string;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Pre-serialised body (e.g. Prometheus text); sent as is with its content type. */
  raw?: { contentType: string; text: string };
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  method: 'GET' | 'POST';
  /** Segments; ":name" captures one segment. */
  pattern: string;
  handler: Handler;
  /** Read the body (POST routes). */
  body?: boolean;
  /**
   * GET only: a synchronous answer from memory for the raw path (requests without a query
   * string), or undefined to take the normal path. Served on uWS's own router without the
   * generic dispatch; every answer is the same 200 the handler would give.
   */
  fast?: (rawPath: string) => string | undefined;
}

interface CompiledRoute extends Route {
  segments: string[];
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 204: '204 No Content', 202: '202 Accepted', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden',
  404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large',
  422: '422 Unprocessable Entity', 429: '429 Too Many Requests', 500: '500 Internal Server Error', 503: '503 Service Unavailable',
};

/**
 * uSockets' listen option for a listener without SO_REUSEPORT (the package exports it at
 * run time, its typings only as a member of an undeclared-value enum).
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** Paths that need no JSON escaping in a log line. */
const PLAIN_PATH = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** Shared by requests without a query string (handlers only read it). */
const EMPTY_QUERY = new URLSearchParams();

/**
 * How long a browser may reuse a preflight's answer: 10 min (Chromium's own cap is 2 h,
 * Firefox's 24 h), so a changed cors_origins reaches open pages within minutes.
 */
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * Which pages may read the answers (cors_origins, docs/OPERATING.md "Browsers"): the
 * CORS headers for a request's Origin, or null when that origin is not allowed (then no
 * CORS header is sent and the browser keeps the answer from the page).
 */
export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins);
  }

  headers(origin: string): [string, string][] | null {
    if (origin === '' || !(this.any || this.origins.has(origin))) return null;
    return [
      ['access-control-allow-origin', this.any ? '*' : origin],
      // The SDK reads Retry-After to wait out 429/503; the request id ties a page's error to the log.
      ['access-control-expose-headers', 'retry-after, x-request-id'],
      ...(this.any ? [] : ([['vary', 'origin']] as [string, string][])),
    ];
  }

  /** The answer to a preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin. */
  preflight(origin: string): [string, string][] | null {
    const h = this.headers(origin);
    if (!h) return null;
    return [...h, ['access-control-allow-methods', 'GET, POST'], ['access-control-allow-headers', 'authorization, content-type'], ['access-control-max-age', PREFLIGHT_MAX_AGE_S]];
  }
}

function statusLine(code: number): string {
  return STATUS_TEXT[code] ?? `${code} Status`;
}

export class RestServer {
  private readonly app: TemplatedApp;
  private readonly routes: CompiledRoute[] = [];
  private listenSocket: us_listen_socket | null = null;
  private readonly log: Logger = logger('rest');
  private readonly access: Logger = logger('rest::access');
  private readonly idPrefix = randomBytes(4).toString('hex');
  private nextId = 0;
  private inFlight = 0;
  private draining = false;
  private drainWaiters: (() => void)[] = [];
  private readonly cors: CorsPolicy | null;

  constructor(
    routes: Route[],
    private readonly opts: {
      observe?: (method: string, route: string, status: number, seconds: number) => void;
      /**
       * Where access-log lines go when the process installed its own log sink (src/rest/main.ts):
       * the line is then formatted here, field for field as src/log.ts would, without the
       * generic path's per-call costs (the access log runs once per request).
       */
      accessSink?: { sink: (line: string) => void; proc: string };
      /** WebSocket routes (the live feed, src/rest/stream/), registered before the catch-all. */
      websockets?: (app: TemplatedApp) => void;
      /** Origins whose pages may read the answers (cors_origins); none when empty or absent. */
      corsOrigins?: readonly string[];
    } = {},
  ) {
    this.cors = opts.corsOrigins && opts.corsOrigins.length > 0 ? new CorsPolicy(opts.corsOrigins) : null;
    this.accessProc = JSON.stringify(opts.accessSink?.proc ?? 'rest').slice(1, -1);
    for (const r of routes) this.routes.push({ ...r, segments: r.pattern.split('/').filter(Boolean) });
    this.app = App();
    opts.websockets?.(this.app);
    for (const r of this.routes) {
      if (r.fast && r.method === 'GET') this.app.get(r.pattern, (res, req) => this.fastGet(r, res, req));
    }
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  /** Route patterns as "METHOD /path/{param}", for the OpenAPI cross-check. */
  routeList(): string[] {
    return this.routes.map((r) => `${r.method} /${r.segments.map((s) => (s.startsWith(':') ? `{${s.slice(1)}}` : s)).join('/')}`);
  }

  /**
   * Listens exclusively (without uWS's default SO_REUSEPORT, under which a second node on
   * the same address bound too and shared its connections). A failure rejects with a
   * BindError naming `key`, the address and the cause; uWS reports no errno, so the
   * cause comes from one exclusive bind of node:net at the same address.
   */
  listen(host: string, port: number, key = 'rest_address'): Promise<number> {
    // uWS.js takes (host, port, options, cb); its typings list only (port, options, cb).
    const listen = this.app.listen.bind(this.app) as unknown as (h: string, p: number, o: number, cb: (s: us_listen_socket | false) => void) => void;
    return new Promise((resolve, reject) => {
      listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (sock) => {
        if (!sock) {
          void probeListen(host, port).then((errno) => reject(new BindError(key, formatAddress(host, port), errno ?? 'EADDRINUSE')));
          return;
        }
        this.listenSocket = sock;
        resolve(us_socket_local_port(sock as never));
      });
    });
  }

  /** Stops accepting, waits for in-flight requests (at most `ms`), then closes. */
  async drain(ms: number): Promise<void> {
    this.draining = true;
    if (this.listenSocket) us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    if (this.inFlight > 0) {
      await Promise.race([new Promise<void>((r) => this.drainWaiters.push(r)), new Promise((r) => setTimeout(r, ms))]);
    }
    this.app.close();
  }

  private match(method: string, parts: string[]): { route: CompiledRoute; params: Record<string, string> } | { allow: string } | null {
    const allowed = new Set<string>();
    for (const r of this.routes) {
      if (r.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let okMatch = true;
      for (let i = 0; i < parts.length; i++) {
        const s = r.segments[i]!;
        if (s.startsWith(':')) params[s.slice(1)] = parts[i]!;
        else if (s !== parts[i]) {
          okMatch = false;
          break;
        }
      }
      if (!okMatch) continue;
      if (r.method !== method) {
        allowed.add(r.method);
        continue;
      }
      return { route: r, params };
    }
    return allowed.size > 0 ? { allow: [...allowed].sort().join(', ') } : null;
  }

  /** The fast path of a `fast` route; anything unusual goes to the generic dispatch. */
  private fastGet(r: CompiledRoute, res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    if (this.draining || req.getQuery()) return this.dispatch(res, req);
    const url = req.getUrl();
    const text = r.fast!(url);
    if (text === undefined) return this.dispatch(res, req);
    const requestId = `${this.idPrefix}-${(this.nextId++).toString(36)}`;
    // Still inside uWS's request handler: the socket is corked already.
    res.writeHeader('content-type', 'application/json');
    res.writeHeader('x-request-id', requestId);
    if (this.cors) for (const [k, v] of this.cors.headers(req.getHeader('origin')) ?? []) res.writeHeader(k, v);
    res.end(text);
    const ms = performance.now() - started;
    this.opts.observe?.('GET', r.pattern, 200, ms / 1000);
    this.accessLog('GET', url, 200, Math.round(ms * 1000) / 1000, requestId);
  }

  private dispatch(res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    const url = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const requestId = `${this.idPrefix}-${(this.nextId++).toString(36)}`;
    const state = { aborted: false, done: false, route: '(unmatched)', watched: false };
    // Read now: req is valid only until this handler returns, the answer may come later.
    const origin = this.cors ? req.getHeader('origin') : '';
    const corsHeaders = this.cors?.headers(origin) ?? null;
    /**
     * uWS needs an abort handler before the handler returns without answering; answers
     * given synchronously (the common read path) skip registering one.
     */
    const watchAbort = (): void => {
      if (state.watched) return;
      state.watched = true;
      res.onAborted(() => {
        state.aborted = true;
        this.finish(state);
      });
    };
    this.inFlight++;

    const send = (reply: Reply, close = false): void => {
      if (state.aborted || state.done) return;
      const text = reply.raw ? reply.raw.text : JSON.stringify(reply.body);
      res.cork(() => {
        res.writeStatus(statusLine(reply.status));
        res.writeHeader('content-type', reply.raw ? reply.raw.contentType : 'application/json');
        res.writeHeader('x-request-id', requestId);
        for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
        if (corsHeaders) for (const [k, v] of corsHeaders) res.writeHeader(k, v);
        res.end(text, close);
      });
      this.finish(state);
      const ms = performance.now() - started;
      this.opts.observe?.(method, state.route, reply.status, ms / 1000);
      this.accessLog(method, url, reply.status, Math.round(ms * 1000) / 1000, requestId);
    };
    let allow = 'GET, POST';
    const fail = (e: unknown, close = false): void => {
      const err = asNodeError(e);
      if (err.code === 'internal' && !(e instanceof NodeError)) this.log.error('handler bug', { path: url, error: e });
      const headers: Record<string, string> = {};
      if (err.code === 'unauthorized') headers['www-authenticate'] = 'Bearer';
      if (err.code === 'method_not_allowed') headers['allow'] = allow;
      send({ status: err.httpStatus, body: err.toJSON(), headers }, close);
    };

    if (this.draining) return fail(new NodeError('overloaded', 'node is shutting down'), true);

    const preflight = method === 'OPTIONS' && req.getHeader('access-control-request-method') !== '' ? this.cors?.preflight(origin) : null;
    if (preflight) {
      res.cork(() => {
        res.writeStatus(statusLine(204));
        res.writeHeader('x-request-id', requestId);
        for (const [k, v] of preflight) res.writeHeader(k, v);
        res.endWithoutBody();
      });
      this.finish(state);
      this.opts.observe?.(method, '(preflight)', 204, (performance.now() - started) / 1000);
      this.accessLog(method, url, 204, Math.round((performance.now() - started) * 1000) / 1000, requestId);
      return;
    }

    let parts: string[];
    try {
      parts = url.split('/').filter((s) => s.length > 0).map((s) => (s.includes('%') ? decodeURIComponent(s) : s));
    } catch {
      return fail(new NodeError('bad_request', 'path is not valid percent-encoded UTF-8'));
    }
    const m = this.match(method, parts);
    if (m === null) return fail(new NodeError('not_found', `no route ${method} ${url}`));
    if ('allow' in m) {
      allow = m.allow;
      return fail(new NodeError('method_not_allowed', `${method} is not allowed on ${url} (allowed: ${m.allow})`));
    }
    state.route = m.route.pattern;

    let query: URLSearchParams;
    try {
      query = rawQuery === '' ? EMPTY_QUERY : new URLSearchParams(rawQuery);
    } catch {
      return fail(new NodeError('bad_request', 'query string is malformed'));
    }
    // Headers are read here, still inside the uWS handler (req is valid only until it returns).
    const headers = { authorization: req.getHeader('authorization'), contentType: m.route.body ? req.getHeader('content-type') : '' };
    const ctx: RequestContext = { method, path: url, params: m.params, query, headers, body: null, requestId };
    const run = (): void => {
      let out: Reply | Promise<Reply>;
      try {
        out = m.route.handler(ctx);
      } catch (e) {
        return fail(e);
      }
      if (out instanceof Promise) {
        watchAbort();
        out.then((r) => send(r), (e) => fail(e));
      } else send(out);
    };

    if (!m.route.body) {
      // A body on a route that takes none is ignored, but never buffered.
      return run();
    }
    const contentLength = req.getHeader('content-length');
    if (contentLength && (!/^\d+$/.test(contentLength) || Number(contentLength) > MAX_BODY_BYTES)) {
      // Answered at once; uWS then skips the declared body without handing it to anyone
      // (nothing is buffered). The connection is not closed under the client: a close with
      // unread data sends a TCP reset, and the client would lose the 413.
      return fail(new NodeError('payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    watchAbort();
    res.onData((ab, isLast) => {
      if (state.done || state.aborted) return;
      total += ab.byteLength;
      if (total > MAX_BODY_BYTES) {
        // Answered as soon as the limit is crossed; the chunks still arriving are dropped
        // here (state.done) rather than buffered, for the reason above.
        chunks.length = 0;
        return fail(new NodeError('payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`));
      }
      chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) {
        ctx.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        run();
      }
    });
  }

  private isoMs = 0;
  private iso = '';
  private readonly accessProc: string;

  private accessLog(method: string, path: string, status: number, ms: number, requestId: string): void {
    const a = this.opts.accessSink;
    if (!a) {
      this.access.info('request', { method, path, status, ms, request_id: requestId });
      return;
    }
    if (!this.access.enabled('info')) return;
    const now = Date.now();
    if (now !== this.isoMs) {
      this.isoMs = now;
      this.iso = new Date(now).toISOString();
    }
    const m = method === 'GET' || method === 'POST' ? method : JSON.stringify(method).slice(1, -1);
    // Only the path can carry a secret (a client may put anything in it): it is the part scrubbed.
    const p = redact(PLAIN_PATH.test(path) ? path : JSON.stringify(path).slice(1, -1));
    a.sink(`{"ts":"${this.iso}","level":"info","target":"rest::access","proc":"${this.accessProc}","pid":${process.pid},"msg":"request","method":"${m}","path":"${p}","status":${status},"ms":${ms},"request_id":"${requestId}"}`);
  }

  private finish(state: { done: boolean }): void {
    if (state.done) return;
    state.done = true;
    this.inFlight--;
    if (this.inFlight === 0 && this.drainWaiters.length > 0) {
      for (const w of this.drainWaiters.splice(0)) w();
    }
  }
}

/** Parses a JSON request body into an object, or throws bad_request naming the problem. */
export function jsonBody(ctx: RequestContext): Record<string, unknown> {
  if (!ctx.body || ctx.body.length === 0) throw new NodeError('bad_request', 'request body is empty; expected a JSON object');
  let v: unknown;
  try {
    v = JSON.parse(ctx.body.toString('utf8'));
  } catch {
    throw new NodeError('bad_request', 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new NodeError('bad_request', 'request body must be a JSON object');
  return v as Record<string, unknown>;
}

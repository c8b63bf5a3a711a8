/**
 * One HTTP exchange for http.ts, in Node: node:http(s) on keep-alive agents, the body sent
 * with its headers in one write. fetch (undici) costs a submitter a web stream, an
 * AbortSignal and a header list per request and writes the body apart from the headers,
 * a quarter of its CPU per call with two requests a call (docs/PERFORMANCE.md, "Client").
 * transport.browser.ts takes this file's place in the browser bundle (a page has fetch
 * only).
 */
import * as http from 'node:http';
import * as https from 'node:https';

export interface Exchange {
  method: string;
  body?: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface Answer {
  status: number;
  text: string;
  contentType: string;
  retryAfter: string | null;
  /** A header of the answer (lowercase name), null when absent. */
  header(name: string): string | null;
}

/** Why there was no answer: no answer in time, or the connection's error code (ECONNREFUSED, ...). */
export class NoAnswer extends Error {
  constructor(
    readonly timedOut: boolean,
    readonly code: string,
    /** The request went out on a connection kept from an earlier one. */
    readonly reusedSocket = false,
  ) {
    super(code);
  }
}

/**
 * Connections kept open between requests (a submitter's calls reuse them); as many at once
 * as requests in flight. An idle connection is closed after IDLE_SOCKET_MS, or sooner when
 * the server's Keep-Alive header says it closes sooner (Node applies the hint only when the
 * agent has a timeout of its own): under Node's own servers' 5 s, so a connection is not
 * reused as the server closes it.
 */
const IDLE_SOCKET_MS = 4_000;
const agents = { 'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }), 'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }) };

export async function exchange(url: string, x: Exchange): Promise<Answer> {
  try {
    return await exchangeOnce(url, x);
  } catch (e) {
    // A kept connection the server closed as a read went out: asked again once on a new
    // one, as Node's documentation advises. A POST is not repeated here: whether it
    // arrived is for its caller to say (the submitter posts again and counts an "already"
    // broadcast as sent; SvcClient says the anchor may be out).
    if (e instanceof NoAnswer && e.reusedSocket && e.code === 'ECONNRESET' && x.method === 'GET') return exchangeOnce(url, x);
    throw e;
  }
}

function exchangeOnce(url: string, x: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new NoAnswer(false, 'bad URL'));
      return;
    }
    const secure = u.protocol === 'https:';
    if (!secure && u.protocol !== 'http:') {
      reject(new NoAnswer(false, `unsupported protocol ${u.protocol}`));
      return;
    }
    const body = x.body === undefined ? undefined : Buffer.from(x.body);
    const headers: Record<string, string | number> = { ...x.headers };
    if (body) headers['content-length'] = body.length;
    const req = (secure ? https : http).request(u, { method: x.method, headers, agent: agents[u.protocol as 'http:' | 'https:'] }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const retry = res.headers['retry-after'];
        const header = (name: string): string | null => {
          const v = res.headers[name];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        };
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), contentType: res.headers['content-type'] ?? '', retryAfter: retry === undefined ? null : retry, header });
      });
      res.on('error', fail);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, x.timeoutMs);
    function fail(e: Error & { code?: string }): void {
      clearTimeout(timer);
      reject(new NoAnswer(timedOut, e.code ?? e.message, req.reusedSocket));
    }
    req.on('error', fail);
    req.end(body);
  });
}

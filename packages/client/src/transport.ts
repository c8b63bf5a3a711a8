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
  ) {
    super(code);
  }
}

/** Connections kept open between requests (a submitter's calls reuse them); as many at once as requests in flight. */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

export function exchange(url: string, x: Exchange): Promise<Answer> {
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
      reject(new NoAnswer(timedOut, e.code ?? e.message));
    }
    req.on('error', fail);
    req.end(body);
  });
}

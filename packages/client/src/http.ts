/** One fetch wrapper: timeouts, unreachable endpoints and error bodies become ClientError. */
import { ClientError } from './errors.js';

export interface HttpOptions {
  /** Per-request timeout in ms (default 15 s: Esplora and the node answer in well under a second). */
  timeoutMs?: number;
  /**
   * Told before the chain-data endpoint's 429 is waited out (esplora.ts): one line saying
   * what was refused and how long the wait is (the CLI prints it on stderr).
   */
  onWait?: (line: string, wait: { status: number; path: string; seconds: number }) => void;
}

export interface HttpAnswer {
  status: number;
  text: string;
  contentType: string;
  /** The Retry-After header, when the answer has one. */
  retryAfter: string | null;
}

/** Running in a web page (the browser bundle), where cross-origin reads need the node's CORS. */
const IN_PAGE = typeof (globalThis as { document?: unknown }).document !== 'undefined';

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

export async function request(
  url: string,
  init: { method?: string; body?: string; contentType?: string; what: string; headers?: Record<string, string> },
  opts: HttpOptions = {},
): Promise<HttpAnswer> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      body: init.body,
      headers: init.body !== undefined ? { 'content-type': init.contentType ?? 'application/json', ...init.headers } : init.headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    const why = err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : err.cause?.code ?? err.message;
    // A page's fetch says only "Failed to fetch" for a refused connection and for a node
    // that does not allow the page's origin alike; the second is the one a page can fix.
    const page = IN_PAGE && err.name === 'TypeError' ? ` (or the node does not allow this page's origin ${String((globalThis as { location?: { origin?: string } }).location?.origin)}: its cors_origins)` : '';
    throw new ClientError('unreachable', `${init.what} unreachable at ${url}: ${why}${page}`);
  }
  const text = await res.text();
  return { status: res.status, text, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after') };
}

export function parseJson(a: HttpAnswer, what: string): unknown {
  try {
    return JSON.parse(a.text);
  } catch {
    throw new ClientError('node_error', `${what} answered ${a.status} with a body that is not JSON`, a.status);
  }
}

/** Keeps error text to one short line. */
export function oneLine(s: string, max = 300): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

/** Parses Retry-After (delta seconds or HTTP date) into milliseconds; null when absent/garbled. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | null {
  if (v === null) return null;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : Math.max(0, t - now);
}

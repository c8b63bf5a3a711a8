/** One HTTP exchange for http.ts, in a web page: fetch (transport.ts is Node's). */
import type { Answer, Exchange } from './transport.js';

export type { Answer, Exchange } from './transport.js';

/** Why there was no answer: no answer in time, or the error's code or message. */
export class NoAnswer extends Error {
  constructor(
    readonly timedOut: boolean,
    readonly code: string,
  ) {
    super(code);
  }
}

export async function exchange(url: string, x: Exchange): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, { method: x.method, body: x.body, headers: x.headers, signal: AbortSignal.timeout(x.timeoutMs) });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    throw new NoAnswer(err.name === 'TimeoutError', err.cause?.code ?? err.message);
  }
  const text = await res.text();
  return { status: res.status, text, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'), header: (name) => res.headers.get(name) };
}

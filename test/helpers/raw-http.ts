/**
 * Raw HTTP/1.1 over a TCP socket, for requests fetch() refuses to send (odd methods, header
 * names, duplicate headers, trickled or truncated bodies, pipelined garbage), and the RSS of
 * a process read from /proc.
 */
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses every complete response at the start of `buf`; returns them and the rest. */
export function parseResponses(buf: Buffer, headOnly = false): { answers: RawAnswer[]; rest: Buffer } {
  const answers: RawAnswer[] = [];
  let b = buf;
  for (;;) {
    const end = b.indexOf('\r\n\r\n');
    if (end < 0) break;
    const head = b.subarray(0, end).toString('latin1');
    const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
    if (!m) break;
    const headers: Record<string, string> = {};
    for (const line of head.split('\r\n').slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const len = headOnly ? 0 : Number(headers['content-length'] ?? 0);
    if (b.length < end + 4 + len) break;
    answers.push({ status: Number(m[1]), headers, body: b.subarray(end + 4, end + 4 + len).toString('utf8') });
    b = b.subarray(end + 4 + len);
  }
  return { answers, rest: b };
}

export interface RawOptions {
  /** Resolve once this many responses arrived (default 1). */
  expect?: number;
  /** Give up (resolve with what arrived) after this long. */
  timeoutMs?: number;
  headOnly?: boolean;
  /** Writes the request itself (default: writes `data` at once). */
  write?: (s: Socket) => void;
}

/**
 * Sends `data` on a fresh connection; resolves with the responses parsed, whether the server
 * closed the connection, and the raw bytes received.
 */
export function rawRequest(port: number, data: Buffer | string, o: RawOptions = {}): Promise<{ answers: RawAnswer[]; closed: boolean; raw: Buffer }> {
  const expect = o.expect ?? 1;
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = Buffer.alloc(0);
    let settled = false;
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ answers: parseResponses(got, o.headOnly).answers, closed, raw: got });
    };
    const timer = setTimeout(() => done(false), o.timeoutMs ?? 5_000);
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (parseResponses(got, o.headOnly).answers.length >= expect) done(false);
    });
    s.on('error', () => undefined);
    s.on('close', () => done(true));
    s.on('connect', () => (o.write ? o.write(s) : s.write(data)));
  });
}

/** Resident set size of a process in KiB (VmRSS in /proc/<pid>/status). */
export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

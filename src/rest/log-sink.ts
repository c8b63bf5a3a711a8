/**
 * A batching log sink for the REST process: the access log writes one line per request,
 * and one write(2) per line costs more than the request itself. Lines are queued and
 * written together once per event-loop turn (or at once past 256 KiB); at exit whatever
 * is queued is written synchronously, so a line is late by at most one turn and not lost
 * on exit (process.exit, an uncaught exception).
 *
 * Bounded when stdout's reader stalls (a stuck log shipper, a paused `docker logs`
 * pipe): Node's stdout to a pipe or socket is asynchronous on Linux and buffers whatever
 * it cannot write, without limit (measured: 20 MB in 3 s of a busy front). Once that
 * buffer holds STALL_BYTES, access-log lines are dropped and counted instead of queued;
 * other log lines (warnings, errors, lifecycle) are always kept, being few. When stdout
 * drains, one warning line gives the number dropped.
 */
import { writeSync } from 'node:fs';
import type { Writable } from 'node:stream';

const FLUSH_BYTES = 256 * 1024;

/**
 * Bytes buffered in the stdout stream beyond which access-log lines are dropped: about
 * 20,000 lines, a second of the front's peak rate, and small next to its ~65 MiB RSS.
 */
export const STALL_BYTES = 4 * 1024 * 1024;

export interface BatchingSink {
  /** Any log line: always written. */
  sink: (line: string) => void;
  /** An access-log line: dropped (and counted) while stdout is backed up. */
  access: (line: string) => void;
  flush: () => void;
  /** Access-log lines dropped since the last warning. */
  readonly dropped: number;
}

export interface SinkOptions {
  /** The stream to write to (tests); default process.stdout, or process.stderr for fd 2. */
  stream?: Writable;
  stallBytes?: number;
  /** The warning line, given the count (default: a JSON log line like the logger's). */
  warning?: (dropped: number) => string;
}

function defaultWarning(dropped: number): string {
  return JSON.stringify({
    ts: new Date().toISOString(),
    level: 'warn',
    target: 'rest::access',
    proc: 'rest',
    pid: process.pid,
    msg: 'access log lines dropped while stdout was not being read',
    dropped,
  });
}

export function batchingSink(fd = 1, o: SinkOptions = {}): BatchingSink {
  const stream = o.stream ?? (fd === 2 ? process.stderr : process.stdout);
  const stallBytes = o.stallBytes ?? STALL_BYTES;
  const warning = o.warning ?? defaultWarning;
  let queue: string[] = [];
  let bytes = 0;
  let scheduled = false;
  let dropped = 0;
  let waitingForDrain = false;
  const take = (): string | null => {
    scheduled = false;
    if (queue.length === 0) return null;
    const text = queue.join('\n') + '\n';
    queue = [];
    bytes = 0;
    return text;
  };
  // Normal flushes go through the stream (it queues on a slow reader instead of failing);
  // at exit the stream cannot write any more, so the rest is written synchronously.
  const flush = (): void => {
    const text = take();
    if (text !== null) stream.write(text);
  };
  const onDrain = (): void => {
    waitingForDrain = false;
    if (dropped === 0) return;
    const n = dropped;
    dropped = 0;
    push(warning(n));
  };
  const backedUp = (): boolean => {
    if (stream.writableLength < stallBytes) return false;
    if (!waitingForDrain) {
      waitingForDrain = true;
      stream.once('drain', onDrain);
    }
    return true;
  };
  const push = (line: string): void => {
    queue.push(line);
    bytes += line.length + 1;
    if (bytes >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  process.on('exit', () => {
    const text = take();
    if (text === null && dropped === 0) return;
    try {
      writeSync(fd, (text ?? '') + (dropped > 0 ? warning(dropped) + '\n' : ''));
    } catch {
      /* stdout gone: nothing left to do at exit */
    }
  });
  return {
    flush,
    sink: push,
    access: (line: string) => {
      if (backedUp()) dropped++;
      else push(line);
    },
    get dropped() {
      return dropped;
    },
  };
}

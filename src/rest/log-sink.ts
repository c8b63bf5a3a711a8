/**
 * A batching log sink for the REST process: the access log writes one line per request,
 * and one write(2) per line costs more than the request itself. Lines are queued and
 * written together once per event-loop turn (or at once past 256 KiB); at exit whatever
 * is queued is written synchronously, so a line is late by at most one turn and not lost
 * on exit (process.exit, an uncaught exception).
 */
import { writeSync } from 'node:fs';

const FLUSH_BYTES = 256 * 1024;

export function batchingSink(fd = 1): { sink: (line: string) => void; flush: () => void } {
  let queue: string[] = [];
  let bytes = 0;
  let scheduled = false;
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
  const stream = fd === 2 ? process.stderr : process.stdout;
  const flush = (): void => {
    const text = take();
    if (text !== null) stream.write(text);
  };
  process.on('exit', () => {
    const text = take();
    if (text === null) return;
    try {
      writeSync(fd, text);
    } catch {
      /* stdout gone: nothing left to do at exit */
    }
  });
  return {
    flush,
    sink: (line: string) => {
      queue.push(line);
      bytes += line.length + 1;
      if (bytes >= FLUSH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}

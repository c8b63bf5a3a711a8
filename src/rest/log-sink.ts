/**
 * A batching log sink for the REST process: the access log writes one line per request,
 * and one write(2) per line costs more than the request itself. Lines are queued and
 * written together once per event-loop turn (or at once past 256 KiB); at exit whatever
 * is queued is written synchronously, so a line is late by at most one turn, never lost
 * on a normal exit or an uncaught exception.
 */
import { writeSync } from 'node:fs';

const FLUSH_BYTES = 256 * 1024;

export function batchingSink(fd = 1): { sink: (line: string) => void; flush: () => void } {
  let queue: string[] = [];
  let bytes = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0) return;
    const text = queue.join('\n') + '\n';
    queue = [];
    bytes = 0;
    try {
      writeSync(fd, text);
    } catch {
      /* stdout gone (EPIPE/EAGAIN): drop the batch rather than stop serving */
    }
  };
  process.on('exit', flush);
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

/**
 * A closed output ends a command quietly, as it ends a Unix tool: `compile X.svc | head -1`,
 * `svc --help | true`, `svc events ID --follow | head -1`, `npm run devnet | head`. Node
 * ignores SIGPIPE, so a write to a pipe whose reader is gone fails with EPIPE, raised as an
 * 'error' event on the stream, and with no listener as an uncaught exception (a stack
 * trace). Every entry point (svc, compile, the devnet) installs this first; it lives beside
 * them all, not in one tool's folder, so no tool imports another's.
 */
import { fstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * The exit status then: 141 = 128 + SIGPIPE, what a shell reports for a Unix tool ended by
 * the same closed pipe (`yes | head -1` under `set -o pipefail`), so scripts can tell "the
 * reader left" from success (0) and from a failure of the command (1 to 3).
 */
export const CLOSED_OUTPUT_EXIT = 141;

/**
 * On EPIPE (or a write after that) on stdout or stderr: run `cleanup` (the devnet stops its
 * node and chain), then exit CLOSED_OUTPUT_EXIT without a word (there is nowhere to say it).
 * Any other stream error is rethrown as before.
 */
export function endQuietlyOnClosedOutput(cleanup?: () => Promise<unknown> | unknown): void {
  let ending = false;
  const onError = (e: NodeJS.ErrnoException): void => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    if (ending) return;
    ending = true;
    void Promise.resolve()
      .then(cleanup)
      .catch(() => undefined)
      .finally(() => process.exit(CLOSED_OUTPUT_EXIT));
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
}

/**
 * How often a long-running command looks whether its output's reader is still there
 * (watchOutputReader): a closed reader ends it within half a second, for a few readlinks.
 */
const READER_CHECK_MS = 500;

/**
 * A long-running command that writes only when something happens (`svc events --follow`)
 * learns of a closed output only at its next write, which may never come: `svc events ID
 * --follow | head -1` would wait for the next event after `head` has left. On Linux, when
 * stdout is an anonymous pipe, this looks every READER_CHECK_MS whether any process still
 * holds its read end (/proc/PID/fd and fdinfo), and when none does, ends the process as
 * the first failed write would (the 'error' handler of endQuietlyOnClosedOutput: cleanup,
 * exit 141). It never concludes from what it cannot see: not on another system, not for a
 * named FIFO (its reader may be anyone), and not while a process of this session hides its
 * descriptors (another user's, e.g. `| sudo tee`): then the next write says it, as before.
 */
export function watchOutputReader(): void {
  if (process.platform !== 'linux') return;
  let pipe: string;
  try {
    if (!fstatSync(1).isFIFO()) return;
    pipe = readlinkSync('/proc/self/fd/1');
  } catch {
    return;
  }
  if (!/^pipe:\[\d+\]$/.test(pipe)) return;
  let held = readersOf(pipe);
  if (held.readers.length === 0) return; // none seen even now: nothing to watch
  const timer = setInterval(() => {
    held.readers = held.readers.filter((fd) => holds(fd, pipe));
    if (held.readers.length) return;
    held = readersOf(pipe);
    if (held.readers.length || held.unseen) return;
    clearInterval(timer);
    process.stdout.emit('error', Object.assign(new Error('every reader of the output is gone'), { code: 'EPIPE' }));
  }, READER_CHECK_MS);
  timer.unref();
}

/** Whether /proc/PID/fd/N (`fd`) is still `pipe`. */
function holds(fd: string, pipe: string): boolean {
  try {
    return readlinkSync(fd) === pipe;
  } catch {
    return false;
  }
}

/**
 * The descriptors of other processes open for reading on `pipe`; `unseen` when a process
 * of this session hides its descriptors (it may hold one).
 */
function readersOf(pipe: string): { readers: string[]; unseen: boolean } {
  const readers: string[] = [];
  let unseen = false;
  const session = sessionOf('self');
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid);
  } catch {
    return { readers, unseen: true };
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      if (session === null || sessionOf(pid) === session) unseen = true;
      continue;
    }
    for (const fd of fds) {
      const path = `/proc/${pid}/fd/${fd}`;
      if (!holds(path, pipe)) continue;
      try {
        const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
        // O_ACCMODE: 0 read-only, 2 read-write (a reader too), 1 write-only
        if (!flags || (parseInt(flags[1]!, 8) & 3) !== 1) readers.push(path);
      } catch {
        readers.push(path); // gone or hidden meanwhile: counted as a reader, looked at again next time
      }
    }
  }
  return { readers, unseen };
}

/** The session id of a process (/proc/PID/stat's sixth field), null when unreadable. */
function sessionOf(pid: string): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3] ?? null;
  } catch {
    return null;
  }
}

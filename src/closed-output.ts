/**
 * A closed output ends a command quietly, as it ends a Unix tool: `compile X.svc | head -1`,
 * `svc --help | true`, `svc events ID --follow | head -1`, `npm run devnet | head`. Node
 * ignores SIGPIPE, so a write to a pipe whose reader is gone fails with EPIPE, raised as an
 * 'error' event on the stream, and with no listener as an uncaught exception (a stack
 * trace). Every entry point (svc, compile, the devnet) installs this first; it lives beside
 * them all, not in one tool's folder, so no tool imports another's.
 */

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

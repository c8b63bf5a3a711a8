#!/usr/bin/env node
/**
 * svc: command-line client of a validator node (deploy, call, simulate, status, read,
 * events, devnet funding) and contract test runner (svc test).
 * Run `svc --help`. Exit codes: 0 ok; 1 runtime failure (endpoint unreachable or
 * refusing, insufficient funds, a contract that does not compile); 2 usage error (bad
 * argument, bad key, unknown function, a fee above the sanity bound, malformed test
 * file); 3 `call --wait` ended in failed, invalid or dropped, `simulate` failed, or a
 * `svc test` test failed; 141 the output was closed (output.ts).
 */
import { run, errorOf, interruptReport } from './run.js';
import { endQuietlyOnClosedOutput, watchOutputReader } from '../closed-output.js';

async function main(): Promise<void> {
  endQuietlyOnClosedOutput();
  const argv = process.argv.slice(2);
  if (argv[0] === 'sink') return sink(argv.slice(1));
  const json = argv.includes('--json');
  try {
    // Ctrl-C ends a streaming command (events --follow) cleanly; any other command exits
    // 130 at once, a deploy or call first saying what it broadcast (run.ts interruptReport).
    const stop = new AbortController();
    if (argv.includes('--follow')) {
      process.once('SIGINT', () => stop.abort());
      // it may write nothing for hours: a reader that left (`| head -1`) ends it now
      watchOutputReader();
    } else {
      process.once('SIGINT', () => {
        const r = interruptReport();
        if (r) process.stdout.write(json ? `${JSON.stringify(r.json)}\n` : `${r.text.join('\n')}\n`);
        process.exit(130);
      });
    }
    const out = await run(argv, process.env, { write: (l) => void process.stdout.write(`${l}\n`), signal: stop.signal });
    if (!out.streamed) process.stdout.write(json ? `${JSON.stringify(out.json)}\n` : `${out.text.join('\n')}\n`);
    process.exitCode = out.exit ?? 0;
  } catch (e) {
    const err = errorOf(e);
    const line = err.message.replace(/\s+/g, ' ').trim();
    const body = { code: err.code, message: line, ...(err.txid ? { txid: err.txid } : {}) };
    process.stderr.write(json ? `${JSON.stringify({ error: body })}\n` : `svc: ${err.code}: ${line}\n`);
    process.exitCode = err.exit;
  }
}

/** `svc sink postgres`: long-running (src/sink/); stops on SIGINT or SIGTERM. */
async function sink(argv: string[]): Promise<void> {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const { runSink } = await import('../sink/cli.js');
  try {
    await runSink(argv, process.env, (l) => void process.stdout.write(`${l}\n`), stop.signal);
  } catch (e) {
    const err = errorOf(e);
    process.stderr.write(`svc sink: ${err.code}: ${err.message.replace(/\s+/g, ' ').trim()}\n`);
    process.exitCode = err.exit;
  }
}

await main();

#!/usr/bin/env node
/**
 * svc: command-line client of a validator node (deploy, call, status, read, events).
 * Run `svc --help`. Exit codes: 0 ok; 1 runtime failure (endpoint unreachable or
 * refusing, insufficient funds); 2 usage error (bad argument, bad key, unknown function);
 * 3 `call --wait` ended in failed, invalid or dropped.
 */
import { run, errorOf } from './run.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  try {
    // Ctrl-C ends a streaming command (events --follow) cleanly.
    const stop = new AbortController();
    if (argv.includes('--follow')) process.once('SIGINT', () => stop.abort());
    const out = await run(argv, process.env, { write: (l) => void process.stdout.write(`${l}\n`), signal: stop.signal });
    if (!out.streamed) process.stdout.write(json ? `${JSON.stringify(out.json)}\n` : `${out.text.join('\n')}\n`);
    process.exitCode = out.exit ?? 0;
  } catch (e) {
    const err = errorOf(e);
    const line = err.message.replace(/\s+/g, ' ').trim();
    process.stderr.write(json ? `${JSON.stringify({ error: { code: err.code, message: line } })}\n` : `svc: ${err.code}: ${line}\n`);
    process.exitCode = err.exit;
  }
}

await main();

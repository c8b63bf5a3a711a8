/** Runs a command whose stdout reader is gone before it writes (the entry points' closed-output tests). */
import { spawn } from 'node:child_process';
import { repoRoot } from './paths.js';

/** Runs `args` with a stdout whose reader is gone before the process writes: its first write fails with EPIPE. */
export function withClosedStdout(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; signal: string | null; stderr: string; pid: number }> {
  const p = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  p.stdout!.destroy();
  let stderr = '';
  p.stderr!.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
  return new Promise((resolve) => p.once('close', (code, signal) => resolve({ code, signal, stderr, pid: p.pid! })));
}

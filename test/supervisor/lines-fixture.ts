/**
 * Fixture of test/supervisor/lines.test.ts, two roles in one file (imported without
 * LINES_ROLE, it only exports the expected lines):
 * - run with LINES_ROLE=harness: the real Supervisor, its three children replaced by this
 *   file as a child; SIGTERM stops it as src/main.ts does;
 * - run as a child (forked by the Supervisor): answers the init, then writes
 *   LINES_PER_CHILD JSON lines of seeded sizes (many over 4 KiB, one over the supervisor's
 *   line bound), each in one write, then a last `done` line, and waits for shutdown.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configureLogging } from '../../src/log.js';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { onShutdown, toSupervisor } from '../../src/supervisor/child.js';
import type { Role, SupervisorToChild } from '../../src/messages/supervisor.js';

export const LINES_PER_CHILD = 120;
/** Index of the line longer than the supervisor's bound (MAX_LINE_BYTES) in every child. */
export const LONG_LINE_AT = 57;
export const LONG_LINE_BYTES = 3 * 1024 * 1024;

/** Deterministic pad sizes per role: mostly small lines, a third between 4 KiB and 200 KiB. */
export function padSizes(role: string): number[] {
  let x = 0x9e3779b9 ^ [...role].reduce((a, c) => a * 31 + c.charCodeAt(0), 7);
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  return Array.from({ length: LINES_PER_CHILD }, (_, i) => (i === LONG_LINE_AT ? LONG_LINE_BYTES : next() < 0.33 ? 4096 + Math.floor(next() * 200_000) : 20 + Math.floor(next() * 3000)));
}

export function line(role: string, i: number, pad: number): string {
  return JSON.stringify({ child: role, i, pad: String.fromCharCode(97 + (i % 26)).repeat(pad) }) + '\n';
}

if (process.env['LINES_ROLE'] === 'harness') {
  configureLogging({ process: 'supervisor' });
  const self = new URL(import.meta.url);
  // The children are this file too; fork passes them this environment.
  process.env['LINES_ROLE'] = 'child';
  const s = new Supervisor({ nodeId: 'lines-test' } as never, { seed: new Uint8Array(32), publicKeyHex: '', stable: false } as never, { core: self, rest: self, gossip: self });
  process.once('SIGTERM', () => {
    void s.stop().then(() => process.exit(0));
  });
  await s.start();
} else if (process.env['LINES_ROLE'] === 'child') {
  const init = await new Promise<Extract<SupervisorToChild, { type: 'init' }>>((resolve) => process.on('message', (m: SupervisorToChild) => m.type === 'init' && resolve(m)));
  const role: Role = init.role;
  onShutdown(async () => {
    // Lines written while draining (the supervisor may be gone), then a mark that the
    // drain finished (lines.test.ts, the supervisor killed).
    for (let i = 0; i < 20; i++) process.stdout.write(JSON.stringify({ child: role, draining: i }) + '\n');
    await new Promise((r) => setTimeout(r, 20));
    const dir = process.env['LINES_MARK_DIR'];
    if (dir) writeFileSync(join(dir, role), 'drained');
  });
  toSupervisor(role === 'core' ? { type: 'ready', role } : { type: 'listening', role, address: '127.0.0.1', port: 0 });
  const sizes = padSizes(role);
  // As fast as the pipe takes them: each line one write, the next written when the
  // stream asks for more, so the writes of the three children overlap in time.
  for (let i = 0; i < sizes.length; i++) {
    if (!process.stdout.write(line(role, i, sizes[i]!))) await new Promise((r) => process.stdout.once('drain', r));
  }
  process.stdout.write(JSON.stringify({ child: role, done: true }) + '\n');
}

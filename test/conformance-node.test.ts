/**
 * The black-box node runner (conformance/node/run.mjs, conformance/README.md "The node
 * runner") passes every check against the built node, and says so in TAP; a node command
 * that never answers is a bail-out (exit 2), never a pass. About 25 s of wall time on this
 * machine: the devnet chain and three node processes, seven scenarios.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './helpers/paths.js';

const runner = join(repoRoot, 'conformance', 'node', 'run.mjs');

function run(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [runner, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    p.stdout.on('data', (d: Buffer) => (stdout += String(d)));
    p.stderr.resume();
    // SIGTERM: the runner stops the processes it started before it exits.
    const t = setTimeout(() => p.kill('SIGTERM'), timeoutMs);
    p.once('exit', (status) => {
      clearTimeout(t);
      resolve({ status, stdout });
    });
  });
}

test('the node runner passes every scenario against the built node', async () => {
  const r = await run([], 240_000);
  const failed = r.stdout.split('\n').filter((l) => l.startsWith('not ok') || l.startsWith('Bail out!') || l.startsWith('  '));
  assert.deepEqual(failed, [], r.stdout.slice(-4000));
  assert.equal(r.status, 0);
  for (const s of ['deploy then call', 'reorg of depth 1', 'reorg of depth 6', 'failed and refused calls', 'drop', 'late joiner', 'restart']) assert.ok(r.stdout.includes(`# ${s}\n`), `scenario ${s} played`);
  const summary = /^# conformance:node: (\d+) passed, 0 failed of (\d+) checks in 7 scenarios/m.exec(r.stdout);
  assert.ok(summary && summary[1] === summary[2] && Number(summary[1]) >= 98, r.stdout.slice(-500));
});

test('a node command that never answers is a bail-out, not a pass', async () => {
  const r = await run(['--node-cmd', 'exit 3'], 120_000);
  assert.equal(r.status, 2, r.stdout);
  assert.match(r.stdout, /^Bail out! cannot start: node-A exited/m);
  assert.match(r.stdout, /^# conformance:node: 0 passed, 0 failed of 0 checks in 0 scenarios/m);
});

/**
 * A child process of the supervisor never outlives it: the IPC channel closes when the
 * supervisor is gone, even by SIGKILL, and the child exits, also while it still waits for
 * its init message (src/supervisor/child.ts). The stand-in parent below only forks the
 * real REST entry and waits; the node's own stop path is in test/node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('a child waiting for its init exits when its supervisor is killed with SIGKILL', async () => {
  const restMain = join(repoRoot, 'dist', 'src', 'rest', 'main.js');
  const standIn = spawn(
    process.execPath,
    ['--input-type=module', '-e', `import { fork } from 'node:child_process'; const c = fork(${JSON.stringify(restMain)}, [], { stdio: 'ignore' }); c.once('spawn', () => console.log(c.pid)); setInterval(() => {}, 1e9);`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const childPid = await new Promise<number>((resolve) => {
    let out = '';
    standIn.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
  });
  assert.ok(alive(childPid));
  standIn.kill('SIGKILL');
  const deadline = Date.now() + 20_000;
  while (alive(childPid)) {
    assert.ok(Date.now() < deadline, `child ${childPid} still runs 20 s after its supervisor was killed`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

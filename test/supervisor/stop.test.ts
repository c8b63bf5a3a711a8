/**
 * The supervisor's stop: clean only when every child stopped by itself with
 * exit code 0; a child killed at the deadline, or one whose own stop failed, makes the
 * stop unclean (src/main.ts exits 1 then). A stop that reaches children while they are
 * still starting is carried out once they can drain, not ignored until the deadline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { loadConfig } from '../../src/config/options.js';
import { makeIdentity } from '../../src/gossip/identity.js';
import { repoRoot } from '../helpers/paths.js';

/** The supervisor's budget for its children (SHUTDOWN_GRACE_MS). */
const GRACE_MS = 9_000;

async function stopWith(mode: string): Promise<{ clean: boolean; ms: number }> {
  process.env['SVC_STOP_FIXTURE'] = mode;
  const config = loadConfig({ path: join(repoRoot, 'test/fixtures/empty-config.toml'), env: { SVC_REST_ADDRESS: '127.0.0.1:0', SVC_BIND_ADDRESS: '127.0.0.1:0' } });
  const fixture = new URL('./stop-fixture.js', import.meta.url);
  const supervisor = new Supervisor(config, makeIdentity(null), { core: fixture, rest: fixture, gossip: fixture });
  await supervisor.start();
  const t0 = performance.now();
  const clean = await supervisor.stop();
  return { clean, ms: performance.now() - t0 };
}

test('a stop that comes while the children start is carried out as soon as they can drain: clean, long before the deadline', async () => {
  const r = await stopWith('late');
  assert.equal(r.clean, true);
  assert.ok(r.ms < GRACE_MS / 3, `stopped in ${Math.round(r.ms)} ms`);
});

test('a child whose own stop fails: the stop is unclean', async () => {
  const r = await stopWith('fail');
  assert.equal(r.clean, false);
  assert.ok(r.ms < GRACE_MS / 3, `reported at once (${Math.round(r.ms)} ms), not at the deadline`);
});

test('a child that does not stop in time is killed at the deadline: the stop is unclean', { timeout: 30_000 }, async () => {
  const r = await stopWith('hang');
  assert.equal(r.clean, false);
  assert.ok(r.ms >= GRACE_MS - 100 && r.ms < GRACE_MS + 2_000, `killed at the deadline (${Math.round(r.ms)} ms)`);
});

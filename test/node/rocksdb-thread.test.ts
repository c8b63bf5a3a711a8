/**
 * The writer thread is the one owner of the database (docs/ARCHITECTURE.md): nothing the
 * core's main thread, the REST front, the gossip process or the supervisor imports loads
 * a storage binding, neither the current one nor the earlier one (which registered in one
 * thread per process and is kept only for `npm run migrate-store`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

/**
 * The module is imported for real: a failed import exits non-zero, execFileSync throws
 * with the child's stderr, and the test fails (an import that never ran would load
 * nothing and prove nothing).
 */
for (const entry of ['dist/src/core/core.js', 'dist/src/rest/routes.js', 'dist/src/gossip/service.js', 'dist/src/supervisor/supervisor.js']) {
  test(`importing ${entry} loads no storage binding`, () => {
    const script = `
      import { createRequire } from 'node:module';
      const req = createRequire(import.meta.url);
      await import(${JSON.stringify(join(repoRoot, entry))});
      const loaded = Object.keys(req.cache).filter((k) => k.includes('/node_modules/rocksdb/') || k.includes('/node_modules/@nxtedition/rocksdb/'));
      process.stdout.write(JSON.stringify(loaded));
      process.exit(0);`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, SVC_CONFIG: join(repoRoot, 'test/fixtures/empty-config.toml')}, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.deepEqual(JSON.parse(out), []);
  });
}

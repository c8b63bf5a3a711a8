/**
 * A closed stdout ends every entry point quietly, as it ends a Unix tool (`svc --help |
 * true`, `compile X.svc | head -1`): exit 141 (128 + SIGPIPE), nothing on stderr, no stack
 * trace. (`svc events --follow` is in cli-devnet.test.ts, against a real node; the devnet
 * in test/devnet/devnet-main.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import { CLOSED_OUTPUT_EXIT } from '../../src/closed-output.js';
import { withClosedStdout } from '../helpers/closed-stdout.js';

test('svc, svc test and compile end quietly with 141 when stdout is closed', async () => {
  const svc = join(repoRoot, 'dist', 'src', 'cli', 'svc.js');
  const compile = join(repoRoot, 'dist', 'src', 'compiler', 'cli.js');
  const runs = await Promise.all([
    withClosedStdout([svc, '--help']),
    withClosedStdout([svc, 'test', 'examples/token.svc']),
    withClosedStdout([svc, 'keygen', '--json']),
    withClosedStdout([compile, 'examples/token.svc']),
    withClosedStdout([compile, 'examples/market.svc', '--json']),
  ]);
  for (const r of runs) {
    assert.deepEqual([r.code, r.signal, r.stderr], [CLOSED_OUTPUT_EXIT, null, '']);
  }
});

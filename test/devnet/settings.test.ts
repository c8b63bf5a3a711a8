/** `npm run devnet`'s settings (src/devnet/settings.ts): what its node is given. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devnetSettings } from '../../src/devnet/settings.js';
import { repoRoot } from '../helpers/paths.js';

test('the node\'s budget and block check interval set for npm run devnet reach its node; unset, the devnet\'s own', () => {
  const set = devnetSettings({ SVC_ESPLORA_REQUESTS_PER_HOUR: '1234', SVC_ESPLORA_BURST: '7', SVC_ESPLORA_MAX_CONCURRENT: '3', SVC_BLOCK_CHECK_INTERVAL_S: '5' }, repoRoot).nodeEnv('http://127.0.0.1:1', '/tmp/db');
  assert.deepEqual(
    [set['SVC_ESPLORA_REQUESTS_PER_HOUR'], set['SVC_ESPLORA_BURST'], set['SVC_ESPLORA_MAX_CONCURRENT'], set['SVC_BLOCK_CHECK_INTERVAL_S']],
    ['1234', '7', '3', '5'],
  );
  const unset = devnetSettings({}, repoRoot).nodeEnv('http://127.0.0.1:1', '/tmp/db');
  assert.deepEqual(
    [unset['SVC_ESPLORA_REQUESTS_PER_HOUR'], unset['SVC_ESPLORA_BURST'], unset['SVC_ESPLORA_MAX_CONCURRENT'], unset['SVC_BLOCK_CHECK_INTERVAL_S']],
    ['1000000000', '100000', '32', '0.2'],
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ConfigError, KEYS, loadConfig } from '../../src/config/options.js';
import { repoRoot } from '../helpers/paths.js';

function tomlFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  const p = join(dir, 'config.toml');
  writeFileSync(p, text);
  return p;
}
const missing = join(tmpdir(), 'svc-no-such-dir', 'config.toml');
const defaults = () => loadConfig({ env: {}, path: tomlFile('') });

test('defaults: every key has a working default', () => {
  const c = defaults();
  assert.equal(c.nodeId, 'svc-node-1');
  assert.deepEqual(c.restAddress, { host: '0.0.0.0', port: 8080 });
  assert.deepEqual(c.bindAddress, { host: '0.0.0.0', port: 50051 });
  assert.equal(c.publicUrl, 'http://localhost:50051');
  assert.deepEqual(c.peers, []);
  assert.equal(c.peerLimit, 10);
  assert.equal(c.esploraUrl, 'https://blockstream.info/api');
  assert.equal(c.esploraTimeoutMs, 10_000);
  assert.equal(c.esploraRequestsPerHour, 600);
  assert.equal(c.esploraBurst, 8);
  assert.equal(c.esploraMaxConcurrent, 4);
  assert.equal(c.dbPath, 'data/svc-node');
  assert.equal(c.dataDir, 'data');
  assert.equal(c.gossipPrivateKey, null);
  assert.equal(c.apiToken, null);
  assert.equal(c.blockCheckIntervalS, 60);
  assert.equal(c.peerSyncIntervalS, 300);
  assert.equal(c.startHeight, null);
  assert.ok(c.workers.poolSize >= 1);
  assert.equal(c.workers.queueLimit, 4096);
  assert.equal(c.logFilter, 'info');
});

test('the shipped config.toml loads and lists every key', () => {
  const c = loadConfig({ env: {}, path: join(repoRoot, 'config.toml') });
  assert.equal(c.nodeId, 'svc-node-1');
  const text = require_text(join(repoRoot, 'config.toml'));
  for (const k of KEYS) {
    const leaf = k.key.split('.').pop()!;
    assert.match(text, new RegExp(`^${leaf} = `, 'm'), `config.toml lacks ${k.key}`);
    if (k.env) assert.ok(text.includes(k.env), `config.toml does not name ${k.env}`);
  }
});

function require_text(p: string): string {
  return spawnSync('cat', [p], { encoding: 'utf8' }).stdout;
}

test('file only', () => {
  const p = tomlFile(`node_id = "alpha"\nrest_address = "127.0.0.1:9000"\npeers = ["http://a:1", "http://b:2"]\nblock_check_interval_s = 0.5\n[workers]\npool_size = 3\nqueue_limit = 10\n`);
  const c = loadConfig({ env: {}, path: p });
  assert.equal(c.nodeId, 'alpha');
  assert.deepEqual(c.restAddress, { host: '127.0.0.1', port: 9000 });
  assert.deepEqual(c.peers, ['http://a:1', 'http://b:2']);
  assert.equal(c.blockCheckIntervalS, 0.5);
  assert.deepEqual(c.workers, { poolSize: 3, queueLimit: 10 });
  assert.equal(c.sources['node_id'], p);
});

test('cors_origins: none by default, a list from the file, comma-separated from SVC_CORS_ORIGINS', () => {
  assert.deepEqual(loadConfig({ env: {}, path: tomlFile('') }).corsOrigins, []);
  const p = tomlFile('cors_origins = ["https://app.example.com", "http://127.0.0.1:5173"]\n');
  assert.deepEqual(loadConfig({ env: {}, path: p }).corsOrigins, ['https://app.example.com', 'http://127.0.0.1:5173']);
  assert.deepEqual(loadConfig({ env: { SVC_CORS_ORIGINS: '*' }, path: p }).corsOrigins, ['*']);
  assert.deepEqual(loadConfig({ env: { SVC_CORS_ORIGINS: 'http://[::1]:8000, https://a.example' }, path: p }).corsOrigins, ['http://[::1]:8000', 'https://a.example']);
});

test('esplora_timeout_ms from the file, overridden by SVC_ESPLORA_TIMEOUT_MS', () => {
  const p = tomlFile('esplora_timeout_ms = 2500\n');
  assert.equal(loadConfig({ env: {}, path: p }).esploraTimeoutMs, 2500);
  const c = loadConfig({ env: { SVC_ESPLORA_TIMEOUT_MS: '750' }, path: p });
  assert.equal(c.esploraTimeoutMs, 750);
  assert.equal(c.sources['esplora_timeout_ms'], 'SVC_ESPLORA_TIMEOUT_MS');
});

test('the chain-data budget from the file, overridden by SVC_ESPLORA_REQUESTS_PER_HOUR and SVC_ESPLORA_BURST', () => {
  const p = tomlFile('esplora_requests_per_hour = 3600\nesplora_burst = 12\n');
  const f = loadConfig({ env: {}, path: p });
  assert.deepEqual([f.esploraRequestsPerHour, f.esploraBurst], [3600, 12]);
  const c = loadConfig({ env: { SVC_ESPLORA_REQUESTS_PER_HOUR: '720000', SVC_ESPLORA_BURST: '200' }, path: p });
  assert.deepEqual([c.esploraRequestsPerHour, c.esploraBurst], [720000, 200]);
  assert.equal(c.sources['esplora_requests_per_hour'], 'SVC_ESPLORA_REQUESTS_PER_HOUR');
});

test('env only, with SVC_CONFIG pointing nowhere unset', () => {
  const c = loadConfig({
    path: tomlFile(''),
    env: { SVC_NODE_ID: 'beta', SVC_PEERS: 'http://x:1, http://y:2', SVC_PEER_LIMIT: '3', SVC_API_TOKEN: 'tok-123', SVC_START_HEIGHT: '100', SVC_WORKERS_POOL_SIZE: '1', RUST_LOG: 'warn,gossip=debug' },
  });
  assert.equal(c.nodeId, 'beta');
  assert.deepEqual(c.peers, ['http://x:1', 'http://y:2']);
  assert.equal(c.peerLimit, 3);
  assert.equal(c.apiToken, 'tok-123');
  assert.equal(c.startHeight, 100);
  assert.equal(c.workers.poolSize, 1);
  assert.equal(c.logFilter, 'warn,gossip=debug');
  assert.equal(c.sources['peer_limit'], 'SVC_PEER_LIMIT');
});

test('env over file', () => {
  const p = tomlFile(`node_id = "file"\npeer_limit = 5\n`);
  const c = loadConfig({ env: { SVC_NODE_ID: 'env' }, path: p });
  assert.equal(c.nodeId, 'env');
  assert.equal(c.peerLimit, 5);
});

test('SVC_CONFIG selects the file; a missing named file is an error', () => {
  const p = tomlFile(`node_id = "via-env"\n`);
  assert.equal(loadConfig({ env: { SVC_CONFIG: p } }).nodeId, 'via-env');
  assert.throws(() => loadConfig({ env: { SVC_CONFIG: missing } }), /SVC_CONFIG names .* which does not exist/);
});

const invalid: [string, { env?: Record<string, string>; file?: string }, RegExp][] = [
  ['bad bind address', { env: { SVC_BIND_ADDRESS: 'nohostport' } }, /^config error: bind_address from SVC_BIND_ADDRESS: expected HOST:PORT/],
  ['port out of range', { file: 'rest_address = "0.0.0.0:70000"' }, /^config error: rest_address from .*config\.toml: expected HOST:PORT/],
  ['bad URL', { env: { SVC_ESPLORA_URL: 'not a url' } }, /^config error: esplora from SVC_ESPLORA_URL: expected an absolute http or https URL/],
  ['bad peer URL', { file: 'peers = ["ftp://x"]' }, /^config error: peers from .*: expected a list of peer gRPC URLs/],
  ['a CORS origin with a path', { file: 'cors_origins = ["https://app.example.com/"]' }, /^config error: cors_origins from .*config\.toml: expected a list of origins such as "https:\/\/app\.example\.com"/],
  ['a CORS origin without a scheme', { env: { SVC_CORS_ORIGINS: 'app.example.com' } }, /^config error: cors_origins from SVC_CORS_ORIGINS: expected a list of origins/],
  ['short gossip key', { env: { SVC_GOSSIP_PRIVATE_KEY: 'abcd' } }, /^config error: gossip_private_key from SVC_GOSSIP_PRIVATE_KEY: expected an Ed25519 seed of exactly 64 hex characters/],
  ['unknown key', { file: 'colour = "blue"' }, /^config error: unknown key "colour" in /],
  ['unknown key in [workers]', { file: '[workers]\nthreads = 2' }, /^config error: unknown key "workers.threads"/],
  ['number out of range', { env: { SVC_PEER_LIMIT: '100000' } }, /^config error: peer_limit from SVC_PEER_LIMIT: expected an integer from 0 to 1000, got "100000"/],
  ['chain timeout too small', { env: { SVC_ESPLORA_TIMEOUT_MS: '50' } }, /^config error: esplora_timeout_ms from SVC_ESPLORA_TIMEOUT_MS: expected an integer from 100 to 600000, got "50"$/],
  ['fractional chain timeout', { file: 'esplora_timeout_ms = 2500.5' }, /^config error: esplora_timeout_ms from .*config\.toml: expected an integer from 100 to 600000, got 2500.5$/],
  ['chain timeout not a number', { env: { SVC_ESPLORA_TIMEOUT_MS: '10s' } }, /^config error: esplora_timeout_ms from SVC_ESPLORA_TIMEOUT_MS: expected an integer from 100 to 600000/],
  ['the replaced per-second rate in the file', { file: 'esplora_rate_per_s = 4' }, /^config error: esplora_rate_per_s in .*config\.toml was replaced by esplora_requests_per_hour \(SVC_ESPLORA_REQUESTS_PER_HOUR: the old value x 3600, e\.g\. 4 -> 14400\) and esplora_burst/],
  ['the replaced per-second rate in the environment', { env: { SVC_ESPLORA_RATE_PER_S: '200' } }, /^config error: SVC_ESPLORA_RATE_PER_S \(esplora_rate_per_s\) was replaced by esplora_requests_per_hour \(SVC_ESPLORA_REQUESTS_PER_HOUR: the old value x 3600/],
  ['fractional requests per hour', { env: { SVC_ESPLORA_REQUESTS_PER_HOUR: '0.5' } }, /^config error: esplora_requests_per_hour from SVC_ESPLORA_REQUESTS_PER_HOUR: expected an integer from 1 to 1000000000, got "0.5"$/],
  ['a burst of 1', { file: 'esplora_burst = 1' }, /^config error: esplora_burst from .*config\.toml: expected an integer from 2 to 1000000, got 1$/],
  ['not a number', { env: { SVC_BLOCK_CHECK_INTERVAL_S: 'soon' } }, /^config error: block_check_interval_s from SVC_BLOCK_CHECK_INTERVAL_S: expected a number/],
  ['zero interval', { file: 'peer_sync_interval_s = 0' }, /^config error: peer_sync_interval_s from .*: expected a number from 0.01/],
  ['zero max_pending_calls', { env: { SVC_MAX_PENDING_CALLS: '0' } }, /^config error: max_pending_calls from SVC_MAX_PENDING_CALLS: expected an integer from 1 to 100000000, got "0"/],
  ['fractional pool size', { file: '[workers]\npool_size = 1.5' }, /^config error: workers.pool_size from .*: expected an integer/],
  ['wrong type', { file: 'node_id = 5' }, /^config error: node_id from .*: expected 1 to 64 characters/],
  ['broken TOML', { file: 'node_id = ' }, /^config error: .*config\.toml:1:\d+: /],
  ['REST and gRPC on one address', { env: { SVC_REST_ADDRESS: '127.0.0.1:9000', SVC_BIND_ADDRESS: '127.0.0.1:9000' } }, /^config error: rest_address from SVC_REST_ADDRESS \(127\.0\.0\.1:9000\) and bind_address from SVC_BIND_ADDRESS \(127\.0\.0\.1:9000\) are the same address: REST and gRPC each need their own port$/],
  ['REST on a wildcard, gRPC on its port', { file: 'rest_address = "0.0.0.0:9000"', env: { SVC_BIND_ADDRESS: '127.0.0.1:9000' } }, /^config error: rest_address from .*config\.toml \(0\.0\.0\.0:9000\) and bind_address from SVC_BIND_ADDRESS \(127\.0\.0\.1:9000\) are the same address/],
];

for (const [name, input, re] of invalid) {
  test(`invalid: ${name} gives one line naming the key and source`, () => {
    let err: unknown;
    try {
      loadConfig({ env: input.env ?? {}, path: tomlFile(input.file ?? '') });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConfigError, 'expected a ConfigError');
    assert.match(err.message, re);
    assert.ok(!err.message.includes('\n'), 'one line');
  });
}

test('secrets are never echoed in config errors', () => {
  const secret = 'zz' + 'a'.repeat(62);
  assert.throws(() => loadConfig({ env: { SVC_GOSSIP_PRIVATE_KEY: secret }, path: tomlFile('') }), (e: Error) => !e.message.includes(secret));
  assert.throws(() => loadConfig({ env: { SVC_API_TOKEN: 'has space secret' }, path: tomlFile('') }), (e: Error) => !e.message.includes('has space secret'));
});

test('the node exits non-zero with one line before binding anything', () => {
  const r = spawnSync(process.execPath, [join(repoRoot, 'dist/src/main.js')], {
    env: { ...process.env, SVC_CONFIG: tomlFile(''), SVC_REST_ADDRESS: '127.0.0.1:99999', SVC_DB_PATH: join(tmpdir(), 'svc-never') },
    encoding: 'utf8',
    timeout: 10_000,
  });
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '', 'nothing started, nothing logged');
  assert.match(r.stderr.trim(), /^config error: rest_address from SVC_REST_ADDRESS: expected HOST:PORT/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configureLogging, logger, parseFilter, registerSecret } from '../src/log.js';

test('RUST_LOG semantics: default level and per-target overrides', () => {
  const lines: string[] = [];
  configureLogging({ filter: 'warn,gossip=debug,rest::access=off', sink: (l) => lines.push(l) });
  logger('core').info('hidden');
  logger('core').warn('shown-core');
  logger('gossip').debug('shown-gossip');
  logger('gossip::sync').debug('shown-gossip-child');
  logger('gossip').trace('hidden-trace');
  logger('rest::access').error('hidden-access');
  logger('rest').warn('shown-rest');
  const msgs = lines.map((l) => JSON.parse(l).msg);
  assert.deepEqual(msgs, ['shown-core', 'shown-gossip', 'shown-gossip-child', 'shown-rest']);
  assert.equal(parseFilter('').defaultLevel, 3, 'info by default');
  assert.equal(parseFilter('trace').defaultLevel, 5);
});

test('lines are JSON with level, target and message', () => {
  const lines: string[] = [];
  configureLogging({ filter: 'info', sink: (l) => lines.push(l) });
  logger('writer').info('database open', { height: 5, big: 2n ** 70n, bytes: Uint8Array.of(1, 2) });
  const o = JSON.parse(lines[0]!);
  assert.equal(o.level, 'info');
  assert.equal(o.target, 'writer');
  assert.equal(o.msg, 'database open');
  assert.equal(o.height, 5);
  assert.equal(o.big, (2n ** 70n).toString());
  assert.equal(o.bytes, '0102');
});

test('secrets are redacted wherever they appear, and secret-named fields dropped', () => {
  const lines: string[] = [];
  configureLogging({ filter: 'info', sink: (l) => lines.push(l) });
  registerSecret('s3cr3t-token-value');
  logger('rest').info('header was Bearer s3cr3t-token-value', { api_token: 'x', note: 'contains s3cr3t-token-value' });
  assert.ok(!lines[0]!.includes('s3cr3t-token-value'));
  assert.ok(!('api_token' in JSON.parse(lines[0]!)));
  assert.match(lines[0]!, /\[redacted\]/);
});

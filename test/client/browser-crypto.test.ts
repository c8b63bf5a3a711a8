/**
 * The browser bundle's node:crypto (packages/client/src/browser/node-crypto.ts, @noble/hashes and
 * Web Crypto) answers as node:crypto does for every use the SDK's code makes of it, so the
 * page hashes what the node hashes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as node from 'node:crypto';
import * as browser from '@svc-node/client/browser/node-crypto';

const inputs = [new Uint8Array(0), Uint8Array.of(1, 2, 3), new Uint8Array(1000).fill(7), new Uint8Array(node.randomBytes(65))];

test('hash and createHash give node:crypto\'s SHA-256, as bytes and as hex; other algorithms are refused', () => {
  for (const data of inputs) {
    assert.deepEqual(new Uint8Array(browser.hash('sha256', data, 'buffer') as Buffer), new Uint8Array(node.hash('sha256', data, 'buffer')));
    assert.equal(browser.hash('sha256', data, 'hex'), node.hash('sha256', data, 'hex'));
    const h = browser.createHash('sha256').update(data).update('SVC/tag', 'utf8');
    assert.deepEqual(new Uint8Array(h.digest() as Buffer), new Uint8Array(node.createHash('sha256').update(data).update('SVC/tag', 'utf8').digest()));
  }
  assert.throws(() => browser.hash('sha1', inputs[1]!), /sha256 only/);
});

test('randomBytes fills every byte, past the 65,536 bytes one getRandomValues call may fill', () => {
  const b = browser.randomBytes(70_000);
  assert.equal(b.length, 70_000);
  // 1,000-byte windows: a window left zero by a missed chunk is all but impossible by chance.
  for (let off = 0; off < b.length; off += 1000) assert.ok(b.subarray(off, off + 1000).some((x) => x !== 0), `bytes ${off}.. are filled`);
  assert.equal(typeof b.readBigUInt64LE(0), 'bigint', 'a Buffer, as randomCallId reads it');
});

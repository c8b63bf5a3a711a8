/**
 * Differential check of the two BIP-340 verifiers: tiny-secp256k1 (hot path) and
 * @noble/curves (reference, signing). They must agree on the BIP-340 vectors, the
 * protocol vectors and thousands of random valid and corrupted signatures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as tiny from 'tiny-secp256k1';
import { fixturesDir } from '../helpers/paths.js';
import { verifySchnorrFast, verifySchnorrNoble, signSchnorr, xOnlyPublicKey, randomBytesPooled } from '@svc-node/protocol/schnorr';
import { parseHex } from '@svc-node/protocol/hash';

const hexU = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

test('BIP-340 official vectors 0-14: sign (when a secret is given) and both verifiers', () => {
  const lines = readFileSync(join(fixturesDir, 'bip340', 'test-vectors.csv'), 'utf8').trim().split('\n').slice(1);
  assert.equal(lines.length, 15);
  for (const line of lines) {
    const [index, sk, pk, aux, msg, sig, result] = line.split(',');
    const expected = result === 'TRUE';
    if (sk) {
      assert.equal(Buffer.from(xOnlyPublicKey(hexU(sk))).toString('hex').toUpperCase(), pk, `pubkey ${index}`);
      assert.equal(Buffer.from(signSchnorr(hexU(msg!), hexU(sk), hexU(aux!))).toString('hex').toUpperCase(), sig, `sign ${index}`);
    }
    assert.equal(verifySchnorrFast(hexU(sig!), hexU(msg!), hexU(pk!)), expected, `tiny ${index}`);
    assert.equal(verifySchnorrNoble(hexU(sig!), hexU(msg!), hexU(pk!)), expected, `noble ${index}`);
  }
});

test('protocol envelope vectors verify under both', () => {
  const v = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'envelopes.json'), 'utf8'));
  for (const c of v.cases) {
    const sig = parseHex(c.signature)!;
    const m = parseHex(c.signed_message)!;
    const pub = parseHex(c.envelope.caller)!;
    assert.equal(verifySchnorrFast(sig, m, pub), true);
    assert.equal(verifySchnorrNoble(sig, m, pub), true);
    const bad = sig.slice();
    bad[63]! ^= 1;
    assert.equal(verifySchnorrFast(bad, m, pub), false);
    assert.equal(verifySchnorrNoble(bad, m, pub), false);
  }
});

test('wrong lengths are false, never an exception', () => {
  const z = new Uint8Array(32);
  for (const [s, m, p] of [
    [new Uint8Array(63), z, z],
    [new Uint8Array(64), new Uint8Array(31), z],
    [new Uint8Array(64), z, new Uint8Array(33)],
  ] as const) {
    assert.equal(verifySchnorrFast(s, m, p), false);
    assert.equal(verifySchnorrNoble(s, m, p), false);
  }
});

const P = hexU('fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f');
const N = hexU('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

test('random valid and corrupted signatures: both verifiers agree (thousands, time-bounded)', (t) => {
  // At least MIN cases whatever the load; more, up to TARGET, while within the time bound.
  const deadline = Date.now() + 6_000;
  const MIN = 1000;
  const target = 3000;
  let done = 0;
  let valid = 0;
  const corruptions = ['sig bit', 'msg bit', 'pub bit', 'random pub', 'r = p', 's = n', 's high', 'random sig', 'zero sig', 'other key'];
  for (let i = 0; done < target && (done < MIN || Date.now() < deadline); i++) {
    const sk = randomBytes(32);
    if (!tiny.isPrivate(sk)) continue;
    const pub = tiny.xOnlyPointFromScalar(sk);
    const msg = new Uint8Array(randomBytes(32));
    // sign with noble every 4th time (it costs 2 ms) so both signers are also checked against both verifiers
    const sig = i % 4 === 0 ? signSchnorr(msg, sk, new Uint8Array(randomBytes(32))) : tiny.signSchnorr(msg, sk, randomBytes(32));
    assert.equal(verifySchnorrFast(sig, msg, pub), true, 'tiny rejects a valid signature');
    assert.equal(verifySchnorrNoble(sig, msg, pub), true, 'noble rejects a valid signature');
    valid++;
    done++;
    const kind = corruptions[i % corruptions.length]!;
    let s: Uint8Array = sig.slice();
    const m: Uint8Array = msg.slice();
    let p: Uint8Array = pub.slice();
    const bit = randomBytes(2);
    switch (kind) {
      case 'sig bit':
        s[bit[0]! % 64]! ^= 1 << bit[1]! % 8;
        break;
      case 'msg bit':
        m[bit[0]! % 32]! ^= 1 << bit[1]! % 8;
        break;
      case 'pub bit':
        p[bit[0]! % 32]! ^= 1 << bit[1]! % 8;
        break;
      case 'random pub':
        p = new Uint8Array(randomBytes(32));
        break;
      case 'r = p':
        s.set(P, 0);
        break;
      case 's = n':
        s.set(N, 32);
        break;
      case 's high':
        s.fill(0xff, 32);
        break;
      case 'random sig':
        s = new Uint8Array(randomBytes(64));
        break;
      case 'zero sig':
        s = new Uint8Array(64);
        break;
      case 'other key':
        p = tiny.xOnlyPointFromScalar(new Uint8Array(32).fill(1 + (i % 200)));
        break;
    }
    const a = verifySchnorrFast(s, m, p);
    const b = verifySchnorrNoble(s, m, p);
    assert.equal(a, b, `verifiers disagree on corruption "${kind}"`);
    assert.equal(a, false, `corruption "${kind}" still verifies`);
    done++;
  }
  t.diagnostic(`${done} cases (${valid} valid, ${done - valid} corrupted)`);
  assert.ok(done >= MIN && valid >= MIN / 2);
});

test('randomBytesPooled: fresh bytes each draw, across refills of its pool, and a draw larger than the pool', () => {
  // 40 bytes a draw (a call's id and BIP-340 aux) over several 4,096-byte pools: no draw repeats, none is all zero.
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const b = randomBytesPooled(40);
    assert.equal(b.length, 40);
    const hex = Buffer.from(b).toString('hex');
    assert.ok(!seen.has(hex), `draw ${i} repeats an earlier one`);
    assert.notEqual(hex, '00'.repeat(40));
    seen.add(hex);
  }
  const big = randomBytesPooled(10_000);
  assert.equal(big.length, 10_000);
  assert.notEqual(Buffer.from(big).toString('hex'), '00'.repeat(10_000));
  // A draw is its own copy: writing to it changes no later draw.
  const a = randomBytesPooled(32);
  a.fill(0);
  assert.notEqual(Buffer.from(randomBytesPooled(32)).toString('hex'), '00'.repeat(32));
});

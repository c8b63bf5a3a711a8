/** Raw-block and transaction parsing never accepts a changed byte and never crashes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as bitcoin from 'bitcoinjs-lib';
import { merkleRootOfTxids, parseRawBlock, parseTxHex } from '@svc-node/protocol/bitcoin';
import { DevnetChain } from '../../src/devnet/chain.js';
import { entryBody, manifest } from '../helpers/chain-servers.js';

const SEGWIT = '000000000000000000143a2c56c0214236dadfd30df41d4a0345492ad6d861ec';
const raw = entryBody(manifest.find((e) => e.path === `/block/${SEGWIT}/raw`)!);

test('every single-byte change to a segwit block is refused with an Error', () => {
  const ok = parseRawBlock(raw, SEGWIT);
  assert.equal(ok.txs.length, 4);
  fc.assert(
    fc.property(fc.nat({ max: raw.length - 1 }), fc.integer({ min: 1, max: 255 }), (pos, x) => {
      const b = Buffer.from(raw);
      b[pos] ^= x;
      assert.throws(() => parseRawBlock(b, SEGWIT), Error);
    }),
    { numRuns: 300 },
  );
});

test('truncations and random bytes are refused with an Error', () => {
  fc.assert(
    fc.property(fc.nat({ max: raw.length - 1 }), (n) => {
      assert.throws(() => parseRawBlock(raw.subarray(0, n), SEGWIT), Error);
    }),
    { numRuns: 200 },
  );
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 400 }), (bytes) => {
      assert.throws(() => parseRawBlock(bytes), Error);
      assert.throws(() => parseTxHex(Buffer.from(bytes).toString('hex'), '00'.repeat(32)), Error);
    }),
    { numRuns: 300 },
  );
});

test('txids are hashed from the block\'s own bytes and agree with bitcoinjs, past 252 transactions too', () => {
  const fixture = parseRawBlock(raw, SEGWIT);
  assert.deepEqual(fixture.txids, bitcoin.Block.fromBuffer(raw).transactions!.map((t) => t.getId()));
  // 301 transactions: a 3-byte transaction count, so offsets start at byte 83.
  const chain = new DevnetChain();
  chain.mine(101);
  const payee = bitcoin.payments.p2wpkh({ hash: new Uint8Array(20).fill(7), network: chain.network }).address!;
  for (let i = 0; i < 300; i++) chain.faucet(payee, 10_000);
  chain.mine(1);
  const big = parseRawBlock(chain.tip.raw, chain.tip.hash);
  assert.equal(big.txids.length, 301);
  assert.deepEqual(big.txids, big.txs.map((t) => t.getId()));
});

test('merkle roots agree with bitcoinjs, and duplicated-tail lists are refused', () => {
  const b = bitcoin.Block.fromBuffer(raw);
  const txids = b.transactions!.map((t) => t.getId());
  assert.equal(merkleRootOfTxids(txids), Buffer.from(bitcoin.Block.calculateMerkleRoot(b.transactions!)).reverse().toString('hex'));
  // CVE-2012-2459: [a,b,c] and [a,b,c,c] share a root; the duplicated form is refused.
  const three = txids.slice(0, 3);
  assert.equal(merkleRootOfTxids([...three, three[2]!]), null);
  assert.notEqual(merkleRootOfTxids(three), null);
});

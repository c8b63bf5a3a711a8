/**
 * Range-based set reconciliation (issue 19; src/gossip/reconcile.ts over the writer's
 * per-contract index, src/writer/peer-queries.ts): a node finds exactly the payloads a
 * peer holds and it lacks, through the real wire format, with every message bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { ContractIndex } from '../../src/writer/peer-queries.js';
import { reconcile, rangeBounds } from '../../src/gossip/reconcile.js';
import { itemHash, sumFingerprint } from '@svc-node/protocol/fingerprint';
import { MAX_GRPC_MESSAGE_BYTES } from '../../src/gossip/limits.js';
import { localAsker, newTally, remoteAsker } from '../helpers/reconcile-wire.js';

const CONTRACT = 'cc'.repeat(32);

function indexOf(items: { txid: Buffer; hash: Buffer }[]): ContractIndex {
  const c = new ContractIndex();
  for (const it of items) c.add(it.txid, 'call', it.hash);
  return c;
}

/** Txids: random, or sharing a long prefix (a worst case for splitting the key space). */
const txidArb = fc.oneof(
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b)),
  fc.uint8Array({ minLength: 2, maxLength: 2 }).map((b) => Buffer.concat([Buffer.alloc(30, 0xab), Buffer.from(b)])),
);
const itemArb = fc.record({ txid: txidArb, hash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b)) });

test('reconciliation finds exactly the txids the peer holds and this node lacks, and those it lacks, over the wire format, with bounded messages', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(itemArb, { maxLength: 1200, selector: (i) => i.txid.toString('hex') }),
      fc.nat({ max: 1200 }),
      fc.nat({ max: 1200 }),
      fc.boolean(),
      async (all, a, b, sameHashes) => {
        // Shared items, then items only the peer holds, then items only this node holds.
        const cutA = Math.min(a, all.length);
        const cutB = Math.min(cutA + b, all.length);
        const shared = all.slice(0, cutA);
        const theirs = all.slice(cutA, cutB);
        const mine = all.slice(cutB);
        // A shared txid whose payload hash differs: fingerprints differ, nothing to fetch.
        const changed = !sameHashes && shared.length > 0 ? [{ ...shared[0]!, hash: Buffer.alloc(32, 7) }, ...shared.slice(1)] : shared;
        const local = indexOf([...mine, ...changed]);
        const remote = indexOf([...theirs, ...shared]);
        const tally = newTally();
        const { missing, theyLack } = await reconcile(localAsker(local), remoteAsker(remote, CONTRACT, tally));
        assert.deepEqual([...missing].sort(), theirs.map((i) => i.txid.toString('hex')).sort());
        assert.deepEqual([...theyLack].sort(), mine.map((i) => i.txid.toString('hex')).sort());
        assert.equal(new Set(missing).size, missing.length, 'each missing txid once');
        assert.equal(new Set(theyLack).size, theyLack.length, 'each lacking txid once');
        assert.ok(tally.largest < MAX_GRPC_MESSAGE_BYTES, `largest message ${tally.largest} bytes`);
      },
    ),
    { numRuns: 60 },
  );
});

test('identical sets cost one range question; the writer index stays exact as payloads arrive after it was sorted', async () => {
  const items = Array.from({ length: 5000 }, () => ({ txid: randomBytes(32), hash: randomBytes(32) }));
  const a = indexOf(items);
  // Built in three steps, asked between them: the merge of new entries into the sorted order.
  const b = indexOf(items.slice(0, 1000));
  b.range(Buffer.alloc(0), Buffer.alloc(0), 0);
  for (const it of items.slice(1000, 4000)) b.add(it.txid, 'call', it.hash);
  b.fingerprint();
  for (const it of items.slice(4000).reverse()) b.add(it.txid, 'call', it.hash);
  assert.deepEqual(b.fingerprint(), a.fingerprint());
  const tally = newTally();
  const r = await reconcile(localAsker(a), remoteAsker(b, CONTRACT, tally));
  assert.deepEqual([r.missing, r.theyLack], [[], []]);
  assert.deepEqual([tally.requests, r.stats.levels], [1, 1]);
  assert.ok(tally.requestBytes + tally.responseBytes < 400, `${tally.requestBytes + tally.responseBytes} bytes`);

  // The fingerprint is the documented sum over the items in any range.
  const sorted = [...items].sort((x, y) => Buffer.compare(x.txid, y.txid));
  const entry = (i: { txid: Buffer; hash: Buffer }): Buffer => Buffer.concat([i.txid, Buffer.of(2), i.hash]);
  const [lo, hi] = [sorted[100]!.txid, sorted[300]!.txid];
  assert.deepEqual(a.range(lo, hi, 0), { count: 200, fingerprint: sumFingerprint(sorted.slice(100, 300).map((i) => itemHash(entry(i)))).toString('hex'), txids: null });
});

test('key ranges: bounds of prefixes, the last one open at the end', () => {
  assert.deepEqual(rangeBounds({ prefix: 0n, bits: 0 }), { lower: '', upper: '' });
  assert.deepEqual(rangeBounds({ prefix: 0xan, bits: 4 }), { lower: 'a0', upper: 'b0' });
  assert.deepEqual(rangeBounds({ prefix: 0xfn, bits: 4 }), { lower: 'f0', upper: '' });
  assert.deepEqual(rangeBounds({ prefix: 0xabcn, bits: 12 }), { lower: 'abc0', upper: 'abd0' });
  assert.deepEqual(rangeBounds({ prefix: 0xabffn, bits: 16 }), { lower: 'abff', upper: 'ac00' });
});

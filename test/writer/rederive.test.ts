/**
 * Re-derivation (src/writer/ledger/replay.ts) deletes exactly the buckets the registry
 * marks derived (src/writer/store/buckets.ts) and builds them again from the journal;
 * what the node received (payloads, call records and bodies, registrations, the journal)
 * survives. Over a store holding an entry in every bucket, with a stale entry planted in
 * every derived bucket, a re-derivation to the same height gives back the store exactly
 * as it was before the stale entries; one that drops the journal above an earlier height
 * gives back the store as it was at that height.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { BUCKETS, DERIVED_BUCKETS, RETIRED_BUCKET_IDS, bucketOf, evidence, evidenceAt, headers, type BucketName } from '../../src/writer/store/index.js';
import type { Db } from '../../src/writer/db.js';
import type { Value } from '@svc-node/protocol/value';

const key = (b: Uint8Array): Value => ({ type: 'key', value: b });
const u64 = (n: number): Value => ({ type: 'u64', value: BigInt(n) });
const NAMES = Object.keys(BUCKETS) as BucketName[];

/** Every stored entry, as "key hex" -> "value hex". */
async function dump(db: Db): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of await db.range(Buffer.of(0x00), Buffer.of(0xff))) out.set(r.key.toString('hex'), r.value.toString('hex'));
  return out;
}

function bucketsHolding(d: Map<string, string>): Set<BucketName> {
  const ids = new Set([...d.keys()].map((k) => bucketOf(Buffer.from(k, 'hex'))));
  return new Set(NAMES.filter((n) => ids.has(BUCKETS[n].id)));
}

/** A key no block writes, in bucket `name`. */
const staleKey = (name: BucketName): Buffer => Buffer.concat([Buffer.of(BUCKETS[name].id), Buffer.from('stale entry from before the re-derivation, 40+ bytes')]);
/** Its value: a state root of a height never reached (re-derivation reads the old roots before it deletes them). */
const STALE = Buffer.from(JSON.stringify({ height: 2 ** 31, block_hash: '00'.repeat(32), state_root: '00'.repeat(32) }));

test('bucket ids are unique, never a retired one, and each bucket says whether it is derived', () => {
  const ids = NAMES.map((n) => BUCKETS[n].id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.ok(id > 0 && id <= 0xff && !RETIRED_BUCKET_IDS.includes(id), `bucket id ${id}`);
  for (const n of NAMES) assert.equal(typeof BUCKETS[n].derived, 'boolean', n);
  assert.deepEqual([...DERIVED_BUCKETS].sort(), NAMES.filter((n) => BUCKETS[n].derived).sort());
});

test('re-derivation deletes every derived bucket and rebuilds it; what the node received survives', async () => {
  const b = await LedgerBench.open();
  try {
    const bank = compileContract('test/fixtures/contracts/bank.svc').artifact as never;
    const cid = await b.deploy(bank);
    const alice = id32('rederive', 1);
    const bob = id32('rederive', 2);
    let callId = 1n;
    const mint = await b.call(cid, 'mint', [key(alice), u64(1_000)], alice, callId++);
    const transfer = await b.call(cid, 'transfer', [key(bob), u64(10)], alice, callId++);
    const failing = await b.call(cid, 'transfer', [key(bob), u64(1_000_000)], bob, callId++);
    const orphan = b.callRecord(cid, 'transfer', [key(alice), u64(1)], bob, callId++).tx; // its payload never comes
    const doomed = b.callRecord(cid, 'transfer', [key(alice), u64(2)], bob, callId++);
    await b.ledger.acceptCall(doomed.rec);
    await b.block([mint, transfer, failing, orphan]);
    await b.block([], [[doomed.rec.outpoint, 'ff'.repeat(32)]]);
    const later = await b.call(cid, 'transfer', [key(bob), u64(3)], alice, callId++); // pending at `atA`
    // The chain data and evidence a light node keeps (not derived: a re-derivation replays
    // against them): a header ahead of the tip, the pending call's evidence and a claim
    // filed under a block not reached.
    const txid = later.getId();
    await b.ledger.db.batch([
      { type: 'put', key: headers.key(b.height + 50), value: headers.encode(Buffer.alloc(80, 1)) },
      { type: 'put', key: evidence.key(txid), value: evidence.encode({ anchorTx: later.toBuffer(), confirmed: null, spentBy: null }) },
      { type: 'put', key: evidenceAt.key(b.height + 50, 'ee'.repeat(32), txid, evidenceAt.KIND_ANCHOR), value: evidenceAt.encode({ kind: evidenceAt.KIND_ANCHOR, txid, txIndex: 1, raw: later.toBuffer(), branch: [Buffer.alloc(32, 2)] }) },
    ]);
    const atA = { height: b.height, store: await dump(b.ledger.db) };
    assert.deepEqual(bucketsHolding(atA.store), new Set(NAMES), 'the store holds an entry in every bucket, so every bucket is checked below');

    await b.block([later]);
    await b.block([]);
    const atB = { height: b.height, root: b.ledger.stateRoot, store: await dump(b.ledger.db) };

    // A stale entry in every derived bucket, which no replay writes.
    await b.ledger.db.batch(DERIVED_BUCKETS.map((n) => ({ type: 'put' as const, key: staleKey(n), value: STALE })));
    await b.ledger.rederive(atB.height, { dropJournalAbove: false, verifyBelow: atB.height + 1 });
    assert.equal(b.ledger.halted, false, b.ledger.haltReason ?? '');
    assert.equal(b.ledger.stateRoot, atB.root);
    for (const n of DERIVED_BUCKETS) assert.equal(await b.ledger.db.get(staleKey(n)), undefined, `the stale ${n} entry is gone`);
    assert.deepEqual(await dump(b.ledger.db), atB.store, 'every bucket as before: derived ones rebuilt, the rest kept');

    // Dropping the journal above an earlier height gives the store of that height: the
    // call decided above it pending again, its payload and record kept.
    for (const n of DERIVED_BUCKETS) await b.ledger.db.put(staleKey(n), STALE);
    await b.ledger.rederive(atA.height, { dropJournalAbove: true, verifyBelow: atA.height + 1 });
    assert.equal(b.ledger.halted, false, b.ledger.haltReason ?? '');
    assert.deepEqual(await dump(b.ledger.db), atA.store);
    assert.equal((await b.ledger.call(later.getId()))?.status, 'pending');
  } finally {
    await b.close();
  }
});

/**
 * A rewind through the undo logs restores the writer's memory from the entries the
 * rewound blocks wrote (LedgerMemory.restoreFromUndo), not by reloading everything from disk.
 * The memory it gives must be exactly what a full load of the same disk builds, for
 * every kind of entry a block writes: a contract activated and then written to; calls
 * executed, failed, invalid and dropped; an orphan stamp; call counts; and a (caller,
 * call_id) claim that a call still pending shares, which must be free again afterwards;
 * and the recent block hashes, whose window a rewind moves down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Ledger } from '../../src/writer/ledger/index.js';
import { logger } from '../../src/log.js';
import type { Value } from '@svc-node/protocol/value';

const key = (b: Uint8Array): Value => ({ type: 'key', value: b });
const u64 = (n: number): Value => ({ type: 'u64', value: BigInt(n) });

async function loadedFreshLedger(b: LedgerBench): Promise<Ledger> {
  const fresh = new Ledger(b.ledger.db, logger('test'));
  await fresh.load();
  return fresh;
}

/** Counts full reloads of the bench's ledger from here on. */
function countLoads(b: LedgerBench): () => number {
  let loads = 0;
  const load = b.ledger.load.bind(b.ledger);
  b.ledger.load = async () => {
    loads++;
    return load();
  };
  return () => loads;
}

async function loadedFresh(b: LedgerBench): Promise<Record<string, unknown>> {
  return (await loadedFreshLedger(b)).memorySummary();
}

test('a rewind restores memory from the undo logs, equal to a full load, without reloading', async () => {
  const b = await LedgerBench.open();
  try {
    const bank = compileContract('test/fixtures/contracts/bank.svc').artifact as never;
    const cidA = await b.deploy(bank);
    const alice = id32('rewind', 1);
    const bob = id32('rewind', 2);
    const carol = id32('rewind', 3);
    let callId = 1n;
    await b.block([await b.call(cidA, 'mint', [key(alice), u64(1_000)], alice, callId++), await b.call(cidA, 'mint', [key(bob), u64(1_000)], bob, callId++)]);
    await b.call(cidA, 'transfer', [key(bob), u64(1)], carol, 77n); // pending throughout
    const base = b.height;
    const atBase = b.ledger.memorySummary();
    const rootAtBase = b.ledger.stateRoot;

    // The blocks to rewind.
    const cidB = await b.deploy(bank); // activated above base
    const first = await b.call(cidA, 'transfer', [key(bob), u64(5)], alice, 500n);
    const second = b.callRecord(cidA, 'transfer', [key(bob), u64(6)], alice, 500n); // shares (alice, 500)
    await b.ledger.acceptCall(second.rec);
    const failing = await b.call(cidA, 'transfer', [key(bob), u64(1_000_000)], alice, callId++);
    const intoB = await b.call(cidB, 'mint', [key(carol), u64(9)], carol, callId++);
    const orphan = b.callRecord(cidA, 'transfer', [key(alice), u64(1)], bob, callId++).tx; // a stamp whose payload never came
    const doomed = b.callRecord(cidA, 'transfer', [key(alice), u64(2)], bob, callId++);
    await b.ledger.acceptCall(doomed.rec);
    const invalid = b.callRecord(cidA, 'transfer', [key(carol), u64(3)], bob, 1n); // (bob, 1) was taken by bob's mint
    await b.ledger.acceptCall(invalid.rec).catch(() => undefined); // intake may refuse it already; either way nothing changes below
    await b.block([first, failing, intoB, orphan]);
    await b.block([], [[doomed.rec.outpoint, 'ff'.repeat(32)]]);
    assert.equal((await b.ledger.call(first.getId()))!.status, 'executed');
    assert.equal((await b.ledger.call(failing.getId()))!.status, 'failed');
    assert.equal((await b.ledger.call(intoB.getId()))!.status, 'executed');
    assert.equal((await b.ledger.call(doomed.rec.txid))!.status, 'dropped');
    const atTip = b.ledger.memorySummary();
    const tipRoot = b.ledger.stateRoot;
    const tipHeight = b.height;

    const loads = countLoads(b);
    const stable = (m: Record<string, unknown>) => ({ tip: m.tip, stateRoot: m.stateRoot, contracts: m.contracts, storageSize: m.storageSize, orphans: m.orphans, callCounts: m.callCounts });

    // A late payload's path: rewind to base through the undo logs, replay the journal.
    await b.ledger.replayFrom(base + 1);
    assert.equal(loads(), 0, 'the replay restored memory without a full reload');
    assert.equal(b.ledger.tip!.height, tipHeight);
    assert.equal(b.ledger.stateRoot, tipRoot);
    assert.deepEqual(b.ledger.memorySummary(), atTip);
    assert.deepEqual(b.ledger.memorySummary(), await loadedFresh(b), 'memory after the replay is what a load from disk builds');

    // A reorg's path: the blocks above base leave the chain.
    await b.ledger.rewindTo(base, { dropJournal: true });
    assert.equal(loads(), 0, 'the rewind restored memory without a full reload');
    assert.deepEqual(b.ledger.memorySummary(), await loadedFresh(b), 'memory after the rewind is what a load from disk builds');
    assert.deepEqual(stable(b.ledger.memorySummary()), stable(atBase), 'contracts, storage, orphans and counts as they were at base');
    assert.equal(b.ledger.stateRoot, rootAtBase);
    for (const t of [first.getId(), failing.getId(), intoB.getId(), doomed.rec.txid]) assert.equal((await b.ledger.call(t))!.status, 'pending', `${t} is pending again`);
    assert.equal(b.ledger.contract(cidB)!.status, 'pending');

    // The claim (alice, 500) is free again: the call sharing it executes when it comes first.
    b.height = base;
    b.hash = b.ledger.tip!.hash;
    await b.block([second.tx]);
    assert.equal((await b.ledger.call(second.rec.txid))!.status, 'executed');
    assert.equal(loads(), 0);
    assert.deepEqual(b.ledger.memorySummary(), await loadedFresh(b));
  } finally {
    await b.close();
  }
});

test('after a rewind deeper in a long chain, the recent block hashes are those a load keeps', async () => {
  const b = await LedgerBench.open();
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('rewind-long', 1);
    // More blocks than the hash window (2 x 144): its lower edge moves as blocks come.
    for (let h = 0; h < 300; h++) await b.block(h % 50 === 0 ? [await b.call(cid, 'bump', [u64(h + 1)], caller, BigInt(h + 1))] : []);
    const tip = b.height;
    const loads = countLoads(b);
    await b.ledger.rewindTo(tip - 5, { dropJournal: true });
    assert.equal(loads(), 0);
    assert.deepEqual(b.ledger.memorySummary(), await loadedFresh(b));
    assert.equal(b.ledger.knownHash(tip - 5 - 288), (await loadedFreshLedger(b)).knownHash(tip - 5 - 288));
    assert.notEqual(b.ledger.knownHash(tip - 5 - 288), null);
  } finally {
    await b.close();
  }
});

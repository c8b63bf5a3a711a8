/**
 * `dropped` is a chain fact (PROTOCOL section 5, docs/STATE.md "Dropped calls"): a call
 * received after a processed block spent its outpoint by another transaction is stored
 * decided `dropped`, recorded in that block's journal entry and undo log, so it has the
 * record and the fate in a reorg that it has on a node that held it before the block.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { LedgerBench, anchorTx, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { decodeDecision, stateRootOf } from '../../src/state/decisions.js';

const PAY = Buffer.concat([Buffer.of(0x00, 0x14), Buffer.alloc(20, 1)]);

function spendOf(outpoint: string): ReturnType<typeof anchorTx> {
  const [txid, vout] = outpoint.split(':') as [string, string];
  return anchorTx(Buffer.from(txid, 'hex'), Number(vout), PAY);
}

test('a call received after its outpoint was spent is dropped at once; a reorg of that block reopens it, and it executes', async () => {
  const b = await LedgerBench.open();
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 5n }], id32('late-dropped', 1), 1n);
    const conflict = spendOf(rec.outpoint);
    // Block h spends the call's outpoint by another transaction, before any node has the call.
    const h = b.height + 1;
    const { input } = await b.block([conflict], [[rec.outpoint, conflict.getId()]]);
    await b.ledger.flushBlocks();
    const rootBefore = (await b.ledger.stateRootAt(h))!;
    const accepted = await b.ledger.acceptCall(rec, { lookedUpAt: { height: h, epoch: b.ledger.chainEpoch }, spentBy: { txid: conflict.getId(), height: h, blockHash: input.hash } });
    assert.equal(accepted.record.status, 'dropped');
    assert.equal(accepted.replayFrom, null, 'no replay: a drop changes no state');
    assert.equal((await b.ledger.call(rec.txid))!.status, 'dropped');
    assert.equal(b.ledger.pendingCount, 0);
    // The late drop joins block h's decisions: its root is computed again, stored, published
    // (h is the tip), and the drop is provable under it, as on a node that held the call.
    const before = rootBefore;
    const at = (await b.ledger.stateRootAt(h))!;
    assert.notEqual(at.state_root, before.state_root, 'the drop moved the root of its block');
    assert.equal(at.contracts_root, before.contracts_root, 'a drop changes no contract state');
    assert.equal(at.state_root, Buffer.from(stateRootOf(Buffer.from(at.contracts_root!, 'hex'), Buffer.from(at.decisions_root!, 'hex'))).toString('hex'));
    assert.equal(b.ledger.stateRoot, at.state_root);
    const proof = (await b.ledger.decisionProof(h, rec.txid))!;
    assert.equal(decodeDecision(Buffer.from(proof.leaf!.value, 'hex')).status, 'dropped');
    await b.ledger.rederive(h, { dropJournalAbove: false, verifyBelow: h + 1 });
    assert.equal(b.ledger.halted, false, 'a re-derivation from the journal reproduces the amended root');
    assert.equal(b.ledger.stateRoot, at.state_root);

    // The block leaves the chain: the call is pending again, exactly as a fresh load sees it.
    await b.ledger.rewindTo(h - 1, { dropJournal: true });
    assert.equal((await b.ledger.call(rec.txid))!.status, 'pending');
    const restored = b.ledger.memorySummary();
    await b.ledger.load();
    assert.deepEqual(b.ledger.memorySummary(), restored, 'memory after the rewind is what a load builds');

    // The new branch confirms the anchor instead of the conflicting spend.
    b.height = h - 1;
    b.hash = b.ledger.tip!.hash;
    await b.block([tx]);
    await b.ledger.flushBlocks();
    const after = await b.ledger.call(rec.txid);
    assert.equal(after!.status, 'executed');
    assert.equal(after!.result, '5');
  } finally {
    await b.close();
  }
});

test('a block applied between intake\'s look-up and the store is checked from memory; an uncovered window is retryable', async () => {
  const b = await LedgerBench.open();
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const lookedUpAt = { height: b.height, epoch: b.ledger.chainEpoch };
    const { rec } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 1n }], id32('late-dropped', 2), 1n);
    // The endpoint said "unspent"; meanwhile the node applied the block that spends it.
    const conflict = spendOf(rec.outpoint);
    await b.block([conflict], [[rec.outpoint, conflict.getId()]]);
    await b.ledger.flushBlocks();
    const r = await b.ledger.acceptCall(rec, { lookedUpAt, spentBy: null });
    assert.equal(r.record.status, 'dropped');

    // After a restart the writer does not remember the spends of blocks it applied before:
    // a call looked up before them is refused as retryable, never stored pending by mistake.
    const { rec: rec2 } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 1n }], id32('late-dropped', 3), 1n);
    await b.block([]);
    await b.ledger.flushBlocks();
    await b.ledger.load();
    await assert.rejects(b.ledger.acceptCall(rec2, { lookedUpAt, spentBy: null }), (e: Error & { code?: string }) => e.code === 'chain_unavailable');
    assert.equal(await b.ledger.call(rec2.txid), null);
  } finally {
    await b.close();
  }
});

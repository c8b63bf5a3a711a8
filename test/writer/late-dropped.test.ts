/**
 * `dropped` is a chain fact (PROTOCOL section 5, docs/STATE.md "Dropped calls"): a call
 * received after a processed block spent its outpoint by another transaction is stored
 * decided `dropped`, recorded in that block's journal entry and undo log, so it has the
 * record and the fate in a reorg that it has on a node that held it before the block.
 * A drop is committed by no root (docs/STATE.md, "Decisions"): the root of the spending
 * block is the same whether a node held the call, never holds it, or learns it late.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { LedgerBench, anchorTx, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { verifyDecisionProof, type Decision } from '@svc-node/protocol/state/decisions';
import type { Ledger } from '../../src/writer/ledger/index.js';

const PAY = Buffer.concat([Buffer.of(0x00, 0x14), Buffer.alloc(20, 1)]);

/** What block `height`'s state root commits to for `txid` (null: nothing), checked from the branch the node serves. */
async function committed(l: Ledger, height: number, txid: string): Promise<Decision | null> {
  const p = (await l.decisionProof(height, txid))!;
  const b = (hex: string): Buffer => Buffer.from(hex, 'hex');
  return verifyDecisionProof(b(p.state_root), b(p.contracts_root), b(p.decisions_root), b(txid), { siblings: p.siblings.map(b), leaf: p.leaf && { path: b(p.leaf.path), value: b(p.leaf.value) } });
}

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
    // The late drop leaves block h's published root as it was (h is the tip): a drop is
    // committed by no root, and the block's decisions show no leaf for the call.
    assert.deepEqual(await b.ledger.stateRootAt(h), rootBefore, 'a late drop does not rewrite its block\'s root');
    assert.equal(b.ledger.stateRoot, rootBefore.state_root);
    assert.equal(await committed(b.ledger, h, rec.txid), null);
    await b.ledger.rederive(h, { dropJournalAbove: false, verifyBelow: h + 1 });
    assert.equal(b.ledger.halted, false, 'a re-derivation from the journal (which records the drop) reproduces the root');
    assert.equal(b.ledger.stateRoot, rootBefore.state_root);

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

test('two nodes, one holding a call whose outpoint a block spends and one not, publish the same root for that block', async () => {
  const holder = await LedgerBench.open();
  const other = await LedgerBench.open();
  holder.followers.push(other.ledger);
  try {
    const cid = await holder.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    // A call both hold, executed in the block, and one only `holder` holds, dropped by it.
    const kept = holder.callRecord(cid, 'bump', [{ type: 'u64', value: 2n }], id32('late-dropped', 4), 1n);
    const lost = holder.callRecord(cid, 'bump', [{ type: 'u64', value: 3n }], id32('late-dropped', 5), 1n);
    await holder.ledger.acceptCalls([kept.rec, lost.rec]);
    await other.ledger.acceptCall(kept.rec);
    const conflict = spendOf(lost.rec.outpoint);
    await holder.block([kept.tx, conflict], [[lost.rec.outpoint, conflict.getId()]]);
    const h = holder.height;
    await Promise.all([holder.ledger.flushBlocks(), other.ledger.flushBlocks()]);

    assert.equal((await holder.ledger.call(lost.rec.txid))!.status, 'dropped');
    assert.equal(await other.ledger.call(lost.rec.txid), null);
    assert.equal((await other.ledger.call(kept.rec.txid))!.status, 'executed');
    const root = (await holder.ledger.stateRootAt(h))!;
    assert.deepEqual(await other.ledger.stateRootAt(h), root, 'the same root whichever pending calls a node held');
    assert.equal(other.ledger.stateRoot, holder.ledger.stateRoot);
    // The block's decisions commit to the executed call, not to the drop.
    assert.equal((await committed(holder.ledger, h, kept.rec.txid))?.status, 'executed');
    assert.equal(await committed(holder.ledger, h, lost.rec.txid), null);
  } finally {
    await holder.close();
    await other.close();
  }
});

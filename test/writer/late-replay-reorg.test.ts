/**
 * A late payload's acceptance queues its replay behind whatever the writer queued
 * meanwhile, so a chain update can run first, while the replay is owed: the stored roots
 * from the payload's block up then predate it. A reorganisation deeper than the undo
 * window re-derives from the journal, which holds the payload's anchor, and must not take
 * those roots for a disagreement (a consensus halt): they are the owed replay's to rewrite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { logger } from '../../src/log.js';
import { JOURNAL_WINDOW } from '../../src/writer/ledger/index.js';
import type { BlockInput } from '../../src/records.js';

const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('a reorganisation deeper than the undo window, applied while a late payload\'s replay is owed, does not halt and ends with the payload decided', async () => {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 5n }], id32('late-replay-reorg', 1), 1n);
    await b.block([tx]); // its payload not received yet: a late payload once it comes
    const placed = b.height;
    const depth = JOURNAL_WINDOW + 2;
    for (let i = 0; i < depth + 1; i++) await b.block([]);
    const tip = b.height;
    const fork = tip - depth;
    assert.ok(fork > placed);
    await b.ledger.db.close();
    writer = await Writer.open(join(b.dir, 'db'), 'late-replay-reorg-test', logger('test'));

    // The new branch: empty blocks from the fork, one more than it replaces.
    const disconnected = [];
    for (let h = tip; h > fork; h--) disconnected.push({ height: h, hash: toHex(id32('block', h)) });
    const connected: BlockInput[] = [];
    let prev = toHex(id32('block', fork));
    for (let h = fork + 1; h <= tip + 1; h++) {
      const hash = toHex(id32('other branch', h));
      connected.push({ height: h, hash, prevHash: prev, txs: [], txids: ['00'.repeat(32)], spends: [] });
      prev = hash;
    }
    // The acceptance is queued first; the update behind it, ahead of the replay it owes.
    const accepted = writer.acceptCall(rec);
    const updated = writer.applyChainUpdate({ fork_height: fork, disconnected, connected, endsChain: true });
    await accepted;
    await updated;
    await writer.serial(() => undefined);

    const l = writer.ledger;
    assert.equal(l.halted, false, `halted: ${l.haltReason}`);
    const call = await l.call(rec.txid);
    assert.equal(call?.status, 'executed');
    assert.equal(call?.block_height, placed);
    // Every stored root is what re-deriving the chain gives.
    const root = l.stateRoot;
    await l.rederive(l.tip!.height, { dropJournalAbove: false, verifyBelow: l.tip!.height + 1 });
    assert.equal(l.halted, false, `re-derivation disagreed: ${l.haltReason}`);
    assert.equal(l.stateRoot, root);
  } finally {
    await writer?.close();
    await b.close().catch(() => undefined);
  }
});

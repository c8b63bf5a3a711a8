/**
 * A late payload (its stamp mined before it arrived) is stored durably and answered
 * before its replay runs. A node stopped in between must owe that replay at its next
 * start: the call is decided at its block, as if the replay had run, and not stay pending
 * with a state root that differs from its peers'.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { logger } from '../../src/log.js';

test('a replay owed for a late payload is resumed when the writer opens after a stop', async () => {
  const b = await LedgerBench.open();
  const dbPath = join(b.dir, 'db');
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('late-caller', 1);
    const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 5n }], caller, 1n);
    // The stamp is mined while the node does not have the payload: an orphan.
    await b.block([tx]);
    const stampHeight = b.height;
    await b.block([]);
    const rootWithout = b.ledger.stateRoot;
    // The payload arrives: stored durably, its replay owed (the writer would queue it now;
    // here the node "stops" first).
    const accepted = await b.ledger.acceptCall(rec);
    assert.equal(accepted.replayFrom, stampHeight);
    assert.equal(b.ledger.owedReplayHeight(), stampHeight);
    assert.equal((await b.ledger.call(rec.txid))?.status, 'pending');
    await b.ledger.db.close();

    writer = await Writer.open(dbPath, 'replay-resume-test', logger('test'));
    await writer.serial(() => undefined); // the queued replay has run
    const decided = await writer.ledger.call(rec.txid);
    assert.equal(decided?.status, 'executed', JSON.stringify(decided));
    assert.equal(decided?.block_height, stampHeight);
    assert.equal(writer.ledger.owedReplayHeight(), null);
    assert.notEqual(writer.ledger.stateRoot, rootWithout);
    const rootAfter = writer.ledger.stateRoot;
    await writer.db.close();

    // Nothing is owed any more: a second start replays nothing and keeps the root.
    writer = await Writer.open(dbPath, 'replay-resume-test', logger('test'));
    await writer.serial(() => undefined);
    assert.equal(writer.ledger.owedReplayHeight(), null);
    assert.equal(writer.ledger.stateRoot, rootAfter);
  } finally {
    await writer?.db.close().catch(() => undefined);
    await b.close().catch(() => undefined);
  }
});

/**
 * Late payloads (their stamps mined before they arrived) each owe a replay from their
 * block. Replays not yet started merge into one from the lowest block (Writer.
 * scheduleReplay): a sync that brings many late payloads re-applies the blocks once, not
 * once per payload, and the outcome is what re-deriving the chain with every payload gives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { logger } from '../../src/log.js';
import type { CallRecord } from '../../src/records.js';

test('late payloads that arrive together are replayed once, from the lowest block', async () => {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('late-replays', 1);
    // Four blocks of three stamped calls each, whose payloads the node never received.
    const late: CallRecord[] = [];
    let callId = 1n;
    const first = b.height + 1;
    for (let blk = 0; blk < 4; blk++) {
      const txs = [];
      for (let i = 0; i < 3; i++) {
        const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: callId }], caller, callId++);
        late.push(rec);
        txs.push(tx);
      }
      await b.block(txs);
    }
    const tip = b.height;
    const dbPath = join(b.dir, 'db');
    await b.ledger.db.close();
    writer = await Writer.open(dbPath, 'late-replays-test', logger('test'));
    const ledger = writer.ledger;
    const rootBefore = ledger.stateRoot;
    const replays: number[] = [];
    const replayFrom = ledger.replayFrom.bind(ledger);
    ledger.replayFrom = (h: number) => {
      replays.push(h);
      return replayFrom(h);
    };

    // As a sync delivers them: all at once, newest block first.
    const answers = await Promise.all([...late].reverse().map((rec) => writer!.acceptCall(rec)));
    assert.ok(answers.every((a) => a.created));
    await writer.serial(() => undefined); // after the replay queued by those accepts

    assert.deepEqual(replays, [first], 'one replay, from the block of the oldest late stamp');
    for (const rec of late) assert.equal((await ledger.call(rec.txid))!.status, 'executed', `late call ${rec.call_id}`);
    assert.notEqual(ledger.stateRoot, rootBefore);
    assert.equal(ledger.tip!.height, tip);

    // Re-deriving from the journal with every payload reproduces every stored root.
    const root = ledger.stateRoot;
    await ledger.rederive(tip, { dropJournalAbove: false, verifyBelow: tip + 1 });
    assert.equal(ledger.halted, false, `re-derivation disagreed: ${ledger.haltReason}`);
    assert.equal(ledger.stateRoot, root);
  } finally {
    await writer?.db.close();
    await b.close().catch(() => undefined);
  }
});

/**
 * Late payloads (their stamps mined before they arrived) each owe a replay from their
 * block. Replays not yet started merge into one from the lowest block (Writer.
 * scheduleReplay): a sync that brings many late payloads re-applies the blocks once, not
 * once per payload, and the outcome is what re-deriving the chain with every payload gives.
 * A replay whose turn comes while acceptance groups wait lets them go first, so the late
 * payloads among them join it rather than owing a replay of their own after it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { logger } from '../../src/log.js';
import type { CallRecord } from '../../src/records.js';

/** Four blocks of three stamped calls each, whose payloads the node never received; a writer opened on that store. */
async function lateCalls(b: LedgerBench): Promise<{ late: CallRecord[][]; first: number; tip: number; writer: Writer }> {
  const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
  const caller = id32('late-replays', 1);
  const late: CallRecord[][] = [];
  let callId = 1n;
  const first = b.height + 1;
  for (let blk = 0; blk < 4; blk++) {
    const txs = [];
    const recs: CallRecord[] = [];
    for (let i = 0; i < 3; i++) {
      const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: callId }], caller, callId++);
      recs.push(rec);
      txs.push(tx);
    }
    late.push(recs);
    await b.block(txs);
  }
  const tip = b.height;
  await b.ledger.db.close();
  return { late, first, tip, writer: await Writer.open(join(b.dir, 'db'), 'late-replays-test', logger('test')) };
}

/** The heights the ledger's replays start from, in order. */
function spyReplays(writer: Writer): number[] {
  const replays: number[] = [];
  const ledger = writer.ledger;
  const replayFrom = ledger.replayFrom.bind(ledger);
  ledger.replayFrom = (h: number) => {
    replays.push(h);
    return replayFrom(h);
  };
  return replays;
}

/** Every late call executed, and re-deriving the chain reproduces every stored root. */
async function assertReplayed(writer: Writer, late: CallRecord[], tip: number): Promise<void> {
  const ledger = writer.ledger;
  for (const rec of late) assert.equal((await ledger.call(rec.txid))!.status, 'executed', `late call ${rec.call_id}`);
  assert.equal(ledger.tip!.height, tip);
  const root = ledger.stateRoot;
  await ledger.rederive(tip, { dropJournalAbove: false, verifyBelow: tip + 1 });
  assert.equal(ledger.halted, false, `re-derivation disagreed: ${ledger.haltReason}`);
  assert.equal(ledger.stateRoot, root);
}

test('late payloads that arrive together are replayed once, from the lowest block', async () => {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const c = await lateCalls(b);
    writer = c.writer;
    const late = c.late.flat();
    const rootBefore = writer.ledger.stateRoot;
    const replays = spyReplays(writer);

    // As a sync delivers them: all at once, newest block first.
    const answers = await Promise.all([...late].reverse().map((rec) => writer!.acceptCall(rec)));
    assert.ok(answers.every((a) => a.created));
    await writer.serial(() => undefined); // after the replay queued by those accepts

    assert.deepEqual(replays, [c.first], 'one replay, from the block of the oldest late stamp');
    assert.notEqual(writer.ledger.stateRoot, rootBefore);
    await assertReplayed(writer, late, c.tip);
  } finally {
    await writer?.db.close();
    await b.close().catch(() => undefined);
  }
});

test('a replay whose turn comes while acceptance groups wait runs after them, once for all', async () => {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const c = await lateCalls(b);
    writer = c.writer;
    const w = writer;
    const replays = spyReplays(w);
    const newer = [...c.late[2]!, ...c.late[3]!];
    const older = [...c.late[0]!, ...c.late[1]!];

    // The newer calls' group is committed and queues its replay; a job the test holds
    // keeps that replay waiting while the older calls arrive, so their group's commit is
    // queued behind the replay.
    const newerAnswers = Promise.all(newer.map((rec) => w.acceptCall(rec)));
    let held!: () => void;
    let release!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const hold = w.serial(() => {
      held();
      return new Promise<void>((r) => (release = r));
    });
    await holding;
    assert.equal((await newerAnswers).length, newer.length);
    const olderAnswers = Promise.all(older.map((rec) => w.acceptCall(rec)));
    release();
    await hold;
    assert.ok((await olderAnswers).every((a) => a.created));
    await w.settled();

    // One replay from the oldest late block: not one from the newer calls' block, then another.
    assert.deepEqual(replays, [c.first]);
    await assertReplayed(w, [...older, ...newer], c.tip);
  } finally {
    await writer?.db.close();
    await b.close().catch(() => undefined);
  }
});

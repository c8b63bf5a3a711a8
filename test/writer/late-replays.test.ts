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
import { undo } from '../../src/writer/store/index.js';
import { JOURNAL_WINDOW } from '../../src/writer/ledger/index.js';

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

/**
 * Blocks above the late calls' block: more than the reorg window (144), so only the undo
 * logs kept for replays (REPLAY_WINDOW) reach below them.
 */
const DEEP = 200;

/** Late calls `DEEP` blocks below the tip: the replay's starts and the re-derivations it ran. */
async function deepLate(dropOldUndoLogs: boolean): Promise<{ replays: number[]; rederived: number; first: number }> {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('late-replays-deep', 1);
    const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 1n }], caller, 1n);
    await b.block([tx]);
    const first = b.height;
    for (let i = 0; i < DEEP; i++) await b.block([]);
    const tip = b.height;
    if (dropOldUndoLogs) {
      // As a store written when undo logs were kept for the reorg window only.
      const old = (await b.ledger.db.rangeOf(undo.all())).filter((r) => undo.heightOf(r.key) <= tip - JOURNAL_WINDOW);
      await b.ledger.db.batch(old.map((r) => ({ type: 'del' as const, key: r.key })));
    }
    await b.ledger.db.close();
    writer = await Writer.open(join(b.dir, 'db'), 'late-replays-test', logger('test'));
    const replays = spyReplays(writer);
    let rederived = 0;
    const ledger = writer.ledger;
    const rederive = ledger.rederive.bind(ledger);
    ledger.rederive = (h, o) => {
      rederived++;
      return rederive(h, o);
    };
    assert.ok((await writer.acceptCall(rec)).created);
    await writer.settled();
    await assertReplayed(writer, [rec], tip);
    return { replays, rederived: rederived - 1, first }; // assertReplayed re-derives once itself
  } finally {
    await writer?.db.close();
    await b.close().catch(() => undefined);
  }
}

test('a late payload deeper than the reorg window replays from its block through the undo logs; a store holding fewer re-derives', async () => {
  const deep = await deepLate(false);
  assert.deepEqual(deep.replays, [deep.first]);
  assert.equal(deep.rederived, 0, 'rewound through the undo logs, not re-derived from the anchor');
  const legacy = await deepLate(true);
  assert.deepEqual(legacy.replays, [legacy.first]);
  assert.equal(legacy.rederived, 1, 'below the undo logs stored: re-derived, never a rewind through logs it lacks');
});

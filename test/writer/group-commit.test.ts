/**
 * The writer's group commit of accepted calls (src/writer/writer.ts acceptCall): calls
 * accepted concurrently share synced batches, each is answered only after the batch that
 * holds it is durable, repeats and conflicts inside one batch get the answers one-by-one
 * accepts would give, and a batch that cannot be written acknowledges none of its calls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { BatchOp } from '../../src/writer/db.js';
import { Bucket, bucketOf, pendingCalls } from '../../src/writer/store/index.js';
import { logger } from '../../src/log.js';

async function writerWithContract(): Promise<{ writer: Writer; b: LedgerBench; cid: string; dbPath: string }> {
  const b = await LedgerBench.open();
  const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
  const dbPath = join(b.dir, 'db');
  await b.ledger.db.close();
  return { writer: await Writer.open(dbPath, 'group-commit-test', logger('test')), b, cid, dbPath };
}

/** Records every synced batch: the txids of the calls it stores, and when it finished. */
function watchBatches(writer: Writer, log: string[], onStart?: () => void): { batches: string[][] } {
  const batches: string[][] = [];
  const db = writer.db;
  const original = db.batch.bind(db);
  db.batch = async (ops: BatchOp[], sync = true) => {
    const txids = ops.filter((o) => bucketOf(o.key) === Bucket.pendingCall).map((o) => pendingCalls.txidOf(o.key).toString('hex'));
    const written = original(ops, sync);
    if (txids.length > 0) onStart?.();
    await written;
    if (txids.length > 0) {
      batches.push(txids);
      for (const t of txids) log.push(`durable ${t}`);
    }
  };
  return { batches };
}

test('concurrent accepts share synced batches; each is answered after its batch is durable; all survive a reopen', async () => {
  const { writer, b, cid, dbPath } = await writerWithContract();
  let reopened: Writer | null = null;
  try {
    const log: string[] = [];
    const caller = id32('caller', 7);
    const recs = Array.from({ length: 60 }, (_, i) => b.callRecord(cid, 'bump', [{ type: 'u64', value: BigInt(i + 1) }] as never, caller, BigInt(i + 1)).rec);
    const accept = (rec: (typeof recs)[number]) =>
      writer.acceptCall(rec).then((a) => {
        log.push(`ack ${rec.txid}`);
        return a;
      });
    // Wave 2 arrives while wave 1's batch is being synced: it must wait for a batch of its own.
    let wave2: Promise<unknown>[] = [];
    const { batches } = watchBatches(writer, log, () => {
      if (wave2.length === 0) wave2 = recs.slice(40).map(accept);
    });
    const wave1 = await Promise.all(recs.slice(0, 40).map(accept));
    const answers = [...wave1, ...((await Promise.all(wave2)) as typeof wave1)];
    assert.ok(answers.every((a, i) => a.created && a.record.txid === recs[i]!.txid));
    assert.equal(batches.flat().length, 60, 'each call stored once');
    assert.deepEqual(batches.map((t) => t.length), [40, 20], 'one synced batch per wave');
    for (const r of recs) {
      const ack = log.indexOf(`ack ${r.txid}`);
      const durable = log.indexOf(`durable ${r.txid}`);
      assert.ok(durable >= 0 && durable < ack, `call ${r.txid} answered before its batch was durable`);
    }
    await writer.close();
    reopened = await Writer.open(dbPath, 'group-commit-test', logger('test'));
    assert.equal(reopened.ledger.pendingCount, 60);
    for (const r of recs) assert.equal((await reopened.ledger.call(r.txid))?.status, 'pending');
  } finally {
    if (reopened) await reopened.close();
    else await writer.close().catch(() => undefined);
    b.ledger.db.close = async () => undefined;
    await b.close();
  }
});

test('a repeat and a conflict inside one batch get the answers of one-by-one accepts', async () => {
  const { writer, b, cid } = await writerWithContract();
  try {
    const caller = id32('caller', 8);
    const plain = b.callRecord(cid, 'bump', [{ type: 'u64', value: 1n }] as never, caller, 1n).rec;
    const first = b.callRecord(cid, 'bump', [{ type: 'u64', value: 2n }] as never, caller, 2n).rec;
    const other = b.callRecord(cid, 'bump', [{ type: 'u64', value: 3n }] as never, caller, 3n).rec;
    const conflicting = { ...other, txid: first.txid }; // same txid, another payload
    // Submitted in one turn: one batch, taken in this order.
    const results = await Promise.allSettled([plain, first, { ...first }, conflicting].map((r) => writer.acceptCall(r)));
    assert.equal(results[0]!.status, 'fulfilled');
    assert.deepEqual(results[1]!.status === 'fulfilled' && [results[1].value.created, results[1].value.record.txid], [true, first.txid]);
    // The stored record (the payload itself stays on disk only, see Ledger.callPayload).
    assert.deepEqual(
      results[2]!.status === 'fulfilled' && [results[2].value.created, results[2].value.record.txid, results[2].value.record.envelope_hash, results[2].value.record.status],
      [false, first.txid, first.envelope_hash, 'pending'],
      'a repeat answers the stored record',
    );
    assert.equal(results[3]!.status, 'rejected');
    const e = (results[3] as PromiseRejectedResult).reason;
    assert.ok(e instanceof NodeError && e.code === 'conflict', String(e));
    assert.equal(writer.ledger.pendingCount, 2);
  } finally {
    await writer.close();
    b.ledger.db.close = async () => undefined;
    await b.close();
  }
});

test('a batch that cannot be written acknowledges none of its calls and halts the node', async () => {
  const { writer, b, cid } = await writerWithContract();
  try {
    const caller = id32('caller', 9);
    const recs = Array.from({ length: 5 }, (_, i) => b.callRecord(cid, 'bump', [{ type: 'u64', value: BigInt(i + 1) }] as never, caller, BigInt(i + 1)).rec);
    writer.db.batch = async () => {
      throw Object.assign(new Error('IO error: No space left on device'), { code: 'ENOSPC' });
    };
    const results = await Promise.allSettled(recs.map((r) => writer.acceptCall(r)));
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      const e = (r as PromiseRejectedResult).reason;
      assert.ok(e instanceof NodeError && e.code === 'halted', String(e));
    }
    assert.equal(writer.ledger.pendingCount, 0);
    assert.equal(writer.ledger.halted, true);
  } finally {
    await writer.db.close().catch(() => undefined);
    b.ledger.db.close = async () => undefined;
    await b.close();
  }
});

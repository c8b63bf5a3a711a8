/**
 * The writer's metrics and state-version events come from the ledger's observer
 * (LedgerObserver, src/writer/ledger/observer.ts): blocks the chain brings count in
 * svc_blocks_applied_total, a late payload's replay of the journal does not (it applies
 * no new block), a reorg counts by its depth, and every change of the processed state,
 * replays included, is announced to the REST read cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { WriterQueries } from '../../src/writer/queries.js';
import { toHex } from '@svc-node/protocol/hash';
import { logger } from '../../src/log.js';
import type { StateVersion } from '../../src/messages.js';
import type { BlockInput, CallRecord } from '../../src/records.js';

/** An empty block on top of `prev`; `salt` tells two blocks at one height apart. */
function emptyBlock(prev: { height: number; hash: string }, salt: string): BlockInput {
  const height = prev.height + 1;
  return { height, hash: toHex(id32(`queries-test-${salt}`, height)), prevHash: prev.hash, txs: [], txids: [], spends: [] };
}

test('a late payload replay is not a block applied; live blocks and reorgs are counted; every state change is announced', async () => {
  const b = await LedgerBench.open();
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('queries-test', 1);
    // Two blocks whose stamped calls the node has not received yet.
    const late: CallRecord[] = [];
    for (let n = 1n; n <= 2n; n++) {
      const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: n }], caller, n);
      late.push(rec);
      await b.block([tx]);
    }
    await b.ledger.db.close();
    writer = await Writer.open(join(b.dir, 'db'), 'queries-test', logger('test'));
    const versions: StateVersion[] = [];
    const q = new WriterQueries(writer, (v) => versions.push(v));
    const ledger = writer.ledger;
    const rootBefore = ledger.stateRoot;

    for (const rec of late) assert.ok((await writer.acceptCall(rec)).created);
    await writer.serial(() => undefined); // after the replay those accepts queued
    assert.equal((await ledger.call(late[1]!.txid))!.status, 'executed', 'the replay decided the late calls');
    assert.notEqual(ledger.stateRoot, rootBefore);
    let m = await q.readMetrics();
    assert.equal(m.blocks_applied, 0, 'a replay re-applies journal entries: no block was applied');
    assert.equal(m.block_apply_seconds.count, 0);
    assert.deepEqual(versions.at(-1), { height: ledger.tip!.height, state_root: ledger.stateRoot, block_hash: ledger.tip!.hash }, 'the replayed state is announced');

    const first = emptyBlock(ledger.tip!, 'a');
    await writer.applyChainUpdate({ fork_height: ledger.tip!.height, disconnected: [], connected: [first] });
    m = await q.readMetrics();
    assert.equal(m.blocks_applied, 1);
    assert.equal(m.block_apply_seconds.count, 1);
    assert.deepEqual(versions.at(-1), { height: first.height, state_root: ledger.stateRoot, block_hash: first.hash });

    // A reorg of depth 1: the block leaves, another takes its place.
    const other = emptyBlock({ height: first.height - 1, hash: first.prevHash }, 'b');
    await writer.applyChainUpdate({ fork_height: first.height - 1, disconnected: [{ height: first.height, hash: first.hash }], connected: [other] });
    m = await q.readMetrics();
    assert.equal(m.blocks_applied, 2);
    assert.deepEqual(m.reorgs_by_depth, { '1': 1 });
    assert.deepEqual(versions.at(-1), { height: other.height, state_root: ledger.stateRoot, block_hash: other.hash });
  } finally {
    await writer?.db.close();
    await b.close().catch(() => undefined);
  }
});

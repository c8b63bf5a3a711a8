/**
 * The live feed sends only what is durable. The state version the REST front follows is
 * announced when a block's root is set, which is before the block's batch is written
 * (block writes are pipelined); the feed's step (StreamQueries.streamStep) is a writer job
 * queued behind the chain update, so it answers the block only once its write finished.
 * Here the block's write is held at the RocksDB batch until the test lets it go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writer } from '../../src/writer/writer.js';
import { WriterQueries } from '../../src/writer/queries.js';
import { StreamQueries } from '../../src/writer/stream-queries.js';
import { logger } from '../../src/log.js';
import type { StateVersion, StreamStep } from '../../src/messages/rest.js';

const hash = (n: number): string => n.toString(16).padStart(64, '0');

test('a block is announced before its write is durable; the feed answers it only after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
  const writer = await Writer.open(join(dir, 'db'), 'durable-test', logger('test'));
  try {
    const order: string[] = [];
    let announced: (v: StateVersion) => void = () => undefined;
    const announcement = new Promise<StateVersion>((r) => (announced = r));
    new WriterQueries(writer, (v) => {
      if (v.height === 1) {
        order.push('announced');
        announced(v);
      }
    });
    const stream = new StreamQueries(writer);
    await writer.initAnchor({ height: 0, hash: hash(0) });

    // Hold every batch written from here on until `release`.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let writing: () => void = () => undefined;
    const writeStarted = new Promise<void>((r) => (writing = r));
    const db = writer.db;
    const newBatch = db.newBatch.bind(db);
    db.newBatch = () => {
      const b = newBatch();
      const write = b.write.bind(b);
      b.write = async (sync) => {
        writing();
        await gate;
        return write(sync);
      };
      return b;
    };

    const update = writer.applyChainUpdate({ fork_height: 0, disconnected: [], connected: [{ height: 1, hash: hash(1), prevHash: hash(0), txs: [], txids: ['00'.repeat(32)], spends: [] }] });
    const v = await announcement;
    assert.equal(v.height, 1, 'the version is out while the write is held');
    await writeStarted;
    let answered: StreamStep | null = null;
    const step = stream.streamStep({ known: [{ height: 0, hash: hash(0) }], max_blocks: 10, events: [], call_pages: [], block_pages: [], call_contracts: [], txids: [], contracts: [] }).then((s) => {
      order.push('step');
      answered = s;
      return s;
    });
    // A RocksDB round trip that does not wait for the write: the step had as long to answer.
    await db.getManyNow([Buffer.from('probe')]);
    assert.equal(answered, null, 'the step waits for the write');
    order.push('durable');
    release();
    await update;
    const s = await step;
    assert.deepEqual(order, ['announced', 'durable', 'step']);
    assert.equal(s.to, 1);
    assert.deepEqual(s.blocks.map((b) => [b.height, b.block_hash]), [[1, hash(1)]]);
  } finally {
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

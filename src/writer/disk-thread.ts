/**
 * The disk thread: writes the writer's batches to RocksDB so the writer thread does not
 * wait for them. @nxtedition/rocksdb performs a batch write on the calling thread (memtable
 * inserts, the write-ahead log, its fsync: ~10 ms for a 7,000-operation block, a third of
 * applying it); the writer packs a batch into one transferred buffer and goes on with the
 * next block while this thread writes (docs/ARCHITECTURE.md, "Storage engine").
 *
 * One per process, started with the first database and kept (a thread start costs ~40 ms,
 * which reopening the database, or the simulation's many nodes, would pay every time).
 * It shares each database through the binding's handle (one RocksDB instance, which is
 * thread-safe) and never opens or closes one: the writer thread owns the database's life
 * and detaches it here before closing it.
 */
import { parentPort } from 'node:worker_threads';
import { RocksLevel } from '@nxtedition/rocksdb';
import { forEachPacked, type DiskReply, type DiskRequest } from './disk-batch.js';

const dbs = new Map<number, RocksLevel>();

// Requests run one after another in arrival order: the binding writes a batch before
// `write` returns to the event loop, so the next request starts after it.
parentPort!.on('message', (m: DiskRequest) => {
  void handle(m).then(
    (): DiskReply => ({ id: m.id, ok: true }),
    (e: unknown): DiskReply => ({ id: m.id, ok: false, message: e instanceof Error ? e.message : String(e) }),
  ).then((reply) => parentPort!.postMessage(reply));
});

async function handle(m: DiskRequest): Promise<void> {
  if (m.k === 'attach') {
    const db = new RocksLevel(m.handle, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    dbs.set(m.db, db);
  } else if (m.k === 'detach') {
    dbs.delete(m.db);
  } else {
    const db = dbs.get(m.db);
    if (!db) throw new Error(`disk thread: database ${m.db} is not attached`);
    const batch = db.batch();
    forEachPacked(
      Buffer.from(m.buf, 0, m.bytes),
      (k, v) => batch.put(k, v),
      (k) => batch.del(k),
    );
    await batch.write({ sync: m.sync });
  }
}

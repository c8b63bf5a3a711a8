/**
 * Child process of the store migration (migrate-store.ts): opens a data directory with
 * the earlier binding (rocksdb@5.2.1) and writes every entry, in key order, to stdout in
 * the frames of legacy-frames.ts. A process of its own: the two bindings each link
 * their own RocksDB, and loaded in one process they crashed it at exit (measured), and a
 * Node build that cannot load the old binding aborts the process that tries.
 * Failures: one line on stderr, exit 1.
 */
import { createRequire } from 'node:module';
import { FRAME_HEAD, TRAILER, TRAILER_BYTES } from './legacy-frames.js';

/** abstract-leveldown 7 (rocksdb@5.2.1), callback style; only what the dump uses. */
interface LegacyDown {
  open(options: { createIfMissing: boolean }, cb: (e?: Error | null) => void): void;
  close(cb: (e?: Error | null) => void): void;
  iterator(options: { keyAsBuffer: true; valueAsBuffer: true }): {
    next(cb: (e: Error | null | undefined, key?: Buffer, value?: Buffer) => void): void;
    end(cb: (e?: Error | null) => void): void;
  };
}

/** Frames gathered before one write to the pipe: fewer, larger writes. */
const FLUSH_BYTES = 1 << 20;

function call(fn: (cb: (e?: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => fn((e) => (e ? reject(e) : resolve())));
}

async function write(chunk: Buffer): Promise<void> {
  if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
}

async function dump(path: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const rocksdb = require('rocksdb') as (location: string) => LegacyDown;
  const db = rocksdb(path);
  await call((cb) => db.open({ createIfMissing: false }, cb));
  const it = db.iterator({ keyAsBuffer: true, valueAsBuffer: true });
  let count = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for (;;) {
    const [k, v] = await new Promise<[Buffer | undefined, Buffer | undefined]>((resolve, reject) => it.next((e, k, v) => (e ? reject(e) : resolve([k, v]))));
    if (k === undefined || v === undefined) break;
    const head = Buffer.allocUnsafe(FRAME_HEAD);
    head.writeUInt32BE(k.length, 0);
    head.writeUInt32BE(v.length, 4);
    pending.push(head, k, v);
    pendingBytes += FRAME_HEAD + k.length + v.length;
    count++;
    if (pendingBytes >= FLUSH_BYTES) {
      await write(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
    }
  }
  const trailer = Buffer.allocUnsafe(TRAILER_BYTES);
  trailer.writeUInt32BE(TRAILER, 0);
  trailer.writeBigUInt64BE(BigInt(count), 4);
  pending.push(trailer);
  await write(Buffer.concat(pending));
  await call((cb) => it.end(cb));
  await call((cb) => db.close(cb));
}

// No process.exit on success: the process ends when stdout has drained.
dump(process.argv[2]!).catch((e: Error) => {
  process.stderr.write(`${e.message.replace(/\s+/g, ' ')}\n`);
  process.exit(1);
});

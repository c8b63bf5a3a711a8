/**
 * Moves a data directory written by the node's earlier storage binding (rocksdb@5.2.1,
 * whose tables are Snappy-compressed) to the current one (@nxtedition/rocksdb, which
 * reads no Snappy): every key and value copied byte for byte, the copy verified against
 * what was read, then swapped in by two renames. The original is kept beside it.
 *
 * The old binding is read in a child process (legacy-dump.ts): it loads only in Node
 * builds that can load it (Debian's Node 20, official builds before 20.12; later official
 * builds abort while loading it, Level/rocksdb#228), and the two bindings in one process
 * crashed it at exit (measured).
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Db, LegacyStoreError, legacyEngineVersion, rocksAt } from './db.js';
import { FRAME_HEAD, TRAILER, TRAILER_BYTES } from './legacy-frames.js';

/** Suffix of the original directory, kept after a migration (the operator deletes it). */
export const LEGACY_SUFFIX = '.rocksdb-5.2.1';
/** Suffix of the copy while it is being written; a leftover one is incomplete and rewritten. */
const COPY_SUFFIX = '.migrating';
/** Bytes per write batch of the copy: large enough that syncing each is cheap, small enough to bound memory. */
const COPY_BATCH_BYTES = 4 << 20;

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

export type MigrationResult =
  | { kind: 'current' }
  | { kind: 'migrated'; keys: number; bytes: number; legacyPath: string }
  | { kind: 'finished'; legacyPath: string };

/** One entry into a digest of a key-ordered store: lengths first, so entries cannot run together. */
function digestEntry(h: Hash, k: Buffer, v: Buffer): void {
  const len = Buffer.allocUnsafe(8);
  len.writeUInt32BE(k.length, 0);
  len.writeUInt32BE(v.length, 4);
  h.update(len);
  h.update(k);
  h.update(v);
}

/** fsync a directory so the renames in it survive a power loss. */
function syncDir(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether `path` is a store of the current binding (it is opened and closed to be sure). */
async function isCurrent(path: string): Promise<boolean> {
  if (legacyEngineVersion(path) !== null) return false;
  try {
    const db = await Db.open(path);
    await db.close();
    return true;
  } catch (e) {
    if (e instanceof LegacyStoreError) return false;
    throw new MigrationError(`cannot open ${path}: ${(e as Error).message}`);
  }
}

/** Why the dump child failed, as the operator should read it. */
function dumpFailure(stderr: string, code: number | null, signal: string | null): MigrationError {
  const line = stderr.trim().split('\n').pop() ?? '';
  if (code === 1 && line) {
    const locked = /lock/i.test(line) ? ' (is the node still running? stop it first)' : '';
    return new MigrationError(`cannot read the database with the earlier binding${locked}: ${line}`);
  }
  return new MigrationError(
    `this Node (${process.version}) cannot load the earlier binding (rocksdb 5.2.1; official Node builds from 20.12 on abort while loading it; the reader ended with ${signal ?? `code ${code}`}): run the migration with the Node 20 the node ran on before (Debian's, or an official build before 20.12)`,
  );
}

/**
 * Reads every entry of the legacy store at `from` (through the dump child) into a new
 * store at `to`; returns the count, the bytes and a digest of what was read.
 */
async function copy(from: string, to: string): Promise<{ keys: number; bytes: number; digest: string }> {
  try {
    createRequire(import.meta.url).resolve('rocksdb');
  } catch {
    throw new MigrationError('the earlier binding (rocksdb 5.2.1, an optional dependency) is not installed: run `npm ci` without --omit=optional, then again');
  }
  const child = spawn(process.execPath, [fileURLToPath(new URL('./legacy-dump.js', import.meta.url)), from], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));

  const target = rocksAt(to);
  await target.open();
  const h = createHash('sha256');
  let keys = 0;
  let bytes = 0;
  let trailerCount: bigint | null = null;
  try {
    let batch = target.batch();
    let batchBytes = 0;
    let buf: Buffer = Buffer.alloc(0);
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      let off = 0;
      for (;;) {
        if (buf.length - off < FRAME_HEAD) break;
        const klen = buf.readUInt32BE(off);
        if (klen === TRAILER) {
          if (buf.length - off < TRAILER_BYTES) break;
          trailerCount = buf.readBigUInt64BE(off + 4);
          off += TRAILER_BYTES;
          continue;
        }
        const vlen = buf.readUInt32BE(off + 4);
        if (buf.length - off < FRAME_HEAD + klen + vlen) break;
        // Copies: the batch keeps no reference, but the digest and batch must not see a reused buffer.
        const k = Buffer.from(buf.subarray(off + FRAME_HEAD, off + FRAME_HEAD + klen));
        const v = Buffer.from(buf.subarray(off + FRAME_HEAD + klen, off + FRAME_HEAD + klen + vlen));
        off += FRAME_HEAD + klen + vlen;
        batch.put(k, v);
        digestEntry(h, k, v);
        keys++;
        bytes += klen + vlen;
        batchBytes += klen + vlen;
        if (batchBytes >= COPY_BATCH_BYTES) {
          await batch.write({ sync: true });
          batch = target.batch();
          batchBytes = 0;
        }
      }
      buf = buf.subarray(off);
    }
    await batch.write({ sync: true });
  } finally {
    await target.close();
  }
  const { code, signal } = await exited;
  if (code !== 0) throw dumpFailure(stderr, code, signal);
  if (trailerCount === null || trailerCount !== BigInt(keys)) {
    throw new MigrationError(`the earlier binding's read of ${from} ended early (${keys} entries received${trailerCount === null ? ', no end mark' : ` of ${trailerCount}`}); the original is unchanged`);
  }
  return { keys, bytes, digest: h.digest('hex') };
}

/** Digest of every entry of the store at `path`, read with the current binding. */
async function digestOf(path: string): Promise<{ keys: number; digest: string }> {
  const db = rocksAt(path);
  await db.open();
  const h = createHash('sha256');
  let keys = 0;
  try {
    for await (const [k, v] of db.iterator({})) {
      digestEntry(h, k, v);
      keys++;
    }
  } finally {
    await db.close();
  }
  return { keys, digest: h.digest('hex') };
}

/**
 * Migrates the store at `dbPath` when it was written by the earlier binding. Safe to run
 * again after an interruption at any point: an incomplete copy is rewritten, and a copy
 * verified before the interruption is swapped in.
 */
export async function migrateStore(dbPath: string): Promise<MigrationResult> {
  const legacyPath = dbPath + LEGACY_SUFFIX;
  const copyPath = dbPath + COPY_SUFFIX;
  // Interrupted between the two renames: the original is already aside, so the copy was verified.
  if (!existsSync(dbPath) && existsSync(legacyPath) && existsSync(copyPath)) {
    renameSync(copyPath, dbPath);
    syncDir(dirname(dbPath));
    return { kind: 'finished', legacyPath };
  }
  if (!existsSync(`${dbPath}/CURRENT`)) throw new MigrationError(`no database at ${dbPath} (db_path)`);
  if (await isCurrent(dbPath)) return { kind: 'current' };
  if (existsSync(legacyPath)) throw new MigrationError(`${legacyPath} already exists (an earlier migration's original?): move it away first`);

  rmSync(copyPath, { recursive: true, force: true });
  const copied = await copy(dbPath, copyPath).catch((e: unknown) => {
    rmSync(copyPath, { recursive: true, force: true });
    throw e;
  });
  const check = await digestOf(copyPath);
  if (check.keys !== copied.keys || check.digest !== copied.digest) {
    throw new MigrationError(`the copy at ${copyPath} does not match the original (${check.keys} keys read back of ${copied.keys} written); the original at ${dbPath} is unchanged`);
  }
  renameSync(dbPath, legacyPath);
  renameSync(copyPath, dbPath);
  syncDir(dirname(dbPath));
  return { kind: 'migrated', keys: copied.keys, bytes: copied.bytes, legacyPath };
}

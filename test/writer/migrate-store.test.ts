/**
 * The change of storage binding (rocksdb@5.2.1 -> @nxtedition/rocksdb): a data
 * directory the earlier node wrote (test/fixtures/legacy-store, made by its make.mjs with
 * the node at 1b73aff) is refused with one line that says what to do, is left exactly as
 * it was, and `migrate-store` moves it over with every entry, after which the node opens
 * it at the same tip, state root and call statuses.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Db, LegacyStoreError, legacyEngineVersion } from '../../src/writer/db.js';
import { Writer } from '../../src/writer/writer.js';
import { LEGACY_SUFFIX } from '../../src/writer/migrate-store.js';
import { logger } from '../../src/log.js';

const repo = new URL('../../../', import.meta.url).pathname;
const fixture = join(repo, 'test/fixtures/legacy-store');
const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as {
  processed_height: number;
  processed_hash: string;
  state_root: string;
  contracts: number;
  pending_calls: number;
  calls: Record<string, string>;
};
const cli = join(repo, 'dist/src/cli/migrate-store.js');

/** A fresh copy of the fixture's database in a temporary directory. */
function legacyCopy(): { dir: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  cpSync(join(fixture, 'db'), join(dir, 'db'), { recursive: true });
  return { dir, db: join(dir, 'db') };
}

/** Every file of a directory with its content hash: "unchanged" means this is equal. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) if (f !== 'LOCK') out[f] = createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
  return out;
}

function migrate(db: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, db], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Whether this Node build loads the earlier binding: Debian's Node 20 (this machine's,
 * CI's first run) does; official builds from 20.12 on abort while loading it (CI's Node 22
 * run). The test below asserts what the operator gets in either case.
 */
function legacyLoads(): boolean {
  const entry = createRequire(import.meta.url).resolve('rocksdb');
  return spawnSync(process.execPath, ['-e', `require(${JSON.stringify(entry)})`], { stdio: 'ignore' }).status === 0;
}

test('a data directory of the earlier binding is refused with a line naming the migration, and left exactly as it was', async () => {
  const { dir, db } = legacyCopy();
  try {
    const before = snapshot(db);
    await assert.rejects(Db.open(db), (e: unknown) => {
      assert.ok(e instanceof LegacyStoreError);
      assert.match(e.message, /earlier storage engine \(rocksdb 5\.2\.1.*npm run migrate-store/);
      return true;
    });
    assert.deepEqual(snapshot(db), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migrate-store moves every entry to the current binding; the node then opens it at the same tip, root and statuses; a second run has nothing to do', async (t) => {
  const { dir, db } = legacyCopy();
  try {
    const before = snapshot(db);
    const r = migrate(db);
    if (!legacyLoads()) {
      // This Node cannot read the old format: the operator is told which Node can, and nothing changed.
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^migrate-store: this Node \(v\d+[^)]*\) cannot load the earlier binding .*run the migration with the Node 20/);
      assert.deepEqual(snapshot(db), before);
      assert.deepEqual(readdirSync(dir), ['db']);
      t.diagnostic('the earlier binding does not load under this Node: checked the refusal instead of the copy');
      return;
    }
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^migrated .*: \d+ entries \(.* MiB\), verified; the original is kept at .*\.rocksdb-5\.2\.1/);
    // The original is kept beside it with its data unchanged (the earlier binding opened it
    // as the node did, taking its lock, which writes a new manifest and options file).
    const tables = (snap: Record<string, string>): [string, string][] => Object.entries(snap).filter(([f]) => f.endsWith('.sst'));
    assert.deepEqual(tables(snapshot(db + LEGACY_SUFFIX)), tables(before));
    assert.ok(tables(before).length > 0);
    assert.match(legacyEngineVersion(db + LEGACY_SUFFIX) ?? '', /^6\./);
    assert.equal(legacyEngineVersion(db), null);

    const writer = await Writer.open(db, 'migrate-test', logger('test'));
    try {
      const s = writer.status();
      assert.equal(s.processedHeight, expected.processed_height);
      assert.equal(s.processedHash, expected.processed_hash);
      assert.equal(s.stateRoot, expected.state_root);
      assert.equal(s.contracts, expected.contracts);
      assert.equal(s.pendingCalls, expected.pending_calls);
      for (const [txid, status] of Object.entries(expected.calls)) assert.equal((await writer.ledger.call(txid))?.status, status, txid);
    } finally {
      await writer.close();
    }

    const again = migrate(db);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already uses the current storage engine: nothing to do/);

    // Interrupted between its two renames (the original aside, the verified copy not yet
    // in place): the next run finishes it.
    renameSync(db, db + '.migrating');
    const finish = migrate(db);
    assert.equal(finish.code, 0, finish.stderr);
    assert.match(finish.stdout, /^finished an interrupted migration/);
    assert.ok(existsSync(join(db, 'CURRENT')) && !existsSync(db + '.migrating'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migrate-store refuses what it cannot do with one line and exit 1, changing nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  try {
    const r = migrate(join(dir, 'nothing-here'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^migrate-store: no database at .*nothing-here \(db_path\)\n$/);
    assert.deepEqual(readdirSync(dir), []);
    const usage = spawnSync(process.execPath, [cli, '--force'], { encoding: 'utf8' });
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /^migrate-store: usage: npm run migrate-store/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

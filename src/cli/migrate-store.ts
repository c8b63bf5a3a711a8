#!/usr/bin/env node
/**
 * `npm run migrate-store [-- DB_PATH]`: moves a data directory written by the node's
 * earlier storage binding (rocksdb 5.2.1) to the current one (src/writer/migrate-store.ts).
 * Without DB_PATH it migrates the node's own db_path (config.toml, SVC_DB_PATH). Run it
 * with the node stopped. Exit codes: 0 migrated or nothing to do; 1 the migration failed
 * (the original is unchanged); 2 usage or configuration error.
 */
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../config/options.js';
import { MigrationError, migrateStore } from '../writer/migrate-store.js';

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const fail = (line: string, code: number): void => {
  process.stderr.write(`migrate-store: ${line}\n`);
  process.exitCode = code;
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length > 1 || args.some((a) => a.startsWith('-'))) return fail('usage: npm run migrate-store [-- DB_PATH]  (default: db_path of the node\'s configuration)', 2);
  let dbPath: string;
  try {
    dbPath = resolve(args[0] ?? loadConfig().dbPath);
  } catch (e) {
    if (e instanceof ConfigError) return fail(e.message, 2);
    throw e;
  }
  try {
    const r = await migrateStore(dbPath);
    if (r.kind === 'current') say(`${dbPath} already uses the current storage engine: nothing to do`);
    else if (r.kind === 'finished') say(`finished an interrupted migration of ${dbPath}; the original is kept at ${r.legacyPath}: delete it once the node runs on the migrated store`);
    else say(`migrated ${dbPath}: ${r.keys} entries (${(r.bytes / 2 ** 20).toFixed(1)} MiB), verified; the original is kept at ${r.legacyPath}: delete it once the node runs on the migrated store`);
  } catch (e) {
    if (e instanceof MigrationError) return fail(e.message, 1);
    fail(`failed: ${(e as Error).message}`, 1);
  }
}

await main();

/**
 * The sink's PostgreSQL schema (docs/INDEXING.md): tables, indexes, the schema version and
 * its migrations, and the typed views made from each followed contract's ABI.
 *
 * Types: u64, i64 and u128 as `numeric` (exact at any size), `key` and `bytes` as `bytea`,
 * `string` as `text`, `bool` as `boolean`; hashes, txids and ids as `bytea` (32 bytes).
 */
import type pg from 'pg';
import { ClientError } from '@svc-node/client/errors';

/** The version this sink writes. Bump it with a migration from the previous version. */
export const SCHEMA_VERSION = 2;

/**
 * Statements that take a schema from version N to N + 1, by N. There is no version below
 * 1 to migrate from: a schema of another version is refused with what to do.
 */
const MIGRATIONS: Record<number, (schema: string) => string[]> = {
  // 2: calls.decided_height, the block that decided a call (a drop's too: it has no
  // block_height). A version 1 schema holds no dropped call, so it is the block_height.
  1: (s) => [`ALTER TABLE ${s}.calls ADD COLUMN decided_height bigint`, `UPDATE ${s}.calls SET decided_height = block_height`, `CREATE INDEX calls_decided ON ${s}.calls (decided_height)`],
};

export const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

function tables(s: string): string[] {
  return [
    `CREATE TABLE ${s}.sink_meta (key text PRIMARY KEY, value text NOT NULL)`,
    // One row per block the sink has applied (every block from where it started).
    `CREATE TABLE ${s}.blocks (height bigint PRIMARY KEY, block_hash bytea NOT NULL, state_root bytea NOT NULL)`,
    // Followed contracts: the alias names its views; through_height: every event and decided call up to it is here.
    `CREATE TABLE ${s}.contracts (contract_id bytea PRIMARY KEY, alias text NOT NULL UNIQUE, name text, abi jsonb NOT NULL, through_height bigint NOT NULL DEFAULT -1, cursor text)`,
    `CREATE TABLE ${s}.events (
       contract_id bytea NOT NULL, block_height bigint NOT NULL, tx_index integer NOT NULL, log_index integer NOT NULL,
       name text NOT NULL, params jsonb NOT NULL, param_values text[] NOT NULL, txid bytea NOT NULL, cursor text NOT NULL,
       PRIMARY KEY (contract_id, block_height, tx_index, log_index))`,
    `CREATE INDEX events_name ON ${s}.events (contract_id, name, block_height)`,
    `CREATE INDEX events_txid ON ${s}.events (txid)`,
    `CREATE INDEX events_height ON ${s}.events (block_height)`,
    // Calls of followed contracts that the chain decided, as GET /contract_call/{txid}/status answers them.
    `CREATE TABLE ${s}.calls (
       txid bytea PRIMARY KEY, contract_id bytea NOT NULL, envelope_hash bytea NOT NULL, function text NOT NULL,
       caller bytea NOT NULL, call_id numeric NOT NULL, status text NOT NULL, block_height bigint, tx_index integer,
       result jsonb, error_code text, error_message text, decided_height bigint)`,
    `CREATE INDEX calls_contract ON ${s}.calls (contract_id, block_height, tx_index)`,
    `CREATE INDEX calls_height ON ${s}.calls (block_height)`,
    // The block that decided the call (null while pending): what a rollback takes back, drops included.
    `CREATE INDEX calls_decided ON ${s}.calls (decided_height)`,
  ];
}

/**
 * Makes the schema, or checks the one there: the same version is used as it is, an older
 * one is migrated, anything else is refused with one line saying what to do.
 */
export async function ensureSchema(db: pg.ClientBase, schema: string): Promise<void> {
  const s = q(schema);
  const exists = (await db.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount! > 0;
  const hasMeta = exists && (await db.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'sink_meta'`, [schema])).rowCount! > 0;
  if (!hasMeta) {
    const other = exists ? (await db.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema])).rows[0].n : 0;
    if (other > 0) throw new ClientError('schema_conflict', `schema ${schema} holds ${other} tables but no sink_meta: it was not made by svc sink; choose another with --schema or drop it`);
    await db.query('BEGIN');
    try {
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      for (const t of tables(s)) await db.query(t);
      await db.query(`INSERT INTO ${s}.sink_meta VALUES ('schema_version', $1), ('blocks_through', '-1')`, [String(SCHEMA_VERSION)]);
      await db.query('COMMIT');
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
    return;
  }
  const row = (await db.query(`SELECT value FROM ${s}.sink_meta WHERE key = 'schema_version'`)).rows[0] as { value: string } | undefined;
  const found = row ? Number(row.value) : NaN;
  if (found === SCHEMA_VERSION) return;
  if (!Number.isInteger(found) || found > SCHEMA_VERSION) {
    throw new ClientError('schema_version', `schema ${schema} is at sink schema version ${row?.value ?? 'unknown'}, newer than this sink's ${SCHEMA_VERSION}: run the svc that made it, or drop the schema (DROP SCHEMA ${schema} CASCADE) to rebuild it from the node`);
  }
  for (let v = found; v < SCHEMA_VERSION; v++) {
    if (!MIGRATIONS[v]) throw new ClientError('schema_version', `schema ${schema} is at sink schema version ${found}, which this sink (version ${SCHEMA_VERSION}) cannot migrate: drop it (DROP SCHEMA ${schema} CASCADE) and the sink rebuilds it from the node's history`);
  }
  await db.query('BEGIN');
  try {
    for (let v = found; v < SCHEMA_VERSION; v++) for (const stmt of MIGRATIONS[v]!(s)) await db.query(stmt);
    await db.query(`UPDATE ${s}.sink_meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION)]);
    await db.query('COMMIT');
  } catch (e) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/** An ABI entry as the node serves it (PROTOCOL section 2). */
export interface AbiEvent {
  type: 'event';
  name: string;
  inputs: { name: string; type: string }[];
}

/** `TransferSingle` -> `transfer_single`: view names in the usual SQL style. */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** The SQL expression of one parameter, from the event's jsonb params, in its exact type. */
function column(param: { name: string; type: string }): string {
  const v = `params->>${lit(param.name)}`;
  switch (param.type) {
    case 'u64':
    case 'i64':
    case 'u128':
      return `(${v})::numeric`;
    case 'bool':
      return `(${v})::boolean`;
    case 'bytes':
    case 'key':
      return `decode(${v}, 'hex')`;
    default:
      return v;
  }
}

const lit = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** Columns every typed view starts with; a parameter of the same name gets the suffix `_param`. */
const FIXED = ['block_height', 'tx_index', 'log_index', 'txid'];
/** PostgreSQL truncates identifiers to 63 bytes: a longer view name is refused, never cut. */
const MAX_IDENT = 63;

/** Names of the typed views of a contract (alias_event), refusing names that collide or are too long. */
export function viewNames(alias: string, abi: unknown[]): { event: AbiEvent; view: string }[] {
  const events = abi.filter((e): e is AbiEvent => (e as AbiEvent)?.type === 'event');
  const seen = new Map<string, string>();
  return events.map((event) => {
    const view = `${alias}_${snake(event.name)}`;
    if (Buffer.byteLength(view) > MAX_IDENT) throw new ClientError('bad_argument', `view name ${view} is longer than PostgreSQL's 63 bytes: give the contract a shorter alias (--contract ALIAS=ID)`);
    const other = seen.get(view);
    if (other) throw new ClientError('bad_argument', `events ${other} and ${event.name} of contract alias ${alias} both make view ${view}`);
    seen.set(view, event.name);
    return { event, view };
  });
}

/** Creates or replaces the typed views of one contract (in the caller's transaction). */
export async function createViews(db: pg.ClientBase, schema: string, contractId: string, alias: string, abi: unknown[]): Promise<string[]> {
  const s = q(schema);
  const out: string[] = [];
  for (const { event, view } of viewNames(alias, abi)) {
    const cols = event.inputs.map((p) => `${column(p)} AS ${q(FIXED.includes(p.name) ? `${p.name}_param` : p.name)}`);
    // Column types may change with a new ABI: drop first (CREATE OR REPLACE keeps column types).
    await db.query(`DROP VIEW IF EXISTS ${s}.${q(view)}`);
    await db.query(
      `CREATE VIEW ${s}.${q(view)} AS SELECT block_height, tx_index, log_index, txid${cols.length ? ', ' + cols.join(', ') : ''}
       FROM ${s}.events WHERE contract_id = '\\x${contractId}'::bytea AND name = ${lit(event.name)}`,
    );
    out.push(view);
  }
  return out;
}

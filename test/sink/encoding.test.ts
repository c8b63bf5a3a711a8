/**
 * The sink's two ways of writing rows (src/sink/copy.ts) store the same values: COPY text
 * (catch-ups) and SQL literals in one statement text (live blocks, one round trip), into a
 * real PostgreSQL. Values an event can carry that each encoding must escape: tab, newline,
 * CR, backslash, both quotes, non-ASCII; and a number that is not an integer is refused
 * rather than written into statement text.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { arrayLiteral, byteaHex, copyRows, insertSql, sqlLiteral } from '../../src/sink/copy.js';

let server: PgServer;

before(async () => {
  server = await startPostgres();
  await server.query('CREATE TABLE t (k integer PRIMARY KEY, b bytea NOT NULL, n bigint NOT NULL, s text, j jsonb NOT NULL, a text[] NOT NULL)');
});

after(async () => {
  await server?.stop();
});

const hostile = ['tab\there', 'newline\nhere', 'cr\rhere', 'back\\slash \\t \\N', 'quotes " and \' and \'\'', 'ünïcødé ✓', '{"a","b"}', ''];

/** Row k of the test in COPY's text form (as the sink buffers events). */
const row = (k: number, s: string): (string | null)[] => [String(k), byteaHex('00ff' + k.toString(16).padStart(2, '0')), String(2 ** 53 - k), s === '' ? null : s, JSON.stringify({ s, k }), arrayLiteral([s, '\\', '"'])];
const COLS = ['k', 'b', 'n', 's', 'j', 'a'];

test('COPY text and SQL literals store the same values, whatever characters they hold', async () => {
  const rows = hostile.map((s, i) => row(i, s));
  const literal = hostile.map((s, i) => row(100 + i, s));
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    await c.query('BEGIN');
    await copyRows(c, 't', COLS, rows);
    await c.query(insertSql('t', COLS, literal));
    await c.query('COMMIT');
  } finally {
    await c.end();
  }
  const got = (await server.query("SELECT k, encode(b, 'hex') AS b, n::text, s, j, a FROM t ORDER BY k")).rows;
  assert.equal(got.length, hostile.length * 2);
  for (let i = 0; i < hostile.length; i++) {
    // In range: the length is checked above.
    const byCopy = got[i]!;
    const byLiteral = got[hostile.length + i]!;
    const s = hostile[i]!;
    for (const r of [byCopy, byLiteral]) {
      assert.equal(r.s, s === '' ? null : s, `text of ${JSON.stringify(s)}`);
      assert.deepEqual(r.a, [s, '\\', '"'], `text[] of ${JSON.stringify(s)}`);
    }
    assert.deepEqual(byLiteral.j, { s, k: 100 + i });
    assert.deepEqual(byCopy.j, { s, k: i });
    assert.deepEqual([byCopy.n, byLiteral.n], [String(2 ** 53 - i), String(2 ** 53 - 100 - i)]);
    assert.deepEqual([byCopy.b, byLiteral.b], ['00ff' + i.toString(16).padStart(2, '0'), '00ff' + (100 + i).toString(16).padStart(2, '0')]);
  }
});

test('a literal is a safe integer, a quoted string, bytea hex or NULL; anything else is refused', () => {
  assert.equal(sqlLiteral(42), '42');
  assert.equal(sqlLiteral(null), 'NULL');
  assert.equal(sqlLiteral(Buffer.from([0, 255])), "'\\x00ff'");
  assert.equal(sqlLiteral("it's"), "'it''s'");
  assert.throws(() => sqlLiteral(1.5), /not an integer/);
  assert.throws(() => sqlLiteral(2 ** 53), /not an integer/);
  assert.throws(() => sqlLiteral(Number.NaN), /not an integer/);
});

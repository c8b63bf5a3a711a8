/**
 * Row encodings for PostgreSQL: COPY's text format (catch-ups write events with COPY
 * FROM STDIN: docs/INDEXING.md, "Write path") and SQL literals for the statements a
 * transaction sends in one round trip.
 */
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';

const COPY_SPECIAL = /[\\\t\n\r]/;

/** One field in COPY text format: backslash, tab, newline and CR escaped; null as \N. */
export function copyField(v: string | null): string {
  if (v === null) return '\\N';
  // Most fields (numbers, hex, cursors) hold none of the four: test before the slower replace.
  if (!COPY_SPECIAL.test(v)) return v;
  return v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** One row as a line of COPY text. */
export function copyLine(row: readonly (string | null)[]): string {
  let line = copyField(row[0]!);
  for (let i = 1; i < row.length; i++) line += '\t' + copyField(row[i]!);
  return line + '\n';
}

const ARRAY_SPECIAL = /["\\]/;

/** A text[] literal ({"a","b"}), before COPY's own escaping. */
export function arrayLiteral(items: string[]): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    const s = items[i]!;
    out += `${i === 0 ? '' : ','}"${ARRAY_SPECIAL.test(s) ? s.replace(/["\\]/g, (c) => `\\${c}`) : s}"`;
  }
  return out + '}';
}

/** bytea from hex, as COPY text reads it. */
export const byteaHex = (hex: string): string => `\\x${hex}`;

/**
 * A value as an SQL literal, for statement text sent without bind parameters (several
 * statements in one round trip): null, a safe integer, a Buffer (bytea, hex), or a string
 * (quoted by node-postgres; the column's type converts it, as it does a bind parameter).
 */
export function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error(`not an integer: ${v}`);
    return String(v);
  }
  if (Buffer.isBuffer(v)) return `'\\x${v.toString('hex')}'`;
  return pg.escapeLiteral(String(v));
}

/** `INSERT INTO table (columns) VALUES (...), ... tail` with the values as literals. */
export function insertSql(table: string, columns: string[], rows: readonly (readonly unknown[])[], tail = ''): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${rows.map((r) => `(${r.map(sqlLiteral).join(', ')})`).join(', ')}${tail ? ` ${tail}` : ''}`;
}

/**
 * COPY rows into `table (columns)` on `db` (in its current transaction). Rows are joined
 * into chunks of about 1 MiB, so a large catch-up streams without one huge string.
 */
export async function copyRows(db: pg.ClientBase, table: string, columns: string[], rows: (string | null)[][]): Promise<void> {
  if (rows.length === 0) return;
  const stream = db.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  const CHUNK = 1 << 20;
  function* chunks(): Generator<string> {
    let buf = '';
    for (const r of rows) {
      buf += copyLine(r);
      if (buf.length >= CHUNK) {
        yield buf;
        buf = '';
      }
    }
    if (buf) yield buf;
  }
  await pipeline(Readable.from(chunks()), stream);
}

/**
 * INSERT of many rows in statements of at most `65535 / columns` rows (PostgreSQL's limit
 * on bind parameters per statement), with `tail` (e.g. ON CONFLICT ...) after each.
 */
export async function insertRows(db: pg.ClientBase, table: string, columns: string[], rows: unknown[][], tail = ''): Promise<void> {
  const per = Math.floor(65535 / columns.length);
  for (let i = 0; i < rows.length; i += per) {
    const part = rows.slice(i, i + per);
    const values: unknown[] = [];
    const tuples = part.map((r) => `(${r.map((v) => (values.push(v), `$${values.length}`)).join(', ')})`);
    await db.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')} ${tail}`, values);
  }
}

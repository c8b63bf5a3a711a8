/**
 * Row encodings for PostgreSQL: COPY's text format (catch-ups write events with COPY
 * FROM STDIN: docs/INDEXING.md, "Write path") and multi-row INSERT statements.
 */
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';

/** One field in COPY text format: backslash, tab, newline and CR escaped; null as \N. */
export function copyField(v: string | null): string {
  if (v === null) return '\\N';
  return v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** A text[] literal ({"a","b"}), before COPY's own escaping. */
export function arrayLiteral(items: string[]): string {
  return `{${items.map((s) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/** bytea from hex, as COPY text reads it. */
export const byteaHex = (hex: string): string => `\\x${hex}`;

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
      buf += r.map(copyField).join('\t') + '\n';
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

/**
 * A CursorStore (src/client/reader.ts) in a JSON file, for a Node.js consumer that keeps
 * its place across restarts: every save writes the whole map to a temporary file and
 * renames it over the old one, so a crash leaves the old positions or the new, never a
 * torn file. (A consumer writing to a database keeps its positions in the same
 * transaction as the data instead.)
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { CursorStore } from './reader.js';

export function fileCursorStore(path: string): CursorStore {
  let positions: Record<string, string> = {};
  try {
    positions = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return {
    load: (id) => positions[id] ?? null,
    save: (id, p) => {
      positions = { ...positions, [id]: p };
      writeFileSync(`${path}.tmp`, JSON.stringify(positions));
      renameSync(`${path}.tmp`, path);
    },
  };
}

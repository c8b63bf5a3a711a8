/**
 * Cursors of GET /events and the live feed (docs/STREAM.md, "Cursors"): a position in a
 * contract's history and the branch it was read on. Opaque to clients; one codec for the
 * REST front, the writer's feed queries and the sink.
 *
 * Version 2 (issued): base64url of
 *   [0x02][u32be height][u32be tx_index][u32be log_index][u8 n][n x 8-byte block tags]
 * Tag i is the last 8 bytes of the hash (display byte order, the random end: the leading
 * bytes of a mainnet hash are proof-of-work zeros) of the best-chain block at
 * `height - LOCATOR_OFFSETS[i]`, as the node held it when it issued the cursor; the list
 * stops at the node's journal anchor. Resuming from a cursor whose tag 0 no longer matches
 * the chain starts with a rollback to just above the highest tag that still matches.
 *
 * Version 1 (accepted, no longer issued): base64url of [0x01][u32be height][u32be tx][u32be log].
 * It names no branch: a reorg that retracted its block goes unnoticed (docs/STREAM.md).
 */
import { NodeError } from './errors.js';

/** A position: (block height, tx index, log index); calls use (height, ordinal in the block's call log, 0). */
export type Pos = [number, number, number];

export interface Cursor {
  pos: Pos;
  /** Block tags of the locator (8 bytes each), empty for a version 1 cursor. */
  tags: Buffer[];
}

/**
 * Heights below the cursor's block whose tags a cursor carries. Dense over the first 8
 * blocks, so the fork of any reorg of up to 8 blocks above it is found exactly; then
 * doubling to 256, so an older cursor rolls back at most twice as far as the reorg went
 * (re-sending unchanged events is harmless to a consumer that applies rollbacks).
 * 256 is above the node's 144-block undo window and the feed's 160 remembered blocks.
 */
export const LOCATOR_OFFSETS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256] as const;

export const TAG_BYTES = 8;
const MAX_U32 = 0xffffffff;
/** The position just after every event of block `h`. */
export const endOf = (h: number): Pos => [h, MAX_U32, MAX_U32];

/** A block's tag: the last TAG_BYTES bytes of its display-order hash. */
export function blockTag(blockHashHex: string): Buffer {
  return Buffer.from(blockHashHex.slice(-2 * TAG_BYTES), 'hex');
}

/** A version 2 cursor's bytes with its header written, room for `n` tags after it. */
function cursorBytes(pos: Pos, n: number): Buffer {
  const b = Buffer.alloc(14 + n * TAG_BYTES);
  b[0] = 2;
  b.writeUInt32BE(pos[0], 1);
  b.writeUInt32BE(pos[1], 5);
  b.writeUInt32BE(pos[2], 9);
  b[13] = n;
  return b;
}

export function encodeCursor(pos: Pos, tags: readonly Buffer[] = []): string {
  const b = cursorBytes(pos, tags.length);
  tags.forEach((t, i) => t.copy(b, 14 + i * TAG_BYTES));
  return b.toString('base64url');
}

function refuse(): NodeError {
  return new NodeError('bad_request', 'cursor is not a cursor this node issued', { field: 'cursor' });
}

/** Decodes a version 2 or version 1 cursor; anything else is bad_request. */
export function decodeCursor(s: string): Cursor {
  if (typeof s !== 'string' || s.length > 400 || !/^[A-Za-z0-9_-]+$/.test(s)) throw refuse();
  const b = Buffer.from(s, 'base64url');
  if (b.toString('base64url') !== s) throw refuse();
  const pos: Pos = b.length >= 13 ? [b.readUInt32BE(1), b.readUInt32BE(5), b.readUInt32BE(9)] : [0, 0, 0];
  if (b[0] === 1 && b.length === 13) return { pos, tags: [] };
  if (b[0] !== 2 || b.length < 14) throw refuse();
  const n = b[13]!;
  if (n > LOCATOR_OFFSETS.length || b.length !== 14 + n * TAG_BYTES) throw refuse();
  return { pos, tags: Array.from({ length: n }, (_, i) => b.subarray(14 + i * TAG_BYTES, 14 + (i + 1) * TAG_BYTES)) };
}

/** Heights whose block hashes a cursor at `height` needs (stopping at `floor`, the journal anchor). */
export function locatorHeights(height: number, floor: number): number[] {
  const out: number[] = [];
  for (const off of LOCATOR_OFFSETS) {
    if (height - off < floor) break;
    out.push(height - off);
  }
  return out;
}

/**
 * Where a cursor's branch meets the chain, given the chain's hashes by height:
 * `null` when its block is still on the chain (or cannot be checked yet: above the tip,
 * or a version 1 cursor); otherwise the fork height to roll back to, the first height
 * above the highest locator entry that still matches (0 when none does).
 */
export function branchFork(c: Cursor, hashAt: (h: number) => string | undefined): number | null {
  if (c.tags.length === 0) return null;
  for (let i = 0; i < c.tags.length; i++) {
    const h = c.pos[0] - LOCATOR_OFFSETS[i]!;
    const hash = hashAt(h);
    if (hash === undefined) {
      if (i === 0) return null; // the node has no block there (yet): nothing to compare
      return h + 1; // below the anchor: everything above it is in doubt
    }
    if (blockTag(hash).equals(c.tags[i]!)) return i === 0 ? null : h + 1;
  }
  return 0;
}

/**
 * A cursor at `pos` with the locator (hex of the concatenated tags, as the writer answers
 * it) of its block: encodeCursor's bytes, the tags written from the hex at once (the feed
 * makes one per event it sends).
 */
export function cursorAt(pos: Pos, locatorHex: string): string {
  const n = Math.floor(locatorHex.length / (2 * TAG_BYTES));
  const b = cursorBytes(pos, n);
  b.write(locatorHex.slice(0, n * 2 * TAG_BYTES), 14, 'hex');
  return b.toString('base64url');
}

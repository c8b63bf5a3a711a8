/**
 * The live feed's wire protocol (docs/STREAM.md): what a client may send, checked and
 * typed here, the limits, and the close codes. Every refusal is a NodeError with a stable
 * code, sent as an `error` message; nothing a client sends can throw past this module.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { decodeCursor, type Cursor } from '@svc-node/protocol/cursor';
import { errorMessage as feedError, type FeedErrorCode } from '@svc-node/protocol/feed';
import { HEX32, isName } from '@svc-node/protocol/identifiers';

export const STREAM_PATH = '/v2/stream';

/**
 * Largest client frame. Subscribe messages are small (the largest, a calls subscription
 * with MAX_TXIDS txids, is about 67 KiB of hex, so that one is allowed in full); uWS
 * closes a connection that sends more with 1009 before the frame is buffered.
 */
export const MAX_FRAME_BYTES = 80 * 1024;

/** Open connections per REST process; beyond it the upgrade answers 503 overloaded. */
export const MAX_CONNECTIONS = 2048;

/** Subscriptions per connection (each one costs a read per step while it is behind). */
export const MAX_SUBSCRIPTIONS = 16;

/** Txids of one calls subscription (their statuses are re-read while unknown to the node). */
export const MAX_TXIDS = 1000;

/**
 * Bytes a connection may have queued (uWS getBufferedAmount) before it is closed as a slow
 * consumer (CLOSE_SLOW_CONSUMER). Several full backlog pages: a reader that keeps up never
 * gets near it; one that stalls costs the process at most this much.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * Backlog (before a subscription's `synced`) is read for a connection only while less than
 * this is queued on it, so a catching-up reader is paced by its own socket; after
 * `synced` everything is sent, and MAX_BUFFERED_BYTES applies.
 */
export const BACKLOG_PAUSE_BYTES = 512 * 1024;

/**
 * Blocks the feed remembers (and sends as `known` each step). Above the 144-block undo
 * window, so every reorg the node rewinds through undo logs finds its fork among them; a
 * deeper one resets the feed (CLOSE_FEED_RESET) and clients resume from their cursors.
 */
export const RECENT_BLOCKS = 160;

/**
 * Retracted cursors or txids remembered per subscription for `rollback` messages, over the
 * last RECENT_BLOCKS blocks. Beyond it the list is cut (`complete: false`); the rollback's
 * `cursor` still says exactly what is retracted (everything after it).
 */
export const RETAIN_PER_SUB = 256;

/** Close codes (docs/STREAM.md). 1003 and 1009 are the RFC 6455 ones. */
export const CLOSE_BINARY = 1003;
export const CLOSE_TOO_BIG = 1009;
export const CLOSE_GOING_AWAY = 1001;
/** The client read too slowly: MAX_BUFFERED_BYTES were queued. Reconnect and resume from the last cursor. */
export const CLOSE_SLOW_CONSUMER = 4008;
/** A reorg deeper than the blocks the feed remembers: reconnect and resume from the last cursor. */
export const CLOSE_FEED_RESET = 4010;


export type SubscribeRequest =
  | { kind: 'events'; id: string; contract_id: string; event_name: string | null; after: Cursor | null; from_height: number | null; progress: boolean }
  | { kind: 'blocks'; id: string; from_height: number | null }
  | { kind: 'calls'; id: string; contract_id: string | null; txids: string[] | null; after: Cursor | null; from_height: number | null; progress: boolean };

export type ClientMessage = { type: 'subscribe'; sub: SubscribeRequest } | { type: 'unsubscribe'; id: string };

const SUB_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_U32 = 0xffffffff;

function bad(message: string, field?: string): NodeError {
  return new NodeError('bad_request', message, field ? { field } : undefined);
}

function hex32(v: unknown, field: string): string {
  if (typeof v !== 'string' || !HEX32.test(v)) throw bad(`${field} must be 64 lowercase hex characters`, field);
  return v;
}

function height(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_U32) throw bad(`${field} must be a block height (an integer from 0 to 4294967295)`, field);
  return v;
}

function only(o: Record<string, unknown>, allowed: string[]): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw bad(`unknown field "${k.slice(0, 40)}" (allowed: ${allowed.join(', ')})`, k.slice(0, 40));
}

function flag(o: Record<string, unknown>, field: string): boolean {
  const v = o[field] ?? false;
  if (typeof v !== 'boolean') throw bad(`${field} must be true or false`, field);
  return v;
}

/** Where a subscription starts: after a cursor, from a height, or (neither) at the head. */
function start(o: Record<string, unknown>): { after: Cursor | null; from: number | null } {
  const cursor = o['cursor'] ?? null;
  if (cursor !== null && typeof cursor !== 'string') throw bad('cursor must be a cursor string from GET /events or this feed', 'cursor');
  const from = height(o['from_height'], 'from_height');
  if (cursor !== null && from !== null) throw bad('give cursor or from_height, not both', 'cursor');
  return { after: cursor === null ? null : decodeCursor(cursor), from };
}

/** Parses one text frame; throws bad_request naming what is wrong. */
export function parseClientMessage(text: string): ClientMessage {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw bad('message is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad('message must be a JSON object with a "type"');
  const o = v as Record<string, unknown>;
  const id = o['id'];
  if (o['type'] === 'unsubscribe') {
    only(o, ['type', 'id']);
    if (typeof id !== 'string' || !SUB_ID.test(id)) throw bad('id must be 1 to 64 characters of A-Z a-z 0-9 _ . : -', 'id');
    return { type: 'unsubscribe', id };
  }
  if (o['type'] !== 'subscribe') throw bad(`unknown message type ${JSON.stringify(String(o['type']).slice(0, 40))} (subscribe, unsubscribe)`, 'type');
  if (typeof id !== 'string' || !SUB_ID.test(id)) throw bad('id must be 1 to 64 characters of A-Z a-z 0-9 _ . : -', 'id');
  switch (o['kind']) {
    case 'events': {
      only(o, ['type', 'id', 'kind', 'contract_id', 'event_name', 'cursor', 'from_height', 'progress']);
      const name = o['event_name'] ?? null;
      if (name !== null && !isName(name)) throw bad('event_name must be an event name (an identifier)', 'event_name');
      const { after, from } = start(o);
      return { type: 'subscribe', sub: { kind: 'events', id, contract_id: hex32(o['contract_id'], 'contract_id'), event_name: name as string | null, after, from_height: from, progress: flag(o, 'progress') } };
    }
    case 'blocks':
      only(o, ['type', 'id', 'kind', 'from_height']);
      return { type: 'subscribe', sub: { kind: 'blocks', id, from_height: height(o['from_height'], 'from_height') } };
    case 'calls': {
      only(o, ['type', 'id', 'kind', 'contract_id', 'txids', 'cursor', 'from_height', 'progress']);
      const contract = o['contract_id'] === undefined ? null : hex32(o['contract_id'], 'contract_id');
      const raw = o['txids'];
      let txids: string[] | null = null;
      if (raw !== undefined) {
        if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_TXIDS) throw bad(`txids must be an array of 1 to ${MAX_TXIDS} txids`, 'txids');
        txids = [...new Set(raw.map((t, i) => hex32(t, `txids[${i}]`)))];
      }
      if ((contract === null) === (txids === null)) throw bad('a calls subscription names either contract_id or txids', 'contract_id');
      const { after, from } = start(o);
      if (txids !== null && (after !== null || from !== null)) throw bad('cursor and from_height apply to a contract_id calls subscription (txids get their current status)', after ? 'cursor' : 'from_height');
      if (txids !== null && o['progress'] !== undefined) throw bad('progress applies to a contract_id calls subscription', 'progress');
      return { type: 'subscribe', sub: { kind: 'calls', id, contract_id: contract, txids, after, from_height: from, progress: flag(o, 'progress') } };
    }
    default:
      throw bad(`unknown subscription kind ${JSON.stringify(String(o['kind']).slice(0, 40))} (events, blocks, calls)`, 'kind');
  }
}

/** An `error` message (optionally about one subscription). */
export function errorMessage(e: NodeError, sub?: string): string {
  // The feed refuses with these codes only: parseClientMessage throws bad_request (nothing
  // else gets past it), the hub not_found and overloaded.
  return feedError(sub, e.code as FeedErrorCode, e.message);
}

/**
 * The live feed from the SDK (docs/STREAM.md): `for await (const m of stream(url, {subscriptions}))`.
 * The iterator reconnects by itself (after a slow-consumer close, a node restart, a
 * network cut) and resubscribes from where each subscription stood: events from the last
 * cursor (or the cursor of the last `synced`), a contract's calls likewise, blocks from
 * the next height, txids' calls afresh (statuses are states, not a log). Cursors name
 * their branch: one a reorg retracted while the iterator was away resumes with a
 * `rollback` first. So a consumer that applies the messages in order, `rollback`
 * included, misses nothing and applies nothing twice.
 */
import type { FeedMessage } from '@svc-node/protocol/feed';
import { ClientError } from './errors.js';
import { openFeedSocket, type FeedSocket } from './feed-socket.js';

/** `progress`: ask for `progress` messages (events and a contract's calls: the height the log is complete through). */
export type StreamSubscription =
  | { kind: 'events'; id: string; contractId: string; eventName?: string; cursor?: string; fromHeight?: number; progress?: boolean }
  | { kind: 'blocks'; id: string; fromHeight?: number }
  | { kind: 'calls'; id: string; contractId?: string; txids?: string[]; cursor?: string; fromHeight?: number; progress?: boolean };

/** A feed message (packages/protocol/src/feed.ts; docs/STREAM.md for each type's fields). */
export type StreamMessage = FeedMessage;

export interface StreamOptions {
  subscriptions: StreamSubscription[];
  /** Stops the iterator (it then ends without error). */
  signal?: AbortSignal;
  /** First reconnect delay; doubles per failed attempt up to 10 s. Default 250 ms. */
  reconnectDelayMs?: number;
  /** Consecutive failed connection attempts before the iterator throws. Default: unlimited. */
  maxAttempts?: number;
  /** Called on each reconnect (close code and reason), e.g. for a log line. */
  onReconnect?: (code: number, reason: string) => void;
}

/**
 * Messages held for a slow consumer before the socket stops reading; the node then sees
 * the backlog on its side and eventually closes with 4008, and the iterator resumes.
 */
const HIGH_WATER = 10_000;
const LOW_WATER = 1_000;
const MAX_DELAY_MS = 10_000;

/** Where each subscription resumes after a reconnect. */
interface Resume {
  sub: StreamSubscription;
  cursor: string | null;
  fromHeight: number | null;
}

function subscribeFrame(r: Resume): Record<string, unknown> {
  const s = r.sub;
  const from = (f: Record<string, unknown>): Record<string, unknown> => {
    if ('progress' in s && s.progress) f['progress'] = true;
    if (r.cursor !== null) f['cursor'] = r.cursor;
    else if (r.fromHeight !== null) f['from_height'] = r.fromHeight;
    return f;
  };
  if (s.kind === 'events') {
    const f: Record<string, unknown> = { type: 'subscribe', id: s.id, kind: 'events', contract_id: s.contractId };
    if (s.eventName !== undefined) f['event_name'] = s.eventName;
    return from(f);
  }
  if (s.kind === 'blocks') return r.fromHeight === null ? { type: 'subscribe', id: s.id, kind: 'blocks' } : { type: 'subscribe', id: s.id, kind: 'blocks', from_height: r.fromHeight };
  return s.txids ? { type: 'subscribe', id: s.id, kind: 'calls', txids: s.txids } : from({ type: 'subscribe', id: s.id, kind: 'calls', contract_id: s.contractId });
}

/** Moves a subscription's resume point past a message it delivered. */
function advance(r: Resume, m: StreamMessage): void {
  if (r.sub.kind === 'events' || (r.sub.kind === 'calls' && !r.sub.txids)) {
    const moved = m.type === (r.sub.kind === 'events' ? 'event' : 'call') || m.type === 'rollback' || m.type === 'synced';
    const cursor = 'cursor' in m ? m.cursor : undefined;
    if (moved && typeof cursor === 'string') {
      // Everything through the cursor was delivered; it names its branch, so a reorg
      // while away is rolled back on resume.
      r.cursor = cursor;
      r.fromHeight = null;
    } else if (m.type === 'rollback') {
      // Rolled back below every block the node holds: start over from the fork.
      r.cursor = null;
      r.fromHeight = m.fork_height;
    }
  } else if (r.sub.kind === 'blocks') {
    if (m.type === 'block') r.fromHeight = m.height + 1;
    else if (m.type === 'rollback') r.fromHeight = m.fork_height;
    else if (m.type === 'synced' && typeof m.height === 'number') r.fromHeight = m.height + 1;
  }
}

export async function* stream(nodeUrl: string, opts: StreamOptions): AsyncGenerator<StreamMessage, void, undefined> {
  const ids = new Set<string>();
  for (const s of opts.subscriptions) {
    if (ids.has(s.id)) throw new ClientError('bad_argument', `subscription id ${s.id} is used twice`);
    ids.add(s.id);
  }
  const resume = new Map(opts.subscriptions.map((s) => [s.id, { sub: s, cursor: s.kind === 'blocks' ? null : s.cursor ?? null, fromHeight: s.fromHeight ?? null } as Resume]));
  const url = `${nodeUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/v2/stream`;
  const queue: StreamMessage[] = [];
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  let ws: FeedSocket | null = null;
  let closedWith: { code: number; reason: string } | null = null;
  let failures = 0;
  let delay = opts.reconnectDelayMs ?? 250;
  const onAbort = (): void => {
    ws?.close(1000);
    notify();
  };
  opts.signal?.addEventListener('abort', onAbort);

  const connect = (): Promise<boolean> =>
    new Promise((resolve) => {
      closedWith = null;
      let opened = false;
      const sock: FeedSocket = openFeedSocket(url, {
        open: () => {
          opened = true;
          failures = 0;
          delay = opts.reconnectDelayMs ?? 250;
          for (const r of resume.values()) sock.send(JSON.stringify(subscribeFrame(r)));
          resolve(true);
        },
        message: (text) => {
          let m: StreamMessage;
          try {
            m = JSON.parse(text) as StreamMessage;
          } catch {
            return;
          }
          queue.push(m);
          if (queue.length >= HIGH_WATER) sock.pause();
          notify();
        },
        close: (code, reason) => {
          closedWith = { code, reason };
          if (!opened) resolve(false);
          notify();
        },
      });
      ws = sock;
    });

  try {
    for (;;) {
      if (opts.signal?.aborted) return;
      if (!(await connect())) {
        failures++;
        if (opts.maxAttempts !== undefined && failures >= opts.maxAttempts) throw new ClientError('unreachable', `live feed ${url} did not accept a connection (${failures} attempts)`);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, MAX_DELAY_MS);
        continue;
      }
      // Deliver until the connection closes (then reconnect) or the consumer stops.
      for (;;) {
        while (queue.length > 0) {
          const m = queue.shift()!;
          if (queue.length === LOW_WATER) ws!.resume();
          if (m.sub !== undefined) {
            const r = resume.get(m.sub);
            if (r) advance(r, m);
          }
          yield m;
          if (opts.signal?.aborted) return;
        }
        if (closedWith !== null || opts.signal?.aborted) break;
        await new Promise<void>((r) => (wake = r));
      }
      if (opts.signal?.aborted) return;
      const { code, reason } = closedWith!;
      opts.onReconnect?.(code, reason);
      await new Promise((r) => setTimeout(r, delay));
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    (ws as FeedSocket | null)?.terminate();
  }
}

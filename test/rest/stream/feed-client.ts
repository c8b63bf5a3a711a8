/**
 * A live-feed client for tests over the `ws` library: collects messages, waits for
 * conditions, and checks each message against docs/stream.asyncapi.yaml (feed-check.ts).
 */
import WebSocket from 'ws';
import type * as Wire from '@svc-node/protocol/feed';
import { checkFeedMessage } from '../../helpers/feed-check.js';

/**
 * A message as tests read it: the feed's own type (packages/protocol/src/feed.ts), narrowed by
 * `type`; the index signature lets a test read a field across kinds without narrowing.
 */
export type FeedMessage = Wire.FeedMessage & Record<string, any>;

export class FeedClient {
  readonly messages: FeedMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private wakers: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const m = JSON.parse(isBinary ? '{"type":"binary"}' : String(data)) as FeedMessage;
      checkFeedMessage(m);
      this.messages.push(m);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: String(reason) });
        this.wake();
      });
    });
    ws.on('error', () => undefined);
  }

  static connect(restUrl: string, opts: WebSocket.ClientOptions = {}): Promise<FeedClient> {
    const ws = new WebSocket(`${restUrl.replace(/^http/, 'ws')}/v2/stream`, opts);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new FeedClient(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    });
  }

  private wake(): void {
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  of(sub: string, type?: string): FeedMessage[] {
    return this.messages.filter((m) => m['sub'] === sub && (type === undefined || m.type === type));
  }

  /** Resolves with the first message (from index `from`) matching `pred`; rejects after `ms`. */
  async waitFor(pred: (m: FeedMessage) => boolean, ms = 30_000, from = 0): Promise<FeedMessage> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.messages.slice(from).find(pred);
      if (hit) return hit;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`connection closed while waiting; got ${JSON.stringify(this.messages.slice(-3))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting; last messages ${JSON.stringify(this.messages.slice(-3))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wakers.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * Applies a subscription's messages as an indexer would: events appended, a rollback
 * removes every event after its cursor. Returns the event positions left.
 */
export function applied(messages: FeedMessage[], sub: string): { cursor: string; txid: string; block_height: number; tx_index: number; log_index: number; name: string; params: unknown }[] {
  const out: ReturnType<typeof applied> = [];
  for (const m of messages) {
    if (m['sub'] !== sub) continue;
    if (m.type === 'event') out.push({ cursor: m['cursor'], txid: m['txid'], block_height: m['block_height'], tx_index: m['tx_index'], log_index: m['log_index'], name: m['name'], params: m['params'] });
    if (m.type === 'rollback') {
      while (out.length > 0 && out[out.length - 1]!.block_height >= m['fork_height']) out.pop();
    }
  }
  return out;
}

/**
 * One live-feed connection as the hub and its subscriptions see it: its socket, its
 * subscriptions, and the one way to send to it (which closes a slow consumer).
 */
import { BACKLOG_PAUSE_BYTES, CLOSE_SLOW_CONSUMER, MAX_BUFFERED_BYTES } from './protocol.js';
import type { Subscription } from './subscription.js';

/** What the hub needs of one WebSocket (uWS in src/rest/stream/socket.ts). */
export interface StreamSocket {
  /** Queues a text message; false once the socket is closed. */
  send(text: string): boolean;
  /** Bytes queued and not yet written to the client. */
  buffered(): number;
  end(code: number, reason: string): void;
}

/** The feed's counts since start (GET /metrics), kept by the hub and its connections. */
export interface FeedCounters {
  sent: number;
  slowClosed: number;
  rollbacks: number;
}

export class Connection {
  /** Subscriptions by the client's id. */
  readonly subs = new Map<string, Subscription>();
  /** Closed by the client, or by the feed (a slow consumer); nothing more is sent. */
  closed = false;

  constructor(
    readonly socket: StreamSocket,
    private readonly counters: FeedCounters,
  ) {}

  /** Sends one message; a connection over MAX_BUFFERED_BYTES is closed as a slow consumer. */
  send(text: string): boolean {
    if (this.closed) return false;
    this.socket.send(text);
    this.counters.sent++;
    if (this.socket.buffered() > MAX_BUFFERED_BYTES) {
      this.closed = true;
      this.counters.slowClosed++;
      this.socket.end(CLOSE_SLOW_CONSUMER, 'slow consumer: resume from your last cursor');
      return false;
    }
    return true;
  }

  /** Backlog reads for this connection wait while its socket has this much queued. */
  paused(): boolean {
    return this.socket.buffered() >= BACKLOG_PAUSE_BYTES;
  }
}

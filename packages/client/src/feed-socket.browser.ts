/**
 * The live feed's socket in a browser (takes feed-socket.ts's place in the bundle,
 * scripts/browser-bundle.mjs): the page's own WebSocket. It cannot stop reading, so a
 * consumer that falls HIGH_WATER messages behind closes the connection instead; the
 * iterator delivers what it holds and resumes from the last delivered cursor, which is
 * what a node's 4008 close leads to under Node.
 */
import type { FeedSocket, FeedSocketEvents } from './feed-socket.js';

/** The part of the DOM's WebSocket used here (the project's TypeScript lib has no DOM). */
interface BrowserSocket {
  onopen: (() => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: (() => void) | null;
  send(text: string): void;
  close(code?: number, reason?: string): void;
}
declare const WebSocket: new (url: string) => BrowserSocket;

/** Close code of a consumer that fell behind (4000-4999: application codes a page may send). */
const CONSUMER_BEHIND = 4009;

export function openFeedSocket(url: string, on: FeedSocketEvents): FeedSocket {
  const sock = new WebSocket(url);
  sock.onopen = () => on.open();
  sock.onmessage = (ev) => on.message(String(ev.data));
  sock.onerror = () => undefined;
  sock.onclose = (ev) => on.close(ev.code, ev.reason);
  return {
    send: (text) => sock.send(text),
    pause: () => sock.close(CONSUMER_BEHIND, 'consumer behind'),
    resume: () => undefined,
    close: (code) => sock.close(code),
    terminate: () => sock.close(1000),
  };
}

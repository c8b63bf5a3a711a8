/**
 * The live feed's socket under Node: the `ws` package (Node 20 has no WebSocket of its
 * own). feed-socket.browser.ts takes this file's place in the browser bundle
 * (scripts/browser-bundle.mjs), over the page's own WebSocket.
 */
import WebSocket from 'ws';

export interface FeedSocketEvents {
  open(): void;
  message(text: string): void;
  close(code: number, reason: string): void;
}

export interface FeedSocket {
  send(text: string): void;
  /** Stops reading (backpressure): the node sees its send buffer fill and closes with 4008. */
  pause(): void;
  resume(): void;
  close(code: number): void;
  /** Drops the connection at once (the iterator's end). */
  terminate(): void;
}

export function openFeedSocket(url: string, on: FeedSocketEvents): FeedSocket {
  const sock = new WebSocket(url);
  sock.on('open', () => on.open());
  sock.on('message', (data) => on.message(String(data)));
  sock.on('error', () => undefined);
  sock.on('close', (code, reason) => on.close(code, String(reason)));
  return {
    send: (text) => sock.send(text),
    pause: () => sock.pause(),
    resume: () => sock.resume(),
    close: (code) => sock.close(code),
    terminate: () => sock.terminate(),
  };
}

/**
 * `GET /v2/stream` on the REST front's uWebSockets.js app: the upgrade (with the
 * connection limit), frame checks, and the hub's callbacks. uWS enforces the frame size
 * (1009) and the hard buffer limit; the hub closes slow consumers below that limit with
 * its own code (protocol.ts).
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { StreamSocket } from './connection.js';
import type { StreamHub } from './hub.js';
import { CLOSE_BINARY, CLOSE_TOO_BIG, MAX_BUFFERED_BYTES, MAX_CONNECTIONS, MAX_FRAME_BYTES, STREAM_PATH } from './protocol.js';

interface UserData {
  conn: ReturnType<StreamHub['open']> | null;
  socket: StreamSocket | null;
  /** After close (or our own end) the uWS handle must not be touched. */
  closed: boolean;
}

/**
 * uWS's own limit, above the hub's: the hub stops sending to a connection past
 * MAX_BUFFERED_BYTES, so uWS never drops a message silently (a dropped message would be a
 * gap); the margin covers the one message that crosses the hub's limit.
 */
const UWS_MAX_BACKPRESSURE = 2 * MAX_BUFFERED_BYTES;

/**
 * uWS's frame limit, above ours: a frame between the two is read and refused with a clean
 * 1009 close; one beyond this is cut by uWS at once without a close frame (the client sees
 * 1006), so no client can make the front buffer more than this per connection.
 */
const UWS_MAX_FRAME_BYTES = 4 * MAX_FRAME_BYTES;

/**
 * Seconds without any frame before uWS closes the connection; it pings automatically
 * before that, so only a peer that is gone (not one that is quiet) is closed.
 */
const IDLE_TIMEOUT_S = 120;

export function registerStream(app: TemplatedApp, hub: StreamHub): { connections: () => number } {
  let open = 0;
  app.ws<UserData>(STREAM_PATH, {
    maxPayloadLength: UWS_MAX_FRAME_BYTES,
    maxBackpressure: UWS_MAX_BACKPRESSURE,
    closeOnBackpressureLimit: false,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      if (open >= MAX_CONNECTIONS) {
        const e = new NodeError('overloaded', `the node serves at most ${MAX_CONNECTIONS} stream connections; retry later`);
        res.cork(() => {
          res.writeStatus('503 Service Unavailable').writeHeader('content-type', 'application/json').end(JSON.stringify(e.toJSON()));
        });
        return;
      }
      res.upgrade<UserData>({ conn: null, socket: null, closed: false }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    },
    open: (ws) => {
      open++;
      const data = ws.getUserData();
      const socket: StreamSocket = {
        send: (text) => {
          if (data.closed) return false;
          ws.send(text, false, false);
          return true;
        },
        buffered: () => (data.closed ? 0 : ws.getBufferedAmount()),
        end: (code, reason) => {
          if (data.closed) return;
          data.closed = true;
          ws.end(code, reason);
        },
      };
      data.socket = socket;
      data.conn = hub.open(socket);
    },
    message: (ws: WebSocket<UserData>, message, isBinary) => {
      const d = ws.getUserData();
      if (!d.conn) return;
      if (isBinary) {
        d.socket!.end(CLOSE_BINARY, 'binary frames are not accepted: send JSON text');
        return;
      }
      if (message.byteLength > MAX_FRAME_BYTES) {
        d.socket!.end(CLOSE_TOO_BIG, `frames are limited to ${MAX_FRAME_BYTES} bytes`);
        return;
      }
      // The ArrayBuffer is valid only during this call: decoded at once.
      hub.message(d.conn, Buffer.from(message).toString('utf8'));
    },
    drain: (ws) => {
      const d = ws.getUserData();
      if (d.conn) hub.drained(d.conn);
    },
    close: (ws) => {
      open--;
      const d = ws.getUserData();
      d.closed = true;
      if (d.conn) hub.closed(d.conn);
    },
  });
  return { connections: () => open };
}

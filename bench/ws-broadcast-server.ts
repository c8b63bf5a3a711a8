/**
 * The ceiling for bench/stream.bench.ts: a bare uWebSockets.js WebSocket server in its own
 * process. A client that sends `go COUNT SIZE` makes it send COUNT text messages of SIZE
 * bytes to every other connection, one ws.send per message and connection (what the live
 * feed does), and nothing else: no reads, no JSON. Prints its port.
 */
import { App, us_socket_local_port, type WebSocket } from 'uWebSockets.js';

const subscribers = new Set<WebSocket<unknown>>();

App()
  .ws('/*', {
    maxBackpressure: 64 * 1024 * 1024,
    open: (ws) => void subscribers.add(ws),
    close: (ws) => void subscribers.delete(ws),
    message: (ws, data) => {
      const m = /^go (\d+) (\d+)$/.exec(Buffer.from(data).toString());
      if (!m) return;
      subscribers.delete(ws); // the control connection is not a subscriber
      const count = Number(m[1]);
      const size = Number(m[2]);
      for (let i = 0; i < count; i++) {
        const head = `{"type":"event","seq":${i},"pad":"`;
        const text = head + 'x'.repeat(Math.max(0, size - head.length - 2)) + '"}';
        for (const s of subscribers) s.send(text, false, false);
      }
    },
  })
  .listen('127.0.0.1', 0, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`${us_socket_local_port(sock as never)}\n`);
  });

/** The ceiling for bench/rest.bench.ts: a bare uWebSockets.js hello-world, in its own process. Prints its port. */
import { App, us_socket_local_port } from 'uWebSockets.js';

App()
  .get('/*', (res) => {
    res.cork(() => {
      res.writeHeader('content-type', 'application/json');
      res.end('{"status":"ok"}');
    });
  })
  .listen('127.0.0.1', 0, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`${us_socket_local_port(sock as never)}\n`);
  });

/**
 * A devnet HTTP front of a node's own over a shared devnet chain: its counters
 * (GET /devnet/counters) hold only that node's requests, so a test can count what one
 * node asks of its chain-data endpoint while other nodes follow the same chain.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DevnetEndpoint, type DevnetChainHandle, type DevnetCounters } from '../../src/devnet/chain-server.js';
import { getJson } from './devnet-node.js';

export interface OwnEndpoint {
  url: string;
  counters(): Promise<DevnetCounters>;
  close(): Promise<void>;
}

/** Paths matching `notFound` are answered 404, as an endpoint that serves no such route would. */
export async function ownEndpoint(devnet: DevnetChainHandle, notFound?: RegExp): Promise<OwnEndpoint> {
  const ep = new DevnetEndpoint(devnet.chain);
  const server: Server = createServer((req, res) => {
    if (notFound?.test(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not served here');
      return;
    }
    ep.handle(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    counters: async () => (await getJson(`${url}/devnet/counters`)).body as DevnetCounters,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Requests of one route ('/blocks/:n' ...) in a counters answer; every route's without one. */
export function requestsOf(c: DevnetCounters, route?: string): number {
  if (route !== undefined) return c.routes[route]?.all.requests ?? 0;
  return Object.values(c.routes).reduce((n, r) => n + r.all.requests, 0);
}

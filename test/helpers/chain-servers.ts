/** Test servers for the chain tests: the recorded Esplora fixtures, and a scriptable misbehaving server. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from './paths.js';

export const esploraDir = join(fixturesDir, 'esplora');

export interface ManifestEntry {
  method: string;
  path: string;
  status: number;
  content_type: string;
  body_file: string;
  body_encoding: 'utf8' | 'hex';
  request_body_file?: string;
}

export const manifest: ManifestEntry[] = JSON.parse(readFileSync(join(esploraDir, 'manifest.json'), 'utf8')).entries;

export function entryBody(e: ManifestEntry): Buffer {
  const raw = readFileSync(join(esploraDir, e.body_file));
  return e.body_encoding === 'hex' ? Buffer.from(raw.toString('utf8').trim(), 'hex') : raw;
}

export function fixtureText(rel: string): string {
  return readFileSync(join(esploraDir, rel), 'utf8');
}

export interface Listening {
  url: string;
  close(): Promise<void>;
}

export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening & { server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/**
 * `GET /blocks/:h` composed from the recorded block objects (the fixtures hold no whole
 * page): the recorded ones at h, h-1, ... down to the first height not recorded, as the
 * endpoint lists them. Heights 2, 1, 0 give a whole page (the endpoint stops at genesis);
 * 730000 gives the two items of mempool.space's recorded /api/blocks/730000 example, a
 * page cut short.
 */
export function blocksPage(h: number): unknown[] | null {
  const byHeight = new Map<number, unknown>();
  for (const e of manifest) {
    if (e.method === 'GET' && e.status === 200 && /^\/block\/[0-9a-f]{64}$/.test(e.path)) {
      const j = JSON.parse(entryBody(e).toString('utf8')) as { height: number };
      byHeight.set(j.height, j);
    }
  }
  const page: unknown[] = [];
  for (let k = h; k >= 0 && page.length < 10 && byHeight.has(k); k--) page.push(byHeight.get(k));
  return page.length === 0 ? null : page;
}

/**
 * Serves every manifest entry (hex bodies decoded), the tip as given (the README's
 * coherent tip 730000 by default), POST /tx only for the recorded request body, `GET
 * /blocks/:h` composed by `blocksPage`, and electrs's unknown-route text otherwise. Paths
 * are served under `/api` as on the public instances.
 */
export async function startFixtureServer(
  tip = { height: 730000, hash: '0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529' },
): Promise<Listening> {
  const routes = new Map<string, ManifestEntry>();
  for (const e of manifest) if (!(e.method === 'GET' && e.path.startsWith('/blocks/tip/'))) routes.set(`${e.method} ${e.path}`, e);
  const post = manifest.find((e) => e.method === 'POST')!;
  return listen((req, res) => {
    const path = (req.url ?? '/').replace(/^\/api/, '');
    const sendEntry = (e: ManifestEntry) => {
      const b = entryBody(e);
      res.writeHead(e.status, { 'content-type': e.content_type, 'content-length': b.length });
      res.end(b);
    };
    if (req.method === 'GET' && path === '/blocks/tip/height') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(tip.height));
    if (req.method === 'GET' && path === '/blocks/tip/hash') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(tip.hash);
    if (req.method === 'POST' && path === '/tx') {
      // A body that cannot be read (the client went away) ends the exchange, not the process.
      return void readBody(req).then((body) => {
        if (body.trim() === fixtureText(post.request_body_file!).trim()) return sendEntry(post);
        res.writeHead(400, { 'content-type': 'text/plain' }).end('sendrawtransaction RPC error: {"code":-22,"message":"TX decode failed"}');
      }, () => res.destroy());
    }
    const page = req.method === 'GET' ? /^\/blocks\/(\d+)$/.exec(path) : null;
    if (page) {
      const items = blocksPage(Number(page[1]));
      if (items) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(items));
    }
    const e = routes.get(`${req.method} ${path}`);
    if (e) return sendEntry(e);
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`endpoint does not exist "${path}"`);
  });
}

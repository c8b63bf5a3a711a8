/** Test servers for the chain tests: the recorded Esplora fixtures, and a scriptable misbehaving server. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../helpers/paths.js';

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
 * Serves every manifest entry (hex bodies decoded), the tip as given (the README's
 * coherent tip 730000 by default), POST /tx only for the recorded request body, and
 * electrs's unknown-route text otherwise. Paths are served under `/api` as on the public
 * instances.
 */
export async function startFixtureServer(
  tip = { height: 730000, hash: '0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529' },
): Promise<Listening> {
  const routes = new Map<string, ManifestEntry>();
  for (const e of manifest) if (!(e.method === 'GET' && e.path.startsWith('/blocks/tip/'))) routes.set(`${e.method} ${e.path}`, e);
  const post = manifest.find((e) => e.method === 'POST')!;
  return listen(async (req, res) => {
    const path = (req.url ?? '/').replace(/^\/api/, '');
    const sendEntry = (e: ManifestEntry) => {
      const b = entryBody(e);
      res.writeHead(e.status, { 'content-type': e.content_type, 'content-length': b.length });
      res.end(b);
    };
    if (req.method === 'GET' && path === '/blocks/tip/height') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(tip.height));
    if (req.method === 'GET' && path === '/blocks/tip/hash') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(tip.hash);
    if (req.method === 'POST' && path === '/tx') {
      const body = await readBody(req);
      if (body.trim() === fixtureText(post.request_body_file!).trim()) return sendEntry(post);
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('sendrawtransaction RPC error: {"code":-22,"message":"TX decode failed"}');
    }
    const e = routes.get(`${req.method} ${path}`);
    if (e) return sendEntry(e);
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`endpoint does not exist "${path}"`);
  });
}

/**
 * The devnet chain's HTTP server (node:http): Esplora's endpoints in Esplora's formats
 * over a DevnetChain, plus JSON control endpoints under /devnet/. Paths may also carry an
 * `/api` prefix, like the public instances.
 *
 * Esplora endpoints: GET /blocks/tip/height, /blocks/tip/hash, /blocks[/:start_height],
 * /block-height/:h, /block/:hash, /block/:hash/status, /block/:hash/header,
 * /block/:hash/raw, /block/:hash/txids, /block/:hash/txid/:i, /block/:hash/txs[/:start],
 * /tx/:txid, /tx/:txid/hex, /tx/:txid/raw, /tx/:txid/status, /tx/:txid/outspend/:vout,
 * /tx/:txid/outspends, /tx/:txid/merkle-proof, /tx/:txid/merkleblock-proof,
 * /address/:addr/utxo, /mempool/txids, /fee-estimates; POST /tx (hex as text).
 * Errors are text/plain with electrs's messages.
 *
 * Public-endpoint mode (`publicMode`; `npm run devnet:chain -- --public`): a request
 * budget per client address (a token bucket: requests per hour, burst); past it a request
 * is answered 429 `Too Many Requests` with `Retry-After` (seconds until the next token),
 * and takes no token. Control requests (/devnet/*) are never limited nor counted.
 *
 * Counters: every other request, by route (the node's `routeOf` form, e.g. /tx/:id/hex),
 * in requests and response body bytes, in all and by status class (2xx, 4xx but 429,
 * 429, 5xx): `GET /devnet/counters`, in process `DevnetEndpoint.counters()`.
 *
 * Control (JSON in and out; errors 400 `{"error":{"code":"bad_request","message"}}`):
 * POST /devnet/mine {"blocks":n,"txids"?:[...],"fill"?:"mainnet"|{"txs"?:n,"bytes"?:n}}
 *      → {"hashes":[...],"height":h}  (n up to 100,000; up to 200 when filled)
 * POST /devnet/reorg {"depth":k,"blocks"?:m,"drop"?:[...],"txids"?:[...],"txs"?:[hex]} → same
 * POST /devnet/faucet {"address":a,"sats":n} → {"txid","vout"}
 * GET  /devnet/info → {"network","faucet_address","tip_height","tip_hash","mempool_size","public_mode"}
 * GET  /devnet/counters → DevnetCounters;  POST /devnet/counters/reset → the counters before the reset
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as bitcoin from 'bitcoinjs-lib';
import { DevnetChain, DevnetError, TxRejected } from './chain.js';
import { blockJson, txJson } from './esplora-json.js';
import { MAINNET_FILL, type FillTarget } from './block-fill.js';
import { electrumBranch, merkleBlockProof } from './merkle-proofs.js';
import { displayHex, internalBytes } from '@svc-node/protocol/bitcoin';
import { BLOCKS_PER_PAGE, routeOf } from '../chain/esplora-client.js';
import { hourlyBucket } from '../chain/budget.js';
import type { TokenBucket } from '../bounded.js';

export { DevnetChain } from './chain.js';

export interface DevnetChainOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Persist to / reload from this JSON file. */
  dataFile?: string;
  /** Mine until the chain is at least this high at start (e.g. 101 so the faucet has a mature coinbase). Default 0. */
  initialBlocks?: number;
  /** Behave like a public endpoint: a request budget per client address (see the header comment). */
  publicMode?: PublicModeOptions;
  /** The public mode's clock, monotonic milliseconds (tests: a simulated one). Default performance.now(). */
  now?: () => number;
}

export interface PublicModeOptions {
  requestsPerHour: number;
  burst: number;
}

/**
 * `--public` without numbers: the most used public Esplora answers 429 past about 700
 * requests an hour per address, and its nginx lets 10 through at once (burst 10).
 */
export const PUBLIC_MODE_DEFAULTS: PublicModeOptions = { requestsPerHour: 700, burst: 10 };

export interface Tally {
  requests: number;
  /** Response body bytes. */
  bytes: number;
}

/** One route's requests and bytes: in all and by status class (4xx counts every 4xx but 429). */
export interface RouteTally {
  all: Tally;
  '2xx': Tally;
  '4xx': Tally;
  '429': Tally;
  '5xx': Tally;
}

export interface DevnetCounters {
  total: RouteTally;
  /** By route in the node's `routeOf` form (`/tx/:id/hex`, `/blocks/:n`, `/blocks/tip/height`). */
  routes: Record<string, RouteTally>;
}

export interface DevnetChainHandle {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash; Esplora paths go right after it). */
  url: string;
  close(): Promise<void>;
  chain: DevnetChain;
  /** The HTTP side: counters and the public mode. */
  endpoint: DevnetEndpoint;
}

const MAX_BODY = 1_000_000;
/**
 * GET /fee-estimates in Esplora's form (confirmation target -> sat/vB) for the targets
 * Esplora lists. The devnet mines every transaction whatever its fee, so every target
 * answers 1 sat/vB, Bitcoin Core's minimum relay fee (what a quiet regtest estimates).
 */
const FEE_ESTIMATES: Record<string, number> = Object.fromEntries(
  [...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008].map((t) => [String(t), 1]),
);
const HASH_RE = /^[0-9a-fA-F]{64}$/;
const TOO_MANY = 'Too Many Requests';

/** `"fill"` of POST /devnet/mine: "mainnet", or {"txs"?: n, "bytes"?: n} (at least one). */
function fillTarget(x: unknown): FillTarget | undefined {
  if (x === undefined) return undefined;
  if (x === 'mainnet') return MAINNET_FILL;
  const n = (v: unknown, max: number): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > max) throw new DevnetError(`fill: txs and bytes must be integers from 1 (txs at most 100000, bytes at most 4000000)`);
    return v;
  };
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw new DevnetError('fill must be "mainnet" or {"txs"?: n, "bytes"?: n}');
  const o = x as Record<string, unknown>;
  const t = { txs: n(o.txs, 100_000), bytes: n(o.bytes, 4_000_000) };
  if (t.txs === undefined && t.bytes === undefined) throw new DevnetError('fill needs txs or bytes');
  return t;
}
const NUM_RE = /^\d+$/;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(text);
  }
}

function send(res: ServerResponse, status: number, type: string, body: string | Uint8Array, headers: Record<string, string> = {}): void {
  // Set on the response (not passed to writeHead) so the counters read content-length back.
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(body));
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.writeHead(status);
  res.end(body);
}

const text = (res: ServerResponse, body: string, status = 200) => send(res, status, 'text/plain', body);
const json = (res: ServerResponse, body: unknown, status = 200) => send(res, status, 'application/json', JSON.stringify(body));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > MAX_BODY) {
        reject(new HttpError(413, 'Request body too large'));
        req.destroy();
        return;
      }
      parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function hashParam(s: string): string {
  if (!HASH_RE.test(s)) throw new HttpError(400, 'Invalid hex string');
  return s.toLowerCase();
}

function numParam(s: string): number {
  if (!NUM_RE.test(s) || s.length > 10) throw new HttpError(400, 'Invalid number');
  return Number(s);
}

/** The request handler over a chain (for embedding in other servers): `new DevnetEndpoint(chain, opts).handle`. */
export function devnetChainHandler(chain: DevnetChain, opts: Pick<DevnetChainOptions, 'publicMode' | 'now'> = {}): (req: IncomingMessage, res: ServerResponse) => void {
  return new DevnetEndpoint(chain, opts).handle;
}

const emptyTally = (): RouteTally => ({ all: { requests: 0, bytes: 0 }, '2xx': { requests: 0, bytes: 0 }, '4xx': { requests: 0, bytes: 0 }, '429': { requests: 0, bytes: 0 }, '5xx': { requests: 0, bytes: 0 } });

/**
 * The devnet chain's HTTP side: Esplora's routes and the control API over a chain, the
 * public mode's budgets and the counters.
 */
export class DevnetEndpoint {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  readonly publicMode: PublicModeOptions | null;
  private readonly now: () => number;
  private readonly budgets = new Map<string, TokenBucket>();
  private tallies: DevnetCounters = { total: emptyTally(), routes: {} };

  constructor(
    readonly chain: DevnetChain,
    opts: Pick<DevnetChainOptions, 'publicMode' | 'now'> = {},
  ) {
    this.publicMode = opts.publicMode ?? null;
    if (this.publicMode) hourlyBucket(this.publicMode.requestsPerHour, this.publicMode.burst, 0); // checks the numbers now
    this.now = opts.now ?? (() => performance.now());
    this.handle = routesOver(chain, this);
  }

  /** Requests and response bytes by route since the start or the last reset (a copy). */
  counters(): DevnetCounters {
    return structuredClone(this.tallies);
  }

  /** Starts the counters over; returns them as they were. */
  resetCounters(): DevnetCounters {
    const was = this.tallies;
    this.tallies = { total: emptyTally(), routes: {} };
    return was;
  }

  /**
   * Public mode: takes a token of `client`'s budget, or answers how many seconds until
   * one comes back (the request is refused and takes none).
   */
  admit(client: string): { ok: true } | { ok: false; retryAfterS: number } {
    if (!this.publicMode) return { ok: true };
    const now = Math.floor(this.now());
    let b = this.budgets.get(client);
    if (!b) this.budgets.set(client, (b = hourlyBucket(this.publicMode.requestsPerHour, this.publicMode.burst, now)));
    if (b.tryTake(now)) return { ok: true };
    return { ok: false, retryAfterS: Math.max(1, Math.ceil(b.msUntil(1, now) / 1000)) };
  }

  /** Counts one answered request of `route`. */
  count(route: string, status: number, bytes: number): void {
    const cls = status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx';
    for (const t of [this.tallies.total, (this.tallies.routes[route] ??= emptyTally())]) {
      t.all.requests++;
      t.all.bytes += bytes;
      t[cls].requests++;
      t[cls].bytes += bytes;
    }
  }
}

/** Esplora's routes and the control API over `chain`, counted and limited by `ep`. */
function routesOver(chain: DevnetChain, ep: DevnetEndpoint): (req: IncomingMessage, res: ServerResponse) => void {
  const net = chain.network;
  const prevout = (txid: string, vout: number) => chain.prevout(txid, vout);
  const blockNotFound = () => new HttpError(404, 'Block not found');
  const txNotFound = () => new HttpError(404, 'Transaction not found');

  const bestBlock = (hash: string) => {
    const b = chain.blockByHash(hash);
    if (!b || !chain.inBestChain(hash)) throw blockNotFound();
    return b;
  };
  /** Known to Esplora: in the best chain, in the mempool, or in a stale block. */
  const knownTx = (txid: string) => {
    const t = chain.getTx(txid);
    if (!t) throw txNotFound();
    return t;
  };
  // Serialised once per transaction object (a node fetches every anchor at intake, and
  // bitcoinjs re-serialises on every toHex); keyed by the object, so a transaction the
  // chain replaces under the same txid (another witness) is never answered stale.
  const hexes = new WeakMap<bitcoin.Transaction, string>();
  const hexOf = (t: bitcoin.Transaction): string => {
    let h = hexes.get(t);
    if (h === undefined) {
      h = t.toHex();
      hexes.set(t, h);
    }
    return h;
  };
  /** Plain paths (the node's requests) skip URL parsing; anything else gets WHATWG URL's normalisation. */
  const PLAIN_PATH = /^\/[A-Za-z0-9/_-]*$/;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? '/';
    let path = PLAIN_PATH.test(raw) ? raw : new URL(raw, 'http://devnet').pathname;
    if (path === '/api' || path.startsWith('/api/')) path = path.slice(4) || '/';
    const p = path.split('/').slice(1);
    const method = req.method ?? 'GET';
    const notFound = () => new HttpError(404, `endpoint does not exist "${path}"`);

    if (p[0] === 'devnet') return control(method, p.slice(1).join('/'), req, res);
    // Every other request is counted by route once answered, and limited in public mode.
    const route = routeOf(path);
    res.once('finish', () => ep.count(route, res.statusCode, Number(res.getHeader('content-length') ?? 0)));
    const admitted = ep.admit(req.socket.remoteAddress ?? '');
    if (!admitted.ok) {
      return send(res, 429, 'text/plain', TOO_MANY, { 'retry-after': String(admitted.retryAfterS) });
    }

    if (method === 'POST') {
      if (path === '/tx') {
        const body = await readBody(req);
        try {
          text(res, chain.submitTx(body));
        } catch (e) {
          if (e instanceof TxRejected) throw new HttpError(400, e.esploraText);
          throw e;
        }
        return;
      }
      throw notFound();
    }
    if (method !== 'GET' && method !== 'HEAD') throw notFound();

    if (p[0] === 'blocks' && p[1] === 'tip' && p.length === 3) {
      if (p[2] === 'height') return text(res, String(chain.height));
      if (p[2] === 'hash') return text(res, chain.tip.hash);
    }
    if (p[0] === 'blocks' && p.length <= 2) {
      // electrs reads a start height that does not parse as none (the tip); one above the tip is not found.
      const start = p.length === 2 && NUM_RE.test(p[1]!) && p[1]!.length <= 10 ? Number(p[1]) : chain.height;
      if (start > chain.height) throw blockNotFound();
      const page = [];
      for (let h = start; h >= 0 && page.length < BLOCKS_PER_PAGE; h--) {
        const b = chain.blockAt(h)!;
        page.push(blockJson(b.header, b.height, b.txs.length, b.size, b.weight, chain.mediantime(b.height)));
      }
      return json(res, page);
    }
    if (p[0] === 'block-height' && p.length === 2) {
      const b = chain.blockAt(numParam(p[1]!));
      if (!b) throw blockNotFound();
      return text(res, b.hash);
    }
    if (p[0] === 'block' && p.length >= 2) {
      const hash = hashParam(p[1]!);
      const sub = p[2];
      if (p.length === 2) {
        const b = bestBlock(hash);
        return json(res, blockJson(b.header, b.height, b.txs.length, b.size, b.weight, chain.mediantime(b.height)));
      }
      if (sub === 'status' && p.length === 3) {
        if (!chain.inBestChain(hash)) return json(res, { in_best_chain: false, height: null, next_best: null });
        const b = chain.blockByHash(hash)!;
        return json(res, { in_best_chain: true, height: b.height, next_best: chain.blockAt(b.height + 1)?.hash ?? null });
      }
      if (sub === 'header' && p.length === 3) return text(res, bestBlock(hash).header.hex);
      if (sub === 'raw' && p.length === 3) return send(res, 200, 'application/octet-stream', bestBlock(hash).raw);
      // /txids, /txid/:i and /txs answer for stale blocks too (electrs keeps their txs).
      if (sub === 'txids' && p.length === 3) {
        const b = chain.blockByHash(hash);
        if (!b) throw blockNotFound();
        return json(res, b.txids);
      }
      if (sub === 'txid' && p.length === 4) {
        const i = numParam(p[3]!);
        const b = chain.blockByHash(hash);
        if (!b) throw blockNotFound();
        const t = b.txids[i];
        if (t === undefined) throw new HttpError(404, 'tx index out of range');
        return text(res, t);
      }
      if (sub === 'txs' && (p.length === 3 || p.length === 4)) {
        const b = chain.blockByHash(hash);
        if (!b) throw blockNotFound();
        const start = p.length === 4 && NUM_RE.test(p[3]!) ? Number(p[3]) : 0;
        if (start % 25 !== 0) throw new HttpError(400, 'start index must be a multipication of 25');
        if (start >= b.txs.length) throw new HttpError(404, 'start index out of range');
        return json(
          res,
          b.txs.slice(start, start + 25).map((t, k) => txJson(t, chain.txStatus(b.txids[start + k]!), prevout, net)),
        );
      }
      throw notFound();
    }
    if (p[0] === 'tx' && p.length >= 2) {
      const txid = hashParam(p[1]!);
      const sub = p[2];
      if (p.length === 2) return json(res, txJson(knownTx(txid), chain.txStatus(txid), prevout, net));
      if (sub === 'hex' && p.length === 3) return text(res, hexOf(knownTx(txid)));
      if (sub === 'raw' && p.length === 3) return send(res, 200, 'application/octet-stream', knownTx(txid).toBuffer());
      if (sub === 'status' && p.length === 3) return json(res, chain.txStatus(txid));
      if (sub === 'outspend' && p.length === 4) return json(res, chain.outspend(txid, numParam(p[3]!)));
      if ((sub === 'merkle-proof' || sub === 'merkleblock-proof') && p.length === 3) {
        const at = chain.txPosition(txid);
        if (!at) throw new HttpError(404, 'Transaction not found or is unconfirmed');
        const b = chain.blockAt(at.height)!;
        const leaves = b.txids.map(internalBytes);
        if (sub === 'merkleblock-proof') return text(res, merkleBlockProof(Buffer.from(b.header.hex, 'hex'), leaves, at.index).toString('hex'));
        return json(res, { block_height: at.height, merkle: electrumBranch(leaves, at.index).map(displayHex), pos: at.index });
      }
      if (sub === 'outspends' && p.length === 3) {
        const t = knownTx(txid);
        return json(
          res,
          t.outs.map((o, vout) => (o.script[0] === 0x6a ? { spent: false } : chain.outspend(txid, vout))),
        );
      }
      throw notFound();
    }
    if (p[0] === 'address' && p.length === 3 && p[2] === 'utxo') {
      let script: Uint8Array;
      try {
        script = bitcoin.address.toOutputScript(decodeURIComponent(p[1]!), net);
      } catch {
        throw new HttpError(400, 'Invalid Bitcoin address');
      }
      return json(
        res,
        chain.utxosOf(script).map((u) => ({ txid: u.txid, vout: u.vout, status: u.status, value: Number(u.value) })),
      );
    }
    if (path === '/mempool/txids') return json(res, chain.mempoolTxids());
    if (path === '/fee-estimates') return json(res, FEE_ESTIMATES);
    throw notFound();
  }

  async function control(method: string, what: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (method === 'GET' && what === 'info') {
      return json(res, {
        network: 'regtest',
        faucet_address: chain.faucetAddress,
        tip_height: chain.height,
        tip_hash: chain.tip.hash,
        mempool_size: chain.mempoolTxids().length,
        public_mode: ep.publicMode === null ? null : { requests_per_hour: ep.publicMode.requestsPerHour, burst: ep.publicMode.burst },
      });
    }
    if (method === 'GET' && what === 'counters') return json(res, ep.counters());
    if (method === 'POST' && what === 'counters/reset') return json(res, ep.resetCounters());
    if (method !== 'POST' || !['mine', 'reorg', 'faucet'].includes(what)) {
      return json(res, { error: { code: 'not_found', message: `no control endpoint ${method} /devnet/${what}` } }, 404);
    }
    let body: Record<string, unknown>;
    try {
      const raw = await readBody(req);
      const parsed = raw.trim() === '' ? {} : (JSON.parse(raw) as unknown);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('body must be a JSON object');
      body = parsed as Record<string, unknown>;
    } catch (e) {
      if (e instanceof HttpError) throw e;
      return json(res, { error: { code: 'bad_request', message: 'body must be a JSON object' } }, 400);
    }
    const strList = (x: unknown, name: string): string[] | undefined => {
      if (x === undefined) return undefined;
      if (!Array.isArray(x) || !x.every((s) => typeof s === 'string')) throw new DevnetError(`${name} must be an array of strings`);
      return x as string[];
    };
    const int = (x: unknown, name: string, dflt?: number): number | undefined => {
      if (x === undefined) return dflt;
      if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw new DevnetError(`${name} must be an integer`);
      return x;
    };
    try {
      if (what === 'mine') return json(res, chain.mine(int(body.blocks, 'blocks', 1)!, strList(body.txids, 'txids'), fillTarget(body.fill)));
      if (what === 'reorg') {
        const depth = int(body.depth, 'depth');
        if (depth === undefined) throw new DevnetError('depth is required');
        return json(
          res,
          chain.reorg({
            depth,
            blocks: int(body.blocks, 'blocks'),
            drop: strList(body.drop, 'drop'),
            txids: strList(body.txids, 'txids'),
            txs: strList(body.txs, 'txs'),
          }),
        );
      }
      if (typeof body.address !== 'string') throw new DevnetError('address must be a string');
      const sats = int(body.sats, 'sats');
      if (sats === undefined) throw new DevnetError('sats is required');
      return json(res, chain.faucet(body.address, sats));
    } catch (e) {
      if (e instanceof DevnetError || e instanceof TxRejected) {
        return json(res, { error: { code: 'bad_request', message: e.message } }, 400);
      }
      throw e;
    }
  }

  return (req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) text(res, e.text, e.status);
      else text(res, 'Internal server error', 500);
    });
  };
}

/** Starts a devnet chain server. */
export async function startDevnetChain(opts: DevnetChainOptions = {}): Promise<DevnetChainHandle> {
  const chain = new DevnetChain(opts.dataFile);
  const want = opts.initialBlocks ?? 0;
  if (chain.height < want) chain.mine(want - chain.height);
  const endpoint = new DevnetEndpoint(chain, opts);
  const server = createServer(endpoint.handle);
  // Clients (undici's fetch) subtract a 1 s safety margin from the server's keep-alive
  // hint; at 1 s they reconnect for every request. 30 s keeps connections reused; close()
  // drops them all anyway.
  server.keepAliveTimeout = 30_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const h = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${h}:${port}`,
    chain,
    endpoint,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

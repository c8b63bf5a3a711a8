/**
 * A small local HTTP server standing in for the chain-data endpoint (under /esplora: UTXOs,
 * broadcast and the hex of what was broadcast) and a node (under /node: intake, status,
 * contracts, node_status, reads). It records every request so tests can check what the SDK
 * posted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transaction } from 'bitcoinjs-lib';

export interface Recorded {
  method: string;
  path: string;
  contentType: string;
  body: string;
}

export interface FakeOptions {
  utxos?: { txid: string; vout: number; value: number; status?: { confirmed: boolean } }[];
  abi?: unknown[] | null;
  /** Status answers in order; the last one repeats. */
  statuses?: string[];
  /** Override answers: path prefix -> [status, body]; `POST /esplora/tx` (a method first) matches that request exactly. */
  override?: Record<string, [number, unknown]>;
  /**
   * The wallet's output script: each of `utxos` then becomes an output of a real
   * transaction paying it (served at /esplora/tx/:txid/hex, unconfirmed), as the SDK's
   * coin evidence needs; the UTXO's txid is that transaction's (`Fake.utxos`).
   */
  payTo?: Uint8Array;
  /** A request (`POST /node/contract_call`) recorded and never answered: a client is caught waiting on it. */
  hang?: string;
}

export interface Fake {
  url: string;
  esploraUrl: string;
  nodeUrl: string;
  requests: Recorded[];
  /** The UTXOs served (with `payTo`, their txids are the funding transactions'). */
  utxos: NonNullable<FakeOptions['utxos']>;
  close(): Promise<void>;
}

/** A transaction paying `value` to `script` at `vout` (earlier outputs 1,000 sats each), spending `seed`'s outpoint so it is distinct per UTXO. */
function fundingTx(seed: { txid: string; vout: number }, vout: number, value: number, script: Uint8Array): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(seed.txid, 'hex').reverse(), seed.vout);
  for (let i = 0; i < vout; i++) tx.addOutput(script, 1_000n);
  tx.addOutput(script, BigInt(value));
  return tx;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
  res.end(text);
}

export async function startFake(o: FakeOptions = {}): Promise<Fake> {
  const requests: Recorded[] = [];
  const statuses = o.statuses ?? ['pending', 'executed'];
  let statusCalls = 0;
  /** Transactions posted to /esplora/tx, by txid, for GET /esplora/tx/:txid/hex. */
  const broadcast = new Map<string, string>();
  const utxos = (o.utxos ?? []).map((u) => {
    if (!o.payTo) return u;
    const tx = fundingTx(u, u.vout, u.value, o.payTo);
    broadcast.set(tx.getId(), tx.toHex());
    return { ...u, txid: tx.getId() };
  });
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url!, 'http://x');
    const path = url.pathname;
    requests.push({ method: req.method!, path: req.url!, contentType: req.headers['content-type'] ?? '', body });
    if (o.hang === `${req.method} ${path}`) return;
    for (const [prefix, [st, b]] of Object.entries(o.override ?? {})) {
      const exact = /^(GET|POST) (.*)$/.exec(prefix);
      if (exact ? req.method === exact[1] && path === exact[2] : path.startsWith(prefix)) return send(res, st, b);
    }
    let m: RegExpMatchArray | null;
    if ((m = path.match(/^\/esplora\/address\/([^/]+)\/utxo$/))) return send(res, 200, utxos);
    if ((m = path.match(/^\/esplora\/tx\/([0-9a-f]{64})\/status$/))) return broadcast.has(m[1]!) ? send(res, 200, { confirmed: false }) : send(res, 404, 'Transaction not found');
    if ((m = path.match(/^\/esplora\/tx\/([0-9a-f]{64})\/hex$/))) {
      const hex = broadcast.get(m[1]!);
      return hex ? send(res, 200, hex) : send(res, 404, 'Transaction not found');
    }
    if (path === '/esplora/tx' && req.method === 'POST') {
      try {
        const id = Transaction.fromHex(body).getId();
        broadcast.set(id, body);
        return send(res, 200, id);
      } catch {
        return send(res, 400, 'sendrawtransaction RPC error: {"code":-22,"message":"TX decode failed"}');
      }
    }
    if (path === '/node/deploy_contract' && req.method === 'POST') {
      const j = JSON.parse(body);
      return send(res, 202, { contract_id: 'c'.repeat(64), txid: j.txid, code_hash: 'd'.repeat(64), status: 'pending' });
    }
    if (path === '/node/contract_call' && req.method === 'POST') {
      const j = JSON.parse(body);
      return send(res, 202, { txid: j.txid, contract_id: j.contract_id, envelope_hash: 'e'.repeat(64), status: 'pending' });
    }
    if ((m = path.match(/^\/node\/contract_call\/([0-9a-f]{64})\/status$/))) {
      const st = statuses[Math.min(statusCalls++, statuses.length - 1)]!;
      return send(res, 200, {
        txid: m[1], contract_id: 'c'.repeat(64), envelope_hash: 'e'.repeat(64), function: 'transfer', caller: 'f'.repeat(64),
        call_id: '1', status: st, block_height: st === 'pending' ? null : 101, tx_index: st === 'pending' ? null : 1,
        result: st === 'executed' ? [true] : null, error: st === 'failed' ? { code: 'revert', message: 'no' } : null,
      });
    }
    if (path === '/node/node_status') return send(res, 200, { halted: false, halt_reason: null, chain: { endpoint: 'fake', endpoint_ok: true, last_error: null } });
    if ((m = path.match(/^\/node\/contracts\/([0-9a-f]{64})$/))) {
      return send(res, 200, { contract_id: m[1], txid: 'a'.repeat(64), code_hash: 'd'.repeat(64), status: 'active', block_height: 101, tx_index: 1, abi: o.abi ?? [], metadata: {} });
    }
    if ((m = path.match(/^\/node\/contracts\/([0-9a-f]{64})\/abi$/))) {
      if (o.abi) return send(res, 200, { abi: o.abi });
      return send(res, 404, { error: { code: 'not_found', message: 'no such route' } });
    }
    if ((m = path.match(/^\/node\/v2\/([0-9a-f]{64})\/([^/]+)(?:\/(.+))?$/))) {
      return send(res, 200, { contract_id: m[1], field: decodeURIComponent(m[2]!), key: m[3] ?? null, value: '5', exists: true, height: 100 });
    }
    if ((m = path.match(/^\/node\/events\/([0-9a-f]{64})$/))) {
      return send(res, 200, { contract_id: m[1], events: [{ name: url.searchParams.get('event_name') ?? 'Transfer', params: { amount: '5' }, txid: 'a'.repeat(64), block_height: 101, tx_index: 1, log_index: 0 }], next_offset: null, query: url.search });
    }
    return send(res, 404, { error: { code: 'not_found', message: `no route ${path}` } });
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    esploraUrl: `${url}/esplora`,
    nodeUrl: `${url}/node`,
    requests,
    utxos,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections(); // a hung request's too
      }),
  };
}

/** A URL on which nothing listens (a port just released). */
export async function deadUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/**
 * Client of the devnet chain's control API (POST /devnet/faucet, POST /devnet/mine, GET
 * /devnet/info; src/devnet/chain-server.ts), for `svc devnet fund|mine` and tests. The devnet
 * serves it next to its Esplora endpoints, so its base URL is the chain-data URL.
 */
import { ClientError } from '../client/errors.js';
import { joinUrl, oneLine, parseJson, request, type HttpOptions } from '../client/http.js';

export interface DevnetInfo {
  network: string;
  faucet_address: string;
  tip_height: number;
  tip_hash: string;
  mempool_size: number;
}

export class DevnetControl {
  constructor(
    readonly baseUrl: string,
    readonly opts: HttpOptions = {},
  ) {}

  private async json(path: string, body?: unknown): Promise<unknown> {
    const a = await request(
      joinUrl(this.baseUrl, path),
      { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body), what: 'devnet chain' },
      this.opts,
    );
    if (a.status >= 200 && a.status <= 299) return parseJson(a, 'devnet chain');
    let code = 'chain_error';
    let message = `devnet chain ${path} answered ${a.status}${a.status === 404 ? ' (is --esplora a devnet started by npm run devnet?)' : ''}`;
    try {
      const e = (JSON.parse(a.text) as { error?: { code?: unknown; message?: unknown } }).error;
      if (e && typeof e.code === 'string' && typeof e.message === 'string') [code, message] = [e.code, `devnet chain: ${e.message}`];
    } catch {
      if (a.text) message += `: ${oneLine(a.text, 120)}`;
    }
    throw new ClientError(code, oneLine(message), a.status);
  }

  info(): Promise<DevnetInfo> {
    return this.json('/devnet/info') as Promise<DevnetInfo>;
  }

  /** Pays `sats` from the devnet's faucet to `address` (a mempool transaction until mined). */
  faucet(address: string, sats: number): Promise<{ txid: string; vout: number }> {
    return this.json('/devnet/faucet', { address, sats }) as Promise<{ txid: string; vout: number }>;
  }

  mine(blocks: number): Promise<{ hashes: string[]; height: number }> {
    return this.json('/devnet/mine', { blocks }) as Promise<{ hashes: string[]; height: number }>;
  }
}

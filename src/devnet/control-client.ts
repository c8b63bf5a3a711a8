/**
 * Client of the devnet chain's control API (POST /devnet/faucet, POST /devnet/mine, GET
 * /devnet/info, GET /devnet/counters, POST /devnet/counters/reset;
 * src/devnet/chain-server.ts), for `svc devnet fund|mine`, tests and benches. The devnet
 * serves it next to its Esplora endpoints, so its base URL is the chain-data URL.
 */
import { ClientError } from '@svc-node/client/errors';
import { joinUrl, oneLine, parseJson, request, type HttpOptions } from '@svc-node/client/http';
import type { DevnetCounters } from './chain-server.js';
import type { FillTarget } from './block-fill.js';
import type { ReorgOptions } from './chain.js';

export interface DevnetInfo {
  network: string;
  faucet_address: string;
  tip_height: number;
  tip_hash: string;
  mempool_size: number;
  /** The public mode's budget per client address, or null when off. */
  public_mode: { requests_per_hour: number; burst: number } | null;
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

  /** Mines `blocks` blocks; `fill` makes each mainnet-sized ("mainnet": 1.5 MB) or as given. */
  mine(blocks: number, fill?: 'mainnet' | FillTarget): Promise<{ hashes: string[]; height: number }> {
    return this.json('/devnet/mine', fill === undefined ? { blocks } : { blocks, fill }) as Promise<{ hashes: string[]; height: number }>;
  }

  /**
   * Replaces the last `depth` blocks with a new branch (POST /devnet/reorg): `blocks` long
   * (default depth + 1), leaving out the removed transactions in `drop`, its first block
   * holding exactly `txids` when given, plus the raw transactions `txs` (a conflicting
   * spend, say). Answers the new branch's hashes and the new height.
   */
  reorg(opts: ReorgOptions): Promise<{ hashes: string[]; height: number }> {
    return this.json('/devnet/reorg', opts) as Promise<{ hashes: string[]; height: number }>;
  }

  /** Requests and response bytes per route since the start or the last reset. */
  counters(): Promise<DevnetCounters> {
    return this.json('/devnet/counters') as Promise<DevnetCounters>;
  }

  /** Starts the counters over; answers them as they were. */
  resetCounters(): Promise<DevnetCounters> {
    return this.json('/devnet/counters/reset', {}) as Promise<DevnetCounters>;
  }
}

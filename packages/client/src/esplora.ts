/** Chain-data endpoint (Esplora REST; see test/fixtures/esplora/API-NOTES.md). */
import { ClientError } from './errors.js';
import { request, joinUrl, parseJson, oneLine, parseRetryAfter, type HttpOptions, type HttpAnswer } from './http.js';
import type { Utxo } from './anchor.js';
import type { FeeEstimates } from './fees.js';
import { HEX32 } from '@svc-node/protocol/identifiers';


/**
 * Waiting out the endpoint's 429 (public Esplora limits each address; a node on the same
 * address shares the allowance, docs/CLI.md): the longest single wait svc accepts, and the
 * most it waits in all for one client's requests. A minute each: a burst refusal clears in
 * seconds; a Retry-After beyond a minute means the hour's allowance is spent, and the user
 * is better told at once (nothing was paid yet) than left waiting.
 */
const MAX_RETRY_AFTER_S = 60;
const MAX_TOTAL_WAIT_S = 120;
/** A 429 without Retry-After (public Esplora's nginx sends none): 2 s, doubling per 429 in a row. */
const BACKOFF_BASE_S = 2;

export class EsploraClient {
  /** Seconds spent waiting out 429s so far (bounded by MAX_TOTAL_WAIT_S). */
  private waitedS = 0;

  constructor(
    readonly baseUrl: string,
    readonly opts: HttpOptions = {},
  ) {}

  /**
   * One request; a 429 is waited out as its Retry-After says (else 2 s doubling), each
   * wait told to `opts.onWait` first, within MAX_RETRY_AFTER_S a wait and
   * MAX_TOTAL_WAIT_S in all. A 429 is a refusal: a POST /tx answered 429 broadcast nothing.
   */
  private async call(path: string, init: { method?: string; body?: string; contentType?: string } = {}): Promise<HttpAnswer> {
    const what = `chain-data endpoint ${init.method ?? 'GET'} ${path}`;
    for (let refused = 0; ; refused++) {
      const a = await request(joinUrl(this.baseUrl, path), { ...init, what: 'chain-data endpoint' }, this.opts);
      if (a.status === 429) {
        const askedMs = parseRetryAfter(a.retryAfter);
        const asked = askedMs === null ? null : Math.ceil(askedMs / 1000);
        const seconds = Math.max(1, asked ?? BACKOFF_BASE_S * 2 ** refused);
        const why = asked === null ? 'no Retry-After' : `Retry-After ${asked} s`;
        if (seconds > MAX_RETRY_AFTER_S) {
          throw new ClientError('chain_error', `${what} answered 429 Too Many Requests (${why}): svc waits at most ${MAX_RETRY_AFTER_S} s at a time; try again later`, 429);
        }
        if (this.waitedS + seconds > MAX_TOTAL_WAIT_S) {
          throw new ClientError('chain_error', `${what} answered 429 Too Many Requests again after ${this.waitedS} s of waits (svc waits at most ${MAX_TOTAL_WAIT_S} s in all); try again later`, 429);
        }
        this.opts.onWait?.(`${what} answered 429 Too Many Requests: waiting ${seconds} s (${why}; at most ${MAX_TOTAL_WAIT_S} s in all)`, { status: 429, path, seconds });
        this.waitedS += seconds;
        await new Promise((r) => setTimeout(r, seconds * 1000));
        continue;
      }
      if (a.status < 200 || a.status > 299) {
        throw new ClientError('chain_error', `${what} answered ${a.status}: ${oneLine(a.text)}`, a.status);
      }
      return a;
    }
  }

  /** GET /address/:addr/utxo -> wallet UTXOs (mempool ones included, status.confirmed false). */
  async utxos(address: string): Promise<Utxo[]> {
    const a = await this.call(`/address/${encodeURIComponent(address)}/utxo`);
    const j = parseJson(a, 'chain-data endpoint');
    if (!Array.isArray(j)) throw new ClientError('chain_error', 'chain-data endpoint: UTXO list is not an array');
    return j.map((u) => {
      const o = u as Utxo;
      if (!o || !HEX32.test(o.txid) || !Number.isInteger(o.vout) || !Number.isSafeInteger(o.value)) {
        throw new ClientError('chain_error', `chain-data endpoint: malformed UTXO ${oneLine(JSON.stringify(u))}`);
      }
      return { txid: o.txid, vout: o.vout, value: o.value, status: o.status };
    });
  }

  /** GET /tx/:txid/hex. */
  async txHex(txid: string): Promise<string> {
    return (await this.call(`/tx/${txid}/hex`)).text.trim();
  }

  /** GET /tx/:txid/outspend/:vout -> spent or not (and by which tx). */
  async outspend(txid: string, vout: number): Promise<{ spent: boolean; txid?: string; vin?: number }> {
    return parseJson(await this.call(`/tx/${txid}/outspend/${vout}`), 'chain-data endpoint') as { spent: boolean; txid?: string; vin?: number };
  }

  /** POST /tx with the raw hex as text/plain; answers the txid. */
  async broadcast(hex: string): Promise<string> {
    const a = await this.call('/tx', { method: 'POST', body: hex, contentType: 'text/plain' });
    const txid = a.text.trim();
    if (!HEX32.test(txid)) throw new ClientError('chain_error', `chain-data endpoint: broadcast answered "${oneLine(txid, 80)}", not a txid`);
    return txid;
  }

  /**
   * GET /fee-estimates (confirmation target -> sat/vB); null when the endpoint does not
   * serve it or answers something else than a table of positive rates.
   */
  async feeEstimates(): Promise<FeeEstimates | null> {
    let a: HttpAnswer;
    try {
      a = await this.call('/fee-estimates');
    } catch (e) {
      if (e instanceof ClientError && e.code === 'chain_error') return null;
      throw e;
    }
    let j: unknown;
    try {
      j = JSON.parse(a.text);
    } catch {
      return null;
    }
    if (!j || typeof j !== 'object' || Array.isArray(j)) return null;
    const out: FeeEstimates = {};
    for (const [target, rate] of Object.entries(j as Record<string, unknown>)) {
      if (/^[1-9][0-9]{0,4}$/.test(target) && typeof rate === 'number' && Number.isFinite(rate) && rate > 0) out[target] = rate;
    }
    return Object.keys(out).length ? out : null;
  }

  /** GET /blocks/tip/height. */
  async tipHeight(): Promise<number> {
    return Number((await this.call('/blocks/tip/height')).text.trim());
  }

  /** GET /tx/:txid/status: whether and where the transaction is confirmed. */
  async txStatus(txid: string): Promise<{ confirmed: boolean; block_height?: number; block_hash?: string }> {
    const j = parseJson(await this.call(`/tx/${txid}/status`), 'chain-data endpoint') as { confirmed?: unknown; block_height?: unknown; block_hash?: unknown };
    if (!j || typeof j.confirmed !== 'boolean') throw new ClientError('chain_error', `chain-data endpoint: malformed status of ${txid}`);
    if (!j.confirmed) return { confirmed: false };
    if (!Number.isInteger(j.block_height) || typeof j.block_hash !== 'string' || !HEX32.test(j.block_hash)) throw new ClientError('chain_error', `chain-data endpoint: malformed status of ${txid}`);
    return { confirmed: true, block_height: j.block_height as number, block_hash: j.block_hash };
  }

  /** GET /tx/:txid/merkle-proof (electrum style: branch in display hex, leaf level first). */
  async merkleProof(txid: string): Promise<{ block_height: number; merkle: string[]; pos: number }> {
    const j = parseJson(await this.call(`/tx/${txid}/merkle-proof`), 'chain-data endpoint') as { block_height?: unknown; merkle?: unknown; pos?: unknown };
    if (!j || !Number.isInteger(j.block_height) || !Number.isInteger(j.pos) || !Array.isArray(j.merkle) || !j.merkle.every((h) => typeof h === 'string' && HEX32.test(h))) {
      throw new ClientError('chain_error', `chain-data endpoint: malformed merkle proof of ${txid}`);
    }
    return { block_height: j.block_height as number, merkle: j.merkle as string[], pos: j.pos as number };
  }
}

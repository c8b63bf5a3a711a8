/** Chain-data endpoint (Esplora REST; see test/fixtures/esplora/API-NOTES.md). */
import { ClientError } from './errors.js';
import { request, joinUrl, parseJson, oneLine, type HttpOptions, type HttpAnswer } from './http.js';
import type { Utxo } from './anchor.js';
import type { FeeEstimates } from './fees.js';
import { HEX32 } from '../protocol/identifiers.js';


export class EsploraClient {
  constructor(
    readonly baseUrl: string,
    readonly opts: HttpOptions = {},
  ) {}

  private async call(path: string, init: { method?: string; body?: string; contentType?: string } = {}): Promise<HttpAnswer> {
    const a = await request(joinUrl(this.baseUrl, path), { ...init, what: 'chain-data endpoint' }, this.opts);
    if (a.status < 200 || a.status > 299) {
      throw new ClientError('chain_error', `chain-data endpoint ${init.method ?? 'GET'} ${path} answered ${a.status}: ${oneLine(a.text)}`, a.status);
    }
    return a;
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

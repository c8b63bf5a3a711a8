/** REST client of a validator node (PROTOCOL.md section 6 shapes). */
import { ClientError } from './errors.js';
import { request, joinUrl, parseJson, oneLine, type HttpOptions } from './http.js';

export interface DeployBody {
  txid: string;
  bytecode: string;
  abi: unknown[];
  function_offsets: Record<string, unknown>;
  function_offset_to_locals: Record<string, unknown>;
  constants: unknown[];
  metadata?: Record<string, unknown>;
}
export interface DeployAnswer {
  contract_id: string;
  txid: string;
  code_hash: string;
  status: string;
}
export interface CallBody {
  txid: string;
  contract_id: string;
  payload: string;
}
export interface CallAnswer {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  status: string;
}
export interface CallStatus {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  function: string;
  caller: string;
  call_id: string;
  status: 'pending' | 'executed' | 'failed' | 'invalid' | 'dropped' | string;
  block_height: number | null;
  tx_index: number | null;
  result: unknown;
  error: { code: string; message: string } | null;
}
export interface FieldAnswer {
  contract_id: string;
  field: string;
  key: unknown;
  value: unknown;
  exists: boolean;
  height: number;
}
export interface EventsQuery {
  name?: string;
  from?: number;
  to?: number;
  limit?: number;
  offset?: number;
}
export interface EventsAnswer {
  contract_id: string;
  events: { name: string; params: Record<string, unknown>; txid: string; block_height: number; tx_index: number; log_index: number }[];
  next_offset: number | null;
}

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['executed', 'failed', 'invalid', 'dropped']);

export class NodeClient {
  constructor(
    readonly baseUrl: string,
    readonly opts: HttpOptions = {},
  ) {}

  private async json(path: string, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
    const a = await request(
      joinUrl(this.baseUrl, path),
      { method: init.method, body: init.body === undefined ? undefined : JSON.stringify(init.body), what: 'node' },
      this.opts,
    );
    if (a.status >= 200 && a.status <= 299) return parseJson(a, 'node');
    let code = 'node_error';
    let message = `node ${init.method ?? 'GET'} ${path} answered ${a.status}`;
    try {
      const e = (JSON.parse(a.text) as { error?: { code?: unknown; message?: unknown } }).error;
      if (e && typeof e.code === 'string') {
        code = e.code;
        message = `${e.code}: ${typeof e.message === 'string' ? e.message : ''}`;
      }
    } catch {
      if (a.text) message += `: ${oneLine(a.text, 120)}`;
    }
    throw new ClientError(code, oneLine(message), a.status);
  }

  deployContract(body: DeployBody): Promise<DeployAnswer> {
    return this.json('/deploy_contract', { method: 'POST', body }) as Promise<DeployAnswer>;
  }

  submitCall(body: CallBody): Promise<CallAnswer> {
    return this.json('/contract_call', { method: 'POST', body }) as Promise<CallAnswer>;
  }

  callStatus(txid: string): Promise<CallStatus> {
    return this.json(`/contract_call/${encodeURIComponent(txid)}/status`) as Promise<CallStatus>;
  }

  /**
   * Polls GET /contract_call/{txid}/status until executed, failed, invalid or dropped.
   * A 404 (not yet known, e.g. still gossiping) is polled again. `onStatus` sees each answer.
   */
  async waitForCall(
    txid: string,
    o: { intervalMs?: number; timeoutMs?: number; onStatus?: (s: CallStatus) => void } = {},
  ): Promise<CallStatus> {
    const interval = o.intervalMs ?? 2_000;
    const deadline = Date.now() + (o.timeoutMs ?? 30 * 60_000); // blocks take ~10 min; allow a few
    for (;;) {
      try {
        const s = await this.callStatus(txid);
        o.onStatus?.(s);
        if (FINAL_STATUSES.has(s.status)) return s;
      } catch (e) {
        if (!(e instanceof ClientError && e.status === 404)) throw e;
      }
      if (Date.now() + interval > deadline) {
        throw new ClientError('timeout', `call ${txid} not final after ${Math.round((o.timeoutMs ?? 1_800_000) / 1000)} s`);
      }
      await new Promise((r) => setTimeout(r, interval));
    }
  }

  async contracts(): Promise<string[]> {
    return ((await this.json('/contracts')) as { contract_ids: string[] }).contract_ids;
  }

  /**
   * The contract's ABI from GET /contracts/{id}/abi, when the node serves it (not part of
   * PROTOCOL.md section 6). Answers null on 404 / 405 so callers fall back to an artifact.
   */
  async abi(contractId: string): Promise<unknown[] | null> {
    try {
      const j = await this.json(`/contracts/${encodeURIComponent(contractId)}/abi`);
      if (Array.isArray(j)) return j;
      const inner = (j as { abi?: unknown }).abi;
      return Array.isArray(inner) ? inner : null;
    } catch (e) {
      if (e instanceof ClientError && (e.status === 404 || e.status === 405)) return null;
      throw e;
    }
  }

  /** GET /v2/{contract_id}/{field}[/{arg}]; `arg` already in its path form (see encodeFieldArg). */
  readField(contractId: string, field: string, arg?: string): Promise<FieldAnswer> {
    const tail = arg === undefined ? '' : `/${arg}`;
    return this.json(`/v2/${encodeURIComponent(contractId)}/${encodeURIComponent(field)}${tail}`) as Promise<FieldAnswer>;
  }

  events(contractId: string, q: EventsQuery = {}): Promise<EventsAnswer> {
    const p = new URLSearchParams();
    if (q.name !== undefined) p.set('event_name', q.name);
    if (q.from !== undefined) p.set('from_block', String(q.from));
    if (q.to !== undefined) p.set('to_block', String(q.to));
    if (q.limit !== undefined) p.set('limit', String(q.limit));
    if (q.offset !== undefined) p.set('offset', String(q.offset));
    const qs = p.toString();
    return this.json(`/events/${encodeURIComponent(contractId)}${qs ? `?${qs}` : ''}`) as Promise<EventsAnswer>;
  }

  health(): Promise<unknown> {
    return this.json('/health');
  }

  nodeStatus(): Promise<unknown> {
    return this.json('/node_status');
  }
}

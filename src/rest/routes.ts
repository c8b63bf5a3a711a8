/** The REST routes (SERVICE-SPEC section 4, PROTOCOL section 6, docs/openapi.yaml). */
import { jsonBody, type Route, type RequestContext, type Reply } from './http.js';
import { NodeError } from '@svc-node/protocol/errors';
import { decodePayload } from '@svc-node/protocol/envelope';
import { parseCoinJson } from '@svc-node/protocol/coin';
import type { Serving, SimulateParams } from '../messages.js';
import type { BearerAuth } from './auth.js';
import type { ReadCache } from './read-cache.js';
import type { RestMetrics } from './metrics.js';
import type { CoreCaller } from './core-link.js';

export interface RestDeps {
  core: () => CoreCaller;
  auth: BearerAuth;
  cache?: ReadCache;
  metrics?: RestMetrics;
  /**
   * Deadline of an intake request to the core (ms). Intake may wait on the chain endpoint
   * for its whole budget (esplora_timeout_ms), so it gets that on top of the read deadline.
   */
  intakeDeadlineMs?: number;
  /** Which roles serve, as the supervisor last said; null before it said (GET /ready). */
  serving?: () => Serving | null;
}

/**
 * GET /ready asks the core (and through it the writer) for its status with this deadline:
 * a healthy answer takes milliseconds, and Docker's HEALTHCHECK (timeout 5 s) and load
 * balancers' probes (usually 2 to 5 s) must hear our answer before their own timeout.
 */
export const READY_DEADLINE_MS = 2_000;

const HEALTH = JSON.stringify({ status: 'ok' });
const DECIMAL = /^(0|[1-9]\d{0,9})$/;

function hex32(v: unknown, field: string): string {
  if (typeof v !== 'string' || !HEX32.test(v)) throw new NodeError('bad_request', `${field} must be 64 lowercase hex characters`, { field });
  return v;
}

/**
 * The optional `anchor_tx` of both POST bodies (PROTOCOL section 6): the anchoring
 * transaction as broadcast, lowercase hex; that it is the txid's transaction is checked
 * by intake (400 otherwise). Absent or null: the node fetches it.
 */
function anchorTxOf(body: Record<string, unknown>): Uint8Array | undefined {
  const v = body['anchor_tx'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length % 2 !== 0 || !/^[0-9a-f]+$/.test(v)) {
    throw new NodeError('bad_request', 'anchor_tx must be the anchoring transaction as lowercase hex', { field: 'anchor_tx' });
  }
  return Buffer.from(v, 'hex');
}

function heightParam(s: string, field: string): number {
  if (!DECIMAL.test(s) || Number(s) > 0xffffffff) throw new NodeError('bad_request', `${field} must be a block height (a non-negative integer)`, { field });
  return Number(s);
}

/** A non-negative integer query parameter within [min, max]; `def` when absent. */
function intQuery(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const s = q.get(name);
  if (s === null) return def;
  if (!DECIMAL.test(s) || Number(s) < min || Number(s) > max) throw new NodeError('bad_request', `${name} must be an integer from ${min} to ${max}`, { field: name });
  return Number(s);
}

function boolQuery(q: URLSearchParams, name: string): boolean {
  const s = q.get(name);
  if (s === null || s === 'false') return false;
  if (s === 'true') return true;
  throw new NodeError('bad_request', `${name} must be true or false`, { field: name });
}

// ---- event cursors: packages/protocol/src/cursor.ts (one codec for REST, the feed and the sink)
import { cursorAt, decodeCursor } from '@svc-node/protocol/cursor';
import { HEX32, isName } from '@svc-node/protocol/identifiers';

/** Events: default and maximum page (PROTOCOL section 6); offsets beyond this use the cursor. */
const EVENTS_DEFAULT_LIMIT = 100;
const EVENTS_MAX_LIMIT = 1000;
const EVENTS_MAX_OFFSET = 10_000;
const CALLS_DEFAULT_LIMIT = 50;
const CALLS_MAX_LIMIT = 500;
const MAX_U32 = 0xffffffff;

function simulateParams(contractId: string, body: Record<string, unknown>): SimulateParams {
  const fn = body['function'];
  if (typeof fn !== 'string' || !isName(fn)) throw new NodeError('bad_request', 'function must be a function name (an identifier)', { field: 'function' });
  const args = body['args'] ?? [];
  if (!Array.isArray(args) || args.length > 64) throw new NodeError('bad_request', 'args must be an array of at most 64 typed values {type, value}', { field: 'args' });
  const caller = body['caller'] === undefined || body['caller'] === null ? null : hex32(body['caller'], 'caller');
  const inputsRaw = body['inputs'] ?? [];
  if (!Array.isArray(inputsRaw) || inputsRaw.length > 1000) throw new NodeError('bad_request', 'inputs must be an array of {txid, vout}', { field: 'inputs' });
  const inputs = inputsRaw.map((x: unknown, i) => {
    const o = (x ?? {}) as Record<string, unknown>;
    const vout = o['vout'];
    if (typeof vout !== 'number' || !Number.isInteger(vout) || vout < 0 || vout > MAX_U32) throw new NodeError('bad_request', `inputs[${i}].vout must be an integer from 0 to 4294967295`, { field: `inputs[${i}].vout` });
    return { txid: hex32(o['txid'], `inputs[${i}].txid`), vout };
  });
  const outputsRaw = body['outputs'] ?? [];
  if (!Array.isArray(outputsRaw) || outputsRaw.length > 1000) throw new NodeError('bad_request', 'outputs must be an array of {value, script}', { field: 'outputs' });
  const outputs = outputsRaw.map((x: unknown, i) => {
    const o = (x ?? {}) as Record<string, unknown>;
    const value = o['value'];
    if (typeof value !== 'string' || !/^(0|[1-9]\d{0,15})$/.test(value) || BigInt(value) > 2_100_000_000_000_000n) throw new NodeError('bad_request', `outputs[${i}].value must be a decimal string of satoshis`, { field: `outputs[${i}].value` });
    const script = o['script'];
    if (typeof script !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(script)) throw new NodeError('bad_request', `outputs[${i}].script must be lowercase hex`, { field: `outputs[${i}].script` });
    return { value, script };
  });
  return { contract_id: contractId, function: fn, args, caller, inputs, outputs };
}

export function routes(deps: RestDeps): Route[] {
  const core = (): CoreCaller => deps.core();
  const cache = deps.cache;

  /** Intake with its latency and outcome counted (svc_intake_*). */
  const intake = async (kind: 'call' | 'deploy', run: () => Promise<Reply>): Promise<Reply> => {
    const t0 = performance.now();
    try {
      const r = await run();
      deps.metrics?.observeIntake(kind, r.status === 202 ? 'accepted' : 'repeat', (performance.now() - t0) / 1000);
      return r;
    } catch (e) {
      deps.metrics?.observeIntake(kind, e instanceof NodeError ? e.code : 'internal', (performance.now() - t0) / 1000);
      throw e;
    }
  };

  /** Field reads: answered from the read replica when it holds the answer (synchronously), else by the writer. */
  const fieldRead = (ctx: RequestContext, arg: string | null): Reply | Promise<Reply> => {
    const contractId = hex32(ctx.params['contract_id'], 'contract_id');
    const field = ctx.params['field']!;
    if (!isName(field)) throw new NodeError('bad_request', 'field must be a field name (an identifier)', { field: 'field' });
    const proof = boolQuery(ctx.query, 'proof');
    // Keyed by the raw path: one raw path always names the same (contract, field, key).
    const ck = proof || !cache || ctx.query.size > 0 ? null : ctx.path;
    if (ck !== null) {
      const hit = cache!.get(ck);
      if (hit !== undefined) return { status: 200, body: null, raw: { contentType: 'application/json', text: hit } };
    }
    return core()
      .call('readField', { contract_id: contractId, field, arg, proof })
      .then((body): Reply => {
        if (ck === null) return { status: 200, body };
        const text = JSON.stringify(body);
        cache!.put(ck, text, body.height, body.state_root);
        return { status: 200, body: null, raw: { contentType: 'application/json', text } };
      });
  };

  return [
    {
      method: 'GET',
      pattern: '/health',
      handler: () => ({ status: 200, body: { status: 'ok' } }),
      fast: () => HEALTH,
    },
    {
      method: 'GET',
      pattern: '/ready',
      handler: async () => {
        const serving = deps.serving?.() ?? null;
        const checks: Record<string, string | boolean | null> = { rest: 'ok', core: 'unknown', writer: 'unknown', gossip: serving === null ? 'unknown' : serving.gossip ? 'ok' : 'not serving', halted: null };
        try {
          const s = await core().call('nodeStatus', {}, READY_DEADLINE_MS);
          checks['core'] = 'ok';
          checks['writer'] = 'ok';
          checks['halted'] = s.halted;
        } catch (e) {
          checks['core'] = e instanceof NodeError && e.code === 'core_unavailable' ? 'not answering' : 'failing';
        }
        const problems: string[] = [];
        if (checks['core'] !== 'ok') problems.push(`core ${checks['core']}`);
        if (checks['gossip'] !== 'ok') problems.push(`gossip ${checks['gossip']}`);
        if (checks['halted'] === true) problems.push('the node is halted');
        if (problems.length === 0) return { status: 200, body: { status: 'ready', checks } };
        const err = new NodeError('not_ready', `not ready: ${problems.join('; ')}`);
        return { status: err.httpStatus, body: { status: 'not_ready', checks, ...err.toJSON() } };
      },
    },
    {
      method: 'GET',
      pattern: '/node_status',
      handler: async () => {
        const s = await core().call('nodeStatus', {});
        const lag = s.tip_height !== null && s.processed_height !== null ? Math.max(0, s.tip_height - s.processed_height) : null;
        return { status: 200, body: { ...s, lag_blocks: lag, read_cache: cache ? { entries: cache.size, height: cache.version?.height ?? null } : null } };
      },
    },
    {
      method: 'GET',
      pattern: '/metrics',
      handler: async () => {
        if (!deps.metrics) throw new NodeError('not_found', 'metrics are not enabled');
        const text = await deps.metrics.render(() => core().call('metrics', {}, 5000));
        return { status: 200, body: null, raw: { contentType: deps.metrics.contentType, text } };
      },
    },
    {
      method: 'POST',
      pattern: '/deploy_contract',
      body: true,
      handler: (ctx: RequestContext) =>
        intake('deploy', async () => {
          const body = jsonBody(ctx);
          hex32(body['txid'], 'txid');
          const anchorTx = anchorTxOf(body);
          const coin = parseCoinJson(body['coin']);
          const { anchor_tx: _sent, coin: _coin, ...registration } = body;
          const r = await core().call('submitDeploy', { body: registration, anchor_tx: anchorTx, coin }, deps.intakeDeadlineMs);
          return { status: r.created ? 202 : 200, body: r.body };
        }),
    },
    {
      method: 'POST',
      pattern: '/contract_call',
      body: true,
      handler: (ctx: RequestContext) =>
        intake('call', async () => {
          const body = jsonBody(ctx);
          const txid = hex32(body['txid'], 'txid');
          const contractId = hex32(body['contract_id'], 'contract_id');
          const payload = decodePayload(body['payload']);
          const r = await core().call('submitCall', { txid, contract_id: contractId, payload, anchor_tx: anchorTxOf(body), coin: parseCoinJson(body['coin']) }, deps.intakeDeadlineMs);
          return { status: r.created ? 202 : 200, body: r.body };
        }),
    },
    {
      method: 'GET',
      pattern: '/contract_call/:txid/status',
      handler: async (ctx) => ({ status: 200, body: await core().call('callStatus', { txid: hex32(ctx.params['txid'], 'txid'), proof: boolQuery(ctx.query, 'proof') }) }),
    },
    {
      method: 'GET',
      pattern: '/contracts',
      handler: async () => ({ status: 200, body: await core().call('contractIds', {}) }),
    },
    {
      method: 'GET',
      pattern: '/contracts/:contract_id',
      handler: async (ctx) => ({ status: 200, body: await core().call('contractInfo', { contract_id: hex32(ctx.params['contract_id'], 'contract_id') }) }),
    },
    {
      method: 'GET',
      pattern: '/contracts/:contract_id/abi',
      handler: async (ctx) => {
        const c = await core().call('contractInfo', { contract_id: hex32(ctx.params['contract_id'], 'contract_id') });
        return { status: 200, body: { contract_id: c.contract_id, abi: c.abi } };
      },
    },
    {
      method: 'GET',
      pattern: '/v2/state_root',
      handler: async () => ({ status: 200, body: await core().call('stateRoot', { height: null }) }),
    },
    {
      method: 'GET',
      pattern: '/v2/state_root/:height',
      handler: async (ctx) => ({ status: 200, body: await core().call('stateRoot', { height: heightParam(ctx.params['height']!, 'height') }) }),
    },
    {
      method: 'GET',
      pattern: '/v2/:contract_id/:field',
      handler: (ctx) => fieldRead(ctx, null),
      // A replica hit was validated when it was stored under exactly this raw path.
      fast: cache ? (path) => cache.peek(path) : undefined,
    },
    {
      method: 'GET',
      pattern: '/v2/:contract_id/:field/:arg',
      handler: (ctx) => fieldRead(ctx, ctx.params['arg']!),
      fast: cache ? (path) => cache.peek(path) : undefined,
    },
    {
      method: 'POST',
      pattern: '/v2/:contract_id/simulate',
      body: true,
      handler: async (ctx) => {
        const contractId = hex32(ctx.params['contract_id'], 'contract_id');
        const p = simulateParams(contractId, jsonBody(ctx));
        return { status: 200, body: await core().call('simulate', p) };
      },
    },
    {
      method: 'GET',
      pattern: '/v2/stream',
      // The live feed is a WebSocket (src/rest/stream/, docs/STREAM.md); a plain GET gets here.
      handler: () => {
        throw new NodeError('bad_request', 'GET /v2/stream is a WebSocket endpoint: send an Upgrade request (docs/STREAM.md)');
      },
    },
    {
      method: 'GET',
      pattern: '/events/:contract_id',
      handler: async (ctx) => {
        const q = ctx.query;
        const contractId = hex32(ctx.params['contract_id'], 'contract_id');
        const name = q.get('event_name');
        if (name !== null && !isName(name)) throw new NodeError('bad_request', 'event_name must be an event name (an identifier)', { field: 'event_name' });
        const from = intQuery(q, 'from_block', 0, 0, MAX_U32);
        const to = intQuery(q, 'to_block', MAX_U32, 0, MAX_U32);
        if (from > to) throw new NodeError('bad_request', 'from_block must not exceed to_block', { field: 'from_block' });
        const limit = intQuery(q, 'limit', EVENTS_DEFAULT_LIMIT, 1, EVENTS_MAX_LIMIT);
        const offset = intQuery(q, 'offset', 0, 0, EVENTS_MAX_OFFSET);
        const cursorText = q.get('cursor');
        const cursor = cursorText === null ? null : decodeCursor(cursorText);
        if (cursor && offset > 0) throw new NodeError('bad_request', 'offset and cursor cannot be combined: page with one of them', { field: 'offset' });
        const page = await core().call('events', { contract_id: contractId, event_name: name, from_block: from, to_block: to, limit, offset, after: cursor?.pos ?? null, tags: cursor?.tags.map((t) => t.toString('hex')) ?? [] });
        const last = page.events[page.events.length - 1];
        // A cursor whose block a reorg retracted: the page continues after the fork, and
        // `rollback` tells the client to drop what it holds after `rollback.cursor` first.
        const rollback = page.rollback ? { fork_height: page.rollback.fork_height, cursor: page.rollback.after ? cursorAt(page.rollback.after, page.rollback.locator) : null } : null;
        const start = page.rollback ? rollback!.cursor : cursorText;
        return {
          status: 200,
          body: {
            contract_id: page.contract_id,
            events: page.events,
            next_offset: page.more && cursor === null ? offset + page.events.length : null,
            // Position and branch of the last event returned (or the cursor given): valid
            // across new blocks, so a client can also keep polling the tail with it.
            next_cursor: last ? cursorAt([last.block_height, last.tx_index, last.log_index], page.locator ?? '') : start,
            rollback,
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: '/calls/:contract_id',
      handler: async (ctx) => {
        deps.auth.check(ctx.headers.authorization);
        const contractId = hex32(ctx.params['contract_id'], 'contract_id');
        const limit = intQuery(ctx.query, 'limit', CALLS_DEFAULT_LIMIT, 1, CALLS_MAX_LIMIT);
        const offset = intQuery(ctx.query, 'offset', 0, 0, MAX_U32);
        return { status: 200, body: await core().call('calls', { contract_id: contractId, limit, offset }) };
      },
    },
    {
      method: 'POST',
      pattern: '/admin/clear_halt',
      handler: async (ctx) => {
        deps.auth.check(ctx.headers.authorization);
        return { status: 200, body: await core().call('clearHalt', {}) };
      },
    },
  ];
}

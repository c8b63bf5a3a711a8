/** The REST routes (SERVICE-SPEC section 4, PROTOCOL section 6). */
import { jsonBody, type Route, type RequestContext } from './http.js';
import { NodeError } from '../errors.js';
import { decodePayload } from '../protocol/envelope.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi } from '../messages.js';
import type { BearerAuth } from './auth.js';

export interface RestDeps {
  core: () => RpcClient<CoreApi>;
  auth: BearerAuth;
}

const HEX32 = /^[0-9a-f]{64}$/;

function hex32(v: unknown, field: string): string {
  if (typeof v !== 'string' || !HEX32.test(v)) throw new NodeError('bad_request', `${field} must be 64 lowercase hex characters`, { field });
  return v;
}

function heightParam(s: string, field: string): number {
  if (!/^(0|[1-9]\d{0,9})$/.test(s) || Number(s) > 0xffffffff) throw new NodeError('bad_request', `${field} must be a block height (a non-negative integer)`, { field });
  return Number(s);
}

export function routes(deps: RestDeps): Route[] {
  const core = (): RpcClient<CoreApi> => deps.core();
  return [
    {
      method: 'GET',
      pattern: '/health',
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      pattern: '/node_status',
      handler: async () => ({ status: 200, body: await core().call('nodeStatus', {}) }),
    },
    {
      method: 'POST',
      pattern: '/deploy_contract',
      body: true,
      handler: async (ctx: RequestContext) => {
        const body = jsonBody(ctx);
        hex32(body['txid'], 'txid');
        const r = await core().call('submitDeploy', { body });
        return { status: r.created ? 202 : 200, body: r.body };
      },
    },
    {
      method: 'POST',
      pattern: '/contract_call',
      body: true,
      handler: async (ctx: RequestContext) => {
        const body = jsonBody(ctx);
        const txid = hex32(body['txid'], 'txid');
        const contractId = hex32(body['contract_id'], 'contract_id');
        const payload = decodePayload(body['payload']);
        const r = await core().call('submitCall', { txid, contract_id: contractId, payload });
        return { status: r.created ? 202 : 200, body: r.body };
      },
    },
    {
      method: 'GET',
      pattern: '/contract_call/:txid/status',
      handler: async (ctx) => ({ status: 200, body: await core().call('callStatus', { txid: hex32(ctx.params['txid'], 'txid') }) }),
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
      method: 'POST',
      pattern: '/admin/clear_halt',
      handler: async (ctx) => {
        deps.auth.check(ctx.headers.authorization);
        return { status: 200, body: await core().call('clearHalt', {}) };
      },
    },
  ];
}

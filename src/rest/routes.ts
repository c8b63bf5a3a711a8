/** The REST routes (SERVICE-SPEC section 4, PROTOCOL section 6). */
import type { Route } from './http.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi } from '../messages.js';
import type { BearerAuth } from './auth.js';

export interface RestDeps {
  core: () => RpcClient<CoreApi>;
  auth: BearerAuth;
}

export function routes(deps: RestDeps): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/health',
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      pattern: '/node_status',
      handler: async () => ({ status: 200, body: await deps.core().call('nodeStatus', {}) }),
    },
  ];
}

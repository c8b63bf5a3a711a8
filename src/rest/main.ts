/** REST front process entry: uWebSockets.js on rest_address, calling the core over RPC. */
import { awaitInit, onShutdown, toSupervisor } from '../supervisor/child.js';
import { connectRpc, type RpcClient } from '../ipc/rpc.js';
import { RestServer } from './http.js';
import { routes } from './routes.js';
import { BearerAuth } from './auth.js';
import { logger } from '../log.js';
import type { CoreApi } from '../messages.js';

const log = logger('rest');
const init = await awaitInit('rest');
let core: RpcClient<CoreApi> = await connectRpc<CoreApi>(init.ipcPath);

/** Reconnects after a core restart; requests in the gap answer 503. */
function watchCore(c: RpcClient<CoreApi>): void {
  c.onClose(() => {
    void connectRpc<CoreApi>(init.ipcPath, 60_000).then(
      (next) => {
        core = next;
        watchCore(next);
        log.info('reconnected to core');
      },
      () => {
        log.error('core unreachable for 60 s; exiting so the supervisor restarts this process');
        process.exit(1);
      },
    );
  });
}
watchCore(core);

const server = new RestServer(routes({ core: () => core, auth: new BearerAuth(init.config.apiToken) }));
const { host, port } = init.config.restAddress;
const bound = await server.listen(host, port);
log.info('listening', { role: 'rest', address: `${host}:${bound}` });
toSupervisor({ type: 'listening', role: 'rest', address: host, port: bound });
onShutdown(async () => {
  await server.drain(5000);
  core.close();
});

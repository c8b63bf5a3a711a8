/** Gossip process entry: the gRPC peer service on bind_address. */
import * as grpc from '@grpc/grpc-js';
import { awaitInit, onShutdown, toSupervisor } from '../supervisor/child.js';
import { connectRpc } from '../ipc/rpc.js';
import { bind, loadPeerService, serverOptions } from './server.js';
import { logger } from '../log.js';
import type { CoreApi } from '../messages.js';

const log = logger('gossip');
const init = await awaitInit('gossip');
const core = await connectRpc<CoreApi>(init.ipcPath);
const server = new grpc.Server(serverOptions());

/** Peers seen by heartbeat: url -> last time heard. */
const peersSeen = new Map<string, number>();

server.addService(loadPeerService(), {
  Heartbeat: (call: grpc.ServerUnaryCall<{ node_id: string; url: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
    if (typeof call.request.url === 'string' && call.request.url.length > 0 && call.request.url.length < 512) {
      peersSeen.set(call.request.url, Date.now());
    }
    core.call('nodeStatus', {}).then(
      (s) => cb(null, { node_id: s.node_id, height: String(s.processed_height ?? 0), public_key: Buffer.from(init.identity.publicKeyHex, 'hex') }),
      (e: Error) => cb({ code: grpc.status.UNAVAILABLE, message: e.message }),
    );
  },
});

const { host, port } = init.config.bindAddress;
const bound = await bind(server, host, port);
log.info('listening', { role: 'gossip', address: `${host}:${bound}`, identity: init.identity.stable ? 'stable' : 'ephemeral', public_key: init.identity.publicKeyHex });
toSupervisor({ type: 'listening', role: 'gossip', address: host, port: bound });
onShutdown(async () => {
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  core.close();
});

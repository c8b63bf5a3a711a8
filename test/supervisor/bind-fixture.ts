/**
 * Child of test/supervisor/bind.test.ts, forked by the real Supervisor in place of every
 * role: core and gossip report ready/listening; the REST role fails its bind the way
 * src/rest/main.ts does (exitOnBindError), as if another process took rest_address
 * between the supervisor's check and the REST front's listen.
 */
import { awaitInit, exitOnBindError, onShutdown, toSupervisor } from '../../src/supervisor/child.js';
import { BindError } from '../../src/supervisor/address.js';

const init = await awaitInit('core');
onShutdown(async () => undefined);
if (init.role === 'core') toSupervisor({ type: 'ready', role: 'core' });
else if (init.role === 'gossip') toSupervisor({ type: 'listening', role: 'gossip', address: '127.0.0.1', port: 1 });
else await exitOnBindError('rest', Promise.reject(new BindError('rest_address', '127.0.0.1:8080', 'EADDRINUSE')));

/**
 * Child of test/supervisor/stop.test.ts, forked by the real Supervisor in place of every
 * role. It reports ready/listening at once; how it stops is set by SVC_STOP_FIXTURE:
 *   late   registers its drain 300 ms after reporting (a stop may come before that)
 *   hang   (core only) its drain never ends
 *   fail   (core only) its drain throws
 */
import { awaitInit, onShutdown, toSupervisor } from '../../src/supervisor/child.js';

const mode = process.env['SVC_STOP_FIXTURE'] ?? 'late';
const init = await awaitInit('core');
if (init.role === 'core') toSupervisor({ type: 'ready', role: 'core' });
else toSupervisor({ type: 'listening', role: init.role, address: '127.0.0.1', port: 1 });
if (init.role === 'core' && mode === 'hang') onShutdown(() => new Promise<void>(() => undefined));
else if (init.role === 'core' && mode === 'fail') onShutdown(async () => Promise.reject(new Error('cannot close the database')));
else {
  await new Promise((r) => setTimeout(r, 300));
  onShutdown(async () => undefined);
}

/** Core process entry. */
import { awaitInit, onShutdown, serveProcessMetrics, toSupervisor } from '../supervisor/child.js';
import { familiesOf } from '../supervisor/process-metrics.js';
import type { SupervisorToChild } from '../messages.js';
import { Core } from './core.js';
import { logger } from '../log.js';
import { describeError } from '@svc-node/protocol/errors';

const init = await awaitInit('core');
const starting = Core.start(init);
// Listening from the start: a stop that arrives while the database opens waits for it,
// then closes it, instead of being ignored until the supervisor kills the process.
onShutdown(async () => (await starting).stop());
process.on('message', (m: SupervisorToChild) => {
  if (m.type === 'stopping') void starting.then((core) => core.beginStop()).catch(() => undefined);
});
try {
  const core = await starting;
  serveProcessMetrics('core', () => familiesOf(core.chainMetrics.registry));
  toSupervisor({ type: 'ready', role: 'core' });
} catch (e) {
  const reason = describeError(e);
  logger('core').error('core failed to start', { reason });
  toSupervisor({ type: 'fatal', role: 'core', reason });
  process.exit(1);
}

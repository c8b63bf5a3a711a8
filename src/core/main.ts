/** Core process entry. */
import { awaitInit, onShutdown, serveProcessMetrics, toSupervisor } from '../supervisor/child.js';
import { familiesOf } from '../supervisor/process-metrics.js';
import { Core } from './core.js';
import { logger } from '../log.js';
import { describeError } from '../errors.js';

const init = await awaitInit('core');
try {
  const core = await Core.start(init);
  serveProcessMetrics('core', () => familiesOf(core.chainMetrics.registry));
  onShutdown(() => core.stop());
  toSupervisor({ type: 'ready', role: 'core' });
} catch (e) {
  const reason = describeError(e);
  logger('core').error('core failed to start', { reason });
  toSupervisor({ type: 'fatal', role: 'core', reason });
  process.exit(1);
}

/** Core process entry. */
import { awaitInit, onShutdown, toSupervisor } from '../supervisor/child.js';
import { Core } from './core.js';
import { logger } from '../log.js';

const init = await awaitInit('core');
try {
  const core = await Core.start(init);
  onShutdown(() => core.stop());
  toSupervisor({ type: 'ready', role: 'core' });
} catch (e) {
  const reason = e instanceof Error ? e.message : String(e);
  logger('core').error('core failed to start', { reason });
  toSupervisor({ type: 'fatal', role: 'core', reason });
  process.exit(1);
}

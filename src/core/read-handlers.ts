/** Core handlers of ReadApi (the REST front's reads). */
import type { Handlers } from '../ipc/rpc.js';
import type { ReadApi } from '../messages.js';
import type { Core } from './core.js';

export function readHandlers(_core: Core): Handlers<ReadApi> {
  return {};
}

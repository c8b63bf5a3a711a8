/** Core handlers of PeerApi (what the gossip process asks). */
import type { Handlers } from '../ipc/rpc.js';
import type { PeerApi } from '../messages.js';
import type { Core } from './core.js';

export function peerHandlers(_core: Core): Handlers<PeerApi> {
  return {};
}

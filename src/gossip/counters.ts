/** The gossip counters shown in node_status.gossip (types in src/messages.ts). */
import type { GossipCounters } from '../messages.js';

export function zeroCounters(): GossipCounters {
  return {
    payloads_received: 0,
    payloads_accepted: 0,
    payloads_refused: 0,
    payloads_duplicate: 0,
    payloads_forwarded: 0,
    requests_unauthenticated: 0,
    requests_rate_limited: 0,
    requests_malformed: 0,
    payloads_forward_dropped: 0,
    sync_rounds: 0,
    sync_contracts_differing: 0,
    sync_payloads_fetched: 0,
    sync_payloads_applied: 0,
    payloads_served: 0,
  };
}

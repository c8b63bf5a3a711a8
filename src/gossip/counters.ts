/**
 * The gossip counters shown in node_status.gossip as /metrics families (the type and its
 * zero value are in src/messages/gossip.ts: the core holds a copy too).
 */
import type { GossipCounters } from '../messages/gossip.js';
import type { MetricFamily } from '../messages/supervisor.js';

/** HELP text of each counter on /metrics (as `svc_gossip_<name>_total`). */
const HELP: Record<string, string> = {
  payloads_received: 'Payloads received from peers (SubmitPayload)',
  payloads_accepted: 'Payloads from peers stored as new by intake',
  payloads_refused: 'Payloads from peers refused by intake',
  payloads_unpaid: 'Payloads from peers refused for showing no coin paying for their wait (coin_missing, bad_coin, coin_unproven, coin_before_anchor)',
  payloads_duplicate: 'Payloads from peers skipped as already seen',
  payloads_forwarded: 'Payload copies sent to peers',
  requests_unauthenticated: 'Peer requests refused for a missing or bad signature',
  requests_rate_limited: 'Peer requests refused by the rate limits',
  requests_malformed: 'Peer requests that were not valid messages',
  payloads_forward_dropped: 'Payload copies not sent because the send queue was full',
  sync_rounds: 'Merkle-diff sync rounds run',
  sync_contracts_differing: 'Contracts found differing from a peer during sync',
  sync_payloads_fetched: 'Payloads fetched from peers by sync',
  sync_payloads_applied: 'Payloads fetched by sync and stored by intake',
  payloads_served: 'Payloads served to peers (GetPayloadByTxid)',
  headers_served: 'Block headers served to peers (GetHeaders)',
  sync_headers_accepted: 'Block headers taken from peers by sync (each run authenticated by the chain-data endpoint)',
  sync_evidence_taken: "Evidence of this node's pending payloads taken from peers by sync",
  sync_bad_evidence: 'Peer header runs and payload evidence refused as false (bad_evidence)',
  tip_announcements_passed: "Peers' heartbeat tip announcements above this node's header tip, passed to the core",
};

/** The counters as Prometheus counter families, plus the active peer count as a gauge. */
export function counterFamilies(c: GossipCounters, activePeers: number): MetricFamily[] {
  const out: MetricFamily[] = Object.entries(c).map(([k, v]) => ({
    name: `svc_gossip_${k}_total`,
    help: HELP[k] ?? `Gossip counter ${k}`,
    type: 'counter',
    values: [{ value: Number(v), labels: {} }],
  }));
  out.push({ name: 'svc_gossip_peers_active', help: 'Gossip peers heard from within gossip.peer_expiry_s, as the gossip process sees them', type: 'gauge', values: [{ value: activePeers, labels: {} }] });
  return out;
}

/**
 * The gossip process <-> core channel (typed RPC over the core's local socket): the
 * payloads peers exchange, what gossip asks of the core, and the core's events to it.
 */
import type { WireError } from '@svc-node/protocol/errors';
import type { Evidence } from '@svc-node/protocol/evidence';
import type { ForwardedPeerQueries } from './writer.js';

/** A payload as peers exchange it (proto Payload): a REST body in binary form. */
export interface WirePayload {
  kind: 'call' | 'deploy';
  /** Anchoring txid, display hex. */
  txid: string;
  /** Target contract (calls); '' for deploys. */
  contract_id: string;
  /** Calls: borsh(envelope). Deploys: UTF-8 JSON registration record. At most 64 KiB. */
  body: Uint8Array;
  /** The payload's Bitcoin evidence (packages/protocol/src/evidence.ts); null: none. Checked by every receiver, never trusted. */
  evidence: Evidence | null;
}

/**
 * A WirePayload packed into one byte array (src/packed-payload.ts): payloads travel
 * so between the gossip process, the core and the writer.
 */
export type PackedPayload = Uint8Array;

/** What the core broadcasts on its socket, by event (RpcServer.broadcast; the gossip process listens). */
export interface CoreEvents {
  /** A payload REST intake (or a peer) just stored, to be gossiped. */
  payload_accepted: WirePayload;
}

/** Payload announced by the core to the gossip process after REST intake stored it. */
export const PAYLOAD_ACCEPTED_EVENT = 'payload_accepted' satisfies keyof CoreEvents;

/** Counters the gossip process keeps and reports (node_status.gossip). */
export interface GossipCounters {
  /** Payloads received in SubmitPayload requests. */
  payloads_received: number;
  /** Of those, newly stored by intake. */
  payloads_accepted: number;
  /** Of those, refused by intake (bad signature, stamp mismatch, ...). */
  payloads_refused: number;
  /** Of the refused, those that showed no coin paying for their wait (coin_missing, bad_coin, coin_unproven, coin_before_anchor): each cost its sender inbound budget. */
  payloads_unpaid: number;
  /** Of those, skipped as already seen. */
  payloads_duplicate: number;
  /** Payload copies sent to peers by gossip. */
  payloads_forwarded: number;
  /** Requests refused before any handler ran: unsigned, bad signature, stale clock. */
  requests_unauthenticated: number;
  /** Requests refused by the inbound rate limits. */
  requests_rate_limited: number;
  /** Requests whose bytes are not a protobuf message of the method (INVALID_ARGUMENT). */
  requests_malformed: number;
  /** Payload copies not sent because the peer's send backlog was full (sync repairs them). */
  payloads_forward_dropped: number;
  /** Sync rounds completed (one per peer per round). */
  sync_rounds: number;
  /** Contracts whose Merkle root differed from a peer's during sync. */
  sync_contracts_differing: number;
  /** Payloads this node fetched from peers by sync (GetPayloadByTxid calls it made). */
  sync_payloads_fetched: number;
  /** Of those, newly stored by intake. */
  sync_payloads_applied: number;
  /** Payloads this node served to peers (GetPayloadByTxid answers it gave). */
  payloads_served: number;
  /** Block headers this node served to peers (GetHeaders). */
  headers_served: number;
  /** Block headers taken from peers by sync (verified, the top of each run authenticated by the endpoint). */
  sync_headers_accepted: number;
  /** Evidence of this node's pending payloads taken from peers by sync. */
  sync_evidence_taken: number;
  /** Peer answers refused as false (bad_evidence): header runs and payload evidence that did not hold. */
  sync_bad_evidence: number;
  /** Peers' heartbeat tip announcements above this node's header tip, passed to the core (which asks the endpoint at most once a poll interval). */
  tip_announcements_passed: number;
}

/** Every gossip counter at 0: the gossip process's start and the core's view before its first report. */
export function zeroCounters(): GossipCounters {
  return {
    payloads_received: 0,
    payloads_accepted: 0,
    payloads_refused: 0,
    payloads_unpaid: 0,
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
    headers_served: 0,
    sync_headers_accepted: 0,
    sync_evidence_taken: 0,
    sync_bad_evidence: 0,
    tip_announcements_passed: 0,
  };
}

/** The last state divergence found against a peer (node_status.divergence). */
export interface DivergenceReport {
  peer: string;
  /** First height (same block hash on both nodes) where the state roots differ. */
  height: number;
  block_hash: string;
  local_root: string;
  peer_root: string;
  detected_at: string;
  /** Re-sync brought the roots together. */
  resolved: boolean;
  /** What happened after detection: "resynced", "local replay agrees with stored state", "halted", "pending". */
  outcome: string;
}

/**
 * What the gossip process asks of the core. Payloads go through intake; the peer queries
 * the writer answers are forwarded (ForwardedPeerQueries, messages/writer.ts).
 */
export type PeerApi = ForwardedPeerQueries & {
  /**
   * Runs intake on a peer's payload (the same checks as REST) and stores it. `from`: the
   * sending peer's key (a payload refused only for a header this node lacks yet is kept
   * for it: core/unproven-pool.ts).
   */
  peerSubmit(params: { payload: PackedPayload; from?: string }): { created: boolean };
  /**
   * peerSubmit for several payloads in one round trip (sync hands a fetched page at
   * once); one result per payload, in order: a refusal fails only its own entry.
   */
  peerSubmitMany(params: { payloads: PackedPayload[] }): { results: ({ ok: true; created: boolean } | { ok: false; error: WireError })[] };
  /** Runs the intake checks without storing (PreparePayload). */
  peerPrepare(params: { payload: PackedPayload }): { valid: true };
  /** Waits for the writer to finish every job queued so far (late-payload replays). */
  peerSettle(params: Record<string, never>): { processed_height: number | null; state_root: string | null };
  /**
   * What heartbeats advertise, read when one is sent or answered: the processed height as
   * of the writer's last state event (from the core's memory, no writer round trip) and
   * the header tip with its 80 bytes (read from the writer once per new tip).
   */
  peerAdvert(params: Record<string, never>): { height: number | null; tip: { height: number; header: Uint8Array } | null };
  /**
   * A peer's heartbeat announced a header tip above this node's (a hint, never trusted:
   * ChainFollower.notePeerTip decides whether to ask the endpoint). `announcer`: the
   * peer's hex public key.
   */
  peerTip(params: { height: number; header: Uint8Array; announcer: string }): { ok: true };
  /**
   * Re-derives the state from the journal and compares every stored state root; a
   * difference halts the node (the ledger's rule). Answers whether it halted.
   */
  peerVerifyReplay(params: Record<string, never>): { halted: boolean; halt_reason: string | null };
  /** Verified block headers of heights [from, from + count), as far as held, and the header tip (GetHeaders). */
  peerHeaders(params: { from: number; count: number }): { headers: Uint8Array[]; tip: number | null };
  /**
   * What header sync starts from: the journal's anchor (null before it is anchored), the
   * header tip, and whether this node takes peers' header runs (chain_mode light).
   */
  peerHeaderState(params: Record<string, never>): { anchor: number | null; tip: number | null; takesHeaders: boolean };
  /**
   * A peer's run of headers from `from` (ChainFollower.submitHeaders: linkage, proof of
   * work, and one endpoint answer for its top); `linked` false when its first header does
   * not follow this node's block at `from - 1` (another branch: not taken, not a lie).
   * A run that fails verification or authentication is refused `bad_evidence`.
   */
  peerSubmitHeaders(params: { from: number; headers: Uint8Array[] }): { accepted: number; linked: boolean };
  /**
   * Pending payloads this node holds whose evidence a peer may improve, ascending by txid
   * after `after`, from a page of `limit` (sync asks peers for their evidence). Left out:
   * a payload whose stored evidence places or drops it in a block above the processed tip
   * (that block decides it). `next`: the cursor of the next page, '' when this was the last.
   */
  peerPending(params: { after: string; limit: number }): { txids: string[]; next: string };
  /**
   * A peer's evidence for a pending payload this node holds: checked (checkEvidence, then
   * the writer against its headers) and kept where it holds (Writer.takeEvidence).
   * `taken`: the payload was still pending here and the evidence was kept. A claim that
   * does not hold is refused `bad_evidence`.
   */
  peerTakeEvidence(params: { txid: string; evidence: Evidence }): { taken: boolean };
  /**
   * Gossip's first sync round with its peers since it started has ended, whether it
   * brought anything or every peer failed: a light node stops holding block application
   * back for it (ChainFollower.noteInitialSync). Sent again after a core restart.
   */
  peerInitialSyncDone(params: Record<string, never>): { ok: true };
  /**
   * A sync has taken every payload its peer listed anchored at or below `height` (the
   * peer lists them in chain order), or (null) every payload it listed: while the first
   * sync still delivers, a light node applies blocks up to there
   * (ChainFollower.notePeerDelivered).
   */
  peerSyncDelivered(params: { height: number | null }): { ok: true };
  /**
   * A sync round has listed `payloads` payloads to fetch from its peer (what it lacks of
   * the peer's sets), before fetching them: what the `catching up` line counts the
   * payloads taken against while the first sync holds blocks back
   * (ChainFollower.notePeerPayloadsListed).
   */
  peerSyncListed(params: { payloads: number }): { ok: true };
  /** The gossip process's view, shown in node_status. */
  peerReport(params: { peers: number; counters: GossipCounters; divergence: DivergenceReport | null }): { ok: true };
};

export interface ContractSummary {
  contract_id: string;
  root: string;
  /** Pairs in the whole summary. */
  count: number;
  /** One page of pairs, ascending by txid. */
  payloads: { txid: string; payload_hash: string }[];
  /** Further pairs follow the page. */
  more: boolean;
}

/** One page of a contract's txid list, and the length of the whole list. */
export interface TxidPage {
  refs: PayloadRef[];
  total: number;
}

/** A txid range [lower, upper) as hex bounds of 0 to 32 bytes ('' upper: the end). */
export interface RangeQuery {
  lower: string;
  upper: string;
  /** List the txids when the range holds at most this many. */
  list_up_to: number;
}

export interface RangeAnswer {
  count: number;
  /** 16 bytes hex (proto/svc.proto, header section 3). */
  fingerprint: string;
  /** The range's txids ascending when listed, else null. */
  txids: string[] | null;
}

/** A payload with the node's confirmation position for it (calls; null while pending). */
export interface PeerPayload {
  payload: WirePayload;
  height: number | null;
  tx_index: number | null;
}

/** A PeerPayload as it crosses threads and processes: the payload packed. */
export interface PackedPeerPayload {
  payload: PackedPayload;
  height: number | null;
  tx_index: number | null;
}

export interface PayloadRef {
  txid: string;
  kind: 'deploy' | 'call';
  /** Confirmation position, null while pending. */
  height: number | null;
  tx_index: number | null;
}

export interface StateRootRange {
  roots: { height: number; block_hash: string; state_root: string }[];
  anchor_height: number | null;
  tip_height: number | null;
}

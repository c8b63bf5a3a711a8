/**
 * Sync with peers, one peer at a time, at startup with each peer as it turns active (its
 * first heartbeat answered) and with every active peer each peer_sync_interval_s. A peer
 * that has not answered a heartbeat is not synced with: one that hangs would hold the
 * syncs behind it (and a light node's first blocks) until the request deadline.
 *
 * This engine orders the parts per peer; each part is its own file:
 * 0. Headers, on a light node (headers.ts): the peer's verified headers above this
 *    node's, in runs the core verifies and the endpoint authenticates.
 * 1. Divergence (divergence.ts): the state roots both nodes hold compared, bisected to
 *    the first differing block.
 * 2. Payloads (payloads.ts, contract-sets.ts, payload-fetch.ts): the contracts whose
 *    payload sets differ, the txids missing on either side, fetched with their evidence
 *    into the core's intake, and pushed to the peer.
 * 3. After a divergence (divergence.ts): compared again once the writer's replays end; a
 *    divergence with equal payload sets re-derives the local state.
 * 4. Evidence of this node's pending payloads (pending-evidence.ts).
 * What is asked again and when (a request failing for a moment, a refused payload, a
 * peer's false answer) is decided in one place, retries.ts.
 */
import type { Peer } from '../peers.js';
import type { DivergenceReport } from '../../messages/gossip.js';
import { ContractSets } from './contract-sets.js';
import type { SyncDeps } from './deps.js';
import { DivergenceCheck } from './divergence.js';
import { HeaderSync } from './headers.js';
import { PayloadFetch } from './payload-fetch.js';
import { PayloadSync, type PayloadSyncResult } from './payloads.js';
import { PendingEvidence } from './pending-evidence.js';
import { Retries } from './retries.js';

export interface PeerSyncResult extends PayloadSyncResult {
  /** Headers taken from the peer (authenticated runs). */
  headers: number;
  /** Evidence of this node's pending payloads taken from the peer. */
  evidence: number;
  divergence: DivergenceReport | null;
}

export class SyncEngine {
  /** The last sync queued: syncs run one after another (two at once would fetch the same payloads twice). */
  private tail: Promise<void> = Promise.resolve();
  /** The full round queued or running (`round`), joined by a second call. */
  private running: Promise<void> | null = null;
  /** Peers that turned active, synced with by the queued `draining` job. */
  private readonly arrived = new Set<Peer>();
  private draining: Promise<void> | null = null;
  private readonly retries: Retries;
  readonly headers: HeaderSync;
  readonly roots: DivergenceCheck;
  readonly payloads: PayloadSync;
  readonly pending: PendingEvidence;

  constructor(private readonly d: SyncDeps) {
    this.retries = new Retries(d);
    this.headers = new HeaderSync(d, this.retries);
    const contracts = new ContractSets(d, this.retries);
    this.roots = new DivergenceCheck(d, this.retries, contracts);
    this.payloads = new PayloadSync(d, this.retries, contracts, new PayloadFetch(d, this.retries));
    this.pending = new PendingEvidence(d, this.retries);
  }

  /** The last divergence found with any peer (node_status). */
  get divergence(): DivergenceReport | null {
    return this.roots.report;
  }

  /** Refused txids sync currently skips (node_status, tests). */
  get refusedCount(): number {
    return this.retries.refusedCount;
  }

  /**
   * One sync with every active peer in turn, fewest failures first; a round already
   * queued or running is joined, not doubled.
   */
  round(): Promise<void> {
    this.running ??= this.enqueue(async () => {
      this.retries.newRound();
      const peers = this.d.peers;
      await this.syncEach(peers.all().filter((p) => peers.isActive(p)).sort((a, b) => a.failures - b.failures));
    }).finally(() => (this.running = null));
    return this.running;
  }

  /**
   * A peer turned active (its first heartbeat answered): sync with it once the syncs
   * queued before have ended, not at the next round.
   */
  peerActive(peer: Peer): void {
    this.arrived.add(peer);
    this.draining ??= this.enqueue(async () => {
      // From here on, a peer that turns active queues another job.
      this.draining = null;
      const peers = this.d.peers;
      const late = [...this.arrived].filter((p) => peers.isActive(p) && peers.all().includes(p));
      this.arrived.clear();
      await this.syncEach(late);
    });
  }

  /** Settles when every sync queued so far (and any queued meanwhile) has ended. */
  async idle(): Promise<void> {
    for (let seen = this.tail; ; seen = this.tail) {
      await seen;
      if (seen === this.tail) return;
    }
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    const p = this.tail.then(job);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private async syncEach(order: Peer[]): Promise<void> {
    for (const peer of order) {
      try {
        await this.syncWith(peer);
        this.d.synced?.();
      } catch (e) {
        this.d.peers.failed(peer);
        this.d.log.info('peer sync failed', { peer: peer.url, error: (e as Error).message });
      }
    }
  }

  async syncWith(peer: Peer): Promise<PeerSyncResult> {
    const falseBefore = this.retries.falseAnswersOf(peer);
    // Headers first: the evidence of the payloads that follow is checked against them.
    const headers = await this.headers.sync(peer);
    const divergence = await this.roots.check(peer);
    const t0 = performance.now();
    const r = await this.payloads.sync(peer);
    const payloadMs = Math.round(performance.now() - t0);
    if (divergence) await this.roots.after(peer, divergence);
    const evidence = await this.pending.take(peer);
    this.d.counters.sync_rounds++;
    // Only a sync without a false answer clears the peer's failures: one that met one
    // leaves the peer marked (asked last, the first evicted), however much else it answered.
    if (this.retries.falseAnswersOf(peer) === falseBefore) this.d.peers.ok(peer);
    this.d.changed();
    if (r.fetched > 0 || r.differing > 0 || divergence || headers > 0 || evidence > 0) {
      this.d.log.info('peer sync done', {
        peer: peer.url,
        headers_taken: headers,
        contracts_differing: r.differing,
        payloads_fetched: r.fetched,
        payloads_applied: r.applied,
        payloads_pushed: r.pushed,
        payload_ms: payloadMs,
        evidence_taken: evidence,
        divergence_height: divergence?.height ?? null,
      });
    }
    return { ...r, headers, evidence, divergence };
  }
}

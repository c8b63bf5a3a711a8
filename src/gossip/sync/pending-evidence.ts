/**
 * Evidence of this node's own pending payloads (GetPayloads for their txids): what the
 * peer places or drops is checked the same way as intake checks evidence and kept
 * (Writer.takeEvidence), which saves the deferred endpoint checks.
 */
import PQueue from 'p-queue';
import { NodeError } from '@svc-node/protocol/errors';
import { fromProtoPayload } from '../wire.js';
import { GET_PAYLOADS_MAX, LIST_CONCURRENCY } from '../limits.js';
import type { Peer } from '../peers.js';
import type { SyncDeps } from './deps.js';
import type { Retries } from './retries.js';

/**
 * Pending payloads of this node whose evidence is asked of each peer per round: 16
 * GetPayloads requests (the list budget allows 10 a second), taken in txid order from a
 * cursor that goes round, so a large pending set is covered over several rounds.
 */
const PENDING_EVIDENCE_PER_ROUND = 16 * GET_PAYLOADS_MAX;

export class PendingEvidence {
  /** Where the next round's look for evidence of this node's pending payloads starts (txid order). */
  private pendingCursor = '';

  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
  ) {}

  /**
   * Asks the peer for the evidence of up to PENDING_EVIDENCE_PER_ROUND of this node's
   * pending payloads that no block ahead settles already (peerPending; GetPayloads answers each with its evidence) and hands what places
   * or drops one to the core, which checks it as intake does and keeps what holds
   * (Writer.takeEvidence). Answers how many were taken. Evidence that does not hold is
   * counted against the peer.
   */
  async take(peer: Peer): Promise<number> {
    const core = this.d.core();
    const { txids: listed, next } = await core.call('peerPending', { after: this.pendingCursor, limit: PENDING_EVIDENCE_PER_ROUND });
    this.pendingCursor = next ?? '';
    const ask = listed.filter((t) => !this.retries.fetchedNow(t));
    let taken = 0;
    // No more at once than the peer answers at once, as payload fetches (PayloadFetch.fetchEach).
    const q = new PQueue({ concurrency: Math.min(this.d.concurrency, LIST_CONCURRENCY) });
    for (let i = 0; i < ask.length; i += GET_PAYLOADS_MAX) {
      const chunk = ask.slice(i, i + GET_PAYLOADS_MAX);
      void q.add(async () => {
        for (let rest = chunk; rest.length > 0; ) {
          const r = await this.retries.ask(peer, 'GetPayloads', { txids: rest.map((t) => Buffer.from(t, 'hex')) });
          const covered = new Set(rest.slice(0, r.answered));
          for (const f of r.payloads) {
            let txid = '';
            try {
              const p = fromProtoPayload(f.payload);
              txid = p.txid;
              if (!covered.has(p.txid)) throw new NodeError('bad_request', `peer answered a payload not asked for: ${p.txid}`);
              const ev = p.evidence;
              if (!ev || (!ev.confirmed && !ev.spentBy)) continue;
              if ((await core.call('peerTakeEvidence', { txid: p.txid, evidence: ev })).taken) {
                taken++;
                this.d.counters.sync_evidence_taken++;
              }
            } catch (e) {
              if (e instanceof NodeError && e.code === 'bad_evidence') this.retries.falseAnswer(peer, `evidence of ${txid}`, e);
              else this.d.log.debug('peer evidence not taken', { peer: peer.url, txid, error: (e as Error).message });
            }
          }
          if (r.answered === 0) return;
          rest = rest.slice(r.answered);
        }
      }).catch((e: unknown) => this.d.log.debug('peer evidence fetch failed', { peer: peer.url, error: (e as Error).message }));
    }
    await q.onIdle();
    return taken;
  }
}

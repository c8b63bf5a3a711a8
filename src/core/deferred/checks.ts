/**
 * Deferred checks (docs/ARCHITECTURE.md, "Deferred checks"): what intake no longer asks
 * the chain-data endpoint on its hot path, asked afterwards for payloads still pending
 * after their first block, within the request budget's `deferred` share (the budget keeps
 * half its burst from them for following the tip and for intake). A payload whose
 * evidence already places or drops it in a block (a peer's, a client's) is checked only
 * if it is still pending once that block is applied: its evidence is what decides it,
 * and a synced payload costs no request.
 *
 * What a check asks the endpoint is in endpoint-lookups.ts; when each is due, in
 * schedule.ts.
 *
 * A payload whose anchor the endpoint knows nowhere on two checks at least one block
 * apart is evicted (Ledger.evictPayloads), as if never accepted: keeping a payload then
 * costs its sender a broadcast Bitcoin transaction again, as a fetched anchor did, so a
 * flood of anchors never broadcast costs at most two requests each and leaves nothing
 * behind. Checks back off: 1, 2, 4 ... 144 blocks, then every 144 blocks (a day), so a
 * payload waiting in the mempool costs at most ~8 requests its first day and one a day
 * after (later checks wait for blocks only: nothing on the chain changes without one; a
 * check that failed waits the same way, never on a timer).
 */
import type { EsploraClient } from '../../chain/esplora-client.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { DeferredStats } from '../../messages/core.js';
import type { WriterApi } from '../../messages/writer.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../log.js';
import { CheckSchedule, type Entry } from './schedule.js';
import { EndpointLookups } from './endpoint-lookups.js';

const log = logger('chain');

/** Checks that found the anchor nowhere before the payload is evicted (at least a block apart). */
const UNSEEN_BEFORE_EVICTION = 2;
/**
 * Checks in flight at once: each is one to three requests, and the budget spaces them
 * anyway; two keep one slow answer from holding the rest.
 */
const CHECKS_IN_FLIGHT = 2;
/** Pending payloads listed from the writer per request when (re)seeding. */
const SEED_PAGE = 4_096;
/**
 * Due payloads the writer is asked about at once (stillPending) before any is checked
 * alone: after a catch-up thousands fall due that their blocks have decided since, and
 * one question each (two writer round trips, two in flight) took minutes to forget them.
 */
const SIFT_BATCH = 4_096;

export class DeferredChecks {
  private readonly schedule: CheckSchedule;
  private readonly lookups: EndpointLookups;
  /** A stillPending question is out. */
  private sifting = false;
  private running = 0;
  private stopped = false;
  private seeded = false;
  readonly stats = { checks: 0, placed: 0, dropped: 0, evicted: 0 };

  /**
   * `firstCheckAfterMs`: a new payload is first checked after the next block or this
   * long, whichever comes first (the core gives ten block-check intervals: a block's time
   * at the default interval).
   */
  constructor(
    chain: EsploraClient,
    private readonly writer: RpcClient<WriterApi>,
    firstCheckAfterMs: number,
  ) {
    this.schedule = new CheckSchedule(firstCheckAfterMs, () => this.pump());
    this.lookups = new EndpointLookups(chain, writer);
  }

  /**
   * Every pending payload the writer holds: due at once (they may have confirmed while
   * the node was away), unless their evidence names a block not applied yet whose header
   * is held (`headerHeight`; Core.settlesOnHeaders says why).
   */
  async seed(processedHeight: number, headerHeight: number): Promise<void> {
    this.processedAt(processedHeight, headerHeight);
    let after = '';
    for (;;) {
      const page = await this.writer.call('pendingPayloads', { after, limit: SEED_PAGE });
      for (const p of page) {
        if (this.schedule.has(p.txid)) continue;
        if (p.settles_at !== null && p.settles_at > processedHeight && p.settles_at <= headerHeight) this.schedule.add(p.txid, p.kind, p.outpoint, p.settles_at, false);
        else this.schedule.add(p.txid, p.kind, p.outpoint, processedHeight, false);
      }
      const last = page[page.length - 1];
      if (page.length < SEED_PAGE || !last) break;
      after = last.txid;
    }
    this.seeded = true;
    this.pump();
  }

  /**
   * A payload intake just stored, pending at processed height `at`. `settlesAt`: the
   * lowest block its stored evidence places or drops it in (null: none), checked only if
   * still pending once that block is applied. Otherwise first checked once the next block
   * is applied, or a block's time later, if it is still pending.
   */
  added(txid: string, kind: 'call' | 'deploy', outpoint: string | null, at: number, settlesAt: number | null = null): void {
    if (this.schedule.has(txid)) return;
    if (settlesAt !== null) this.schedule.add(txid, kind, outpoint, Math.max(settlesAt, at + 1), false);
    else this.schedule.add(txid, kind, outpoint, at + 1, true);
    // Arms the time trigger when nothing else is waiting on one.
    this.pump();
  }

  /**
   * The writer's processed height moved (and `chainTip`, the header tip): checks due up to
   * it may run.
   */
  processedAt(height: number, chainTip = height): void {
    this.schedule.processedAt(height, chainTip);
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.schedule.stop();
  }

  snapshot(): DeferredStats {
    return { tracked: this.schedule.size, due: this.schedule.dueCount(), checks_total: this.stats.checks, placed_total: this.stats.placed, dropped_total: this.stats.dropped, evicted_total: this.stats.evicted };
  }

  /**
   * Sifts due payloads (up to SIFT_BATCH at once, by height first): those the writer no
   * longer holds pending are forgotten, the others checked, up to CHECKS_IN_FLIGHT at once.
   */
  private pump(): void {
    if (this.stopped || !this.seeded) return;
    if (!this.sifting) {
      const batch: Entry[] = [];
      for (let e = this.schedule.nextDue(); e; e = batch.length < SIFT_BATCH ? this.schedule.nextDue() : null) {
        // Not due again until it has been sifted (and checked): that sets its next due height.
        this.schedule.hold(e);
        batch.push(e);
      }
      if (batch.length > 0) {
        this.sifting = true;
        void this.sift(batch).finally(() => {
          this.sifting = false;
          this.pump();
        });
      }
    }
    while (this.running < CHECKS_IN_FLIGHT) {
      const next = this.schedule.nextSifted();
      if (!next) return;
      this.schedule.hold(next);
      this.running++;
      void this.check(next)
        .catch((e: unknown) => {
          // The endpoint failed, the budget ran out, or what it showed did not hold
          // (bad_evidence): asked again after new blocks, backing off as any check does
          // (a time trigger here re-ran a failing check every few seconds with no block).
          if (this.schedule.holds(next)) this.schedule.backOff(next);
          if (!(e instanceof NodeError && (e.code === 'chain_unavailable' || e.code === 'not_found'))) log.warn('deferred check failed', { txid: next.txid, error: (e as Error).message });
        })
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }

  /** One writer question for `batch`: the decided are forgotten, the pending queued for their check. */
  private async sift(batch: Entry[]): Promise<void> {
    let pending: boolean[];
    try {
      pending = await this.writer.call('stillPending', { txids: batch.map((e) => e.txid) });
    } catch (e) {
      // The writer did not answer (stopping, restarting): asked again after the next block.
      for (const x of batch) if (this.schedule.holds(x)) this.schedule.schedule(x, this.schedule.processed + 1, true);
      log.debug('deferred checks: the writer did not answer', { error: (e as Error).message });
      return;
    }
    batch.forEach((e, i) => {
      if (!this.schedule.holds(e)) return;
      if (pending[i]) this.schedule.queueSifted(e);
      else this.schedule.forget(e.txid);
    });
  }

  private async check(e: Entry): Promise<void> {
    // Decided meanwhile (a block, a peer's evidence): nothing to ask.
    const held = await this.writer.call('payloadAt', { txid: e.txid });
    if (!held) return this.schedule.forget(e.txid);
    if (e.kind === 'call') {
      const rec = await this.writer.call('call', { txid: e.txid });
      if (!rec || rec.status !== 'pending') return this.schedule.forget(e.txid);
    } else if ((await this.writer.call('contract', { id: held.contract_id }))?.status !== 'pending') return this.schedule.forget(e.txid);
    this.stats.checks++;
    const found = e.kind === 'call' ? await this.lookups.call(e.txid, e.outpoint!) : await this.lookups.deploy(e.txid);
    const processed = this.schedule.processed;
    if (found === 'unseen') {
      if (e.unseen === 0) e.unseenSince = processed;
      e.unseen++;
      if (e.unseen >= UNSEEN_BEFORE_EVICTION && processed > e.unseenSince) {
        const gone = await this.writer.call('evictPayloads', { txids: [e.txid] });
        this.stats.evicted += gone.length;
        return this.schedule.forget(e.txid);
      }
      // Seen nowhere once: look again after the next block rather than backing off.
      e.checks++;
      this.schedule.afterNextBlock(e, true);
      return;
    }
    e.unseen = 0;
    if (typeof found === 'object') {
      // Evidence given to the writer: it decides the payload at that block, unless the
      // writer refused the claim (a branch that does not hold, a block its headers do not
      // name). Look once that block is applied: still pending, the checks go on.
      this.stats[found.found]++;
      e.checks++;
      this.schedule.schedule(e, Math.max(found.height, processed + 1), false);
      return;
    }
    this.schedule.backOff(e);
  }
}

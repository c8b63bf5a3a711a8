/**
 * Deferred checks (docs/ARCHITECTURE.md, "Deferred checks"): what intake no longer asks
 * the chain-data endpoint on its hot path, asked afterwards for payloads still pending
 * after their first block, within the request budget's `deferred` share (the budget keeps
 * half its burst from them for following the tip and for intake):
 *
 * - a call: `GET /tx/:o/outspend/:v` for the outpoint it names. Spent by its anchor and
 *   confirmed: the anchor's merkle proof (`/tx/:txid/merkle-proof`) places it (a block
 *   the node read as a header, or the node was away). Spent by another transaction that
 *   confirmed: the spender and its proof drop it. Spent in the mempool: wait. Not spent:
 *   the anchor is neither in the endpoint's mempool nor on chain.
 * - a deploy: its anchor's merkle proof; without one, whether the endpoint knows the
 *   anchor at all (`/tx/:txid/hex`).
 *
 * A payload whose anchor the endpoint knows nowhere on two checks at least one block
 * apart is evicted (Ledger.evictPayloads), as if never accepted: keeping a payload then
 * costs its sender a broadcast Bitcoin transaction again, as a fetched anchor did, so a
 * flood of anchors never broadcast costs at most two requests each and leaves nothing
 * behind. Checks back off: 1, 2, 4 ... 144 blocks, then every 144 blocks (a day), so a
 * payload waiting in the mempool costs at most ~8 requests its first day and one a day
 * after. Evidence found goes to the writer as any evidence does (Writer.takeEvidence):
 * checked against the node's headers, never taken on the endpoint's word alone.
 */
import type { EsploraClient } from '../chain/esplora-client.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { DeferredStats, WriterApi } from '../messages.js';
import type { Evidence, Inclusion } from '../protocol/evidence.js';
import { NodeError } from '../errors.js';
import { parseHeaderBytes } from '../chain/bitcoin.js';
import { logger } from '../log.js';

const log = logger('chain');

/** Longest wait between two checks of one payload: a day of blocks. */
const MAX_BACKOFF_BLOCKS = 144;
/** Checks that found the anchor nowhere before the payload is evicted (at least a block apart). */
const UNSEEN_BEFORE_EVICTION = 2;
/**
 * Checks in flight at once: each is one to three requests, and the budget spaces them
 * anyway; two keep one slow answer from holding the rest.
 */
const CHECKS_IN_FLIGHT = 2;
/** Pending payloads listed from the writer per request when (re)seeding. */
const SEED_PAGE = 4_096;

interface Entry {
  txid: string;
  kind: 'call' | 'deploy';
  outpoint: string | null;
  /** The processed height from which the next check is due. */
  due: number;
  /**
   * Or from this time (performance.now() ms), whichever comes first: a payload that
   * arrived after its anchor confirmed is placed without waiting for the next block.
   */
  dueAt: number;
  checks: number;
  /** Consecutive checks that found the anchor nowhere, and the height of the first. */
  unseen: number;
  unseenSince: number;
}


export class DeferredChecks {
  private readonly entries = new Map<string, Entry>();
  private processed = 0;
  private running = 0;
  private stopped = false;
  private seeded = false;
  readonly stats = { checks: 0, placed: 0, dropped: 0, evicted: 0 };

  private timer: NodeJS.Timeout | null = null;

  /**
   * `firstCheckAfterMs`: a new payload is first checked after the next block or this
   * long, whichever comes first (the core gives ten block-check intervals: a block's time
   * at the default interval).
   */
  constructor(
    private readonly chain: EsploraClient,
    private readonly writer: RpcClient<WriterApi>,
    private readonly firstCheckAfterMs: number,
  ) {}

  /** Every pending payload the writer holds, due at once (they may have confirmed while the node was away). */
  async seed(processedHeight: number): Promise<void> {
    this.processed = processedHeight;
    let after = '';
    for (;;) {
      const page = await this.writer.call('pendingPayloads', { after, limit: SEED_PAGE });
      for (const p of page) if (!this.entries.has(p.txid)) this.entries.set(p.txid, this.newEntry(p.txid, p.kind, p.outpoint, processedHeight));
      if (page.length < SEED_PAGE) break;
      after = page[page.length - 1]!.txid;
    }
    this.seeded = true;
    this.pump();
  }

  private newEntry(txid: string, kind: 'call' | 'deploy', outpoint: string | null, due: number): Entry {
    return { txid, kind, outpoint, due, dueAt: performance.now() + this.firstCheckAfterMs, checks: 0, unseen: 0, unseenSince: 0 };
  }

  /** A payload intake just stored, pending at processed height `at`: first checked once the next block is applied and it is still pending. */
  added(txid: string, kind: 'call' | 'deploy', outpoint: string | null, at: number): void {
    if (!this.entries.has(txid)) this.entries.set(txid, this.newEntry(txid, kind, outpoint, at + 1));
  }

  /** The writer's processed height moved: checks due up to it may run. */
  processedAt(height: number): void {
    this.processed = height;
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private isDue(e: Entry, now: number): boolean {
    return e.due <= this.processed || e.dueAt <= now;
  }

  snapshot(): DeferredStats {
    let due = 0;
    const now = performance.now();
    for (const e of this.entries.values()) if (this.isDue(e, now)) due++;
    return { tracked: this.entries.size, due, checks_total: this.stats.checks, placed_total: this.stats.placed, dropped_total: this.stats.dropped, evicted_total: this.stats.evicted };
  }

  /** Starts due checks, oldest-due first, up to CHECKS_IN_FLIGHT at once. */
  private pump(): void {
    if (this.stopped || !this.seeded) return;
    while (this.running < CHECKS_IN_FLIGHT) {
      const next = this.nextDue();
      if (!next) return;
      // Not due again until this check has run (it sets the next due height).
      next.due = Number.POSITIVE_INFINITY;
      next.dueAt = Number.POSITIVE_INFINITY;
      this.running++;
      void this.check(next)
        .catch((e: unknown) => {
          // The endpoint failed or the budget ran out: try again a block later.
          next.due = this.processed + 1;
          next.dueAt = performance.now() + this.firstCheckAfterMs;
          if (!(e instanceof NodeError && (e.code === 'chain_unavailable' || e.code === 'not_found'))) log.warn('deferred check failed', { txid: next.txid, error: (e as Error).message });
        })
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }

  private nextDue(): Entry | null {
    let best: Entry | null = null;
    let soonest = Number.POSITIVE_INFINITY;
    const now = performance.now();
    for (const e of this.entries.values()) {
      if (this.isDue(e, now)) {
        if (!best || e.due < best.due || (e.due === best.due && e.txid < best.txid)) best = e;
      } else soonest = Math.min(soonest, e.dueAt);
    }
    // Nothing due by height: wake when the first one falls due by time.
    if (!best && soonest !== Number.POSITIVE_INFINITY && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pump();
      }, Math.max(1, soonest - now));
      this.timer.unref();
    }
    return best;
  }

  private backOff(e: Entry): void {
    e.checks++;
    const blocks = Math.min(2 ** Math.max(0, e.checks - 1), MAX_BACKOFF_BLOCKS);
    e.due = this.processed + blocks;
    e.dueAt = performance.now() + blocks * this.firstCheckAfterMs;
  }

  private async check(e: Entry): Promise<void> {
    // Decided meanwhile (a block, a peer's evidence): nothing to ask.
    const held = await this.writer.call('payloadAt', { txid: e.txid });
    if (!held) return void this.entries.delete(e.txid);
    if (e.kind === 'call') {
      const rec = await this.writer.call('call', { txid: e.txid });
      if (!rec || rec.status !== 'pending') return void this.entries.delete(e.txid);
    } else if ((await this.writer.call('contract', { id: held.contract_id }))?.status !== 'pending') return void this.entries.delete(e.txid);
    this.stats.checks++;
    const found = e.kind === 'call' ? await this.checkCall(e) : await this.checkDeploy(e);
    if (found === 'unseen') {
      if (e.unseen === 0) e.unseenSince = this.processed;
      e.unseen++;
      if (e.unseen >= UNSEEN_BEFORE_EVICTION && this.processed > e.unseenSince) {
        const gone = await this.writer.call('evictPayloads', { txids: [e.txid] });
        this.stats.evicted += gone.length;
        return void this.entries.delete(e.txid);
      }
      // Seen nowhere once: look again after the next block rather than backing off.
      e.checks++;
      e.due = this.processed + 1;
      e.dueAt = performance.now() + this.firstCheckAfterMs;
      return;
    }
    e.unseen = 0;
    if (found === 'placed' || found === 'dropped') {
      this.stats[found]++;
      return void this.entries.delete(e.txid);
    }
    this.backOff(e);
  }

  /** An outpoint check: what the endpoint says spends the outpoint the call names. */
  private async checkCall(e: Entry): Promise<'placed' | 'dropped' | 'waiting' | 'unseen'> {
    const [otxid, vout] = e.outpoint!.split(':') as [string, string];
    const spend = await this.chain.outspend(otxid, Number(vout), { priority: 'deferred' });
    if (!spend.spent) return 'unseen';
    if (!spend.status.confirmed) return 'waiting';
    if (spend.txid === e.txid) return (await this.place(e.txid)) ? 'placed' : 'waiting';
    // Another transaction confirmed spending it: the call is dropped at its block.
    const spender = await this.chain.txWithHex(spend.txid, { priority: 'deferred' });
    const at = await this.inclusionOf(spend.txid);
    if (!at) return 'waiting';
    const ev = await this.writer.call('payloadEvidence', { txid: e.txid });
    if (!ev) return 'waiting';
    const taken = await this.writer.call('takeEvidence', { txid: e.txid, evidence: { ...ev, spentBy: { tx: Buffer.from(spender.hex, 'hex'), vin: spend.vin, at } } });
    return taken ? 'dropped' : 'waiting';
  }

  private async checkDeploy(e: Entry): Promise<'placed' | 'waiting' | 'unseen'> {
    if (await this.place(e.txid)) return 'placed';
    try {
      await this.chain.txWithHex(e.txid, { priority: 'deferred' });
      return 'waiting';
    } catch (err) {
      if (err instanceof NodeError && err.code === 'not_found') return 'unseen';
      throw err;
    }
  }

  /** The anchor's placement from the endpoint's merkle proof, given to the writer; false when unconfirmed or not on the node's headers yet. */
  private async place(txid: string): Promise<boolean> {
    const at = await this.inclusionOf(txid);
    if (!at) return false;
    const ev = await this.writer.call('payloadEvidence', { txid });
    if (!ev) return false;
    return this.writer.call('takeEvidence', { txid, evidence: { ...ev, confirmed: at } });
  }

  /**
   * Where the endpoint places `txid`: its merkle proof, with the block hash the node's own
   * header chain holds at that height (the writer checks the branch against that header).
   * Null when unconfirmed, or above the node's headers.
   */
  private async inclusionOf(txid: string): Promise<Inclusion | null> {
    let proof: { block_height: number; merkle: string[]; pos: number };
    try {
      proof = await this.chain.merkleProof(txid, { priority: 'deferred' });
    } catch (err) {
      if (err instanceof NodeError && err.code === 'not_found') return null;
      throw err;
    }
    const [header] = await this.writer.call('headers', { from: proof.block_height, count: 1 });
    if (!header) return null;
    return {
      blockHash: parseHeaderBytes(header).hash,
      height: proof.block_height,
      txIndex: proof.pos,
      branch: proof.merkle.map((h) => Buffer.from(h, 'hex').reverse()),
    };
  }
}

export type { Evidence };

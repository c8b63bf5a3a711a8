/**
 * Deferred checks (docs/ARCHITECTURE.md, "Deferred checks"): what intake no longer asks
 * the chain-data endpoint on its hot path, asked afterwards for payloads still pending
 * after their first block, within the request budget's `deferred` share (the budget keeps
 * half its burst from them for following the tip and for intake). A payload whose
 * evidence already places or drops it in a block (a peer's, a client's) is checked only
 * if it is still pending once that block is applied: its evidence is what decides it,
 * and a synced payload costs no request.
 *
 * - a call: `GET /tx/:o/outspend/:v` for the outpoint it names. Spent by its anchor and
 *   confirmed: the anchor's merkle proof (`/tx/:txid/merkle-proof`) places it (a block
 *   the node read as a header, or the node was away). Spent by another transaction that
 *   confirmed: the spender and its proof drop it (a spender of 64 bytes without its
 *   witness, which no branch can place: its block's txids, `/block/:hash/txids`, read once
 *   per block). Spent in the mempool: wait. Not spent:
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
 * after (later checks wait for blocks only: nothing on the chain changes without one; a
 * check that failed waits the same way, never on a timer).
 * Evidence found goes to the writer as any evidence does (Writer.takeEvidence):
 * checked against the node's headers, never taken on the endpoint's word alone.
 */
import type { EsploraClient, TxStatus } from '../chain/esplora-client.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { DeferredStats, WriterApi } from '../messages.js';
import { INNER_NODE_BYTES, type Evidence, type Inclusion, type SpentBy } from '@svc-node/protocol/evidence';
import { merkleBranch } from '@svc-node/protocol/merkle-branch';
import { NodeError } from '@svc-node/protocol/errors';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
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
/**
 * Due payloads the writer is asked about at once (stillPending) before any is checked
 * alone: after a catch-up thousands fall due that their blocks have decided since, and
 * one question each (two writer round trips, two in flight) took minutes to forget them.
 */
const SIFT_BATCH = 4_096;
/**
 * Txid lists of blocks holding a 64-byte spender kept (listedIn): such spenders are
 * non-standard and rare, and the calls naming outpoints one of them spent are checked
 * together, so a few lists (each at most ~17,000 x 32 bytes) cover them.
 */
const BLOCK_LISTS_KEPT = 4;

interface Entry {
  txid: string;
  kind: 'call' | 'deploy';
  outpoint: string | null;
  /** The processed height from which the next check is due. */
  due: number;
  /**
   * Or from this time (performance.now() ms), whichever comes first: a payload that
   * arrived after its anchor confirmed is placed without waiting for the next block.
   * Infinity when only a block makes it due.
   */
  dueAt: number;
  /** Bumped at every reschedule: queue items of an older schedule are skipped. */
  gen: number;
  checks: number;
  /** Consecutive checks that found the anchor nowhere, and the height of the first. */
  unseen: number;
  unseenSince: number;
}

interface Scheduled {
  txid: string;
  gen: number;
}

/**
 * A first-in first-out queue with an advancing head (Array.shift is O(n)); the used
 * prefix is dropped once it is half the array.
 */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  push(x: T): void {
    this.items.push(x);
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  shift(): T | undefined {
    const x = this.items[this.head];
    if (x === undefined) return undefined;
    this.head++;
    if (this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }
}


/**
 * Which payloads are due is kept in queues rather than found by a scan, so a check costs
 * the same with 100,000 payloads pending as with ten: `ready` (due by height, in height
 * order), `byHeight` (due at a height not processed yet) and `byTime` (due at a time:
 * every time due is now + firstCheckAfterMs, so they arrive in order). A reschedule
 * leaves the old items behind, skipped by their generation.
 */
/** Evidence a check found and gave the writer: what it decides and the block it names. */
interface Found {
  found: 'placed' | 'dropped';
  height: number;
}

export class DeferredChecks {
  private readonly entries = new Map<string, Entry>();
  private readonly ready = new Fifo<Scheduled>();
  private readonly byHeight = new Map<number, Scheduled[]>();
  private readonly byTime = new Fifo<Scheduled & { at: number }>();
  /** Due payloads the writer said are still pending: checked one by one, in this order. */
  private readonly sifted = new Fifo<Scheduled>();
  /** Recently read block txid lists (internal order), by block hash (listedIn): the reads, so checks in flight share one. */
  private readonly blockTxids = new Map<string, Promise<Uint8Array[]>>();
  /** A stillPending question is out. */
  private sifting = false;
  /** Every height up to this one has been moved from byHeight to ready (-1: none yet). */
  private drainedTo = -1;
  private processed = 0;
  /** The chain's height as the node knows it (its header tip; the processed height in blocks mode). */
  private chainTip = 0;
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
        if (this.entries.has(p.txid)) continue;
        if (p.settles_at !== null && p.settles_at > processedHeight && p.settles_at <= headerHeight) this.add(p.txid, p.kind, p.outpoint, p.settles_at, false);
        else this.add(p.txid, p.kind, p.outpoint, processedHeight, false);
      }
      if (page.length < SEED_PAGE) break;
      after = page[page.length - 1]!.txid;
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
    if (this.entries.has(txid)) return;
    if (settlesAt !== null) this.add(txid, kind, outpoint, Math.max(settlesAt, at + 1), false);
    else this.add(txid, kind, outpoint, at + 1, true);
    // Arms the time trigger when nothing else is waiting on one.
    this.pump();
  }

  private add(txid: string, kind: 'call' | 'deploy', outpoint: string | null, due: number, byTimeToo: boolean): void {
    const e: Entry = { txid, kind, outpoint, due: 0, dueAt: Number.POSITIVE_INFINITY, gen: 0, checks: 0, unseen: 0, unseenSince: 0 };
    this.entries.set(txid, e);
    this.schedule(e, due, byTimeToo);
  }

  /** Makes `e` due from processed height `due` (and a block's time from now, when `byTimeToo`). */
  private schedule(e: Entry, due: number, byTimeToo: boolean): void {
    e.gen++;
    e.due = due;
    e.dueAt = byTimeToo ? performance.now() + this.firstCheckAfterMs : Number.POSITIVE_INFINITY;
    const item = { txid: e.txid, gen: e.gen };
    if (due <= this.drainedTo) this.ready.push(item);
    else {
      const at = this.byHeight.get(due);
      if (at) at.push(item);
      else this.byHeight.set(due, [item]);
    }
    if (byTimeToo) this.byTime.push({ ...item, at: e.dueAt });
  }

  /**
   * The writer's processed height moved (and `chainTip`, the header tip): checks due up to
   * it may run.
   */
  processedAt(height: number, chainTip = height): void {
    this.processed = height;
    this.chainTip = Math.max(height, chainTip);
    if (height > this.drainedTo) {
      // Heights one by one after a block; after a jump (the first status, a fast
      // catch-up) whichever is fewer: the heights passed or the heights waited on.
      if (height - this.drainedTo <= this.byHeight.size) {
        for (let h = this.drainedTo + 1; h <= height; h++) this.drain(h);
      } else {
        for (const h of [...this.byHeight.keys()].filter((k) => k <= height).sort((a, b) => a - b)) this.drain(h);
      }
      this.drainedTo = height;
    }
    this.pump();
  }

  private drain(height: number): void {
    const at = this.byHeight.get(height);
    if (!at) return;
    this.byHeight.delete(height);
    for (const item of at) this.ready.push(item);
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

  /**
   * Sifts due payloads (up to SIFT_BATCH at once, by height first): those the writer no
   * longer holds pending are forgotten, the others checked, up to CHECKS_IN_FLIGHT at once.
   */
  private pump(): void {
    if (this.stopped || !this.seeded) return;
    if (!this.sifting) {
      const batch: Entry[] = [];
      for (let e = this.nextDue(); e; e = batch.length < SIFT_BATCH ? this.nextDue() : null) {
        // Not due again until it has been sifted (and checked): that sets its next due height.
        this.hold(e);
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
      const next = this.nextSifted();
      if (!next) return;
      this.hold(next);
      this.running++;
      void this.check(next)
        .catch((e: unknown) => {
          // The endpoint failed, the budget ran out, or what it showed did not hold
          // (bad_evidence): asked again after new blocks, backing off as any check does
          // (a time trigger here re-ran a failing check every few seconds with no block).
          if (this.entries.get(next.txid) === next) this.backOff(next);
          if (!(e instanceof NodeError && (e.code === 'chain_unavailable' || e.code === 'not_found'))) log.warn('deferred check failed', { txid: next.txid, error: (e as Error).message });
        })
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }

  /** Takes `e` off every schedule (bumps its generation): what runs on it sets the next one. */
  private hold(e: Entry): void {
    e.gen++;
    e.due = Number.POSITIVE_INFINITY;
    e.dueAt = Number.POSITIVE_INFINITY;
  }

  /** One writer question for `batch`: the decided are forgotten, the pending queued for their check. */
  private async sift(batch: Entry[]): Promise<void> {
    let pending: boolean[];
    try {
      pending = await this.writer.call('stillPending', { txids: batch.map((e) => e.txid) });
    } catch (e) {
      // The writer did not answer (stopping, restarting): asked again after the next block.
      for (const x of batch) if (this.entries.get(x.txid) === x) this.schedule(x, this.processed + 1, true);
      log.debug('deferred checks: the writer did not answer', { error: (e as Error).message });
      return;
    }
    batch.forEach((e, i) => {
      if (this.entries.get(e.txid) !== e) return;
      if (pending[i]) this.sifted.push({ txid: e.txid, gen: e.gen });
      else this.entries.delete(e.txid);
    });
  }

  private nextSifted(): Entry | null {
    for (let item = this.sifted.shift(); item; item = this.sifted.shift()) {
      const e = this.live(item);
      if (e) return e;
    }
    return null;
  }

  /** The entry an item still schedules, or null (rescheduled, running or gone since). */
  private live(item: Scheduled): Entry | null {
    const e = this.entries.get(item.txid);
    return e && e.gen === item.gen ? e : null;
  }

  private nextDue(): Entry | null {
    for (let item = this.ready.shift(); item; item = this.ready.shift()) {
      const e = this.live(item);
      if (e) return e;
    }
    const now = performance.now();
    for (let item = this.byTime.peek(); item; item = this.byTime.peek()) {
      const e = this.live(item);
      if (!e || e.dueAt !== item.at) {
        this.byTime.shift();
        continue;
      }
      if (item.at <= now) {
        this.byTime.shift();
        return e;
      }
      // Nothing due by height: wake when the first one falls due by time.
      if (!this.timer) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.pump();
        }, Math.max(1, item.at - now));
        this.timer.unref();
      }
      return null;
    }
    return null;
  }

  private backOff(e: Entry): void {
    e.checks++;
    const blocks = Math.min(2 ** Math.max(0, e.checks - 1), MAX_BACKOFF_BLOCKS);
    // Counted in new blocks of the chain, not blocks applied: a node catching up applies
    // hundreds a second, and a mempool answer changes only with a block mined.
    this.schedule(e, this.chainTip + blocks, false);
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
      this.schedule(e, this.chainTip + 1, true);
      return;
    }
    e.unseen = 0;
    if (typeof found === 'object') {
      // Evidence given to the writer: it decides the payload at that block, unless the
      // writer refused the claim (a branch that does not hold, a block its headers do not
      // name). Look once that block is applied: still pending, the checks go on.
      this.stats[found.found]++;
      e.checks++;
      this.schedule(e, Math.max(found.height, this.processed + 1), false);
      return;
    }
    this.backOff(e);
  }

  /** An outpoint check: what the endpoint says spends the outpoint the call names. */
  private async checkCall(e: Entry): Promise<Found | 'waiting' | 'unseen'> {
    const [otxid, vout] = e.outpoint!.split(':') as [string, string];
    const spend = await this.chain.outspend(otxid, Number(vout), { priority: 'deferred' });
    if (!spend.spent) return 'unseen';
    if (!spend.status.confirmed) return 'waiting';
    if (spend.txid === e.txid) return (await this.place(e.txid)) ?? 'waiting';
    // Another transaction confirmed spending it: the call is dropped at its block.
    const spender = await this.chain.txWithHex(spend.txid, { priority: 'deferred' });
    const listed = spender.tx.byteLength(false) === INNER_NODE_BYTES ? await this.listedIn(spend.txid, spend.status) : null;
    const at = listed ? listed.at : await this.inclusionOf(spend.txid);
    if (!at) return 'waiting';
    const ev = await this.writer.call('payloadEvidence', { txid: e.txid });
    if (!ev) return 'waiting';
    const spentBy: SpentBy = { tx: Buffer.from(spender.hex, 'hex'), vin: spend.vin, at, ...(listed ? { blockTxids: listed.txids } : {}) };
    const taken = await this.writer.call('takeEvidence', { txid: e.txid, evidence: { ...ev, spentBy } });
    return taken ? { found: 'dropped', height: at.height } : 'waiting';
  }

  /**
   * A spender of 64 bytes without its witness, which no merkle branch can place
   * (INNER_NODE_BYTES): its block's whole txid list instead (`GET /block/:hash/txids`,
   * one request, kept for a few blocks: several calls naming outpoints one such block
   * spends read it once), folded to the merkle root of the node's own header at that
   * height. Null when unconfirmed, above the node's headers, or not in that block.
   */
  private async listedIn(txid: string, status: TxStatus): Promise<{ at: Inclusion; txids: Uint8Array[] } | null> {
    if (!status.confirmed) return null;
    const [raw] = await this.writer.call('headers', { from: status.block_height, count: 1 });
    if (!raw) return null;
    const header = parseHeaderBytes(raw);
    if (header.hash !== status.block_hash) return null;
    let reading = this.blockTxids.get(header.hash);
    if (!reading) {
      // Shared by the checks in flight; the client checks the list against the header's merkle root.
      reading = this.chain.blockTxids(header.hash, header, { priority: 'deferred' }).then((list) => list.map((t) => Buffer.from(t, 'hex').reverse()));
      if (this.blockTxids.size >= BLOCK_LISTS_KEPT) this.blockTxids.delete(this.blockTxids.keys().next().value!);
      this.blockTxids.set(header.hash, reading);
      reading.catch(() => this.blockTxids.delete(header.hash));
    }
    const txids = await reading;
    const leaf = Buffer.from(txid, 'hex').reverse();
    const index = txids.findIndex((t) => Buffer.compare(t, leaf) === 0);
    if (index < 0) return null;
    return { at: { blockHash: header.hash, height: status.block_height, txIndex: index, branch: merkleBranch(txids, index) }, txids };
  }

  private async checkDeploy(e: Entry): Promise<Found | 'waiting' | 'unseen'> {
    const placed = await this.place(e.txid);
    if (placed) return placed;
    try {
      await this.chain.txWithHex(e.txid, { priority: 'deferred' });
      return 'waiting';
    } catch (err) {
      if (err instanceof NodeError && err.code === 'not_found') return 'unseen';
      throw err;
    }
  }

  /** The anchor's placement from the endpoint's merkle proof, given to the writer; null when unconfirmed or not on the node's headers yet. */
  private async place(txid: string): Promise<Found | null> {
    const at = await this.inclusionOf(txid);
    if (!at) return null;
    const ev = await this.writer.call('payloadEvidence', { txid });
    if (!ev) return null;
    return (await this.writer.call('takeEvidence', { txid, evidence: { ...ev, confirmed: at } })) ? { found: 'placed', height: at.height } : null;
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

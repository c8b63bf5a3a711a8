/**
 * When each payload's next deferred check is due (checks.ts): from a processed height, or
 * from a time, whichever comes first. Which payloads are due is kept in queues rather
 * than found by a scan, so a check costs the same with 100,000 payloads pending as with
 * ten: `ready` (due by height, in height order), `byHeight` (due at a height not
 * processed yet) and `byTime` (due at a time: every time due is now + firstCheckAfterMs,
 * so they arrive in order). A reschedule leaves the old items behind, skipped by their
 * generation.
 */

/** Longest wait between two checks of one payload: a day of blocks. */
const MAX_BACKOFF_BLOCKS = 144;

export interface Entry {
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

export class CheckSchedule {
  private readonly entries = new Map<string, Entry>();
  private readonly ready = new Fifo<Scheduled>();
  private readonly byHeight = new Map<number, Scheduled[]>();
  private readonly byTime = new Fifo<Scheduled & { at: number }>();
  /** Due payloads the writer said are still pending: checked one by one, in this order. */
  private readonly sifted = new Fifo<Scheduled>();
  /** Every height up to this one has been moved from byHeight to ready (-1: none yet). */
  private drainedTo = -1;
  private processedHeight = 0;
  /** The chain's height as the node knows it (its header tip; the processed height in blocks mode). */
  private chainTip = 0;
  private timer: NodeJS.Timeout | null = null;

  /**
   * `firstCheckAfterMs`: how long after it is added a payload falls due by time;
   * `onTimer`: called when the first payload due by time falls due (nextDue armed it).
   */
  constructor(
    private readonly firstCheckAfterMs: number,
    private readonly onTimer: () => void,
  ) {}

  /** The writer's processed height, as last given to processedAt. */
  get processed(): number {
    return this.processedHeight;
  }

  get size(): number {
    return this.entries.size;
  }

  has(txid: string): boolean {
    return this.entries.has(txid);
  }

  /** Whether `e` is still the entry of its payload (not forgotten or replaced since). */
  holds(e: Entry): boolean {
    return this.entries.get(e.txid) === e;
  }

  forget(txid: string): void {
    this.entries.delete(txid);
  }

  add(txid: string, kind: 'call' | 'deploy', outpoint: string | null, due: number, byTimeToo: boolean): void {
    const e: Entry = { txid, kind, outpoint, due: 0, dueAt: Number.POSITIVE_INFINITY, gen: 0, checks: 0, unseen: 0, unseenSince: 0 };
    this.entries.set(txid, e);
    this.schedule(e, due, byTimeToo);
  }

  /** Makes `e` due from processed height `due` (and a block's time from now, when `byTimeToo`). */
  schedule(e: Entry, due: number, byTimeToo: boolean): void {
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

  /** Due again a backed-off number of new blocks of the chain from now. */
  backOff(e: Entry): void {
    e.checks++;
    const blocks = Math.min(2 ** Math.max(0, e.checks - 1), MAX_BACKOFF_BLOCKS);
    // Counted in new blocks of the chain, not blocks applied: a node catching up applies
    // hundreds a second, and a mempool answer changes only with a block mined.
    this.schedule(e, this.chainTip + blocks, false);
  }

  /** Due again after the chain's next block (and a block's time from now, when `byTimeToo`). */
  afterNextBlock(e: Entry, byTimeToo: boolean): void {
    this.schedule(e, this.chainTip + 1, byTimeToo);
  }

  /** The writer's processed height moved (and `chainTip`, the header tip). */
  processedAt(height: number, chainTip: number): void {
    this.processedHeight = height;
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
  }

  private drain(height: number): void {
    const at = this.byHeight.get(height);
    if (!at) return;
    this.byHeight.delete(height);
    for (const item of at) this.ready.push(item);
  }

  /** Takes `e` off every schedule (bumps its generation): what runs on it sets the next one. */
  hold(e: Entry): void {
    e.gen++;
    e.due = Number.POSITIVE_INFINITY;
    e.dueAt = Number.POSITIVE_INFINITY;
  }

  /** Payloads due now. */
  dueCount(): number {
    let due = 0;
    const now = performance.now();
    for (const e of this.entries.values()) if (e.due <= this.processedHeight || e.dueAt <= now) due++;
    return due;
  }

  /** The next payload due (by height first, then by time), or null; arms the timer for the first due by time later. */
  nextDue(): Entry | null {
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
          this.onTimer();
        }, Math.max(1, item.at - now));
        this.timer.unref();
      }
      return null;
    }
    return null;
  }

  /** `e`, sifted (the writer holds it pending), queued for its check. */
  queueSifted(e: Entry): void {
    this.sifted.push({ txid: e.txid, gen: e.gen });
  }

  nextSifted(): Entry | null {
    for (let item = this.sifted.shift(); item; item = this.sifted.shift()) {
      const e = this.live(item);
      if (e) return e;
    }
    return null;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The entry an item still schedules, or null (rescheduled, running or gone since). */
  private live(item: Scheduled): Entry | null {
    const e = this.entries.get(item.txid);
    return e && e.gen === item.gen ? e : null;
  }
}

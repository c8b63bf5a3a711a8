/**
 * The chain-data endpoint's request budget (config `esplora_requests_per_hour`,
 * `esplora_burst`, `esplora_max_concurrent`): every request the node sends to the endpoint
 * (each attempt, retries included) starts only with a token from one token bucket and a
 * free connection slot.
 *
 * - The bucket holds at most `burst` tokens and gains `requestsPerHour` tokens an hour,
 *   computed from a monotonic clock in whole milliseconds with integer arithmetic (one
 *   token is 3,600,000 units; a millisecond adds `requestsPerHour` units). So over any
 *   window of one hour the starts never exceed requestsPerHour + burst: no float drift.
 * - Three priorities, served highest first whenever a token and a slot are free: `tip`
 *   (following the chain: polls, headers, raw blocks, authentication), `intake` (a
 *   submission's anchor fetch), `deferred` (off-path checks of pending calls). A queued
 *   `tip` request never waits behind queued `intake` or `deferred` ones.
 * - `deferred` takes a token only while at least half the burst stays after the take,
 *   so deferred checks can never empty the reserve that `tip` and `intake` rely on.
 * - A 429 answer pauses every start until its Retry-After (else a backoff doubling per
 *   consecutive 429 from THROTTLE_PAUSE_BASE_MS to THROTTLE_PAUSE_MAX_MS) and is counted.
 *
 * A waiting request can carry a deadline: still queued when it passes, it leaves the queue
 * and its caller is told (`LimiterTimeout`), so a caller's time budget covers the wait for
 * a token too. A start with a token and a slot free and nothing queued runs synchronously,
 * without a timer or a promise of its own (intake sends one request per call).
 */
import { TokenBucket } from '../bounded.js';

export type Priority = 'tip' | 'intake' | 'deferred';
/** Highest first: the order the queues are served in. */
export const PRIORITIES: readonly Priority[] = ['tip', 'intake', 'deferred'];
const RANK: Record<Priority, number> = { tip: 0, intake: 1, deferred: 2 };

export class LimiterTimeout extends Error {
  constructor() {
    super('no request slot within the time budget');
  }
}

export class LimiterStopped extends Error {
  constructor() {
    super('the chain client is closed');
  }
}

/**
 * Defaults for a public endpoint (config `esplora_requests_per_hour`, `esplora_burst`,
 * `esplora_max_concurrent`; config.toml says the same).
 * - 600 an hour: the most used public Esplora answers 429 past about 700 requests an hour
 *   per address; 600 leaves 100 for a second client on the address (an `svc` wallet:
 *   docs/CLI.md) and for the clock drift between its window and ours.
 * - burst 8: public Esplora lets 10 through at once per address (its nginx's burst, the
 *   devnet's `--public` mode too). A bucket no larger than the endpoint's, refilled no
 *   faster, never starts a request the endpoint would refuse: a fresh node catching up
 *   spends 8 at once, then one every 6 s, and gets no 429 on an ordinary start (a burst
 *   above 10 got 429s in every catch-up). 8, not 10, so a client on the same address
 *   still finds 2 at once (an svc command's UTXO read and fee estimates). 600 + 8 stays
 *   under 700 over any hour.
 * - 4 connections: Esplora's nginx allows 10 per address; 4 leaves room for another client.
 */
export const DEFAULT_BUDGET = { requestsPerHour: 600, burst: 8, maxConcurrent: 4 } as const;

/** Bucket units per token: the milliseconds of an hour, so a millisecond adds `requestsPerHour` units exactly. */
const UNITS_PER_TOKEN = 3_600_000;
/**
 * Pause after a 429 without Retry-After, doubled per consecutive 429. Public Esplora's
 * nginx answers 429 without Retry-After both for its per-second limit (5 r/s, burst 10),
 * which clears within seconds, and for the hourly one: 2 s clears the first at once; the
 * doubling reaches the cap after five refusals in a row.
 */
const THROTTLE_PAUSE_BASE_MS = 2_000;
/** Longest pause after repeated 429s without Retry-After: a minute, so a lifted limit is found again quickly. */
const THROTTLE_PAUSE_MAX_MS = 60_000;
/** `used_last_hour` counts starts per minute: 60 counters instead of a timestamp per request. */
const USAGE_SLOT_MS = 60_000;
const USAGE_SLOTS = 60;

/**
 * The chain-data budget's token bucket: exact arithmetic in whole milliseconds (callers
 * floor a monotonic clock; flooring keeps it monotonic and never adds time), a unit being
 * a millisecond of an hour, so a millisecond adds `requestsPerHour` units exactly. The
 * bounds keep every sum below 2^53.
 */
export function hourlyBucket(requestsPerHour: number, burst: number, now: number): TokenBucket {
  if (!Number.isSafeInteger(requestsPerHour) || requestsPerHour < 1 || requestsPerHour > 1e9) throw new RangeError('requestsPerHour must be an integer in 1..1e9');
  if (!Number.isSafeInteger(burst) || burst < 1 || burst > 1e6) throw new RangeError('burst must be an integer in 1..1e6');
  return new TokenBucket({ unitsPerToken: UNITS_PER_TOKEN, unitsPerPeriod: requestsPerHour, periodMs: 1, burst }, now);
}

export interface BudgetOptions {
  requestsPerHour: number;
  /** At least 2: `deferred` needs half the burst left after its take. */
  burst: number;
  maxConcurrent: number;
  /** Monotonic milliseconds (tests: a simulated clock). Default performance.now(). */
  now?: () => number;
  /** Timers (tests: the simulated clock's). Default setTimeout/clearTimeout, unref'd. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

/** What node_status.chain.budget shows. */
export interface BudgetStatus {
  requests_per_hour: number;
  burst: number;
  /** Whole tokens in the bucket now. */
  available: number;
  /** Requests started in the last hour (counted per minute: the current minute and the 59 before). */
  used_last_hour: number;
  /** Requests queued for a token or a slot, by priority. */
  waiting: Record<Priority, number>;
  /** 429 answers from the endpoint since the start. */
  throttled_total: number;
  /** Requests started since the start, by priority (for /metrics). */
  started_total: Record<Priority, number>;
  /** Milliseconds left of a pause after a 429 (0 when none). */
  paused_ms: number;
}

/** A request's place in the budget: its priority can be raised while it waits (a shared request gains a more urgent asker). */
export interface Ticket {
  priority: Priority;
  /** Set while the ticket's request is queued: moves it to the queue of its (raised) priority. */
  requeue?: () => void;
}

interface Waiting {
  start: () => void;
  fail: (e: Error) => void;
  timer: unknown;
  done: boolean;
  ticket: Ticket;
  /** The queue the entry is counted in, and its place there. */
  queued: Priority;
  slot: Slot;
}

/** A place in a queue; emptied when its entry moves to another queue. */
interface Slot {
  w: Waiting | null;
}

interface Queue {
  items: Slot[];
  /** Index of the first live entry (entries before it were started or dropped). */
  head: number;
  /** Live entries. */
  live: number;
}

export class RequestBudget {
  readonly requestsPerHour: number;
  readonly burst: number;
  private readonly maxConcurrent: number;
  private readonly bucket: TokenBucket;
  private readonly clock: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (t: unknown) => void;
  private readonly queues: Record<Priority, Queue> = { tip: mkQueue(), intake: mkQueue(), deferred: mkQueue() };
  private running = 0;
  private pausedUntil = 0;
  private consecutive429 = 0;
  private throttled = 0;
  private readonly started: Record<Priority, number> = { tip: 0, intake: 0, deferred: 0 };
  /** Starts per minute: `usage[i]` counts minute `usageMinute[i]`. */
  private readonly usage = new Array<number>(USAGE_SLOTS).fill(0);
  private readonly usageMinute = new Array<number>(USAGE_SLOTS).fill(-1);
  private wakeTimer: unknown = null;
  private wakeAt = Infinity;
  private stopped = false;
  /** Fewest tokens in the bucket for a `deferred` start: half the burst must stay after it. */
  private readonly deferredNeeds: number;

  constructor(o: BudgetOptions) {
    if (!Number.isSafeInteger(o.maxConcurrent) || o.maxConcurrent < 1) throw new RangeError('maxConcurrent must be a positive integer');
    if (!Number.isSafeInteger(o.burst) || o.burst < 2) throw new RangeError('burst must be at least 2');
    this.clock = o.now ?? (() => performance.now());
    this.setTimer = o.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
    this.clearTimer = o.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout));
    this.requestsPerHour = o.requestsPerHour;
    this.burst = o.burst;
    this.maxConcurrent = o.maxConcurrent;
    this.bucket = hourlyBucket(o.requestsPerHour, o.burst, this.now());
    // (tokens - 1) * 2 >= burst  <=>  tokens >= ceil(burst / 2) + 1
    this.deferredNeeds = Math.ceil(o.burst / 2) + 1;
  }

  private now(): number {
    return Math.floor(this.clock());
  }

  get queued(): number {
    return this.queues.tip.live + this.queues.intake.live + this.queues.deferred.live;
  }

  status(): BudgetStatus {
    const now = this.now();
    const minute = Math.floor(now / USAGE_SLOT_MS);
    let used = 0;
    this.usageMinute.forEach((m, i) => {
      if (m > minute - USAGE_SLOTS) used += this.usage[i] ?? 0;
    });
    return {
      requests_per_hour: this.requestsPerHour,
      burst: this.burst,
      available: this.bucket.available(now),
      used_last_hour: used,
      waiting: { tip: this.queues.tip.live, intake: this.queues.intake.live, deferred: this.queues.deferred.live },
      throttled_total: this.throttled,
      started_total: { ...this.started },
      paused_ms: Math.max(0, this.pausedUntil - now),
    };
  }

  /**
   * Runs `fn` when a token and a slot are free and no more urgent request waits; `deadline`
   * (the clock's milliseconds) bounds the wait in the queue, not the run.
   */
  schedule<T>(fn: () => Promise<T>, ticket: Ticket, deadline = Infinity): Promise<T> {
    if (this.stopped) return Promise.reject(new LimiterStopped());
    if (this.queued === 0 && this.canStart(ticket.priority, this.now())) return this.run(fn, ticket.priority);
    return new Promise<T>((resolve, reject) => {
      const w: Waiting = {
        start: () => void this.run(fn, w.ticket.priority).then(resolve, reject),
        fail: reject,
        timer: null,
        done: false,
        ticket,
        queued: ticket.priority,
        slot: { w: null },
      };
      if (deadline !== Infinity) {
        w.timer = this.setTimer(() => {
          if (w.done) return;
          this.drop(w);
          reject(new LimiterTimeout());
        }, Math.max(0, deadline - this.clock()));
      }
      this.enqueue(w);
      this.pump();
    });
  }

  /**
   * The endpoint answered 429: every start waits `retryAfterMs` (or a backoff doubling per
   * consecutive 429), counted in `throttled_total`. Answers the pause in milliseconds.
   */
  noteThrottled(retryAfterMs: number | null): number {
    this.throttled++;
    const backoff = Math.min(THROTTLE_PAUSE_MAX_MS, THROTTLE_PAUSE_BASE_MS * 2 ** Math.min(this.consecutive429, 30));
    this.consecutive429++;
    const ms = Math.ceil(retryAfterMs ?? backoff);
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
    this.pump();
    return ms;
  }

  /** The endpoint answered something other than 429: the next 429's backoff starts over. */
  noteAnswered(): void {
    this.consecutive429 = 0;
  }

  /** Drops every waiting job (they fail with LimiterStopped); running ones finish. */
  stop(): void {
    this.stopped = true;
    if (this.wakeTimer !== null) this.clearTimer(this.wakeTimer);
    this.wakeTimer = null;
    for (const p of PRIORITIES) {
      const q = this.queues[p];
      for (const { w } of q.items.slice(q.head)) {
        if (!w || w.done) continue;
        this.drop(w);
        w.fail(new LimiterStopped());
      }
      this.queues[p] = mkQueue();
    }
  }

  private enqueue(w: Waiting): void {
    const q = this.queues[w.ticket.priority];
    w.queued = w.ticket.priority;
    w.slot = { w };
    q.items.push(w.slot);
    q.live++;
    w.ticket.requeue = () => {
      if (w.done || w.queued === w.ticket.priority) return;
      w.slot.w = null;
      this.queues[w.queued].live--;
      this.enqueue(w);
      this.pump();
    };
  }

  /** Takes `w` out of its queue (started, timed out). */
  private drop(w: Waiting): void {
    w.done = true;
    w.slot.w = null;
    this.queues[w.queued].live--;
    w.ticket.requeue = undefined;
    if (w.timer !== null) this.clearTimer(w.timer);
    w.timer = null;
  }

  private canStart(p: Priority, now: number): boolean {
    if (this.running >= this.maxConcurrent || now < this.pausedUntil) return false;
    return this.bucket.available(now) >= (p === 'deferred' ? this.deferredNeeds : 1);
  }

  private run<T>(fn: () => Promise<T>, p: Priority): Promise<T> {
    const now = this.now();
    if (!this.bucket.tryTake(now)) throw new Error('token bucket: take without a token');
    this.running++;
    this.started[p]++;
    const minute = Math.floor(now / USAGE_SLOT_MS);
    const slot = minute % USAGE_SLOTS;
    if (this.usageMinute[slot] !== minute) {
      this.usageMinute[slot] = minute;
      this.usage[slot] = 0;
    }
    this.usage[slot] = (this.usage[slot] ?? 0) + 1;
    let out: Promise<T>;
    try {
      out = fn();
    } catch (e) {
      out = Promise.reject(e);
    }
    return out.finally(() => {
      this.running--;
      this.pump();
    });
  }

  /** The most urgent live entry, dropping emptied slots from the queue heads. */
  private next(): Waiting | null {
    for (const p of PRIORITIES) {
      const q = this.queues[p];
      while (q.head < q.items.length && q.items[q.head]?.w === null) q.head++;
      if (q.head > 1024 && q.head * 2 > q.items.length) {
        q.items.splice(0, q.head);
        q.head = 0;
      }
      const head = q.items[q.head];
      if (head) return head.w;
    }
    return null;
  }

  /** Starts waiting requests, most urgent first, while tokens and slots allow; else arms one wake-up. */
  private pump(): void {
    if (this.stopped) return;
    for (;;) {
      const w = this.next();
      if (!w) return;
      if (this.running >= this.maxConcurrent) return; // a finishing request pumps again
      const now = this.now();
      if (!this.canStart(w.ticket.priority, now)) {
        const tokens = w.ticket.priority === 'deferred' ? this.deferredNeeds : 1;
        this.wakeIn(Math.max(this.pausedUntil - now, this.bucket.msUntil(tokens, now), 1));
        return;
      }
      this.drop(w);
      w.start();
    }
  }

  private wakeIn(ms: number): void {
    const at = this.clock() + ms;
    if (this.wakeTimer !== null) {
      if (this.wakeAt <= at) return;
      this.clearTimer(this.wakeTimer);
    }
    this.wakeAt = at;
    this.wakeTimer = this.setTimer(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, ms);
  }
}

function mkQueue(): Queue {
  return { items: [], head: 0, live: 0 };
}

/** The more urgent of two priorities. */
export function moreUrgent(a: Priority, b: Priority): Priority {
  return RANK[a] <= RANK[b] ? a : b;
}

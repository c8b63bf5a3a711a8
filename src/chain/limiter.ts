/**
 * The outbound limit of the chain-data client: at most `maxConcurrent` requests in flight
 * and request starts spaced at least `minTimeMs` apart, first come first served (the
 * semantics of bottleneck's `maxConcurrent` and `minTime`, which the client used before).
 *
 * Written for the intake path, which sends one request per call: a start with a free slot
 * and no spacing to wait for runs synchronously, without a timer or a promise of its own
 * (bottleneck costs a timer and several async-generator steps per job). A waiting job can
 * carry a deadline: still queued when it passes, it leaves the queue and its caller is
 * told (`LimiterTimeout`), so a caller's time budget covers the wait for a slot too.
 */

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

interface Waiting {
  start: () => void;
  fail: (e: Error) => void;
  timer: NodeJS.Timeout | null;
  done: boolean;
}

export class RequestLimiter {
  private running = 0;
  /** performance.now() of the last start. */
  private lastStart = -Infinity;
  private readonly queue: Waiting[] = [];
  /** Index of the first live entry of `queue` (entries before it were started or dropped). */
  private head = 0;
  private spacingTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly minTimeMs: number,
    private readonly maxConcurrent: number,
  ) {}

  get queued(): number {
    return this.queue.length - this.head;
  }

  /**
   * Runs `fn` when a slot is free and the spacing allows; `deadline` (performance.now()
   * milliseconds) bounds the wait in the queue, not the run.
   */
  schedule<T>(fn: () => Promise<T>, deadline = Infinity): Promise<T> {
    if (this.stopped) return Promise.reject(new LimiterStopped());
    if (this.queued === 0 && this.canStartNow()) return this.run(fn);
    return new Promise<T>((resolve, reject) => {
      const w: Waiting = {
        start: () => this.run(fn).then(resolve, reject),
        fail: reject,
        timer: null,
        done: false,
      };
      if (deadline !== Infinity) {
        w.timer = setTimeout(() => {
          if (w.done) return;
          w.done = true;
          reject(new LimiterTimeout());
        }, Math.max(0, deadline - performance.now()));
      }
      this.queue.push(w);
      this.pump();
    });
  }

  /** Drops every waiting job (they fail with LimiterStopped); running ones finish. */
  stop(): void {
    this.stopped = true;
    if (this.spacingTimer) clearTimeout(this.spacingTimer);
    this.spacingTimer = null;
    for (let i = this.head; i < this.queue.length; i++) {
      const w = this.queue[i]!;
      if (w.done) continue;
      w.done = true;
      if (w.timer) clearTimeout(w.timer);
      w.fail(new LimiterStopped());
    }
    this.queue.length = 0;
    this.head = 0;
  }

  private canStartNow(): boolean {
    return this.running < this.maxConcurrent && (this.minTimeMs <= 0 || performance.now() - this.lastStart >= this.minTimeMs);
  }

  private run<T>(fn: () => Promise<T>): Promise<T> {
    this.running++;
    if (this.minTimeMs > 0) this.lastStart = performance.now();
    let p: Promise<T>;
    try {
      p = fn();
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.finally(() => {
      this.running--;
      this.pump();
    });
  }

  /** Starts waiting jobs while slots and spacing allow; otherwise arms one spacing timer. */
  private pump(): void {
    while (this.head < this.queue.length) {
      const w = this.queue[this.head]!;
      if (w.done) {
        this.head++;
        continue;
      }
      if (this.running >= this.maxConcurrent) break;
      if (this.minTimeMs > 0) {
        const wait = this.lastStart + this.minTimeMs - performance.now();
        if (wait > 0) {
          if (!this.spacingTimer) {
            this.spacingTimer = setTimeout(() => {
              this.spacingTimer = null;
              this.pump();
            }, Math.ceil(wait));
          }
          break;
        }
      }
      this.head++;
      w.done = true;
      if (w.timer) clearTimeout(w.timer);
      w.start();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

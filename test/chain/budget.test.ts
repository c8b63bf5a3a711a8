/**
 * The chain-data request budget (src/chain/budget.ts) on a simulated clock: the hourly
 * bound holds over any window whatever the callers and 429s, tip never waits behind
 * queued intake or deferred requests, deferred never takes the last half of the burst,
 * a 429 pauses every start, a waiting request's priority can be raised and its deadline
 * ends its wait.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hourlyBucket, LimiterStopped, LimiterTimeout, RequestBudget, type Priority, type Ticket } from '../../src/chain/budget.js';

const HOUR = 3_600_000;

/** A simulated monotonic clock with timers; `run` advances it timer by timer, letting promise callbacks settle between. */
class SimClock {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void; seq: number }>();
  now = (): number => this.t;
  setTimer = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn, seq: id });
    return id;
  };
  clearTimer = (id: unknown): void => {
    this.timers.delete(id as number);
  };
  get pending(): number {
    return this.timers.size;
  }
  /** Fires due timers in time order (the clock jumps to each) until none is left before `until`. */
  async run(until = Infinity): Promise<void> {
    await settle();
    for (;;) {
      let next: { id: number; at: number; fn: () => void; seq: number } | null = null;
      for (const [id, x] of this.timers) if (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq)) next = { id, ...x };
      if (!next || next.at > until) break;
      this.timers.delete(next.id);
      this.t = Math.max(this.t, next.at);
      next.fn();
      await settle();
    }
    if (until !== Infinity) this.t = Math.max(this.t, until);
  }
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

function budgetOn(clock: SimClock, requestsPerHour: number, burst: number, maxConcurrent: number): RequestBudget {
  return new RequestBudget({ requestsPerHour, burst, maxConcurrent, now: clock.now, setTimer: clock.setTimer, clearTimer: clock.clearTimer });
}

test('token bucket: exact refill, whole tokens only, never above the burst', () => {
  const b = hourlyBucket(7, 3, 0);
  assert.equal(b.available(0), 3);
  for (let i = 0; i < 3; i++) assert.equal(b.tryTake(0), true);
  assert.equal(b.available(0), 0);
  // One token per 3,600,000 / 7 ms = 514,285.71...: not yet at 514,285, there at 514,286.
  assert.equal(b.available(514_285), 0);
  assert.equal(b.available(514_286), 1);
  assert.equal(b.msUntil(2, 514_286), 514_286);
  // An hour after the bucket emptied it holds 3 (the burst), not 7.
  assert.equal(b.available(HOUR), 3);
  assert.equal(b.available(100 * HOUR), 3);
  assert.throws(() => hourlyBucket(0, 3, 0), RangeError);
  assert.throws(() => hourlyBucket(10, 0, 0), RangeError);
  assert.throws(() => new RequestBudget({ requestsPerHour: 10, burst: 1, maxConcurrent: 1 }), /burst must be at least 2/);
});

test('token bucket: a million one-millisecond refills add exactly what one million-millisecond refill adds', () => {
  const a = hourlyBucket(600, 1000, 0);
  const b = hourlyBucket(600, 1000, 0);
  for (let i = 0; i < 1000; i++) {
    a.tryTake(0);
    b.tryTake(0);
  }
  for (let t = 1; t <= 1_000_000; t++) a.available(t);
  assert.equal(a.available(1_000_000), b.available(1_000_000));
  assert.equal(a.msUntil(167, 1_000_000), b.msUntil(167, 1_000_000));
  assert.equal(b.available(1_000_000), 166); // 600 / 3600 per second for 1,000 s = 166.67
});

interface Req {
  at: number;
  priority: Priority;
  duration: number;
  /** What the endpoint answers: ok, 429 without Retry-After, or 429 with Retry-After (ms). */
  answer: { kind: 'ok' } | { kind: '429'; retryAfterMs: number | null };
}

const reqArb: fc.Arbitrary<Req> = fc.record({
  at: fc.integer({ min: 0, max: 3 * HOUR }),
  priority: fc.constantFrom<Priority>('tip', 'intake', 'deferred'),
  duration: fc.integer({ min: 1, max: 20_000 }),
  answer: fc.oneof(
    { weight: 8, arbitrary: fc.constant({ kind: 'ok' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: '429' as const, retryAfterMs: null }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 120_000 }).map((ms) => ({ kind: '429' as const, retryAfterMs: ms })) },
  ),
});

test('property: over any hour starts never exceed requests_per_hour + burst; tip never waits behind queued intake/deferred; deferred never takes the last half of the burst; a 429 pauses every start', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 2_000 }),
      fc.integer({ min: 2, max: 40 }),
      fc.integer({ min: 1, max: 6 }),
      fc.array(reqArb, { minLength: 1, maxLength: 160 }),
      async (perHour, burst, maxConcurrent, reqs) => {
        const clock = new SimClock();
        const budget = budgetOn(clock, perHour, burst, maxConcurrent);
        const starts: number[] = [];
        const pauses: { from: number; to: number }[] = [];
        const violations: string[] = [];
        let done = 0;
        for (const r of reqs) {
          clock.setTimer(() => {
            void budget
              .schedule(
                () => {
                  const now = clock.t;
                  starts.push(now);
                  const st = budget.status();
                  if (r.priority !== 'tip' && st.waiting.tip > 0) violations.push(`${r.priority} started at ${now} while ${st.waiting.tip} tip waited`);
                  if (r.priority === 'deferred' && st.available * 2 < burst) violations.push(`deferred left ${st.available} of a burst of ${burst}`);
                  for (const p of pauses) if (now >= p.from && now < p.to) violations.push(`start at ${now} inside a 429 pause ${p.from}..${p.to}`);
                  return new Promise<void>((resolve) => {
                    clock.setTimer(() => {
                      if (r.answer.kind === '429') {
                        if (r.answer.retryAfterMs !== null) pauses.push({ from: clock.t, to: clock.t + r.answer.retryAfterMs });
                        budget.noteThrottled(r.answer.retryAfterMs);
                      } else budget.noteAnswered();
                      resolve();
                    }, r.duration);
                  });
                },
                { priority: r.priority },
              )
              .then(() => done++);
          }, r.at);
        }
        await clock.run();
        assert.deepEqual(violations, []);
        assert.equal(done, reqs.length, 'every request eventually ran');
        assert.equal(budget.status().throttled_total, reqs.filter((r) => r.answer.kind === '429').length);
        // Every closed window of one hour starting at a start holds at most perHour + burst starts.
        starts.sort((a, b) => a - b);
        let j = 0;
        for (let i = 0; i < starts.length; i++) {
          while (j < starts.length && starts[j]! <= starts[i]! + HOUR) j++;
          assert.ok(j - i <= perHour + burst, `${j - i} starts in the hour from ${starts[i]} (budget ${perHour} + ${burst})`);
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('a sustained flood uses the whole budget: requests_per_hour + burst in the first hour, requests_per_hour in each after', async () => {
  const clock = new SimClock();
  const budget = budgetOn(clock, 600, 30, 4);
  const starts: number[] = [];
  const p: Promise<void>[] = [];
  for (let i = 0; i < 5_000; i++) p.push(budget.schedule(async () => void starts.push(clock.t), { priority: (['tip', 'intake', 'deferred'] as const)[i % 3]! }));
  await clock.run(3 * HOUR);
  assert.equal(starts.filter((t) => t <= HOUR).length, 630);
  assert.equal(starts.filter((t) => t > HOUR && t <= 2 * HOUR).length, 600);
  // Counted per minute: the current minute and the 59 before it (590 to 600 of the 600 sent in the hour).
  const used = budget.status().used_last_hour;
  assert.ok(used >= 590 && used <= 600, `used_last_hour ${used}`);
  budget.stop();
  const settled = await Promise.allSettled(p);
  assert.ok(settled.some((s) => s.status === 'rejected' && s.reason instanceof LimiterStopped), 'stop fails the requests still waiting');
});

test('tip requests overtake queued intake and deferred ones; deferred waits for half the burst to come back', async () => {
  const clock = new SimClock();
  // 3,600 an hour: one token a second. Burst 4: deferred needs 3 tokens (half the burst left after its take).
  const budget = budgetOn(clock, 3_600, 4, 10);
  const order: string[] = [];
  const job = (name: string) => async () => void order.push(`${name}@${clock.t}`);
  const all = [
    budget.schedule(job('i1'), { priority: 'intake' }),
    budget.schedule(job('i2'), { priority: 'intake' }),
    budget.schedule(job('i3'), { priority: 'intake' }),
    budget.schedule(job('i4'), { priority: 'intake' }),
    budget.schedule(job('d1'), { priority: 'deferred' }),
    budget.schedule(job('i5'), { priority: 'intake' }),
    budget.schedule(job('t1'), { priority: 'tip' }),
  ];
  await clock.run();
  await Promise.all(all);
  // The burst of 4 goes at once to the first four; then a token a second: tip first, then
  // intake; deferred only once 3 tokens are saved up (none is taken meanwhile).
  assert.deepEqual(order, ['i1@0', 'i2@0', 'i3@0', 'i4@0', 't1@1000', 'i5@2000', 'd1@5000']);
});

test('a 429 pauses every start until its Retry-After, else a backoff that doubles and restarts after an answer', async () => {
  const clock = new SimClock();
  const budget = budgetOn(clock, 1_000_000, 100, 4);
  const at: number[] = [];
  budget.noteThrottled(5_000);
  const p = budget.schedule(async () => void at.push(clock.t), { priority: 'tip' });
  await clock.run();
  await p;
  assert.deepEqual(at, [5_000]);
  budget.noteAnswered();
  budget.noteThrottled(null); // 2 s
  budget.noteThrottled(null); // 4 s from now
  const q = budget.schedule(async () => void at.push(clock.t), { priority: 'tip' });
  await clock.run();
  await q;
  assert.equal(at[1], 9_000);
  budget.noteAnswered();
  budget.noteThrottled(null); // back to 2 s
  const r = budget.schedule(async () => void at.push(clock.t), { priority: 'tip' });
  await clock.run();
  await r;
  assert.equal(at[2], 11_000);
  assert.equal(budget.status().throttled_total, 4);
});

test('a waiting request raised to tip moves ahead; a deadline ends a wait with LimiterTimeout', async () => {
  const clock = new SimClock();
  const budget = budgetOn(clock, 3_600, 2, 10);
  const order: string[] = [];
  const job = (name: string) => async () => void order.push(`${name}@${clock.t}`);
  await budget.schedule(job('a'), { priority: 'tip' });
  await budget.schedule(job('b'), { priority: 'tip' });
  const slow: Ticket = { priority: 'deferred' };
  const d = budget.schedule(job('raised'), slow);
  const i = budget.schedule(job('intake'), { priority: 'intake' });
  const late = budget.schedule(job('never'), { priority: 'intake' }, 1_500).then(
    () => null,
    (e: unknown) => e,
  );
  assert.deepEqual(budget.status().waiting, { tip: 0, intake: 2, deferred: 1 });
  slow.priority = 'tip';
  slow.requeue?.();
  assert.deepEqual(budget.status().waiting, { tip: 1, intake: 2, deferred: 0 });
  await clock.run();
  await Promise.all([d, i]);
  assert.ok((await late) instanceof LimiterTimeout);
  assert.deepEqual(order, ['a@0', 'b@0', 'raised@1000', 'intake@2000']);
  assert.deepEqual(budget.status().waiting, { tip: 0, intake: 0, deferred: 0 });
  assert.equal(clock.pending, 0, 'no timer left behind');
});

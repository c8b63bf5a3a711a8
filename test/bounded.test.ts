/**
 * src/bounded.ts: the bounded map, and the one token bucket. The bucket replaced three
 * (the chain-data budget's exact hourly bucket, the gossip global bucket, the per-peer
 * limiter's buckets with debt); each former one is kept here verbatim as a reference, and
 * the merged bucket with that caller's parameters answers exactly as it did, number for
 * number, on an injected clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BoundedMap, perSecond, TokenBucket } from '../src/bounded.js';
import { hourlyBucket } from '../src/chain/budget.js';

test('the bounded map is bounded and forgets the oldest first', () => {
  const m = new BoundedMap<number, string>(3);
  for (let i = 0; i < 10; i++) m.set(i, String(i));
  assert.equal(m.size, 3);
  assert.equal(m.has(6), false);
  assert.deepEqual([7, 8, 9].map((k) => m.get(k)), ['7', '8', '9']);
  assert.throws(() => new BoundedMap(0), RangeError);
  // A set makes its key the newest and says when the oldest went (a stream's cut flag).
  assert.equal(m.set(7, 'seven'), false);
  assert.deepEqual([...m.keys()], [8, 9, 7]);
  assert.equal(m.set(10, '10'), true);
  assert.deepEqual([...m.values()], ['9', 'seven', '10']);
});

test('token bucket per second: burst, then the rate', () => {
  const b = new TokenBucket(perSecond(10, 5), 0);
  let ok = 0;
  for (let i = 0; i < 20; i++) if (b.tryTake(0)) ok++;
  assert.equal(ok, 5);
  ok = 0;
  for (let i = 0; i < 20; i++) if (b.tryTake(1000)) ok++;
  assert.equal(ok, 5, 'capped at the burst');
  assert.equal(b.tryTake(1200), true);
  assert.equal(b.tryTake(1200), true);
  assert.equal(b.tryTake(1200), false);
  assert.throws(() => new TokenBucket(perSecond(0, 5), 0), RangeError);
});

/** The chain-data budget's former bucket (src/chain/budget.ts), verbatim. */
class FormerHourly {
  private readonly capacityUnits: number;
  private level: number;
  private last: number;
  constructor(
    readonly requestsPerHour: number,
    readonly burst: number,
    now: number,
  ) {
    this.capacityUnits = burst * 3_600_000;
    this.level = this.capacityUnits;
    this.last = now;
  }
  private refill(now: number): void {
    const dt = now - this.last;
    if (dt <= 0) return;
    this.last = now;
    const missing = this.capacityUnits - this.level;
    if (dt >= Math.ceil(missing / this.requestsPerHour)) this.level = this.capacityUnits;
    else this.level += dt * this.requestsPerHour;
  }
  available(now: number): number {
    this.refill(now);
    return Math.floor(this.level / 3_600_000);
  }
  take(now: number): void {
    this.refill(now);
    if (this.level < 3_600_000) throw new Error('token bucket: take without a token');
    this.level -= 3_600_000;
  }
  msUntil(tokens: number, now: number): number {
    this.refill(now);
    const need = tokens * 3_600_000 - this.level;
    return need <= 0 ? 0 : Math.ceil(need / this.requestsPerHour);
  }
}

/** The gossip global bucket's former class (src/gossip/seen.ts), verbatim. */
class FormerGlobal {
  private tokens: number;
  private last: number;
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.last = now();
  }
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The per-peer limiter's former budget arithmetic (src/gossip/peer-limiter.ts), verbatim: refill, admit's take, charge, the timer's wait. */
class FormerPeer {
  tokens: number;
  last: number;
  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  refill(t: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.ratePerS);
    this.last = t;
  }
  take(t: number): boolean {
    this.refill(t);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
  charge(n: number, t: number): void {
    this.refill(t);
    this.tokens = Math.max(-this.burst, this.tokens - n);
  }
  timerMs(): number {
    return Math.max(1, Math.ceil(((1 - this.tokens) / this.ratePerS) * 1000));
  }
}

/** A clock that only moves forward, by whole or fractional milliseconds. */
const steps = (fractional: boolean): fc.Arbitrary<{ dt: number; op: number }[]> =>
  fc.array(fc.record({ dt: fractional ? fc.oneof(fc.double({ min: 0, max: 5000, noNaN: true }), fc.constant(0)) : fc.nat({ max: 4_000_000 }), op: fc.nat({ max: 3 }) }), { maxLength: 300 });

test('the merged bucket is the chain budget\'s former one: exact, whole milliseconds', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 1, max: 1e6 }), steps(false), (rate, burst, ops) => {
      const was = new FormerHourly(rate, burst, 0);
      const is = hourlyBucket(rate, burst, 0);
      let t = 0;
      for (const { dt, op } of ops) {
        t += dt;
        if (op === 0) assert.equal(is.available(t), was.available(t));
        else if (op === 1) assert.equal(is.msUntil(1 + (dt % 7), t), was.msUntil(1 + (dt % 7), t));
        else if (was.available(t) >= 1) {
          was.take(t);
          assert.equal(is.tryTake(t), true);
        } else assert.equal(is.tryTake(t), false);
      }
    }),
    { numRuns: 300 },
  );
  // Its own unit test, unchanged but for the constructor: one token per 3,600,000 / 7 ms.
  const b = hourlyBucket(7, 3, 0);
  for (let i = 0; i < 3; i++) assert.equal(b.tryTake(0), true);
  assert.equal(b.available(514_285), 0);
  assert.equal(b.available(514_286), 1);
});

test('the merged bucket is the gossip global bucket\'s former one, on performance.now()-like fractional times', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), steps(true), (rate, ops) => {
      let t = 0;
      const was = new FormerGlobal(rate, rate, () => t);
      const is = new TokenBucket(perSecond(rate, rate), t);
      for (const { dt } of ops) {
        t += dt;
        assert.equal(is.tryTake(t), was.take());
      }
    }),
    { numRuns: 300 },
  );
});

test('the merged bucket is the per-peer limiter\'s former budget: takes, debt to one second\'s worth, the timer\'s wait', () => {
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0.01, max: 100, noNaN: true })), steps(true), (rate, ops) => {
      const burst = Math.max(1, rate);
      const was = new FormerPeer(rate, burst, 0);
      const is = new TokenBucket(perSecond(rate, burst, burst), 0);
      let t = 0;
      for (const { dt, op } of ops) {
        t += dt;
        if (op === 0) {
          was.charge(5, t);
          is.charge(5, t);
        } else assert.equal(is.tryTake(t), was.take(t));
        if (was.tokens < 1) assert.equal(Math.max(1, is.msUntil(1, t)), was.timerMs());
      }
    }),
    { numRuns: 300 },
  );
});

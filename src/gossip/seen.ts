/** The gossip seen set's bounded map lives with the node's other bounded maps (src/bounded.ts). */
export { BoundedMap } from '../bounded.js';

/** A simple token bucket: `rate` tokens per second, at most `burst` saved up. Synchronous. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
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

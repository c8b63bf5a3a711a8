/**
 * The `catching up` log line, what an operator watching a node reach the tip reads.
 *
 * Blocks per second and an ETA from them are honest only while blocks are what the node
 * waits for. During a light node's first peer sync they are not: blocks are applied only
 * as the sync delivers their payloads (InitialSyncHold), so a rate from blocks said hours
 * where the sync ended in seconds (100,000 payloads over a year of headers: `eta_s 11537`
 * three seconds before the tip). While that hold lasts, the line names the sync and the
 * payloads it has taken, out of those it listed to fetch, instead, also when no block
 * moves, with the rate at which it takes them and when, at that rate, it will have
 * taken those listed so far; once the hold ends, the blocks' rate counts from there, not
 * from the node's start.
 */

/** A line at most this often (ms). */
export const PROGRESS_EVERY_MS = 5_000;

/** Where the first peer sync stands, as the follower knows it. */
export interface SyncHoldState {
  /** Blocks at or below this height may be applied (Infinity: the hold is over). */
  ceiling: number;
  /** Payloads the first sync has handed over so far. */
  payloadsTaken: number;
  /** Payloads peers' syncs have listed to fetch so far (each round lists what it lacks before fetching). */
  payloadsListed: number;
}

export type ProgressFields =
  | { processed_height: number; blocks_left: number; blocks_per_s: number; eta_s: number | null }
  | {
      processed_height: number;
      blocks_left: number;
      waiting_for: 'first peer sync';
      sync_payloads_taken: number;
      sync_payloads_listed: number;
      /** Payloads taken per second since the sync took its first (null until a second count). */
      sync_payloads_per_s: number | null;
      /** Seconds until those listed so far are taken, at that rate (null without a rate). */
      sync_eta_s: number | null;
      applied_through: number | null;
    };

export class CatchUpProgress {
  private since: number;
  private blocksAtStart: number;
  private lastLog = -Infinity;
  private held = false;
  /**
   * When the hold first saw a payload taken, and how many: the payload rate counts from
   * there, not from the node's start, whose first seconds go to the header chain.
   */
  private firstTaken: { at: number; taken: number } | null = null;

  constructor(now: number, processedHeight: number) {
    this.since = now;
    this.blocksAtStart = processedHeight;
  }

  /**
   * The fields of a progress line at `now` with `done` processed and the chain's tip at
   * `tip`, or null when none is due (the last was under PROGRESS_EVERY_MS ago, or the
   * node is at the tip).
   */
  line(now: number, done: number, tip: number, hold: SyncHoldState): ProgressFields | null {
    const left = Math.max(0, tip - done);
    const holding = hold.ceiling !== Infinity;
    if (this.held && !holding) {
      // The hold is over: what follows is block application alone.
      this.since = now;
      this.blocksAtStart = done;
    }
    this.held = holding;
    if (holding && this.firstTaken === null && hold.payloadsTaken > 0) this.firstTaken = { at: now, taken: hold.payloadsTaken };
    if (left === 0 || now - this.lastLog < PROGRESS_EVERY_MS) return null;
    this.lastLog = now;
    if (holding) {
      const first = this.firstTaken;
      const rate = first && now > first.at && hold.payloadsTaken > first.taken ? (hold.payloadsTaken - first.taken) / ((now - first.at) / 1000) : null;
      return {
        processed_height: done,
        blocks_left: left,
        waiting_for: 'first peer sync',
        sync_payloads_taken: hold.payloadsTaken,
        sync_payloads_listed: hold.payloadsListed,
        sync_payloads_per_s: rate === null ? null : Math.round(rate * 10) / 10,
        sync_eta_s: rate === null ? null : Math.ceil(Math.max(0, hold.payloadsListed - hold.payloadsTaken) / rate),
        applied_through: hold.ceiling >= 0 ? hold.ceiling : null,
      };
    }
    const secs = (now - this.since) / 1000;
    const rate = secs > 0 ? (done - this.blocksAtStart) / secs : 0;
    return { processed_height: done, blocks_left: left, blocks_per_s: Math.round(rate * 10) / 10, eta_s: rate > 0 ? Math.round(left / rate) : null };
  }
}

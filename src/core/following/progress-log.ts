/**
 * The follower's progress lines: `block applied` once at the tip, a `catching up` line
 * now and then while behind (CatchUpProgress), with the first peer sync's payloads while
 * it holds blocks back.
 */
import { logger } from '../../log.js';
import { CatchUpProgress } from '../catch-up-progress.js';

const log = logger('chain');

export class ProgressLog {
  private progress = new CatchUpProgress(0, 0);
  /** Payloads the first peer sync has handed over (the progress line while it holds blocks back). */
  private syncPayloadsTaken = 0;
  /** Payloads peers' syncs listed to fetch, as they were listed: what the taken ones are out of. */
  private syncPayloadsListed = 0;

  /** Catching up counts from processed height `height`, now. */
  start(now: number, height: number): void {
    this.progress = new CatchUpProgress(now, height);
  }

  notePayloadsListed(count: number): void {
    this.syncPayloadsListed += count;
  }

  notePayloadsTaken(count: number): void {
    this.syncPayloadsTaken += count;
  }

  /**
   * Processed height `done` against the chain's `tip` (null: unknown); `ceiling`: the
   * height up to which blocks may be applied while the first peer sync holds them back.
   */
  line(done: number, tip: number | null, stateRoot: string | null, reorgDepth: number, ceiling: () => number): void {
    const to = tip ?? done;
    if (to <= done) {
      if (stateRoot !== null) log.info('block applied', { height: done, state_root: stateRoot, reorg_depth: reorgDepth || undefined });
      return;
    }
    const hold = { ceiling: ceiling(), payloadsTaken: this.syncPayloadsTaken, payloadsListed: this.syncPayloadsListed };
    const fields = this.progress.line(Date.now(), done, to, hold);
    if (fields) log.info('catching up', fields);
  }
}

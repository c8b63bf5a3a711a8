/**
 * Whether a light node with peers still holds block application back for its first sync
 * with them: payloads and their evidence arrive first, so each block is applied once with
 * them, not replayed from as each payload arrives late. A late payload anchored in an
 * early block replays the chain from that block to the tip: with 100,000 payloads and a
 * year of blocks, a hold of a fixed 120 s from start ran out with 18,000 taken, and every
 * batch after it replayed ~52,000 blocks.
 *
 * So the hold lasts while the sync delivers: it ends when gossip says the first sync
 * ended (`done`), when no payload has come from it for SYNC_QUIET_MS (a peer that hangs,
 * or has nothing), or at HOLD_MAX_MS from start whatever comes (the node must reach the
 * tip some time; outcomes do not depend on it, only the cost of replays).
 *
 * Meanwhile blocks up to the height the sync says it has delivered everything through
 * (`noteDelivered`: a peer lists a contract's payloads in chain order, so once a part of
 * the list is taken, no later one belongs to a block below it) are applied while the
 * rest is fetched: a 30,000-payload catch-up executed its calls for ~3 s after the sync,
 * in one 1,000-block update. A height a lying peer names too high costs replays only.
 */

/**
 * A first sync that brought nothing for this long is not waited for any more: the whole
 * hold used to be this long from start, enough for a sync that delivers nothing (a peer
 * that hangs: its requests time out well within it).
 */
export const SYNC_QUIET_MS = 120_000;
/** At the most, from start: half an hour takes ~1,000,000 payloads at this machine's sync rate (~1,000/s), and a day of blocks waits behind it at worst. */
export const HOLD_MAX_MS = 30 * 60_000;

export class InitialSyncHold {
  private ended: boolean;
  private lastPayloadAt: number;
  /** Every payload of the sync anchored at or below this height has been taken (-1: none known). */
  private deliveredThrough = -1;

  constructor(
    private readonly startedAt: number,
    hasPeers: boolean,
  ) {
    this.ended = !hasPeers;
    this.lastPayloadAt = startedAt;
  }

  /** Gossip's first sync round with the peers ended (or failed for every peer). */
  done(): void {
    this.ended = true;
  }

  get isDone(): boolean {
    return this.ended;
  }

  /** Payloads from a peer's sync were taken at `now`. */
  notePayloads(now: number): void {
    this.lastPayloadAt = Math.max(this.lastPayloadAt, now);
  }

  /** The sync has taken every payload anchored at or below `height`; answers whether that moved the ceiling. */
  noteDelivered(height: number): boolean {
    if (this.ended || height <= this.deliveredThrough) return false;
    this.deliveredThrough = height;
    return true;
  }

  /** The highest block that may be applied at `now` (Infinity once the hold is over). */
  ceiling(now: number): number {
    const over = this.ended || now - this.lastPayloadAt >= SYNC_QUIET_MS || now - this.startedAt >= HOLD_MAX_MS;
    return over ? Infinity : this.deliveredThrough;
  }

  /** Whether every block may be applied at `now`. */
  mayApply(now: number): boolean {
    return this.ceiling(now) === Infinity;
  }
}

/**
 * What the ledger tells whoever watches it (the writer's metrics and the REST read
 * cache, src/writer/queries.ts), called explicitly at the points where it happens.
 */
import type { Tip } from '../store/index.js';

export interface LedgerObserver {
  /**
   * After each block applied, with the seconds it took (handing its batch over included).
   * `replay`: a journal entry applied again (a late payload's replay, a re-derivation),
   * not a block the chain brought.
   */
  blockApplied(height: number, seconds: number, replay: boolean): void;
  /** After a rewind of `depth` blocks; `dropJournal`: they left the best chain (a reorg). */
  rewound(depth: number, dropJournal: boolean): void;
  /**
   * Synchronously, each time the processed tip and state root are set (a block, a rewind,
   * a load, the anchor), before any other job can read them; once for a whole chain
   * update, after its last block (Ledger.holdStateNotices).
   */
  stateChanged(tip: Tip | null, stateRoot: string | null): void;
}

/**
 * How far a sync has delivered: the height at or below which it has taken every payload
 * it will take from its peer, so that a light node's first sync lets blocks up to there
 * be applied while it fetches the rest (ChainFollower.notePeerDelivered), instead of
 * executing every call after the sync has ended.
 *
 * It rests on the order a peer lists a contract it is asked for whole (GetContractTxids:
 * the deploy, whatever its height, then the calls in chain order, pending ones last):
 * once a part of that list is taken, the calls still to come lie in the block of its
 * last confirmed call or above (the caller answers a deploy as taken, not confirmed). A list in
 * txid order (what range reconciliation finds missing) says nothing until it is all
 * handled, nor does a contract one of whose payloads was not taken (it may come later, from
 * this peer's next round or another peer). Several contracts: the lowest height over those
 * with payloads still to come. A peer that lists out of order costs the node replays of
 * the blocks a late payload belongs to, never a different outcome.
 */

export interface ListedPayload {
  txid: string;
  contract_id: string;
}

export class DeliveredThrough {
  /** Per contract: the index of its last payload in the list. */
  private readonly lastIndex = new Map<string, number>();
  /** Per contract: the highest confirmed height among its payloads taken so far. */
  private readonly highest = new Map<string, number>();
  /** Contracts that say nothing until their last payload is handled (see above). */
  private readonly unordered = new Set<string>();
  /** A payload of the list was not taken: it may still come, at any height, from this peer or another. */
  private gap = false;

  /** `list`: the payloads a sync fetches, in fetch order; `ordered`: contracts whose part of it is the peer's chain-ordered list. */
  constructor(
    private readonly list: readonly ListedPayload[],
    ordered: ReadonlySet<string>,
  ) {
    list.forEach((m, i) => {
      this.lastIndex.set(m.contract_id, i);
      if (!ordered.has(m.contract_id)) this.unordered.add(m.contract_id);
    });
  }

  /**
   * The payloads list[from, to) have been handled: `takenAt(txid)` answers the confirmed
   * height of one that was taken (null: taken, not confirmed) and undefined for one that
   * was not. Answers the height through which every payload of the list is taken, -1
   * when none is known yet, or Infinity once every one is taken.
   */
  settle(from: number, to: number, takenAt: (txid: string) => number | null | undefined): number {
    for (let i = from; i < to && i < this.list.length; i++) {
      const m = this.list[i]!;
      const h = takenAt(m.txid);
      if (h === undefined) {
        this.unordered.add(m.contract_id);
        this.gap = true;
      } else if (h !== null && h > (this.highest.get(m.contract_id) ?? -1)) this.highest.set(m.contract_id, h);
    }
    let through = Infinity;
    for (const [id, last] of this.lastIndex) {
      if (last < to) continue;
      // Payloads of this contract still to come lie at its highest taken height or above.
      through = Math.min(through, this.unordered.has(id) ? -1 : (this.highest.get(id) ?? 0) - 1);
    }
    // None left: every block, unless a payload may still come.
    return through === Infinity && this.gap ? -1 : Math.max(-1, through);
  }
}

/**
 * The lists of several contracts taken GET_PAYLOADS_MAX-sized runs in turn, so that each
 * contract's part advances together and `DeliveredThrough` moves while the first is
 * fetched; each keeps its own order (a contract's deploy stays ahead of its calls).
 */
export function interleave<T>(lists: readonly (readonly T[])[], run: number): T[] {
  const out: T[] = [];
  for (let at = 0; ; at += run) {
    let any = false;
    for (const l of lists) {
      if (at >= l.length) continue;
      any = true;
      for (let i = at; i < Math.min(l.length, at + run); i++) out.push(l[i]!);
    }
    if (!any) return out;
  }
}

/**
 * The coins behind the node's pending payloads (docs/STATE.md, "Coin evidence"): node
 * policy about what it holds while anchors wait, never consensus. Each payload admitted
 * on its coin's evidence holds a place here: its checked outpoint, the fee its anchor
 * pays out of proven coins and its virtual size, and how many unconfirmed anchors it
 * hangs from. A payload paid by its anchor's confirmation holds no place (it is never
 * evicted, and its outpoint is spent on chain).
 *
 * Rules (one home; Writer.admit applies them):
 * - one coin, one waiting payload: an outpoint backs at most one place. A new payload
 *   spending it takes the place (the old one is evicted) only when its anchor pays a
 *   strictly higher fee AND a strictly higher fee rate, as a wallet's fee bump replaces
 *   its transaction in Bitcoin's mempool (BIP125 rules 3 and 4 in spirit); otherwise it
 *   is refused coin_in_use.
 * - when max_pending_calls calls wait, a new call is taken only by evicting the waiting
 *   call with the lowest fee rate, and only when it pays a strictly higher one; ties go
 *   to the call already waiting, so arrival order alone never evicts anyone. Among equal
 *   rates the highest txid goes first (a fixed rule, the same on every node).
 * - a payload whose anchor's coins back other waiting payloads (its children) is neither
 *   replaced nor evicted: the children's proof is that it waits (Bitcoin evicts such a
 *   package together; here the children's fees keep their parent).
 * Fee rates are compared exactly (fee_a x vsize_b against fee_b x vsize_a, integers).
 */

/** A pending payload's place. */
export interface CoinPlace {
  txid: string;
  kind: 'call' | 'deploy';
  /** A deploy's contract id (what says whether it is still pending); '' for a call. */
  contractId: string;
  /** The checked outpoint, `txid:vout`. */
  outpoint: string;
  /** Sats the anchor pays out of proven coins (coin.ts, provenFee). */
  fee: bigint;
  vsize: number;
  /** Unconfirmed anchors below it (0: its coin is confirmed). */
  depth: number;
  /** The pending payloads whose anchors created coins it spends (its proof, while they wait). */
  parents: string[];
}

/** Sign of rate(a) - rate(b), exactly. */
export function compareRate(a: Pick<CoinPlace, 'fee' | 'vsize'>, b: Pick<CoinPlace, 'fee' | 'vsize'>): number {
  const l = a.fee * BigInt(b.vsize);
  const r = b.fee * BigInt(a.vsize);
  return l > r ? 1 : l < r ? -1 : 0;
}

/** Whether `a` replaces `b` on the same coin (see the file header). */
export function replaces(a: CoinPlace, b: CoinPlace): boolean {
  return a.fee > b.fee && compareRate(a, b) > 0;
}

/** Eviction order: lowest rate first, then the highest txid. */
function evictsBefore(a: CoinPlace, b: CoinPlace): boolean {
  const c = compareRate(a, b);
  return c !== 0 ? c < 0 : a.txid > b.txid;
}

/** Fee rate in sat/vB with three decimals, for logs and messages (never compared). */
export function rateText(p: Pick<CoinPlace, 'fee' | 'vsize'>): string {
  const milli = (p.fee * 1000n) / BigInt(Math.max(1, p.vsize));
  return `${milli / 1000n}.${(milli % 1000n).toString().padStart(3, '0')} sat/vB`;
}

export class PendingCoins {
  /**
   * `live(place)`: whether its payload is still pending. A place is dropped lazily when
   * its payload was decided, evicted or rolled away, so no code that ends a pending
   * payload needs to know about this book.
   */
  constructor(private readonly live: (p: CoinPlace) => boolean) {}

  private readonly byOutpoint = new Map<string, CoinPlace>();
  private readonly byTxid = new Map<string, CoinPlace>();
  /** Calls' places as a binary min-heap in eviction order; entries no longer held are skipped lazily. */
  private heap: CoinPlace[] = [];
  /** Per parent txid, the places that name it (pending-coins' package rule). */
  private readonly children = new Map<string, Set<string>>();

  /** Whether waiting payloads hang from `txid`'s anchor (it is then neither replaced nor evicted). */
  hasChildren(txid: string): boolean {
    const c = this.children.get(txid);
    if (!c) return false;
    for (const t of c) if (!this.placeOf(t)) c.delete(t);
    if (c.size === 0) this.children.delete(txid);
    return c.size > 0;
  }

  get size(): number {
    return this.byTxid.size;
  }

  holderOf(outpoint: string): CoinPlace | undefined {
    return this.fresh(this.byOutpoint.get(outpoint));
  }

  placeOf(txid: string): CoinPlace | undefined {
    return this.fresh(this.byTxid.get(txid));
  }

  private fresh(p: CoinPlace | undefined): CoinPlace | undefined {
    if (!p || this.live(p)) return p;
    this.remove(p.txid);
    return undefined;
  }

  add(p: CoinPlace): void {
    this.remove(p.txid);
    const prev = this.byOutpoint.get(p.outpoint);
    if (prev) this.byTxid.delete(prev.txid);
    this.byOutpoint.set(p.outpoint, p);
    this.byTxid.set(p.txid, p);
    for (const parent of p.parents) {
      let c = this.children.get(parent);
      if (!c) this.children.set(parent, (c = new Set()));
      c.add(p.txid);
    }
    if (p.kind === 'call') this.push(p);
  }

  remove(txid: string): void {
    const p = this.byTxid.get(txid);
    if (!p) return;
    this.byTxid.delete(txid);
    if (this.byOutpoint.get(p.outpoint) === p) this.byOutpoint.delete(p.outpoint);
    // Heap entries go lazily; rebuild once stale ones outnumber live ones, so it stays O(live).
    if (this.heap.length > 64 && this.heap.length > 2 * this.byTxid.size) this.heap = [...this.byTxid.values()].filter((q) => q.kind === 'call').sort((a, b) => (evictsBefore(a, b) ? -1 : evictsBefore(b, a) ? 1 : 0));
  }

  /** The call first in eviction order, skipping `except`; undefined when none holds a place. */
  lowestCall(except: ReadonlySet<string> = new Set()): CoinPlace | undefined {
    const skipped: CoinPlace[] = [];
    let found: CoinPlace | undefined;
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.byTxid.get(top.txid) !== top) {
        this.pop();
        continue;
      }
      if (!this.live(top)) {
        this.pop();
        this.remove(top.txid);
        continue;
      }
      if (except.has(top.txid) || this.hasChildren(top.txid)) {
        skipped.push(this.pop()!);
        continue;
      }
      found = top;
      break;
    }
    for (const s of skipped) this.push(s);
    return found;
  }

  private push(p: CoinPlace): void {
    const h = this.heap;
    h.push(p);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!evictsBefore(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): CoinPlace | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && evictsBefore(h[l]!, h[m]!)) m = l;
        if (r < h.length && evictsBefore(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Range-based set reconciliation, the asking side (proto/svc.proto, header section 3):
 * which txids of a contract a peer holds that this node lacks, in bytes proportional to
 * the differences times the log of the contract's size.
 *
 * Both stores answer the same questions (GetContractRanges of the peer, peerRanges of
 * the local writer): count and fingerprint of txid ranges. Level by level from the whole
 * key space, ranges whose answers agree are done, ranges where one side holds nothing
 * are listed by the other, and the others are split into 2^SPLIT_BITS sub-ranges of the
 * key space (txids are hashes, so the parts are even), or listed once the peer holds few
 * enough txids there. One descent finds the differences both ways.
 */
import PQueue from 'p-queue';
import { RANGE_LIST_MAX, RANGES_MAX } from './limits.js';
import { subtractFingerprints } from '@svc-node/protocol/fingerprint';
import type { RangeAnswer, RangeQuery } from '../messages/gossip.js';

/** Asks one store about up to RANGES_MAX ranges; one answer per range, in order. */
export type AskRanges = (ranges: RangeQuery[]) => Promise<RangeAnswer[]>;

/**
 * Key-space bits a differing range is split by: halves. Of each split only the first
 * half is asked, the second derived (below), so a level costs one (count, fingerprint)
 * per differing range. Measured with bench-like sets (200,000 payloads, 2,000
 * differences; bytes of questions and answers per difference): halves 347 bytes in 29
 * levels, quarters 480 bytes in 16 levels. Each level is one round trip (a few for many
 * ranges), ~40 for a million payloads: bytes were preferred over round trips, as sync
 * runs in the background every few minutes.
 */
export const SPLIT_BITS = 1;

/**
 * A range where the local store holds something is listed by the peer when the peer
 * holds at most this many txids there, instead of being split once more. A listed txid
 * costs ~36 bytes, a (count, fingerprint) ~22. Measured as above: 1 and 2 cost the
 * same bytes (344 and 347 per difference), 2 in 29 levels instead of 37; 4 cost 1.4x.
 */
export const LIST_SMALL = 2;

/** A range of the key space: the txids starting with the `bits` high bits of `prefix`. */
interface KeyRange {
  prefix: bigint;
  bits: number;
}

/** The [lower, upper) bounds (hex) of a key range; upper '' is the end of the key space. */
export function rangeBounds(r: KeyRange): { lower: string; upper: string } {
  if (r.bits === 0) return { lower: '', upper: '' };
  const len = Math.ceil(r.bits / 8);
  const shift = BigInt(len * 8 - r.bits);
  const hexOf = (v: bigint): string => v.toString(16).padStart(len * 2, '0');
  const next = r.prefix + 1n;
  return { lower: hexOf(r.prefix << shift), upper: next >> BigInt(r.bits) ? '' : hexOf(next << shift) };
}

function split(r: KeyRange): KeyRange[] {
  const k = Math.min(SPLIT_BITS, 256 - r.bits);
  return Array.from({ length: 1 << k }, (_, c) => ({ prefix: (r.prefix << BigInt(k)) | BigInt(c), bits: r.bits + k }));
}

export interface ReconcileStats {
  /** Levels descended (each one or two round trips to the peer, up to `concurrency` requests at once). */
  levels: number;
  /** GetContractRanges requests sent to the peer. */
  requests: number;
  /** Ranges asked of the peer. */
  ranges: number;
}

/** A range to look at: asked of the peer, or (`derived`) its answer computed from its parent's and its siblings'. */
interface Node {
  range: KeyRange;
  derived?: Sibling;
}

/** The last of a split's sub-ranges: the parent's (count, fingerprint) minus those of the others. */
interface Sibling {
  parent: RangeAnswer;
  others: Node[];
}

/** Pairs each range asked with its answer; a side that answered another number of ranges is refused. */
function zip<T>(asked: readonly T[], answers: readonly RangeAnswer[]): [T, RangeAnswer][] {
  if (answers.length !== asked.length) throw new Error(`peer answered ${answers.length} ranges for ${asked.length}`);
  return asked.map((x, i) => {
    const a = answers[i];
    if (!a) throw new Error(`peer answered no range ${i}`);
    return [x, a];
  });
}

/**
 * Reconciles one contract's payload set with a peer's, in one descent for both sides:
 * `missing` are the txids the peer holds and the local store lacks (to fetch),
 * `theyLack` those the local store holds and the peer lacks (to push). Of each split
 * only the first 2^SPLIT_BITS - 1 sub-ranges are asked: the last one's count and
 * fingerprint are the parent's minus theirs (fingerprints are sums); it is asked only
 * when it differs and should be listed, or when a listed sibling left its fingerprint
 * unknown.
 */
export async function reconcile(local: AskRanges, remote: AskRanges, concurrency = 4): Promise<{ missing: string[]; theyLack: string[]; stats: ReconcileStats }> {
  const stats: ReconcileStats = { levels: 0, requests: 0, ranges: 0 };
  const missing: string[] = [];
  const theyLack: string[] = [];
  const q = new PQueue({ concurrency });
  const chunks = <T>(xs: T[]): T[][] => Array.from({ length: Math.ceil(xs.length / RANGES_MAX) }, (_, i) => xs.slice(i * RANGES_MAX, (i + 1) * RANGES_MAX));
  /** Asks `nodes` of one side, RANGES_MAX per request, `listFor(i, mine)` per range. */
  /** Asks `side` about each node, RANGE_LIST_MAX ranges per request: one answer per node, in their order. */
  const ask = async <T extends { n: Node; listUpTo: number }>(side: AskRanges, items: T[], remoteSide: boolean): Promise<[T, RangeAnswer][]> => {
    const answered = await Promise.all(
      chunks(items).map((chunk) =>
        q.add(async () => {
          const answers = await side(chunk.map((x) => ({ ...rangeBounds(x.n.range), list_up_to: x.listUpTo })));
          if (remoteSide) {
            stats.requests++;
            stats.ranges += chunk.length;
          }
          return zip(chunk, answers);
        }),
      ),
    );
    return answered.flat();
  };
  const answerOf = new Map<Node, RangeAnswer>();
  /** The peer's answer for `n`: asked, or derived from the parent's and the asked siblings' (null: only its count is known). */
  const asked = (n: Node): RangeAnswer => {
    const a = answerOf.get(n);
    if (!a) throw new Error('reconcile: a range of this level was not asked');
    return a;
  };
  const theirs = (n: Node): RangeAnswer | null => {
    if (!n.derived) return asked(n);
    const others = n.derived.others.map(asked);
    const count = n.derived.parent.count - others.reduce((a, o) => a + o.count, 0);
    // A listed sibling carries no fingerprint: then only the count is known.
    if (count === 0 || others.some((o) => o.txids !== null)) return count === 0 ? { count: 0, fingerprint: '', txids: [] } : null;
    return { count, fingerprint: subtractFingerprints(n.derived.parent.fingerprint, others.map((o) => o.fingerprint)), txids: null };
  };
  let frontier: Node[] = [{ range: { prefix: 0n, bits: 0 } }];
  while (frontier.length > 0) {
    stats.levels++;
    const mine = await ask(local, frontier.map((n) => ({ n, listUpTo: 0 })), false);
    // The peer is asked the ranges not derived, listed where this side holds none there.
    const toAsk = mine.filter(([{ n }]) => !n.derived).map(([{ n }, m]) => ({ n, listUpTo: m.count === 0 ? RANGE_LIST_MAX : LIST_SMALL }));
    for (const [{ n }, a] of await ask(remote, toAsk, true)) answerOf.set(n, a);
    const next: Node[] = [];
    // Ranges whose lists are compared: the node, this side's answer and the peer's.
    const compare: { n: Node; m: RangeAnswer; t: RangeAnswer; listUpTo: number }[] = [];
    for (const [{ n }, m] of mine) {
      const t = theirs(n);
      if (t === null) {
        next.push({ range: n.range }); // ask it next level
        continue;
      }
      if (t.count === 0) {
        if (m.count > 0) compare.push({ n, m, t, listUpTo: m.count });
        continue;
      }
      if (t.txids) {
        if (m.count === 0) missing.push(...t.txids);
        else compare.push({ n, m, t, listUpTo: m.count });
        continue;
      }
      if (t.count === m.count && t.fingerprint === m.fingerprint) continue;
      // A derived answer that differs is split like an asked one, unless it should be listed: then ask it.
      if (n.derived && (m.count === 0 || t.count <= LIST_SMALL)) {
        next.push({ range: n.range });
        continue;
      }
      const children = split(n.range).map((range): Node => ({ range }));
      const last = children.at(-1);
      if (last && children.length > 1) last.derived = { parent: t, others: children.slice(0, -1) };
      next.push(...children);
    }
    if (compare.length > 0) {
      for (const [c, list] of await ask(local, compare, false)) {
        const have = new Set(list.txids ?? []);
        const peerHas = new Set(c.t.txids ?? []);
        for (const t of peerHas) if (!have.has(t)) missing.push(t);
        for (const t of have) if (!peerHas.has(t)) theyLack.push(t);
      }
    }
    frontier = next;
  }
  return { missing, theyLack, stats };
}

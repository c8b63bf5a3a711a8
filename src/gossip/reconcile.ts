/**
 * Range-based set reconciliation, the asking side (proto/svc.proto, header section 3):
 * which txids of a contract a peer holds that this node lacks, in bytes proportional to
 * the differences times the log of the contract's size.
 *
 * Both stores answer the same questions (GetContractRanges of the peer, peerRanges of
 * the local writer): count and fingerprint of txid ranges. Level by level from the whole
 * key space, ranges whose answers agree are done, ranges the peer holds nothing in are
 * done (this side pulls; the peer pulls what it lacks in its own sync), and the others
 * are split into 2^SPLIT_BITS sub-ranges of the key space (txids are hashes, so the
 * parts are even), or listed once the peer holds few enough txids there.
 */
import PQueue from 'p-queue';
import { RANGE_LIST_MAX, RANGES_MAX } from './limits.js';
import type { RangeAnswer, RangeQuery } from '../messages.js';

/** Asks one store about up to RANGES_MAX ranges; one answer per range, in order. */
export type AskRanges = (ranges: RangeQuery[]) => Promise<RangeAnswer[]>;

/**
 * Key-space bits a differing range is split by (4 sub-ranges). Each split costs one
 * (count, fingerprint) per sub-range (~36 bytes asked and answered), over log_F(n/d)
 * levels per difference: F / ln F is lowest near F = 3, and measured on 100,000
 * payloads with 10,000 differences 4 sub-ranges moved 0.9x the bytes of 16 (at 1,000,000
 * payloads: ~10 levels, i.e. round trips, instead of ~5).
 */
export const SPLIT_BITS = 2;

/**
 * A range where the local store holds something is listed by the peer when the peer
 * holds at most this many txids there, instead of being split once more. A listed txid
 * costs ~36 bytes, a (count, fingerprint) ~22: most such ranges are equal, so lists pay
 * only for the smallest. Measured (200,000 payloads, 2,000 differences): 1 and 2 cost
 * the same bytes, 2 in 13 levels instead of 18; 8 cost 1.4x the bytes.
 */
export const LIST_SMALL = 2;

/** Local txids listed per range to compare with a peer's list (in-process, not on the wire). */
const LOCAL_LIST_MAX = 4096;

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
  /** Levels descended (round trips to the peer, each up to `concurrency` requests). */
  levels: number;
  /** GetContractRanges requests sent to the peer. */
  requests: number;
  /** Ranges asked of the peer. */
  ranges: number;
}

/** Txids the peer (`remote`) holds and the local store lacks, ascending within each listed range. */
export async function missingTxids(local: AskRanges, remote: AskRanges, concurrency = 4): Promise<{ missing: string[]; stats: ReconcileStats }> {
  const stats: ReconcileStats = { levels: 0, requests: 0, ranges: 0 };
  const missing: string[] = [];
  let frontier: KeyRange[] = [{ prefix: 0n, bits: 0 }];
  const q = new PQueue({ concurrency });
  while (frontier.length > 0) {
    stats.levels++;
    const next: KeyRange[] = [];
    const chunks: KeyRange[][] = [];
    for (let i = 0; i < frontier.length; i += RANGES_MAX) chunks.push(frontier.slice(i, i + RANGES_MAX));
    await Promise.all(
      chunks.map((nodes) =>
        q.add(async () => {
          const qs = nodes.map(rangeBounds);
          const mine = await local(qs.map((b) => ({ ...b, list_up_to: 0 })));
          stats.requests++;
          stats.ranges += qs.length;
          const theirs = await remote(qs.map((b, i) => ({ ...b, list_up_to: mine[i]!.count === 0 ? RANGE_LIST_MAX : LIST_SMALL })));
          if (theirs.length !== qs.length) throw new Error(`peer answered ${theirs.length} ranges for ${qs.length}`);
          const compare: number[] = [];
          theirs.forEach((t, i) => {
            const m = mine[i]!;
            if (t.count === 0) return;
            if (t.txids) {
              if (m.count === 0) missing.push(...t.txids);
              else if (m.count <= LOCAL_LIST_MAX) compare.push(i);
              else next.push(...split(nodes[i]!));
            } else if (t.count !== m.count || t.fingerprint !== m.fingerprint) next.push(...split(nodes[i]!));
          });
          if (compare.length === 0) return;
          const lists = await local(compare.map((i) => ({ ...qs[i]!, list_up_to: LOCAL_LIST_MAX })));
          compare.forEach((i, k) => {
            const have = new Set(lists[k]!.txids ?? []);
            for (const t of theirs[i]!.txids!) if (!have.has(t)) missing.push(t);
          });
        }),
      ),
    );
    frontier = next;
  }
  return { missing, stats };
}

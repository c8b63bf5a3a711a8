/**
 * The sink the core's chain follower gives the header follower (FollowerSink), straight
 * onto an in-process writer: what the simulation and the follower's tests drive it with.
 */
import type { FollowerSink } from '../../src/chain/header-follower.js';
import type { Writer } from '../../src/writer/writer.js';

export function writerFollowerSink(w: Writer): FollowerSink {
  return {
    state: async () => {
      const s = w.status();
      return {
        processed: { height: s.processedHeight!, hash: s.processedHash! },
        headerTip: s.headerHeight === null ? null : { height: s.headerHeight, hash: s.headerHash! },
        anchorHeight: s.anchorHeight!,
        pending: s.pendingCalls + s.pendingDeploys,
      };
    },
    headers: (from, count) => w.ledger.headers(from, count),
    processedHash: async (h) => w.ledger.knownHash(h),
    putHeaders: async (from, run, truncate) => void (await w.putHeaders(from, run, truncate)),
    apply: (u) => w.applyChainUpdate(u),
    storeSpentBy: (items) => w.storeSpentBy(items),
    unplacedAnchors: async () => (await w.ledger.pendingPayloads('', Number.MAX_SAFE_INTEGER)).filter((p) => p.settles_at === null).map((p) => p.txid),
  };
}

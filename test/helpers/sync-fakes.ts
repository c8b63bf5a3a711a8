/** Fakes of what the sync engine (src/gossip/sync.ts) asks of the core and the peer set, for its unit tests. */
import { SyncEngine } from '../../src/gossip/sync.js';
import { logger } from '../../src/log.js';

type Answer = (method: string, params: Record<string, unknown>) => unknown;

/**
 * A core that answers with `answer` where it gives a value, and otherwise as a node that
 * takes no peer headers and holds no state roots, no pending payload and no contract.
 */
export function fakeCore(answer: Answer = () => undefined): { call: (method: string, params: Record<string, unknown>) => Promise<unknown> } {
  return {
    call: async (method, params) => {
      const given = await answer(method, params);
      if (given !== undefined) return given;
      switch (method) {
        case 'peerStateRoots':
          return { roots: [], anchor_height: null, tip_height: null };
        case 'peerHeaderState':
          return { anchor: null, tip: null, takesHeaders: false };
        case 'peerPending':
          return { txids: [] };
        case 'peerFingerprints':
          return {};
        case 'peerSyncDelivered':
          return { ok: true };
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
  };
}

interface FakePeerLike {
  url: string;
  active?: boolean;
}

/**
 * A sync engine over `core` and `peers` (active unless `active` is false); `synced` hears
 * each peer synced with; `localHeight` is this node's advertised processed height.
 */
export function fakeSyncEngine(core: unknown, peers: FakePeerLike[], concurrency: number, synced?: (url: string) => void, localHeight?: () => number | null): SyncEngine {
  let current = '';
  return new SyncEngine({
    core: () => core as never,
    peers: { all: () => peers, isActive: (p: FakePeerLike) => p.active !== false, failed: () => undefined, ok: (p: FakePeerLike) => (current = p.url) } as never,
    counters: { sync_rounds: 0, sync_contracts_differing: 0, sync_payloads_fetched: 0, sync_payloads_applied: 0 } as never,
    concurrency,
    log: logger('test'),
    stored: () => undefined,
    changed: () => undefined,
    synced: () => synced?.(current),
    ...(localHeight ? { localHeight } : {}),
  });
}

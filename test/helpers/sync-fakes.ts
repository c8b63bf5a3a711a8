/** Fakes of what the sync engine (src/gossip/sync/) asks of the core and the peer set, for its unit tests. */
import { SyncEngine } from '../../src/gossip/sync/engine.js';
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
  /** As PeerSet keeps it: raised by each failure, cleared by a sync that ends well. */
  failures?: number;
}

/**
 * A sync engine over `core` and `peers` (active unless `active` is false); `synced` hears
 * each peer synced with; `localHeight` is this node's advertised processed height;
 * `counters` (its fields start at 0) the sync's counters, read by the test.
 */
export function fakeSyncEngine(
  core: unknown,
  peers: FakePeerLike[],
  concurrency: number,
  synced?: (url: string) => void,
  localHeight?: () => number | null,
  counters: Record<string, number> = {},
): SyncEngine {
  let current = '';
  Object.assign(counters, { sync_rounds: 0, sync_contracts_differing: 0, sync_payloads_fetched: 0, sync_payloads_applied: 0, sync_bad_evidence: 0 });
  return new SyncEngine({
    core: () => core as never,
    peers: { all: () => peers, isActive: (p: FakePeerLike) => p.active !== false, failed: (p: FakePeerLike) => (p.failures = (p.failures ?? 0) + 1), ok: (p: FakePeerLike) => ((current = p.url), (p.failures = 0)) } as never,
    counters: counters as never,
    concurrency,
    log: logger('test'),
    stored: () => undefined,
    changed: () => undefined,
    synced: () => synced?.(current),
    ...(localHeight ? { localHeight } : {}),
  });
}

/** A store's answers to range questions over `txids` (the fingerprint: any value equal for equal sets). */
export function answerRanges(txids: string[], ranges: { lower: string; upper: string; list_up_to: number }[]): { count: number; fingerprint: string; txids: string[] | null }[] {
  return ranges.map((r) => {
    const inside = [...txids].sort().filter((t) => r.lower <= t && (r.upper === '' || t < r.upper));
    return inside.length <= r.list_up_to ? { count: inside.length, fingerprint: '', txids: inside } : { count: inside.length, fingerprint: inside.join(','), txids: null };
  });
}

/** A peer's GetContractRanges answer (as proto-loader decodes it) over `txids`. */
export function peerRangesAnswer(txids: string[], params: Record<string, unknown>): unknown {
  const ranges = (params['ranges'] as { lower: Buffer; upper: Buffer; list_up_to: number }[]).map((r) => ({ lower: r.lower.toString('hex'), upper: r.upper.toString('hex'), list_up_to: r.list_up_to }));
  return {
    ranges: answerRanges(txids, ranges).map((a) => ({ count: a.count, listed: a.txids !== null, txids: (a.txids ?? []).map((t) => Buffer.from(t, 'hex')), fingerprint: Buffer.from(a.fingerprint) })),
  };
}

/**
 * A peer holding `listed` payloads of `contract`, with no state
 * roots: `getPayloads` answers GetPayloads (given the txids asked, hex), `other` any other
 * method it is asked.
 */
export function peerHolding(
  contract: string,
  listed: string[],
  getPayloads: (txids: string[]) => Promise<unknown>,
  other?: (method: string, params: Record<string, unknown>) => unknown,
): { call: (method: string, params: Record<string, unknown>) => Promise<unknown> } {
  return {
    call: async (method, params) => {
      switch (method) {
        case 'GetStateRoots':
          return { roots: [], anchor_height: '0', tip_height: '0' };
        case 'GetContractIds':
          return { contract_ids: [Buffer.from(contract, 'hex')], more: false };
        case 'GetContractRanges':
          return peerRangesAnswer(listed, params);
        case 'GetPayloads':
          return getPayloads((params['txids'] as Uint8Array[]).map((b) => Buffer.from(b).toString('hex')));
        default: {
          const answer = other?.(method, params);
          if (answer === undefined) throw new Error(`unexpected ${method}`);
          return answer;
        }
      }
    },
  };
}

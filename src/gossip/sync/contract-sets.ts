/**
 * What a peer holds, contract by contract: its contract ids (GetContractIds pages), each
 * contract's whole payload set compared with this node's as count and fingerprint
 * (GetContractRanges), its answers to the range questions of reconcile.ts, and the txid
 * list of a contract this node holds nothing of (GetContractTxids pages). Payload sync
 * asks which contracts differ; the divergence check asks it again after a divergence.
 */
import PQueue from 'p-queue';
import { NodeError } from '@svc-node/protocol/errors';
import { hex } from '../wire.js';
import { PAGE_MAX, REMOTE_CONTRACT_IDS_MAX } from '../limits.js';
import type { AskRanges } from '../reconcile.js';
import type { Peer } from '../peers.js';
import type { SyncDeps } from './deps.js';
import type { Retries } from './retries.js';

/** How this node's contracts compare with a peer's. */
export interface ContractDiff {
  /** Contracts whose whole payload set (count and fingerprint) differs from the peer's, sorted. */
  differing: string[];
  remoteIds: string[];
  localSets: Record<string, { count: number; fingerprint: string }>;
  remoteCounts: Map<string, number>;
}

export class ContractSets {
  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
  ) {}

  /**
   * Every contract id the peer knows, page by page, at most REMOTE_CONTRACT_IDS_MAX: a
   * peer listing more (or a page over PAGE_MAX) is answering falsely, and the ids past the
   * bound are not taken.
   */
  private async remoteContractIds(peer: Peer): Promise<string[]> {
    const ids: string[] = [];
    for (let after = Buffer.alloc(0); ; ) {
      const page = await this.retries.ask(peer, 'GetContractIds', { after });
      const got = page.contract_ids.map(hex);
      // A page must move forward, each id above the one before it (the first above the last
      // taken): a page whose last id is below the last taken would send the next request
      // back over the same ids, forever. A peer inventing new ascending ids page after page
      // is stopped by the bound below.
      if (got.length === 0 || got.some((id, i) => id <= (i === 0 ? (ids[ids.length - 1] ?? '') : (got[i - 1] ?? '')))) break;
      const room = REMOTE_CONTRACT_IDS_MAX - ids.length;
      ids.push(...got.slice(0, room));
      if (got.length > PAGE_MAX || got.length > room || (page.more && got.length === room)) {
        this.retries.falseAnswer(peer, 'contract ids', new NodeError('bad_request', `the peer lists more than ${REMOTE_CONTRACT_IDS_MAX} contract ids (pages of at most ${PAGE_MAX})`));
        break;
      }
      if (!page.more) break;
      after = Buffer.from(got[got.length - 1]!, 'hex');
    }
    return ids;
  }

  /** The peer's answers to range questions about a contract, in the local (hex) form. */
  remoteRanges(peer: Peer, contractId: string): AskRanges {
    return async (ranges) => {
      const r = await this.retries.ask(peer, 'GetContractRanges', {
        contract_id: Buffer.from(contractId, 'hex'),
        ranges: ranges.map((q) => ({ lower: Buffer.from(q.lower, 'hex'), upper: Buffer.from(q.upper, 'hex'), list_up_to: q.list_up_to })),
      });
      return r.ranges.map((a) => ({ count: a.count, fingerprint: a.listed ? '' : hex(a.fingerprint), txids: a.listed ? a.txids.map(hex) : null }));
    };
  }

  /** Contracts whose whole payload set (count and fingerprint) differs from the peer's. */
  async diff(peer: Peer): Promise<ContractDiff> {
    const [remoteIds, localSets] = await Promise.all([this.remoteContractIds(peer), this.d.core().call('peerFingerprints', {})]);
    const q = new PQueue({ concurrency: this.d.concurrency });
    const differing: string[] = [];
    const remoteCounts = new Map<string, number>();
    await Promise.all(
      remoteIds.map((id) =>
        q.add(async () => {
          const [whole] = await this.remoteRanges(peer, id)([{ lower: '', upper: '', list_up_to: 0 }]);
          const mine = localSets[id];
          if (!whole) throw new NodeError('bad_request', 'peer answered no range');
          remoteCounts.set(id, whole.count);
          if (!mine || whole.count !== mine.count || (whole.txids === null && whole.fingerprint !== mine.fingerprint)) differing.push(id);
        }),
      ),
    );
    differing.sort();
    return { differing, remoteIds, localSets, remoteCounts };
  }

  /**
   * The txids of a contract this node holds nothing of: the peer's list, page by page
   * (deploy first, chain order), at most `room` of them and at most `stated`, the count
   * the peer gave for the contract's whole set (its range answer in `diff`). A peer
   * whose list runs on past its own count, or that answers a page with more than asked,
   * is answering falsely: counted and logged, and only the txids within the bound are
   * taken. (An honest peer's set can grow between the two answers; what it gained is
   * reconciled next round, once this node holds the contract.)
   */
  async listedTxids(peer: Peer, contractId: string, stated: number, room: number): Promise<string[]> {
    const bound = Math.min(stated, room);
    const out: string[] = [];
    const contract_id = Buffer.from(contractId, 'hex');
    for (let offset = 0; out.length < bound; ) {
      const limit = Math.min(PAGE_MAX, bound - out.length);
      const page = await this.retries.ask(peer, 'GetContractTxids', { contract_id, offset, limit });
      const got = page.txids.map(hex);
      out.push(...got.slice(0, limit));
      if (got.length > limit) {
        this.retries.falseAnswer(peer, `txids of ${contractId}`, new NodeError('bad_request', `the peer answered ${got.length} txids where ${limit} were asked`));
        return out;
      }
      offset += got.length;
      if (!page.more || got.length === 0) return out;
      // The bound reached, and the peer says there are more: past its own count, a false answer.
      if (out.length >= bound && out.length >= stated) this.retries.falseAnswer(peer, `txids of ${contractId}`, new NodeError('bad_request', `the peer lists more than the ${stated} txids it counted`));
    }
    return out;
  }
}

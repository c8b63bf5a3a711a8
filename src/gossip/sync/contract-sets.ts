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

  /** Every contract id the peer knows, page by page. */
  private async remoteContractIds(peer: Peer): Promise<string[]> {
    const ids: string[] = [];
    for (let after = Buffer.alloc(0); ; ) {
      const page = await this.retries.ask(peer, 'GetContractIds', { after });
      const got = page.contract_ids.map(hex);
      // A page must move forward, each id above the one before it (the first above the last
      // taken): a page whose last id is below the last taken would send the next request
      // back over the same ids, forever. (What this does not bound: a peer inventing new
      // ascending ids page after page; the list has no size limit of its own.)
      if (got.length === 0 || got.some((id, i) => id <= (i === 0 ? (ids[ids.length - 1] ?? '') : (got[i - 1] ?? '')))) break;
      ids.push(...got);
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

  /** The txids of a contract this node holds nothing of: the peer's list, page by page (deploy first, chain order). */
  async listedTxids(peer: Peer, contractId: string): Promise<string[]> {
    const out: string[] = [];
    for (let offset = 0; ; ) {
      const page = await this.retries.ask(peer, 'GetContractTxids', { contract_id: Buffer.from(contractId, 'hex'), offset });
      const got = page.txids.map(hex);
      out.push(...got);
      offset += got.length;
      if (!page.more || got.length === 0) return out;
    }
  }
}

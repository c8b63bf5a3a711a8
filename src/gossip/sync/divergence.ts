/**
 * Divergence detection and what follows it.
 *
 * Detection: compare the per-block state roots both nodes hold (GetStateRoots). If they
 * differ at the highest common height with the same block hash, bisect over heights to
 * the first differing block; log it and show it in node_status.
 *
 * After a divergence (and the payload sync that follows it): wait for the writer's
 * replays, compare the same height again. Equal: resolved by re-sync. Still different
 * with equal payload sets: re-derive the local state from the journal; if the replay
 * disagrees with the stored roots the ledger halts (a consensus halt). Otherwise this
 * node is consistent with its own payloads and the peer is not trusted.
 */
import { STATE_ROOT_VERSION } from '@svc-node/protocol/state/decisions';
import { hex } from '../wire.js';
import type { Peer } from '../peers.js';
import type { DivergenceReport, StateRootRange } from '../../messages/gossip.js';
import type { ContractSets } from './contract-sets.js';
import type { SyncDeps } from './deps.js';
import type { Retries } from './retries.js';

interface RootAt {
  height: number;
  block_hash: string;
  state_root: string;
}

export class DivergenceCheck {
  /** The last divergence found with any peer (node_status), its outcome updated as it is followed up. */
  report: DivergenceReport | null = null;
  /** Per peer, the divergence already checked by a local re-derivation (not repeated). */
  private readonly verified = new Map<string, string>();
  /** Peers already logged as publishing roots of another version. */
  private readonly otherRootVersion = new Set<string>();

  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
    private readonly contracts: ContractSets,
  ) {}

  private async remoteRoots(peer: Peer, from: number, to: number): Promise<StateRootRange & { root_version: number }> {
    const r = await this.retries.ask(peer, 'GetStateRoots', { from_height: String(from), to_height: String(to) });
    const tip = Number(r.tip_height);
    return {
      roots: r.roots.map((x) => ({ height: Number(x.height), block_hash: hex(x.block_hash), state_root: hex(x.state_root) })),
      anchor_height: tip > 0 ? Number(r.anchor_height) : null,
      tip_height: tip > 0 ? tip : null,
      // Absent (0): a node of an earlier release, whose roots are of version 1.
      root_version: r.root_version || 1,
    };
  }

  private async rootsAt(peer: Peer, h: number): Promise<{ l: RootAt | undefined; r: RootAt | undefined }> {
    const [l, r] = await Promise.all([this.d.core().call('peerStateRoots', { from: h, to: h }), this.remoteRoots(peer, h, h)]);
    return { l: l.roots[0], r: r.roots[0] };
  }

  /** Same block, different state root. */
  private static differ(x: { l: RootAt | undefined; r: RootAt | undefined }): boolean {
    return !!x.l && !!x.r && x.l.block_hash === x.r.block_hash && x.l.state_root !== x.r.state_root;
  }

  /** Finds the first height where this node and the peer disagree, by bisection. */
  async check(peer: Peer): Promise<DivergenceReport | null> {
    const [local, remote] = await Promise.all([this.d.core().call('peerStateRoots', { from: 0, to: 0 }), this.remoteRoots(peer, 0, 0)]);
    // Roots that commit to other things differ without any divergence of state: not compared.
    if (remote.root_version !== STATE_ROOT_VERSION) {
      if (!this.otherRootVersion.has(peer.url)) this.d.log.info('peer publishes state roots of another version: not compared', { peer: peer.url, peer_root_version: remote.root_version, root_version: STATE_ROOT_VERSION });
      this.otherRootVersion.add(peer.url);
      return null;
    }
    if (local.anchor_height === null || local.tip_height === null || remote.anchor_height === null || remote.tip_height === null) return null;
    const lo = Math.max(local.anchor_height, remote.anchor_height);
    const hi = Math.min(local.tip_height, remote.tip_height);
    if (hi < lo) return null;
    const top = await this.rootsAt(peer, hi);
    if (!DivergenceCheck.differ(top)) return null;
    // Invariant: `good` agrees (or is below the common range), `bad` differs.
    let good = lo - 1;
    let bad = hi;
    let steps = 0;
    while (bad - good > 1) {
      const mid = good + Math.floor((bad - good) / 2);
      const m = await this.rootsAt(peer, mid);
      steps++;
      if (DivergenceCheck.differ(m)) bad = mid;
      else good = mid;
    }
    const first = bad === hi ? top : await this.rootsAt(peer, bad);
    const report: DivergenceReport = {
      peer: peer.url,
      height: bad,
      block_hash: first.l!.block_hash,
      local_root: first.l!.state_root,
      peer_root: first.r!.state_root,
      detected_at: new Date().toISOString(),
      resolved: false,
      outcome: 'pending',
    };
    this.d.log.warn('state divergence', { peer: peer.url, height: bad, block_hash: report.block_hash, local_root: report.local_root, peer_root: report.peer_root, bisect_steps: steps, common_range: [lo, hi] });
    this.report = report;
    this.d.changed();
    return report;
  }

  /** Follows up a divergence found this round, once the round's payloads were fetched. */
  async after(peer: Peer, div: DivergenceReport): Promise<void> {
    const core = this.d.core();
    await core.call('peerSettle', {});
    const again = await this.rootsAt(peer, div.height);
    if (!DivergenceCheck.differ(again)) {
      div.resolved = true;
      div.outcome = 'resynced';
      this.d.log.info('divergence resolved by re-sync', { peer: peer.url, height: div.height, state_root: again.l?.state_root ?? null });
      this.d.changed();
      return;
    }
    const diff = await this.contracts.diff(peer);
    const localOnly = Object.keys(diff.localSets).filter((id) => !diff.remoteIds.includes(id));
    if (diff.differing.length > 0 || localOnly.length > 0) {
      div.outcome = 'peer holds other payloads';
      this.d.log.warn('divergence persists: the peer holds other payloads', { peer: peer.url, height: div.height, contracts_differing: diff.differing.length + localOnly.length });
      this.d.changed();
      return;
    }
    const sig = `${div.height}:${again.l!.state_root}:${again.r!.state_root}`;
    if (this.verified.get(peer.url) === sig) {
      div.outcome = 'local replay agrees with stored state';
      return;
    }
    this.verified.set(peer.url, sig);
    this.d.log.warn('divergence with equal payloads: re-deriving local state to check it', { peer: peer.url, height: div.height });
    const v = await core.call('peerVerifyReplay', {});
    div.outcome = v.halted ? 'halted' : 'local replay agrees with stored state';
    if (v.halted) this.d.log.error('local replay disagrees with stored state: node halted', { peer: peer.url, height: div.height, halt_reason: v.halt_reason });
    else this.d.log.warn('divergence persists: local replay agrees with stored state; the peer is not trusted', { peer: peer.url, height: div.height });
    this.d.changed();
  }
}

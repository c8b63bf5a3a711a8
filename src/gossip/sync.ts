/**
 * Merkle-diff sync and divergence detection (issue 8), one peer at a time, at startup and
 * every peer_sync_interval_s:
 *
 * 1. Divergence: compare the per-block state roots both nodes hold (GetStateRoots). If
 *    they differ at the highest common height with the same block hash, bisect over
 *    heights to the first differing block; log it and show it in node_status.
 * 2. Payloads: page through the peer's contract ids and compare each contract's whole
 *    payload set (count and fingerprint, GetContractRanges); for each that differs, find
 *    the txids missing here by range-based reconciliation (reconcile.ts), or page through
 *    the peer's txid list when this node holds nothing of the contract, and fetch only
 *    those (GetPayloadByTxid). Every fetched payload goes through the core's intake, the
 *    REST checks against Bitcoin; deploys first (a call to an unknown contract is
 *    refused), then calls in the peer's claimed chain order (a hint; the ledger orders by
 *    the chain itself and replays late payloads from their block).
 * 3. After a divergence: wait for the writer's replays, compare the same height again.
 *    Equal: resolved by re-sync. Still different with equal payload sets: re-derive the
 *    local state from the journal; if the replay disagrees with the stored roots the
 *    ledger halts (a consensus halt). Otherwise this node is consistent with its own
 *    payloads and the peer is not trusted.
 */
import PQueue from 'p-queue';
import { NodeError } from '../errors.js';
import { fromProtoPayload, hex, submitBatches, toProtoPayload } from './wire.js';
import { reconcile, type AskRanges } from './reconcile.js';
import { GET_PAYLOADS_MAX, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES } from './limits.js';
import type { Peer, PeerSet } from './peers.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi, DivergenceReport, GossipCounters, StateRootRange, WirePayload } from '../messages.js';
import type { Logger } from '../log.js';
import { refusalIsRetryable } from '../protocol/rules.js';

/**
 * Payloads intake refused, remembered so sync does not fetch them again every round: an
 * intrinsic refusal (src/protocol/rules.ts) for good, a retryable one (the anchor not
 * visible at this node's endpoint, the node overloaded) again after 1, 2, 4 ... up to
 * REFUSED_BACKOFF_MAX rounds. At most REFUSED_MAX txids (oldest forgotten first): enough
 * for any honest peer set; a peer that lists junk costs one fetch per txid per backoff.
 */
const REFUSED_MAX = 100_000;
/** 64 rounds of the default 5-minute sync: a retryable refusal is retried at least every ~5 h. */
const REFUSED_BACKOFF_MAX = 64;

/**
 * Payloads fetched, then applied in chain order, per step: bounds what a sync holds in
 * memory (payloads are at most 64 KiB, typically a few hundred bytes) while keeping the
 * chain-order hint over large steps.
 */
const SYNC_CHUNK = 4096;

interface Missing {
  txid: string;
  contract_id: string;
}

interface RootAt {
  height: number;
  block_hash: string;
  state_root: string;
}

export interface SyncDeps {
  core: () => RpcClient<CoreApi>;
  peers: PeerSet;
  counters: GossipCounters;
  concurrency: number;
  log: Logger;
  /** A payload this node now holds (for the seen set). */
  stored: (p: WirePayload) => void;
  /** Something node_status shows changed. */
  changed: () => void;
}

export interface PeerSyncResult {
  differing: number;
  fetched: number;
  applied: number;
  /** Payloads the peer lacked, sent to it and accepted there. */
  pushed: number;
  divergence: DivergenceReport | null;
}


export class SyncEngine {
  divergence: DivergenceReport | null = null;
  private running: Promise<void> | null = null;
  /** Per peer, the divergence already checked by a local re-derivation (not repeated). */
  private readonly verified = new Map<string, string>();
  /** Sync rounds started (the clock of `refused`). */
  private roundNo = 0;
  /** Refused txids: retried from round `next` (never when intrinsic); `wait` doubles per refusal. */
  private readonly refused = new Map<string, { next: number; wait: number; code: string }>();

  /** Whether sync should fetch `txid` now (not refused, or its backoff is over). */
  private worthFetching(txid: string): boolean {
    const r = this.refused.get(txid);
    return !r || (refusalIsRetryable(r.code) && this.roundNo >= r.next);
  }

  private noteRefused(txid: string, code: string): void {
    const prev = this.refused.get(txid);
    const wait = prev ? Math.min(prev.wait * 2, REFUSED_BACKOFF_MAX) : 1;
    this.refused.delete(txid); // re-inserted last: the Map's order is the eviction order
    this.refused.set(txid, { next: this.roundNo + wait, wait, code });
    if (this.refused.size > REFUSED_MAX) this.refused.delete(this.refused.keys().next().value!);
  }

  /** Refused txids sync currently skips (node_status, tests). */
  get refusedCount(): number {
    let n = 0;
    for (const txid of this.refused.keys()) if (!this.worthFetching(txid)) n++;
    return n;
  }

  constructor(private readonly d: SyncDeps) {}

  /** One sync with every peer in turn; a round already running is joined, not doubled. */
  round(): Promise<void> {
    this.running ??= (async () => {
      // Yield first, so `running` is set before the finally below can clear it.
      await Promise.resolve();
      this.roundNo++;
      try {
        for (const peer of this.d.peers.all()) {
          try {
            await this.syncWith(peer);
          } catch (e) {
            this.d.peers.failed(peer);
            this.d.log.debug('peer sync failed', { peer: peer.url, error: (e as Error).message });
          }
        }
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async syncWith(peer: Peer): Promise<PeerSyncResult> {
    const divergence = await this.checkRoots(peer);
    const t0 = performance.now();
    const r = await this.syncPayloads(peer);
    const payloadMs = Math.round(performance.now() - t0);
    if (divergence) await this.afterDivergence(peer, divergence);
    this.d.counters.sync_rounds++;
    this.d.peers.ok(peer);
    this.d.changed();
    if (r.fetched > 0 || r.differing > 0 || divergence) {
      this.d.log.info('peer sync done', { peer: peer.url, contracts_differing: r.differing, payloads_fetched: r.fetched, payloads_applied: r.applied, payloads_pushed: r.pushed, payload_ms: payloadMs, divergence_height: divergence?.height ?? null });
    }
    return { ...r, divergence };
  }

  // ------------------------------------------------------------ state roots

  private async remoteRoots(peer: Peer, from: number, to: number): Promise<StateRootRange> {
    const r = await peer.client.call('GetStateRoots', { from_height: String(from), to_height: String(to) });
    const tip = Number(r.tip_height);
    return {
      roots: r.roots.map((x) => ({ height: Number(x.height), block_hash: hex(x.block_hash), state_root: hex(x.state_root) })),
      anchor_height: tip > 0 ? Number(r.anchor_height) : null,
      tip_height: tip > 0 ? tip : null,
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
  async checkRoots(peer: Peer): Promise<DivergenceReport | null> {
    const [local, remote] = await Promise.all([this.d.core().call('peerStateRoots', { from: 0, to: 0 }), this.remoteRoots(peer, 0, 0)]);
    if (local.anchor_height === null || local.tip_height === null || remote.anchor_height === null || remote.tip_height === null) return null;
    const lo = Math.max(local.anchor_height, remote.anchor_height);
    const hi = Math.min(local.tip_height, remote.tip_height);
    if (hi < lo) return null;
    const top = await this.rootsAt(peer, hi);
    if (!SyncEngine.differ(top)) return null;
    // Invariant: `good` agrees (or is below the common range), `bad` differs.
    let good = lo - 1;
    let bad = hi;
    let steps = 0;
    while (bad - good > 1) {
      const mid = good + Math.floor((bad - good) / 2);
      const m = await this.rootsAt(peer, mid);
      steps++;
      if (SyncEngine.differ(m)) bad = mid;
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
    this.divergence = report;
    this.d.changed();
    return report;
  }

  private async afterDivergence(peer: Peer, div: DivergenceReport): Promise<void> {
    const core = this.d.core();
    await core.call('peerSettle', {});
    const again = await this.rootsAt(peer, div.height);
    if (!SyncEngine.differ(again)) {
      div.resolved = true;
      div.outcome = 'resynced';
      this.d.log.info('divergence resolved by re-sync', { peer: peer.url, height: div.height, state_root: again.l?.state_root ?? null });
      this.d.changed();
      return;
    }
    const diff = await this.diffContracts(peer);
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

  // ------------------------------------------------------------ payloads

  /** Every contract id the peer knows, page by page. */
  private async remoteContractIds(peer: Peer): Promise<string[]> {
    const ids: string[] = [];
    for (let after = Buffer.alloc(0); ; ) {
      const page = await peer.client.call('GetContractIds', { after });
      const got = page.contract_ids.map(hex);
      // A page must move forward, or a peer could keep this loop going forever.
      if (got.length === 0 || (ids.length > 0 && got[0]! <= ids[ids.length - 1]!)) break;
      ids.push(...got);
      if (!page.more) break;
      after = Buffer.from(got[got.length - 1]!, 'hex');
    }
    return ids;
  }

  /** The peer's answers to range questions about a contract, in the local (hex) form. */
  private remoteRanges(peer: Peer, contractId: string): AskRanges {
    return async (ranges) => {
      const r = await peer.client.call('GetContractRanges', {
        contract_id: Buffer.from(contractId, 'hex'),
        ranges: ranges.map((q) => ({ lower: Buffer.from(q.lower, 'hex'), upper: Buffer.from(q.upper, 'hex'), list_up_to: q.list_up_to })),
      });
      return r.ranges.map((a) => ({ count: a.count, fingerprint: a.listed ? '' : hex(a.fingerprint), txids: a.listed ? a.txids.map(hex) : null }));
    };
  }

  /** Contracts whose whole payload set (count and fingerprint) differs from the peer's. */
  private async diffContracts(
    peer: Peer,
  ): Promise<{ differing: string[]; remoteIds: string[]; localSets: Record<string, { count: number; fingerprint: string }>; remoteCounts: Map<string, number> }> {
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
  private async listedTxids(peer: Peer, contractId: string): Promise<string[]> {
    const out: string[] = [];
    for (let offset = 0; ; ) {
      const page = await peer.client.call('GetContractTxids', { contract_id: Buffer.from(contractId, 'hex'), offset });
      const got = page.txids.map(hex);
      out.push(...got);
      offset += got.length;
      if (!page.more || got.length === 0) return out;
    }
  }

  async syncPayloads(peer: Peer): Promise<{ differing: number; fetched: number; applied: number; pushed: number }> {
    const core = this.d.core();
    const c = this.d.counters;
    const { differing, localSets, remoteCounts } = await this.diffContracts(peer);
    c.sync_contracts_differing += differing.length;
    const missing: Missing[] = [];
    const theyLack: string[] = [];
    for (const id of differing) {
      const mine = localSets[id]?.count ?? 0;
      if (mine > 0) {
        // One descent finds both sides' differences.
        const r = await reconcile((ranges) => core.call('peerRanges', { contract_id: id, ranges }), this.remoteRanges(peer, id), this.d.concurrency);
        for (const txid of r.missing) if (this.worthFetching(txid)) missing.push({ txid, contract_id: id });
        // A peer holding under half of this node's set is catching up: it pulls them itself,
        // in chain order (fewer replays), rather than receiving the same payloads twice.
        if ((remoteCounts.get(id) ?? 0) * 2 >= mine) theyLack.push(...r.theyLack);
      } else {
        // Nothing held here: the peer's list in its chain order.
        for (const txid of await this.listedTxids(peer, id)) if (this.worthFetching(txid)) missing.push({ txid, contract_id: id });
      }
    }
    let fetched = 0;
    let applied = 0;
    for (let i = 0; i < missing.length; i += SYNC_CHUNK) {
      const r = await this.fetchAndApply(peer, missing.slice(i, i + SYNC_CHUNK));
      fetched += r.fetched;
      applied += r.applied;
    }
    let pushed = 0;
    for (let i = 0; i < theyLack.length; i += SYNC_CHUNK) pushed += await this.push(peer, theyLack.slice(i, i + SYNC_CHUNK));
    return { differing: differing.length, fetched, applied, pushed };
  }

  /**
   * Sends the peer payloads it lacks (SubmitPayload batches, as gossip does): the peer's
   * intake checks them as any other. Answers how many the peer accepted.
   */
  private async push(peer: Peer, txids: string[]): Promise<number> {
    const core = this.d.core();
    const held = (await Promise.all(txids.map((txid) => core.call('peerPayload', { txid })))).filter((p) => p !== null);
    let accepted = 0;
    const q = new PQueue({ concurrency: this.d.concurrency });
    await Promise.all(
      // The forwarder's bound: one message's framing below the peer's receive limit.
      submitBatches(held.map((p) => p.payload), MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES - 512).map((batch) =>
        q.add(async () => {
          const r = await peer.client.call('SubmitPayload', { payloads: batch.map(toProtoPayload) });
          accepted += r.results.filter((x) => x.accepted).length;
        }),
      ),
    );
    return accepted;
  }

  /** Payloads by txid from the peer (GetPayloads, GET_PAYLOADS_MAX a request, re-asking what an answer did not cover). */
  private async fetchMany(peer: Peer, missing: Missing[]): Promise<{ p: WirePayload; height: number | null; tx_index: number }[]> {
    const want = new Map(missing.map((m) => [m.txid, m]));
    const out: { p: WirePayload; height: number | null; tx_index: number }[] = [];
    const q = new PQueue({ concurrency: this.d.concurrency });
    const askFrom = async (list: Missing[]): Promise<void> => {
      for (let rest = list; rest.length > 0; ) {
        const r = await peer.client.call('GetPayloads', { txids: rest.map((m) => Buffer.from(m.txid, 'hex')) });
        const answered = r.answered;
        const covered = new Set(rest.slice(0, answered).map((m) => m.txid));
        for (const f of r.payloads) {
          try {
            const p = fromProtoPayload(f.payload);
            const m = want.get(p.txid);
            if (!m || !covered.has(p.txid) || (p.kind === 'call' && p.contract_id !== m.contract_id)) throw new NodeError('bad_request', `peer answered a payload not asked for: ${p.txid}`);
            covered.delete(p.txid);
            const height = f.position && f.position.height > 0 ? f.position.height : null;
            out.push({ p, height, tx_index: height === null ? 0 : f.position!.tx_index });
            this.d.counters.sync_payloads_fetched++;
          } catch (e) {
            this.d.log.debug('sync fetch failed', { peer: peer.url, error: (e as Error).message });
          }
        }
        // An answer that covers nothing would loop forever: the rest waits for the next round.
        if (answered === 0) return;
        rest = rest.slice(answered);
      }
    };
    const chunks: Missing[][] = [];
    for (let i = 0; i < missing.length; i += GET_PAYLOADS_MAX) chunks.push(missing.slice(i, i + GET_PAYLOADS_MAX));
    await Promise.all(chunks.map((ch) => q.add(() => askFrom(ch).catch((e: unknown) => this.d.log.debug('sync fetch failed', { peer: peer.url, error: (e as Error).message })))));
    return out;
  }

  /**
   * Fetches payloads (with the peer's position for each, a hint) and applies them: deploy
   * registrations first, one at a time (a call to an unknown contract is refused); then
   * calls in the peer's chain order, confirmed ones sequentially (fewer replays), pending
   * ones concurrently.
   */
  private async fetchAndApply(peer: Peer, missing: Missing[]): Promise<{ fetched: number; applied: number }> {
    const core = this.d.core();
    const c = this.d.counters;
    const ready = await this.fetchMany(peer, missing);
    // Deploys first whatever the peer's order; then chain order.
    let applied = 0;
    const apply = async (p: WirePayload): Promise<void> => {
      try {
        const r = await core.call('peerSubmit', { payload: p });
        this.refused.delete(p.txid);
        this.d.stored(p);
        if (r.created) {
          applied++;
          c.sync_payloads_applied++;
        }
      } catch (e) {
        const code = e instanceof NodeError ? e.code : 'internal';
        this.noteRefused(p.txid, code);
        this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code, reason: (e as Error).message });
      }
    };
    const deploys = ready.filter((x) => x.p.kind === 'deploy');
    const calls = ready.filter((x) => x.p.kind === 'call');
    const confirmed = calls.filter((x) => x.height !== null).sort((a, b) => a.height! - b.height! || a.tx_index - b.tx_index);
    const pending = calls.filter((x) => x.height === null);
    for (const x of deploys) await apply(x.p);
    const applyQ = new PQueue({ concurrency: this.d.concurrency });
    const pendingDone = Promise.all(pending.map((x) => applyQ.add(() => apply(x.p))));
    for (const x of confirmed) await apply(x.p);
    await pendingDone;
    return { fetched: ready.length, applied };
  }
}

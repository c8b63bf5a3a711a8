/**
 * Header sync, Merkle-diff sync and divergence detection (issues 8 and 26), one peer at a
 * time, at startup with each peer as it turns active (its first heartbeat answered) and
 * with every active peer each peer_sync_interval_s. A peer that has not
 * answered a heartbeat is not synced with: one that hangs would hold the syncs behind it
 * (and a light node's first blocks) until the request deadline.
 *
 * 0. Headers (a light node): when the peer's verified header chain is above this node's,
 *    pull it in pages (GetHeaders) and hand runs of up to HEADER_RUN_MAX headers to the
 *    core (ChainFollower.submitHeaders: linkage, proof of work, and the chain-data
 *    endpoint naming the run's top: one request per run). A run that does not verify or
 *    does not end in the endpoint's block is refused and counted against the peer.
 * 1. Divergence: compare the per-block state roots both nodes hold (GetStateRoots). If
 *    they differ at the highest common height with the same block hash, bisect over
 *    heights to the first differing block; log it and show it in node_status.
 * 2. Payloads: page through the peer's contract ids and compare each contract's whole
 *    payload set (count and fingerprint, GetContractRanges); for each that differs, find
 *    the txids missing here by range-based reconciliation (reconcile.ts), or page through
 *    the peer's txid list when this node holds nothing of the contract, and fetch only
 *    those (GetPayloads), with their Bitcoin evidence. Every fetched payload goes through
 *    the core's intake, the REST checks, with the evidence checked locally against the
 *    node's header chain (no endpoint request when the peer sent the anchor); payloads
 *    are taken as their answers arrive, concurrently, a contract's deploy before its calls
 *    (a call to an unknown contract is refused). Order does not matter otherwise: the
 *    evidence places each payload in the chain; but a peer's lists come in chain order,
 *    so after each chunk the core hears the height through which every listed payload is
 *    taken (delivered.ts), and a light node's first sync applies blocks up to there
 *    while it fetches the rest. Evidence that does not hold
 *    (`bad_evidence`) is counted against the peer, and the payload is taken from another.
 * 2b. Evidence of this node's own pending payloads (GetPayloads for their txids): what the
 *    peer places or drops is checked the same way and kept (Writer.takeEvidence), which
 *    saves the deferred endpoint checks.
 * 3. After a divergence: wait for the writer's replays, compare the same height again.
 *    Equal: resolved by re-sync. Still different with equal payload sets: re-derive the
 *    local state from the journal; if the replay disagrees with the stored roots the
 *    ledger halts (a consensus halt). Otherwise this node is consistent with its own
 *    payloads and the peer is not trusted.
 */
import PQueue from 'p-queue';
import { STATE_ROOT_VERSION } from '@svc-node/protocol/state/decisions';
import { fromWire, NodeError, type WireError } from '@svc-node/protocol/errors';
import { fromProtoPayload, hex, submitBatches, toProtoPayload } from './wire.js';
import { packPayload, unpackPayload } from '../packed-payload.js';
import { reconcile, type AskRanges } from './reconcile.js';
import { DeliveredThrough, interleave } from './delivered.js';
import { GET_HEADERS_MAX, GET_PAYLOADS_MAX, LIST_CONCURRENCY, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES, PAYLOADS_PER_CORE_CALL, SYNC_APPLY_CONCURRENCY, SYNC_SUBMIT_BATCH } from './limits.js';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import type { Peer, PeerSet } from './peers.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi, DivergenceReport, GossipCounters, StateRootRange, WirePayload } from '../messages.js';
import type { Logger } from '../log.js';
import * as grpc from '@grpc/grpc-js';
import { RpcFailure } from './client.js';
import type { GetPayloadsResponse, PeerRequest, PeerResponse, WireInit } from './wire-types.js';
import type { PeerMethod } from './server.js';
import { refusalIsRetryable } from '@svc-node/protocol/rules';

/** Refusals of what a peer's copy came with, not of the payload: filed per peer, retried after the backoff. */
const EVIDENCE_REFUSALS: ReadonlySet<string> = new Set(['bad_evidence', 'bad_coin', 'coin_missing']);

/**
 * Payloads intake refused, remembered so sync does not fetch them again every round: an
 * intrinsic refusal (packages/protocol/src/rules.ts) for good, a retryable one (the anchor not
 * visible at this node's endpoint, the node overloaded) again after 1, 2, 4 ... up to
 * REFUSED_BACKOFF_MAX rounds. At most REFUSED_MAX txids (oldest forgotten first): enough
 * for any honest peer set; a peer that lists junk costs one fetch per txid per backoff.
 */
const REFUSED_MAX = 100_000;
/** 64 rounds of the default 5-minute sync: a retryable refusal is retried at least every ~5 h. */
const REFUSED_BACKOFF_MAX = 64;

/**
 * Tries of one sync request that fails transiently (the peer out of its list or fetch
 * budget, LIST_RATE_PER_S and FETCH_RATE_PER_S, or unreachable for a moment) before the sync with the peer goes on
 * without it, the first retry after FETCH_RETRY_MS and each next after twice as long
 * (0.5, 1, 2 s); a request past its deadline is asked once more (DEADLINE_RETRIES), so a
 * peer that hangs holds the sync two deadlines, not four. Without retries a payload the
 * first sync leaves out arrives after its block and replays the chain from there: 2 of
 * 118 GetPayloads of a 30,000-payload catch-up failed, and a 100,000-payload one lost its
 * whole first sync to one txid page past its deadline, then re-derived ~52,000 blocks
 * per late batch.
 */
const FETCH_ATTEMPTS = 4;
const FETCH_RETRY_MS = 500;
const DEADLINE_RETRIES = 1;

/** Whether a sync request that failed with `e` after `failures` tries (counting this one) is asked again. */
function askAgain(e: unknown, failures: number): boolean {
  if (!(e instanceof RpcFailure) || failures >= FETCH_ATTEMPTS) return false;
  if (e.grpcCode === grpc.status.DEADLINE_EXCEEDED) return failures <= DEADLINE_RETRIES;
  return e.grpcCode === grpc.status.RESOURCE_EXHAUSTED || e.grpcCode === grpc.status.UNAVAILABLE;
}

/**
 * Payloads fetched and applied per step: bounds what a sync holds in memory (payloads are
 * at most 64 KiB, typically a few hundred bytes, with evidence under 1 KiB more).
 */
const SYNC_CHUNK = 4096;

/**
 * Headers per run handed to the core: ten GetHeaders pages (1.6 MB). Each run costs one
 * endpoint request (its top is authenticated), so a year of blocks (52,560) is 3
 * requests; longer runs would save little and hold more in memory.
 */
const HEADER_RUN_MAX = 10 * GET_HEADERS_MAX;

/**
 * A peer's run ends this many blocks below its header tip: the endpoint authenticates the
 * top, and the last few blocks are where an honest peer and the endpoint may differ for a
 * while (a block found at once by two miners, a tip the endpoint has not seen yet). Six
 * blocks are where Bitcoin's settlement convention puts a reorganisation out of reach;
 * the light follower's own poll of the ten newest blocks brings the rest in one request.
 */
const HEADER_RUN_TIP_MARGIN = 6;

/**
 * Pending payloads of this node whose evidence is asked of each peer per round: 16
 * GetPayloads requests (the list budget allows 10 a second), taken in txid order from a
 * cursor that goes round, so a large pending set is covered over several rounds.
 */
const PENDING_EVIDENCE_PER_ROUND = 16 * GET_PAYLOADS_MAX;

/**
 * A peer advertising a processed height more than this many blocks below this node's is
 * catching up, and payload sets are not compared with it (SyncEngine.catchingUp): the
 * journal's undo window, far more than two nodes following the same chain ever differ
 * by, far less than a catch-up.
 */
const CATCHING_UP_BLOCKS = 144;

/** A peer refused for a false answer is not asked for headers for 1, 2, 4 ... up to this many rounds. */
const FALSE_ANSWER_BACKOFF_MAX = 64;

interface Missing {
  txid: string;
  contract_id: string;
}

/** A fetched payload and the entry of the missing list it answers. */
interface Fetched {
  p: WirePayload;
  m: Missing;
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
  /** A sync with one peer completed (the first one tells the core its peers have been heard). */
  synced?: () => void;
  /** This node's processed height as its heartbeats last advertised it (null: not known); decides pushes. */
  localHeight?: () => number | null;
}

export interface PeerSyncResult {
  /** Headers taken from the peer (authenticated runs). */
  headers: number;
  /** Evidence of this node's pending payloads taken from the peer. */
  evidence: number;
  differing: number;
  fetched: number;
  applied: number;
  /** Payloads the peer lacked, sent to it and accepted there. */
  pushed: number;
  divergence: DivergenceReport | null;
}


export class SyncEngine {
  divergence: DivergenceReport | null = null;
  /** The last sync queued: syncs run one after another (two at once would fetch the same payloads twice). */
  private tail: Promise<void> = Promise.resolve();
  /** The full round queued or running (`round`), joined by a second call. */
  private running: Promise<void> | null = null;
  /** Peers that turned active, synced with by the queued `draining` job. */
  private readonly arrived = new Set<Peer>();
  private draining: Promise<void> | null = null;
  /** Per peer, the divergence already checked by a local re-derivation (not repeated). */
  private readonly verified = new Map<string, string>();
  /** Sync rounds started (the clock of `refused`). */
  private roundNo = 0;
  /**
   * Refused txids: retried from round `next` (never when intrinsic); `wait` doubles per
   * refusal. A payload refused for the evidence a peer sent with it (`bad_evidence`) is
   * filed under "<peer url> <txid>": that peer's copy waits out its backoff, another
   * peer's copy is fetched at once.
   */
  private readonly refused = new Map<string, { next: number; wait: number; code: string }>();
  /** Per peer url: header sync with it waits until round `next` after a false run. */
  private readonly falseHeaders = new Map<string, { next: number; wait: number }>();
  /** Where the next round's look for evidence of this node's pending payloads starts (txid order). */
  private pendingCursor = '';
  /** Txids fetched this round (they came with their evidence: not asked for it again). */
  private fetchedThisRound = new Set<string>();

  /** Whether a refusal filed under `key` keeps it from being fetched this round. */
  private waiting(key: string): boolean {
    const r = this.refused.get(key);
    if (!r) return false;
    // bad_evidence is filed per peer only, and that peer's copy is asked again after its
    // backoff (its evidence may have named a block of a branch this node left since); so
    // are the coin refusals of what a peer's copy came with (bad_coin, coin_missing).
    const retryable = EVIDENCE_REFUSALS.has(r.code) || refusalIsRetryable(r.code);
    return !retryable || this.roundNo < r.next;
  }

  /** Whether sync should fetch `txid` (from `peer`) now: not refused, or its backoff is over. */
  private worthFetching(txid: string, peer?: Peer): boolean {
    return !this.waiting(txid) && !(peer && this.waiting(`${peer.url} ${txid}`));
  }

  private noteRefused(key: string, code: string): void {
    const prev = this.refused.get(key);
    const wait = prev ? Math.min(prev.wait * 2, REFUSED_BACKOFF_MAX) : 1;
    this.refused.delete(key); // re-inserted last: the Map's order is the eviction order
    this.refused.set(key, { next: this.roundNo + wait, wait, code });
    if (this.refused.size > REFUSED_MAX) this.refused.delete(this.refused.keys().next().value!);
  }

  /** A peer answered something false (a header run, evidence): counted, logged, and the peer marked failed. */
  private falseAnswer(peer: Peer, what: string, e: NodeError): void {
    this.d.counters.sync_bad_evidence++;
    this.d.peers.failed(peer);
    this.d.log.warn('peer sent false evidence', { peer: peer.url, what, reason: e.message });
  }

  /** Refused txids sync currently skips (node_status, tests). */
  get refusedCount(): number {
    let n = 0;
    for (const key of this.refused.keys()) if (this.waiting(key)) n++;
    return n;
  }

  constructor(private readonly d: SyncDeps) {}

  /**
   * One sync with every active peer in turn, fewest failures first; a round already
   * queued or running is joined, not doubled.
   */
  round(): Promise<void> {
    this.running ??= this.enqueue(async () => {
      this.roundNo++;
      this.fetchedThisRound = new Set();
      const peers = this.d.peers;
      await this.syncEach(peers.all().filter((p) => peers.isActive(p)).sort((a, b) => a.failures - b.failures));
    }).finally(() => (this.running = null));
    return this.running;
  }

  /**
   * A peer turned active (its first heartbeat answered): sync with it once the syncs
   * queued before have ended, not at the next round.
   */
  peerActive(peer: Peer): void {
    this.arrived.add(peer);
    this.draining ??= this.enqueue(async () => {
      // From here on, a peer that turns active queues another job.
      this.draining = null;
      const peers = this.d.peers;
      const late = [...this.arrived].filter((p) => peers.isActive(p) && peers.all().includes(p));
      this.arrived.clear();
      await this.syncEach(late);
    });
  }

  /** Settles when every sync queued so far (and any queued meanwhile) has ended. */
  async idle(): Promise<void> {
    for (let seen = this.tail; ; seen = this.tail) {
      await seen;
      if (seen === this.tail) return;
    }
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    const p = this.tail.then(job);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private async syncEach(order: Peer[]): Promise<void> {
    for (const peer of order) {
      try {
        await this.syncWith(peer);
        this.d.synced?.();
      } catch (e) {
        this.d.peers.failed(peer);
        this.d.log.info('peer sync failed', { peer: peer.url, error: (e as Error).message });
      }
    }
  }

  async syncWith(peer: Peer): Promise<PeerSyncResult> {
    // Headers first: the evidence of the payloads that follow is checked against them.
    const headers = await this.syncHeaders(peer);
    const divergence = await this.checkRoots(peer);
    const t0 = performance.now();
    const r = await this.syncPayloads(peer);
    const payloadMs = Math.round(performance.now() - t0);
    if (divergence) await this.afterDivergence(peer, divergence);
    const evidence = await this.pendingEvidence(peer);
    this.d.counters.sync_rounds++;
    this.d.peers.ok(peer);
    this.d.changed();
    if (r.fetched > 0 || r.differing > 0 || divergence || headers > 0 || evidence > 0) {
      this.d.log.info('peer sync done', {
        peer: peer.url,
        headers_taken: headers,
        contracts_differing: r.differing,
        payloads_fetched: r.fetched,
        payloads_applied: r.applied,
        payloads_pushed: r.pushed,
        payload_ms: payloadMs,
        evidence_taken: evidence,
        divergence_height: divergence?.height ?? null,
      });
    }
    return { ...r, headers, evidence, divergence };
  }

  // ------------------------------------------------------------ headers

  /**
   * Pulls the peer's verified headers above this node's header tip, in runs the core
   * verifies and authenticates (one endpoint request each); answers how many were taken.
   * Only a light node takes them. A run that is refused (`bad_evidence`) is counted
   * against the peer, whose headers are then not asked for 1, 2, 4 ... rounds, and ends
   * this round's sync with it (the error is thrown on); one that
   * does not link to this node's chain (the peer is on another branch, or this node's tip
   * is) ends header sync with it for this round; an endpoint failure likewise, without
   * blame; payload sync goes on then.
   */
  async syncHeaders(peer: Peer): Promise<number> {
    const core = this.d.core();
    const local = await core.call('peerHeaderState', {});
    if (!local.takesHeaders || local.anchor === null) return 0;
    const backoff = this.falseHeaders.get(peer.url);
    if (backoff && this.roundNo < backoff.next) return 0;
    let from = Math.max(local.tip ?? local.anchor, local.anchor) + 1;
    let taken = 0;
    const pages = new HeaderPages((height) => this.ask(peer, 'GetHeaders', { from_height: height, count: GET_HEADERS_MAX }), from, Math.min(this.d.concurrency, LIST_CONCURRENCY));
    for (;;) {
      const run: Uint8Array[] = [];
      let peerTip = 0;
      while (run.length < HEADER_RUN_MAX) {
        const r = await pages.next();
        peerTip = r.tip_height;
        const n = r.headers.length / HEADER_BYTES;
        for (let i = 0; i < n; i++) run.push(r.headers.subarray(i * HEADER_BYTES, (i + 1) * HEADER_BYTES));
        if (n < GET_HEADERS_MAX) break;
      }
      // The run ends HEADER_RUN_TIP_MARGIN below the peer's tip (see there).
      const keep = Math.max(0, Math.min(run.length, peerTip - HEADER_RUN_TIP_MARGIN - from + 1));
      if (keep === 0) return taken;
      try {
        const r = await core.call('peerSubmitHeaders', { from, headers: run.slice(0, keep) });
        if (!r.linked) {
          this.d.log.debug('peer headers do not link to this node\'s chain', { peer: peer.url, from });
          return taken;
        }
        taken += r.accepted;
        this.d.counters.sync_headers_accepted += r.accepted;
      } catch (e) {
        if (e instanceof NodeError && e.code === 'bad_evidence') {
          const wait = Math.min((backoff?.wait ?? 0) * 2 || 1, FALSE_ANSWER_BACKOFF_MAX);
          this.falseHeaders.set(peer.url, { next: this.roundNo + wait, wait });
          this.falseAnswer(peer, `headers ${from}..${from + keep - 1}`, e);
          // Nothing else it says this round is taken either: its payloads' evidence would
          // be checked against headers this node does not hold yet.
          throw new NodeError('bad_evidence', `the peer sent a false header run: ${e.message}`);
        }
        this.d.log.debug('peer headers not taken', { peer: peer.url, from, error: (e as Error).message });
        return taken;
      }
      from += keep;
      if (keep < run.length || run.length < HEADER_RUN_MAX) return taken;
    }
  }

  // ------------------------------------------------------------ evidence of pending payloads

  /**
   * Asks the peer for the evidence of up to PENDING_EVIDENCE_PER_ROUND of this node's
   * pending payloads that no block ahead settles already (peerPending; GetPayloads answers each with its evidence) and hands what places
   * or drops one to the core, which checks it as intake does and keeps what holds
   * (Writer.takeEvidence). Answers how many were taken. Evidence that does not hold is
   * counted against the peer.
   */
  async pendingEvidence(peer: Peer): Promise<number> {
    const core = this.d.core();
    const { txids: listed, next } = await core.call('peerPending', { after: this.pendingCursor, limit: PENDING_EVIDENCE_PER_ROUND });
    this.pendingCursor = next ?? '';
    const ask = listed.filter((t) => !this.fetchedThisRound.has(t));
    let taken = 0;
    // No more at once than the peer answers at once, as payload fetches (fetchEach).
    const q = new PQueue({ concurrency: Math.min(this.d.concurrency, LIST_CONCURRENCY) });
    for (let i = 0; i < ask.length; i += GET_PAYLOADS_MAX) {
      const chunk = ask.slice(i, i + GET_PAYLOADS_MAX);
      void q.add(async () => {
        for (let rest = chunk; rest.length > 0; ) {
          const r = await this.ask(peer, 'GetPayloads', { txids: rest.map((t) => Buffer.from(t, 'hex')) });
          const covered = new Set(rest.slice(0, r.answered));
          for (const f of r.payloads) {
            let txid = '';
            try {
              const p = fromProtoPayload(f.payload);
              txid = p.txid;
              if (!covered.has(p.txid)) throw new NodeError('bad_request', `peer answered a payload not asked for: ${p.txid}`);
              const ev = p.evidence;
              if (!ev || (!ev.confirmed && !ev.spentBy)) continue;
              if ((await core.call('peerTakeEvidence', { txid: p.txid, evidence: ev })).taken) {
                taken++;
                this.d.counters.sync_evidence_taken++;
              }
            } catch (e) {
              if (e instanceof NodeError && e.code === 'bad_evidence') this.falseAnswer(peer, `evidence of ${txid}`, e);
              else this.d.log.debug('peer evidence not taken', { peer: peer.url, txid, error: (e as Error).message });
            }
          }
          if (r.answered === 0) return;
          rest = rest.slice(r.answered);
        }
      }).catch((e: unknown) => this.d.log.debug('peer evidence fetch failed', { peer: peer.url, error: (e as Error).message }));
    }
    await q.onIdle();
    return taken;
  }

  // ------------------------------------------------------------ state roots

  private async remoteRoots(peer: Peer, from: number, to: number): Promise<StateRootRange & { root_version: number }> {
    const r = await this.ask(peer, 'GetStateRoots', { from_height: String(from), to_height: String(to) });
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

  /** Peers already logged as publishing roots of another version. */
  private readonly otherRootVersion = new Set<string>();

  /** Finds the first height where this node and the peer disagree, by bisection. */
  async checkRoots(peer: Peer): Promise<DivergenceReport | null> {
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
      const page = await this.ask(peer, 'GetContractIds', { after });
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
      const r = await this.ask(peer, 'GetContractRanges', {
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
      const page = await this.ask(peer, 'GetContractTxids', { contract_id: Buffer.from(contractId, 'hex'), offset });
      const got = page.txids.map(hex);
      out.push(...got);
      offset += got.length;
      if (!page.more || got.length === 0) return out;
    }
  }

  /**
   * Whether the peer is catching up: its advertised processed height is more than
   * CATCHING_UP_BLOCKS below this node's. Its payload sets are not compared with this
   * node's then, either way. It pulls what it lacks itself, in its chain order (a fresh
   * node holds block application back while its first sync delivers, at height 0), so a
   * push would send it again what it is fetching (13,186 of 100,000 payloads in a fresh
   * node's catch-up); and what it holds that this node lacks is a part of what it is
   * fetching, or reaches this node by gossip's forwarding and the first round after it
   * caught up. A comparison meanwhile cost both nodes a range descent over a set that
   * grows under it (a 30,000-payload catch-up: 4 s of the serving peer's sync, 0.7 s of
   * the fresh node's writer). Unknown heights compare.
   */
  private catchingUp(peer: Peer): boolean {
    const mine = this.d.localHeight?.() ?? null;
    return peer.height !== null && mine !== null && peer.height + CATCHING_UP_BLOCKS < mine;
  }

  async syncPayloads(peer: Peer): Promise<{ differing: number; fetched: number; applied: number; pushed: number }> {
    const core = this.d.core();
    const c = this.d.counters;
    if (this.catchingUp(peer)) {
      this.d.log.debug('peer is catching up: payload sets not compared', { peer: peer.url, peer_height: peer.height });
      return { differing: 0, fetched: 0, applied: 0, pushed: 0 };
    }
    const { differing, localSets, remoteCounts } = await this.diffContracts(peer);
    c.sync_contracts_differing += differing.length;
    const missing: Missing[] = [];
    /** Per contract held nothing of: the peer's list in its chain order (fetched interleaved, after `missing`). */
    const listed: Missing[][] = [];
    const theyLack: string[] = [];
    for (const id of differing) {
      const mine = localSets[id]?.count ?? 0;
      if (mine > 0) {
        // One descent finds both sides' differences.
        const r = await reconcile((ranges) => core.call('peerRanges', { contract_id: id, ranges }), this.remoteRanges(peer, id), this.d.concurrency);
        for (const txid of r.missing) if (this.worthFetching(txid, peer)) missing.push({ txid, contract_id: id });
        // A peer holding under half of this node's set is catching up: it pulls them itself,
        // in chain order (fewer replays), rather than receiving the same payloads twice.
        if ((remoteCounts.get(id) ?? 0) * 2 >= mine) theyLack.push(...r.theyLack);
      } else {
        // Nothing held here: the peer's list in its chain order.
        listed.push((await this.listedTxids(peer, id)).filter((txid) => this.worthFetching(txid, peer)).map((txid) => ({ txid, contract_id: id })));
      }
    }
    missing.push(...interleave(listed, GET_PAYLOADS_MAX));
    // What the core's progress line counts the payloads taken against (a first sync can take minutes).
    if (missing.length > 0) core.call('peerSyncListed', { payloads: missing.length }).catch((e: unknown) => this.d.log.debug('could not tell the core what the sync will fetch', { error: (e as Error).message }));
    // Contracts this node holds nothing of: their calls wait for the deploy (below).
    const unheld = new Set(differing.filter((id) => (localSets[id]?.count ?? 0) === 0));
    const { fetched, applied } = await this.fetchAndApply(peer, missing, unheld, new DeliveredThrough(missing, unheld));
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
    // Read as GetPayloads answers: PAYLOADS_PER_CORE_CALL a round trip, journal reads shared.
    const pages: string[][] = [];
    for (let i = 0; i < txids.length; i += PAYLOADS_PER_CORE_CALL) pages.push(txids.slice(i, i + PAYLOADS_PER_CORE_CALL));
    const held = (await Promise.all(pages.map((page) => core.call('peerPayloads', { txids: page })))).flat().filter((p) => p !== null);
    let accepted = 0;
    const q = new PQueue({ concurrency: this.d.concurrency });
    await Promise.all(
      // The forwarder's bound: one message's framing below the peer's receive limit.
      submitBatches(held.map((p) => unpackPayload(p.payload)), MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES - 512).map((batch) =>
        q.add(async () => {
          const r = await peer.client.call('SubmitPayload', { payloads: batch.map(toProtoPayload) });
          accepted += r.results.filter((x) => x.accepted).length;
        }),
      ),
    );
    return accepted;
  }

  /** One request of a sync, asked again while `askAgain` says so. */
  private async ask<M extends PeerMethod>(peer: Peer, method: M, req: WireInit<PeerRequest<M>>): Promise<PeerResponse<M>> {
    for (let failures = 1; ; failures++) {
      try {
        return await peer.client.call(method, req);
      } catch (e) {
        if (!askAgain(e, failures)) throw e;
        this.d.log.info('sync request failed; asking again', { peer: peer.url, method, attempt: failures, error: (e as Error).message });
        await new Promise((resolve) => setTimeout(resolve, FETCH_RETRY_MS << (failures - 1)));
      }
    }
  }

  /**
   * Payloads by txid from the peer (GetPayloads, GET_PAYLOADS_MAX a request, re-asking
   * what an answer did not cover, `concurrency` requests at once), each answer's payloads
   * handed to `take` as it arrives.
   */
  private async fetchEach(peer: Peer, missing: Missing[], take: (page: Fetched[]) => void): Promise<void> {
    const want = new Map(missing.map((m) => [m.txid, m]));
    // No more at once than the peer answers at once (its LIST_CONCURRENCY): the rest would
    // only wait in its queue, their deadlines running (a 100,000-payload catch-up's 16
    // requests at once all passed their 10 s deadline there).
    const q = new PQueue({ concurrency: Math.min(this.d.concurrency, LIST_CONCURRENCY) });
    const askFrom = async (list: Missing[]): Promise<void> => {
      for (let rest = list; rest.length > 0; ) {
        let r: GetPayloadsResponse;
        try {
          r = await this.ask(peer, 'GetPayloads', { txids: rest.map((m) => Buffer.from(m.txid, 'hex')) });
        } catch (e) {
          // A malformed answer, or a failure asked about FETCH_ATTEMPTS times.
          this.d.log.warn('sync fetch failed; these payloads wait for the next round', { peer: peer.url, payloads: rest.length, error: (e as Error).message });
          return;
        }
        // An answer that covers nothing would loop forever: the rest waits for the next round.
        if (r.answered === 0) return;
        const answered = r.answered;
        const covered = new Set(rest.slice(0, answered).map((m) => m.txid));
        const page: Fetched[] = [];
        for (const f of r.payloads) {
          try {
            const p = fromProtoPayload(f.payload);
            const m = want.get(p.txid);
            if (!m || !covered.has(p.txid) || (p.kind === 'call' && p.contract_id !== m.contract_id)) throw new NodeError('bad_request', `peer answered a payload not asked for: ${p.txid}`);
            covered.delete(p.txid);
            this.d.counters.sync_payloads_fetched++;
            page.push({ p, m });
          } catch (e) {
            this.d.log.debug('sync fetch failed', { peer: peer.url, error: (e as Error).message });
          }
        }
        if (page.length > 0) take(page);
        rest = rest.slice(answered);
      }
    };
    const chunks: Missing[][] = [];
    for (let i = 0; i < missing.length; i += GET_PAYLOADS_MAX) chunks.push(missing.slice(i, i + GET_PAYLOADS_MAX));
    await Promise.all(chunks.map((ch) => q.add(() => askFrom(ch))));
  }

  /**
   * Fetches payloads with their evidence and hands them to the core's intake as they
   * arrive, SYNC_SUBMIT_BATCH a round trip and SYNC_APPLY_CONCURRENCY in flight: fetching
   * and intake overlap, and intake's group commits fill. The missing list is fetched
   * SYNC_CHUNK at a time, the next chunk's fetches overlapping the last chunk's intake, so
   * at most two chunks are held. Order does not matter (each payload's evidence places
   * it; one that arrives after its block replays from it), except that a call to a
   * contract this node holds nothing of (`unheld`) waits for that contract's deploy, or
   * for the fetches to end when the peer did not answer the deploy (the call is then
   * refused, retryably).
   */
  private async fetchAndApply(peer: Peer, missing: Missing[], unheld: ReadonlySet<string>, delivered: DeliveredThrough): Promise<{ fetched: number; applied: number }> {
    const core = this.d.core();
    const c = this.d.counters;
    let fetched = 0;
    let applied = 0;
    /** Taken payloads: a call's confirmed height (as its evidence claims; intake checked it), else null. */
    const takenAt = new Map<string, number | null>();
    let deliveredTold = -1;
    /** The chunk missing[from, to) is handled: the core hears how far the sync has delivered when that moved. */
    const chunkDone = (from: number, to: number): void => {
      const through = delivered.settle(from, to, (txid) => takenAt.get(txid));
      if (through <= deliveredTold) return;
      deliveredTold = through;
      core.call('peerSyncDelivered', { height: through === Infinity ? null : through }).catch((e: unknown) => this.d.log.debug('could not tell the core how far the sync delivered', { error: (e as Error).message }));
    };
    const refused = (p: WirePayload, e: NodeError): void => {
      if (e.code === 'coin_missing') {
        // The peer holds it paid by a confirmation this node cannot see yet (or from before
        // coin evidence): another peer's copy, or this one once it confirms, is taken.
        this.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
        return;
      }
      if (e.code === 'bad_evidence' || e.code === 'bad_coin') {
        // The peer's evidence, not the payload: another peer's copy is taken.
        this.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.falseAnswer(peer, `evidence of ${p.txid}`, e);
        return;
      }
      this.noteRefused(p.txid, e.code);
      this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
    };
    const taken = (p: WirePayload, created: boolean): void => {
      const h = p.kind === 'call' ? p.evidence?.confirmed?.height : undefined;
      takenAt.set(p.txid, typeof h === 'number' ? h : null);
      this.refused.delete(p.txid);
      this.d.stored(p);
      if (created) {
        applied++;
        c.sync_payloads_applied++;
      }
    };
    const apply = async (batch: WirePayload[]): Promise<void> => {
      let results: ({ ok: true; created: boolean } | { ok: false; error: WireError })[];
      try {
        results = (await core.call('peerSubmitMany', { payloads: batch.map(packPayload) })).results;
      } catch (e) {
        // The core did not answer (restarting, overloaded): the batch waits for the next round.
        const err = e instanceof NodeError ? e : new NodeError('internal', (e as Error).message);
        for (const p of batch) refused(p, err);
        return;
      }
      batch.forEach((p, i) => {
        const r = results[i];
        if (r?.ok) taken(p, r.created);
        else refused(p, r ? fromWire(r.error) : new NodeError('internal', 'the core answered no result'));
      });
    };
    // Per unheld contract: settles once its deploy was taken (or refused), across chunks.
    const deployed = new Map<string, { done: Promise<void>; settle: () => void }>();
    for (const id of unheld) {
      let settle!: () => void;
      const done = new Promise<void>((r) => (settle = r));
      deployed.set(id, { done, settle });
    }
    const applyQ = new PQueue({ concurrency: Math.max(1, Math.floor(SYNC_APPLY_CONCURRENCY / SYNC_SUBMIT_BATCH)) });
    const applying: Promise<void>[] = [];
    /** Unheld contracts whose deploy the peer answered (its gate settles when it is taken). */
    const deployFetched = new Set<string>();
    /** Unheld contracts with fetched calls waiting on their gate. */
    const waiting = new Set<string>();
    const take = (page: Fetched[]): void => {
      // Calls by the gate they wait on (none: held contracts), in batches of SYNC_SUBMIT_BATCH.
      const byGate = new Map<string, WirePayload[]>();
      for (const { p, m } of page) {
        fetched++;
        this.fetchedThisRound.add(p.txid);
        if (p.kind === 'deploy') {
          deployFetched.add(m.contract_id);
          applying.push(applyQ.add(() => apply([p])).finally(() => deployed.get(m.contract_id)?.settle()));
          continue;
        }
        const gate = deployed.has(m.contract_id) ? m.contract_id : '';
        if (gate) waiting.add(gate);
        const list = byGate.get(gate);
        if (list) list.push(p);
        else byGate.set(gate, [p]);
      }
      for (const [gate, calls] of byGate) {
        const ready = deployed.get(gate)?.done ?? Promise.resolve();
        for (let i = 0; i < calls.length; i += SYNC_SUBMIT_BATCH) {
          const batch = calls.slice(i, i + SYNC_SUBMIT_BATCH);
          applying.push(ready.then(() => applyQ.add(() => apply(batch))));
        }
      }
    };
    let lastChunk: Promise<void> = Promise.resolve();
    for (let i = 0; i < missing.length; i += SYNC_CHUNK) {
      const from = applying.length;
      await this.fetchEach(peer, missing.slice(i, i + SYNC_CHUNK), take);
      // A contract's deploy comes before its calls in the peer's list: one not answered by
      // now will not be, and its calls go on (refused, retryably) rather than wait.
      for (const id of waiting) if (!deployFetched.has(id)) deployed.get(id)?.settle();
      // Fetched: this chunk's intake goes on while the next one is fetched, once the
      // chunk before has been taken in (two chunks held at most).
      await lastChunk;
      const [at, end] = [i, Math.min(missing.length, i + SYNC_CHUNK)];
      lastChunk = Promise.all(applying.slice(from)).then(() => chunkDone(at, end));
    }
    await Promise.all(applying);
    await lastChunk;
    return { fetched, applied };
  }
}

/**
 * A peer's GetHeaders pages from a height on, in order, up to `ahead` asked at once: one
 * page after another, a year of headers (27 pages) waited on 27 round trips through the
 * peer's core and writer, with the node a third busy, before any payload was asked for.
 * Asked ahead, the next pages come while the core verifies and stores a run. A page
 * shorter than GET_HEADERS_MAX is the peer's last: none is asked past it. Pages asked
 * ahead of where the caller stops (a run that does not link, a refusal) are left
 * unread; their failures are not reported (nothing waits on them).
 */
class HeaderPages {
  private readonly asked: Promise<PeerResponse<'GetHeaders'>>[] = [];
  private nextHeight: number;
  private ended = false;

  constructor(
    private readonly get: (height: number) => Promise<PeerResponse<'GetHeaders'>>,
    from: number,
    private readonly ahead: number,
  ) {
    this.nextHeight = from;
  }

  async next(): Promise<PeerResponse<'GetHeaders'>> {
    while (!this.ended && this.asked.length < Math.max(1, this.ahead)) {
      const page = this.get(this.nextHeight);
      page.catch(() => undefined);
      this.asked.push(page);
      this.nextHeight += GET_HEADERS_MAX;
    }
    const r = await this.asked.shift()!;
    if (r.headers.length / HEADER_BYTES < GET_HEADERS_MAX) this.ended = true;
    return r;
  }
}

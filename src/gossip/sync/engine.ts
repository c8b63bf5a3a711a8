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
import { fromWire, NodeError, type WireError } from '@svc-node/protocol/errors';
import { fromProtoPayload, submitBatches, toProtoPayload } from '../wire.js';
import { packPayload, unpackPayload } from '../../packed-payload.js';
import { reconcile } from '../reconcile.js';
import { DeliveredThrough, interleave } from '../delivered.js';
import { GET_PAYLOADS_MAX, LIST_CONCURRENCY, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES, PAYLOADS_PER_CORE_CALL, SYNC_APPLY_CONCURRENCY, SYNC_SUBMIT_BATCH } from '../limits.js';
import type { Peer } from '../peers.js';
import type { DivergenceReport, WirePayload } from '../../messages.js';
import type { GetPayloadsResponse } from '../wire-types.js';
import type { SyncDeps } from './deps.js';
import { ContractSets } from './contract-sets.js';
import { DivergenceCheck } from './divergence.js';
import { HeaderSync } from './headers.js';
import { PendingEvidence } from './pending-evidence.js';
import { Retries } from './retries.js';

/**
 * Payloads fetched and applied per step: bounds what a sync holds in memory (payloads are
 * at most 64 KiB, typically a few hundred bytes, with evidence under 1 KiB more).
 */
const SYNC_CHUNK = 4096;

/**
 * A peer advertising a processed height more than this many blocks below this node's is
 * catching up, and payload sets are not compared with it (SyncEngine.catchingUp): the
 * journal's undo window, far more than two nodes following the same chain ever differ
 * by, far less than a catch-up.
 */
const CATCHING_UP_BLOCKS = 144;

interface Missing {
  txid: string;
  contract_id: string;
}

/** A fetched payload and the entry of the missing list it answers. */
interface Fetched {
  p: WirePayload;
  m: Missing;
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
  /** The last sync queued: syncs run one after another (two at once would fetch the same payloads twice). */
  private tail: Promise<void> = Promise.resolve();
  /** The full round queued or running (`round`), joined by a second call. */
  private running: Promise<void> | null = null;
  /** Peers that turned active, synced with by the queued `draining` job. */
  private readonly arrived = new Set<Peer>();
  private draining: Promise<void> | null = null;
  private readonly retries: Retries;
  readonly headers: HeaderSync;
  private readonly contracts: ContractSets;
  readonly roots: DivergenceCheck;
  readonly pending: PendingEvidence;

  constructor(private readonly d: SyncDeps) {
    this.retries = new Retries(d);
    this.headers = new HeaderSync(d, this.retries);
    this.contracts = new ContractSets(d, this.retries);
    this.roots = new DivergenceCheck(d, this.retries, this.contracts);
    this.pending = new PendingEvidence(d, this.retries);
  }

  /** The last divergence found with any peer (node_status). */
  get divergence(): DivergenceReport | null {
    return this.roots.report;
  }

  /** Refused txids sync currently skips (node_status, tests). */
  get refusedCount(): number {
    return this.retries.refusedCount;
  }

  /**
   * One sync with every active peer in turn, fewest failures first; a round already
   * queued or running is joined, not doubled.
   */
  round(): Promise<void> {
    this.running ??= this.enqueue(async () => {
      this.retries.newRound();
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
    const headers = await this.headers.sync(peer);
    const divergence = await this.roots.check(peer);
    const t0 = performance.now();
    const r = await this.syncPayloads(peer);
    const payloadMs = Math.round(performance.now() - t0);
    if (divergence) await this.roots.after(peer, divergence);
    const evidence = await this.pending.take(peer);
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

  // ------------------------------------------------------------ payloads

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
    const { differing, localSets, remoteCounts } = await this.contracts.diff(peer);
    c.sync_contracts_differing += differing.length;
    const missing: Missing[] = [];
    /** Per contract held nothing of: the peer's list in its chain order (fetched interleaved, after `missing`). */
    const listed: Missing[][] = [];
    const theyLack: string[] = [];
    for (const id of differing) {
      const mine = localSets[id]?.count ?? 0;
      if (mine > 0) {
        // One descent finds both sides' differences.
        const r = await reconcile((ranges) => core.call('peerRanges', { contract_id: id, ranges }), this.contracts.remoteRanges(peer, id), this.d.concurrency);
        for (const txid of r.missing) if (this.retries.worthFetching(txid, peer)) missing.push({ txid, contract_id: id });
        // A peer holding under half of this node's set is catching up: it pulls them itself,
        // in chain order (fewer replays), rather than receiving the same payloads twice.
        if ((remoteCounts.get(id) ?? 0) * 2 >= mine) theyLack.push(...r.theyLack);
      } else {
        // Nothing held here: the peer's list in its chain order.
        listed.push((await this.contracts.listedTxids(peer, id)).filter((txid) => this.retries.worthFetching(txid, peer)).map((txid) => ({ txid, contract_id: id })));
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
          r = await this.retries.ask(peer, 'GetPayloads', { txids: rest.map((m) => Buffer.from(m.txid, 'hex')) });
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
        this.retries.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
        return;
      }
      if (e.code === 'bad_evidence' || e.code === 'bad_coin') {
        // The peer's evidence, not the payload: another peer's copy is taken.
        this.retries.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.retries.falseAnswer(peer, `evidence of ${p.txid}`, e);
        return;
      }
      this.retries.noteRefused(p.txid, e.code);
      this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
    };
    const taken = (p: WirePayload, created: boolean): void => {
      const h = p.kind === 'call' ? p.evidence?.confirmed?.height : undefined;
      takenAt.set(p.txid, typeof h === 'number' ? h : null);
      this.retries.taken(p.txid);
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
        this.retries.fetched(p.txid);
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

/**
 * The single writer: sole owner of RocksDB and the block journal. Every mutation runs
 * through `serial`, one job at a time, so the order of writes never depends on the
 * order in which concurrent requests happen to finish.
 */
import { Db } from './db.js';
import { meta } from './store/index.js';
import { Ledger } from './ledger/index.js';
import { NodeError } from '../errors.js';
import type { ChainUpdate, ChainUpdateAnswer, OutpointCheck, WriterStatus } from '../messages.js';
import type { CallRecord, ContractRecord } from '../records.js';
import { checkEvidence, evidenceError, type DecisionProofJson, type Evidence, type FoldedRoots, type SpentBy } from '../protocol/evidence.js';
import type { Logger } from '../log.js';
import type { HeldPayload } from '../protocol/rules.js';

export interface WriterLimits {
  /**
   * Pending calls held at once (config max_pending_calls). A new call beyond it is
   * refused with 503 overloaded before anything is stored; a repeat of a call the node
   * already holds is still answered. Counted where calls are accepted, so REST, gossip
   * and sync share it; a reorg may briefly push the count above it (calls going back to
   * pending are never dropped).
   */
  maxPendingCalls: number;
}

/**
 * Most calls stored in one synced batch. Accepts arriving while a batch is being written
 * wait for the next one, so under load a batch holds about one fsync's worth of arrivals;
 * 256 calls are ~1,000 RocksDB puts and ~150 KB, far below the block batches the writer
 * already makes, and bound the time one job holds the queue.
 */
const ACCEPT_GROUP_MAX = 256;
/**
 * Acceptance groups a waiting replay lets go first, in a row, before it runs: up to
 * 65,536 synced payloads (about 90 s of a peer sync), or a few seconds of small REST
 * groups. A full re-derivation of a year of blocks takes tens of seconds; run between
 * every two groups of a sync that brings late payloads, replays were most of its time.
 */
const REPLAY_DEFERRALS_MAX = 256;

/**
 * Stored while a node has the database open, deleted by its clean close: found at the
 * next open, it says the previous run was killed or crashed with the database open
 * (RocksDB then recovered its synced writes from the write-ahead log).
 */

/**
 * An accepted call's answer. `pendingCalls` is the pending count once its batch is
 * durable: the core keeps the latest one it heard for intake's early max_pending_calls
 * check (src/core/intake.ts), so a node at the bound refuses before paying for the
 * signature check and the anchor fetch. This writer's `admit` stays the authoritative check.
 */
/** A payload newly stored: its txid and the claim stored under it (`Writer.payloadsStored`). */
export interface StoredPayload {
  txid: string;
  held: HeldPayload;
}

export interface AcceptedCall {
  created: boolean;
  record: CallRecord;
  pendingCalls: number;
}

interface QueuedAccept {
  record: CallRecord;
  outpoint: OutpointCheck | undefined;
  evidence: Evidence | undefined;
  folded: FoldedRoots | undefined;
  resolve: (r: AcceptedCall) => void;
  reject: (e: unknown) => void;
}

export class Writer {
  private queue: Promise<unknown> = Promise.resolve();
  /** Calls waiting for the next group commit, in arrival order. */
  private accepts: QueuedAccept[] = [];
  private changes = 0;
  /**
   * Told the payloads newly stored (deploys and calls), each txid with the claim stored
   * under it in the payload bucket, from inside the serial job that stored them. The
   * bucket is append-only (nothing deletes or rewrites a payload claim), so this is every
   * change to it: src/writer/peer-queries.ts keeps its per-contract index from it instead
   * of scanning the bucket per peer request, or reading back what was just written.
   */
  readonly payloadsStored: ((stored: StoredPayload[]) => void)[] = [];
  /** Told when pending payloads are evicted (deferred checks): the only removal from the payload bucket. */
  readonly payloadsRemoved: ((txids: string[]) => void)[] = [];

  private constructor(
    readonly db: Db,
    readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly limits: WriterLimits,
  ) {}

  static async open(dbPath: string, nodeId: string, log: Logger, limits: WriterLimits = { maxPendingCalls: Number.POSITIVE_INFINITY }): Promise<Writer> {
    const db = await Db.open(dbPath);
    const openSince = await db.get(meta.openSince.key);
    if (openSince) log.warn('the previous run did not close the database: it was killed or crashed (RocksDB recovered the synced writes)', { open_since: meta.openSince.decode(openSince) });
    // Only a report for the next start: a store that refuses this write (a full disk) still opens.
    await db.put(meta.openSince.key, meta.openSince.encode(new Date().toISOString())).catch((e: Error) => log.warn('cannot mark the database open', { error: e.message }));
    if (!(await db.get(meta.nodeId.key))) await db.put(meta.nodeId.key, meta.nodeId.encode(nodeId));
    const ledger = new Ledger(db, log);
    await ledger.load();
    await ledger.upgradeStore();
    log.info('database open', { db_path: dbPath, processed_height: ledger.tip?.height ?? null, contracts: ledger.contractCount, pending_calls: ledger.pendingCount });
    const writer = new Writer(db, ledger, log, limits);
    // A late payload's replay that a stop interrupted is owed: queue it before any block.
    const owed = ledger.owedReplayHeight();
    if (owed !== null) {
      log.info('resuming a replay a stop interrupted', { from: owed });
      writer.scheduleReplay(owed);
    }
    return writer;
  }

  /** Runs `job` after every job queued before it; a failure does not stop the queue. */
  serial<T>(job: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Counts jobs that may change what the ledger has decided about stored payloads
   * (anchor, blocks, reorgs, replays, halt clears, re-derivation checks). Bumped when
   * such a job ends, success or not, so an answer built from reads that all saw the same
   * count (read before and after) belongs to one ledger state and may be cached under it
   * (peer-queries.ts). Accepting payloads only adds them (nothing stored moves): that is
   * reported by `payloadsStored` instead, and reads bump nothing.
   */
  get changeCount(): number {
    return this.changes;
  }

  /** `serial` for a job that may change the ledger: bumps `changeCount` when it ends. */
  mutate<T>(job: () => Promise<T> | T): Promise<T> {
    return this.serial(async () => {
      try {
        return await job();
      } finally {
        this.changes++;
      }
    });
  }

  private announce(stored: StoredPayload[]): void {
    if (stored.length === 0) return;
    for (const f of this.payloadsStored) f(stored);
  }

  status(): WriterStatus {
    const l = this.ledger;
    return {
      processedHeight: l.tip?.height ?? null,
      processedHash: l.tip?.hash ?? null,
      anchorHeight: l.anchor?.height ?? null,
      stateRoot: l.stateRoot,
      halted: l.halted,
      haltReason: l.haltReason,
      contracts: l.contractCount,
      pendingCalls: l.pendingCount,
      pendingDeploys: l.memory.pendingContracts.size,
      lastBlockAt: l.lastBlockAt,
      headerHeight: l.headerTip?.height ?? null,
      headerHash: l.headerTip?.hash ?? null,
    };
  }

  /** Stores a verified, authenticated run of headers (light following; ledger/evidence.ts). */
  putHeaders(from: number, run: readonly Uint8Array[], truncate: boolean): Promise<WriterStatus> {
    return this.serial(async () => {
      await this.ledger.putHeaders(from, run, { truncate });
      return this.status();
    });
  }

  /** The evidence the node serves with a payload: its anchor and, once decided, its placement. */
  async payloadEvidence(txid: string): Promise<Evidence | null> {
    const l = this.ledger;
    const held = await l.payloadAt(txid);
    if (!held) return null;
    let at: { height: number; txIndex: number } | null = null;
    if (held.kind === 'call') {
      const rec = await l.call(txid);
      if (rec && rec.block_height !== null && rec.tx_index !== null) at = { height: rec.block_height, txIndex: rec.tx_index };
    } else {
      const c = l.contract(held.contract_id);
      if (c && c.block_height !== null && c.tx_index !== null) at = { height: c.block_height, txIndex: c.tx_index };
    }
    return l.payloadEvidence(txid, at);
  }

  /**
   * What GET /contract_call/{txid}/status?proof=true proves (docs/STATE.md, "Call
   * proofs"): the call's anchor and payload, its placement once a block decided it, and
   * for a dropped call the spender's; with the headers of the blocks they name, and for a
   * call its anchor's block decided the branch of its decision under that block's state
   * root (none for a drop: drops are not committed), read in one job so they belong to
   * one state. Null when the node holds no such call.
   */
  callProof(txid: string): Promise<{ evidence: Evidence; payload: Uint8Array; headers: { confirmed: Uint8Array | null; spentBy: Uint8Array | null }; decision: DecisionProofJson | null } | null> {
    return this.serial(async () => {
      const l = this.ledger;
      const rec = await l.call(txid);
      const payload = rec ? await l.callPayload(txid) : null;
      if (!rec || !payload) return null;
      const decided = rec.block_height !== null && rec.tx_index !== null ? { height: rec.block_height, txIndex: rec.tx_index } : null;
      const ev = await l.payloadEvidence(txid, decided);
      if (!ev) throw new NodeError('not_found', `this node holds no Bitcoin evidence for ${txid} (stored before it kept evidence)`);
      const confirmed = decided ? ev.confirmed : null;
      const spentBy = rec.status === 'dropped' ? ev.spentBy : null;
      const headerOf = async (h: number | undefined): Promise<Uint8Array | null> => (h === undefined ? null : ((await l.headers(h, 1))[0] ?? null));
      // The anchor's block commits to the decision; a drop is committed by no root (state/decisions.ts): its spender's inclusion proves it.
      const decision = rec.status === 'pending' || rec.status === 'dropped' || rec.block_height === null ? null : await l.decisionProof(rec.block_height, txid);
      return { evidence: { anchorTx: ev.anchorTx, confirmed, spentBy }, payload, headers: { confirmed: await headerOf(confirmed?.height), spentBy: await headerOf(spentBy?.at.height) }, decision };
    });
  }

  /**
   * Evidence for a payload the node already holds (deferred checks found where its
   * anchor confirmed, or what spent its outpoint): taken as a repeat that brings
   * evidence, so it places or drops the payload exactly as on arrival. False when the
   * node holds no such payload. The evidence is checked as intake checks a peer's
   * (checkEvidence) before the writer weighs it against its headers: the writer's own
   * check places each transaction in its block but does not read it, so without this a
   * confirmed transaction that spends some other outpoint would drop the call.
   */
  async takeEvidence(txid: string, evidence: Evidence): Promise<boolean> {
    const l = this.ledger;
    const held = await l.payloadAt(txid);
    if (!held) return false;
    const rec = held.kind === 'call' ? await l.call(txid) : null;
    const [otxid, ovout] = rec ? (rec.outpoint.split(':') as [string, string]) : [];
    const checked = checkEvidence(txid, otxid === undefined ? null : { txid: otxid, vout: Number(ovout) }, evidence);
    if (!checked.ok) throw evidenceError(checked);
    const folded = { confirmed: checked.confirmedRoot, spender: checked.spenderRoot };
    if (held.kind === 'deploy') {
      const c = l.contract(held.contract_id);
      if (!c) return false;
      await this.acceptDeploy(c, evidence, folded);
      return true;
    }
    const body = rec ? await l.callPayload(txid) : null;
    if (!rec || !body) return false;
    await this.acceptCall({ ...rec, payload: Buffer.from(body).toString('base64') }, undefined, evidence, folded);
    return true;
  }

  /** Keeps the spender evidence of calls dropped by blocks read in full. */
  storeSpentBy(items: { txid: string; spentBy: SpentBy }[]): Promise<void> {
    return this.serial(() => this.ledger.storeSpentBy(items));
  }

  /** Forgets pending payloads whose anchor the endpoint knows nowhere (deferred checks). */
  evictPayloads(txids: string[]): Promise<string[]> {
    return this.mutate(async () => {
      const gone = await this.ledger.evictPayloads(txids);
      if (gone.length > 0) {
        this.log.info('pending payloads evicted: their anchors are neither in the endpoint\'s mempool nor on chain', { count: gone.length });
        for (const f of this.payloadsRemoved) f(gone);
      }
      return gone;
    });
  }

  initAnchor(tip: { height: number; hash: string }): Promise<WriterStatus> {
    return this.mutate(async () => {
      await this.ledger.initAnchor(tip);
      return this.status();
    });
  }

  acceptDeploy(record: ContractRecord, evidence?: Evidence, folded?: FoldedRoots): Promise<{ created: boolean; record: ContractRecord }> {
    return this.serial(async () => {
      const r = await this.ledger.acceptDeploy(record, evidence, folded);
      if (r.created) this.announce([{ txid: record.txid, held: { kind: 'deploy', contract_id: record.contract_id, body_hash: record.body_hash } }]);
      if (r.replayFrom !== null) this.scheduleReplay(r.replayFrom);
      return { created: r.created, record: r.record };
    });
  }

  /**
   * Stores a verified call durably (group commit). Calls that arrive while the writer is
   * busy (a batch being synced, a block) are written together in one synced batch at the
   * next turn of the serial queue; each caller is answered only after its batch is
   * durable. Within a batch the records are taken in arrival order, as one-by-one accepts
   * would be; what ends up stored does not depend on that order (a txid is stored once,
   * the chain orders application).
   */
  acceptCall(record: CallRecord, outpoint?: OutpointCheck, evidence?: Evidence, folded?: FoldedRoots): Promise<AcceptedCall> {
    return new Promise((resolve, reject) => {
      this.accepts.push({ record, outpoint, evidence, folded, resolve, reject });
      if (this.accepts.length === 1) void this.serial(() => this.commitAccepts());
    });
  }

  /**
   * The calls of a group that fit under max_pending_calls; the others are refused with
   * 503 overloaded before anything is stored. A repeat of a call the node already holds
   * is always let through (it is answered, not stored again).
   */
  private async admit(group: QueuedAccept[]): Promise<QueuedAccept[]> {
    const l = this.ledger;
    let room = this.limits.maxPendingCalls - l.pendingCount;
    if (room >= group.length) return group;
    const known = await Promise.all(group.map((a) => l.payloadAt(a.record.txid)));
    return group.filter((a, i) => {
      if (known[i]) return true;
      if (room > 0) {
        room--;
        return true;
      }
      a.reject(new NodeError('overloaded', `the node holds ${l.pendingCount} pending calls, its max_pending_calls; retry once blocks have confirmed some`));
      return false;
    });
  }

  private async commitAccepts(): Promise<void> {
    let group = this.accepts.splice(0, ACCEPT_GROUP_MAX);
    // Whatever is left (or arrives next) goes in the following batch.
    if (this.accepts.length > 0) void this.serial(() => this.commitAccepts());
    let results: Awaited<ReturnType<Ledger['acceptCalls']>>;
    try {
      group = await this.admit(group);
      if (group.length === 0) return;
      results = await this.ledger.acceptCalls(
        group.map((a) => a.record),
        group.map((a) => a.outpoint),
        group.map((a) => a.evidence),
        group.map((a) => a.folded),
      );
    } catch (e) {
      for (const a of group) a.reject(e);
      return;
    }
    this.announce(results.flatMap((r, i) => (r.ok && r.held ? [{ txid: group[i]!.record.txid, held: r.held }] : [])));
    const pendingCalls = this.ledger.pendingCount;
    results.forEach((r, i) => {
      const a = group[i]!;
      if (!r.ok) return a.reject(r.error);
      if (r.replayFrom !== null) this.scheduleReplay(r.replayFrom);
      a.resolve({ created: r.created, record: r.record, pendingCalls });
    });
  }

  /** The lowest block the replay waiting in the queue starts from; null when none waits. */
  private replayWaitingFrom: number | null = null;
  /** Times the waiting replay has let queued acceptance groups go first (REPLAY_DEFERRALS_MAX). */
  private replayDeferrals = 0;

  /**
   * A payload whose stamp was already mined: replay from its block (after the answer).
   * Replays not yet started merge into one from the lowest block: a replay re-applies
   * every block from its height to the tip with every payload stored by then, so one
   * covers them all, where a replay per payload would redo the same blocks once per late
   * payload (a peer sync can bring hundreds at once). For the same reason a replay whose
   * turn comes while acceptance groups wait lets them go first (at most
   * REPLAY_DEFERRALS_MAX times in a row): the late payloads among them merge into it
   * instead of each group's owing a replay of its own after it. What a replay decides
   * does not depend on when it runs, only on the chain and the payloads stored.
   */
  private scheduleReplay(height: number): void {
    if (this.replayWaitingFrom !== null) {
      this.replayWaitingFrom = Math.min(this.replayWaitingFrom, height);
      return;
    }
    this.replayWaitingFrom = height;
    this.replayDeferrals = 0;
    this.queueReplay();
  }

  private queueReplay(): void {
    void this.mutate(async () => {
      // Accepts waiting now have their commit queued already (acceptCall queues it with the
      // first), so this replay, queued again, runs after them. Not while stopping: close()
      // waits only for the jobs queued before it.
      if (this.accepts.length > 0 && this.replayDeferrals < REPLAY_DEFERRALS_MAX && !this.ledger.stopping.signal.aborted) {
        this.replayDeferrals++;
        this.queueReplay();
        return;
      }
      const from = this.replayWaitingFrom!;
      this.replayWaitingFrom = null;
      try {
        await this.ledger.replayFrom(from);
      } catch (e) {
        // A stop ending it (replay.ts) throws a NodeError too: the replay stays owed.
        if (!(e instanceof NodeError)) await this.ledger.halt('internal_error', `internal error while replaying from ${from}: ${(e as Error).message}`);
      }
    });
  }

  /**
   * Waits for every job queued so far and for a replay owed meanwhile (one that let
   * acceptance groups go first is queued again behind them): what peers' settle asks.
   */
  async settled(): Promise<WriterStatus> {
    for (;;) {
      const status = await this.serial(() => this.status());
      if (this.replayWaitingFrom === null) return status;
    }
  }

  /**
   * Applies a chain update: the reorganisation's rewind, then each connected block in
   * order. Header-only blocks (a light node's) are applied as a run: the evidence filed
   * under all of them read at once, their batches written as one synced batch at the end
   * (Ledger.addToRun; each block's records are what it alone would write), and observers
   * told the state once for the whole update, when its last block is applied. The
   * answer waits until all is durable.
   */
  applyChainUpdate(u: ChainUpdate): Promise<ChainUpdateAnswer> {
    return this.mutate(async () => {
      const notices = this.ledger.holdStateNotices();
      try {
        return await this.applyChainUpdateNow(u, notices);
      } finally {
        notices.release();
      }
    });
  }

  private async applyChainUpdateNow(u: ChainUpdate, notices: { release: () => void }): Promise<ChainUpdateAnswer> {
    const l = this.ledger;
    if (l.halted) throw new NodeError('halted', `node is halted: ${l.haltReason}`);
    if (l.stopping.signal.aborted) throw new NodeError('overloaded', 'the node is stopping');
    // Built from a tip that moved before its turn (a late payload's replay was queued
    // ahead of it and the status read mid-replay): refused as retryable, so the follower
    // reads the tip again at once rather than failing until its next poll.
    const tipNow = l.tip?.height ?? null;
    const builtOn = u.disconnected.length > 0 ? u.disconnected[0]!.height : u.connected.length > 0 ? u.connected[0]!.height - 1 : tipNow;
    if (tipNow !== null && builtOn !== tipNow) {
      throw new NodeError('chain_unavailable', `this chain update was built on block ${builtOn}, the node's tip is ${tipNow}`, { reason: 'chain_moved' });
    }
    const drops: ChainUpdateAnswer['drops'] = [];
    let evidenceRefused = 0;
    try {
      if (u.disconnected.length > 0) {
        this.log.warn('reorganisation', { fork_height: u.fork_height, depth: u.disconnected.length, mode: u.fork_height >= l.undoFloor ? 'undo' : 're-derive' });
        await l.rewindTo(u.fork_height, { dropJournal: true });
      }
      for (let i = 0; i < u.connected.length; ) {
        const built = await l.blocksFromEvidence(u.connected.slice(i));
        for (const { block, refused } of built) {
          evidenceRefused += refused;
          const r = await l.applyBlock(block, { batched: u.connected[i++]!.headerOnly === true });
          for (const d of r.drops) drops.push({ ...d, height: r.height });
        }
      }
      // The new state is announced as soon as it is set, before it is durable (as a single
      // block's always was): the feed and reads queue behind this job, which ends once it is.
      notices.release();
      // Blocks read in full are written while the next is computed, header-only ones
      // together; the answer waits until all are durable.
      await l.flushBlocks();
      if (u.endsChain && l.tip) await l.truncateHeaders(l.tip.height);
      await l.pruneClaims();
    } catch (e) {
      // The blocks applied before the failure are kept, as when each was written alone
      // (a failed write has halted the node already, and this throws again: ignored).
      await l.flushBlocks().catch(() => undefined);
      if (!(e instanceof NodeError)) await l.halt('internal_error', `internal error applying blocks: ${(e as Error).message}`);
      throw e instanceof NodeError ? e : new NodeError('halted', 'node is halted: internal error applying blocks');
    }
    if (evidenceRefused > 0) this.log.warn('evidence that does not hold against its block was ignored', { claims: evidenceRefused });
    return { ...this.status(), drops };
  }

  clearHalt(): Promise<WriterStatus> {
    return this.mutate(async () => {
      await this.ledger.clearHalt();
      return this.status();
    });
  }

  /**
   * The node is stopping: a replay or re-derivation in hand or queued ends at its next
   * block (replay.ts), and chain updates are refused from now on, never applied on top of
   * an unfinished one. Idempotent.
   */
  stop(): void {
    this.ledger.stopping.abort();
  }

  /** Closes RocksDB after the job in hand (stopping it first, see stop()). */
  async close(): Promise<void> {
    this.stop();
    await this.serial(async () => undefined);
    // A store that refuses writes (a halt after a failed write) still closes.
    await this.db.batch([{ type: 'del', key: meta.openSince.key }], true).catch((e: Error) => this.log.warn('cannot mark the database closed', { error: e.message }));
    await this.db.close();
    this.log.info('database closed');
  }
}

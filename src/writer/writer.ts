/**
 * The single writer: sole owner of RocksDB and the block journal. Every mutation runs
 * through `serial`, one job at a time, so the order of writes never depends on the
 * order in which concurrent requests happen to finish.
 */
import { Db } from './db.js';
import { evidence as evidenceStore, meta } from './store/index.js';
import { Ledger } from './ledger/index.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { ChainUpdate, ChainUpdateAnswer, OutpointCheck, WriterStatus } from '../messages/writer.js';
import type { CallRecord, ContractRecord } from '../records.js';
import { checkEvidence, evidenceError, foldInclusion, inclusionMatchesHeader, type Evidence, type DecisionProofJson, type FoldedRoots, type Inclusion, type SpentBy } from '@svc-node/protocol/evidence';
import { txidOf as txidOfTx } from '@svc-node/protocol/binding';
import { MAX_UNCONFIRMED_ANCESTORS, checkCoin, provenFee, type CheckedCoin } from '@svc-node/protocol/coin';
import { PendingCoins, compareRate, rateText, replaces, type CoinPlace } from './pending-coins.js';
import type { Logger } from '../log.js';
import type { HeldPayload } from '@svc-node/protocol/rules';

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

/** A payload newly stored: its txid and the claim stored under it (`Writer.payloadsStored`). */
export interface StoredPayload {
  txid: string;
  held: HeldPayload;
}

/**
 * An accepted call's answer. `pendingCalls` is the pending count once its batch is
 * durable: the core keeps the latest one it heard for intake's early max_pending_calls
 * check (src/core/intake.ts), so a node at the bound refuses before paying for the
 * signature check and the anchor fetch. This writer's `admit` stays the authoritative check.
 */
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
  /** The coin intake checked (null: none, its confirmation pays). */
  coin: CheckedCoin | null | undefined;
  /** The place it takes in `coins`, once admitted (null: paid by its confirmation). */
  place?: CoinPlace | null;
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
  /**
   * The coins behind pending payloads admitted on their coin's evidence (pending-coins.ts):
   * node policy, kept in memory, rebuilt from the stored evidence at open.
   */
  readonly coins = new PendingCoins((p) => (p.kind === 'call' ? this.ledger.memory.pending.has(p.txid) : this.ledger.memory.pendingContracts.has(p.contractId)));
  /** Pending payloads evicted for another that pays more: replaced on their coin, or outbid when the set was full. */
  readonly coinEvictions = { replaced: 0, outbid: 0 };

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
    await writer.loadCoins();
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
      coinEvictions: { ...this.coinEvictions },
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
      await this.acceptDeploy(c, checked.proven, folded);
      return true;
    }
    const body = rec ? await l.callPayload(txid) : null;
    if (!rec || !body) return false;
    // A 64-byte spender without its block's txids is left out (checkEvidence's `proven`).
    await this.acceptCall({ ...rec, payload: Buffer.from(body).toString('base64') }, undefined, checked.proven, folded);
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

  acceptDeploy(record: ContractRecord, evidence?: Evidence, folded?: FoldedRoots, coin?: CheckedCoin | null): Promise<{ created: boolean; record: ContractRecord }> {
    return this.serial(async () => {
      let place: CoinPlace | null = null;
      if (!(await this.ledger.payloadAt(record.txid))) {
        place = await this.placeFor(record.txid, 'deploy', record.contract_id, evidence, folded, coin);
        const holder = place ? this.coins.holderOf(place.outpoint) : undefined;
        // A deploy neither replaces nor is replaced: calls to it may already wait on it.
        if (place && holder && holder.txid !== record.txid) throw coinInUse(place, holder);
      }
      const r = await this.ledger.acceptDeploy(record, evidence, folded);
      if (r.created && place) this.coins.add(place);
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
  acceptCall(record: CallRecord, outpoint?: OutpointCheck, evidence?: Evidence, folded?: FoldedRoots, coin?: CheckedCoin | null): Promise<AcceptedCall> {
    return new Promise((resolve, reject) => {
      this.accepts.push({ record, outpoint, evidence, folded, coin, resolve, reject });
      if (this.accepts.length === 1) void this.serial(() => this.commitAccepts());
    });
  }

  /**
   * Admission of a group's new calls (docs/STATE.md, "Coin evidence"), in arrival order:
   * each must be paid (placeFor: its anchor's confirmation, or its coin); one coin backs
   * one waiting payload (a higher-paying anchor on the same coin replaces the waiting
   * one); and past max_pending_calls a call waiting on its coin is taken only in place of
   * the waiting call with the lowest fee rate, when it pays a strictly higher one
   * (pending-coins.ts); one its confirmation pays is not bounded (it is decided at its
   * block). The
   * others are refused before anything is stored. A repeat of a call the node already
   * holds is always let through (it is answered, not stored again). Returns the admitted
   * calls and the pending payloads to evict for them.
   */
  private async admit(group: QueuedAccept[]): Promise<{ admitted: QueuedAccept[]; victims: Map<string, 'replaced' | 'outbid'> }> {
    const l = this.ledger;
    const known = await Promise.all(group.map((a) => l.payloadAt(a.record.txid)));
    const victims = new Map<string, 'replaced' | 'outbid'>();
    let count = l.pendingCount;
    const admitted: QueuedAccept[] = [];
    const seen = new Set<string>();
    for (const [i, a] of group.entries()) {
      const txid = a.record.txid;
      if (known[i] || seen.has(txid)) {
        admitted.push(a);
        continue;
      }
      try {
        const place = await this.placeFor(txid, 'call', '', a.evidence, a.folded, a.coin);
        if (place && place.outpoint !== a.record.outpoint) throw new NodeError('bad_coin', `the coin checked is ${place.outpoint}, not the outpoint ${a.record.outpoint} the envelope names`);
        if (place) {
          const holder = this.coins.holderOf(place.outpoint);
          if (holder && !victims.has(holder.txid)) {
            if (holder.kind !== 'call' || !replaces(place, holder) || this.coins.hasChildren(holder.txid)) throw coinInUse(place, holder);
            victims.set(holder.txid, 'replaced');
            count--;
          }
        }
        // A call its confirmation pays (or its evidence drops) is decided at its block, not
        // waiting on a coin: the bound, which keeps what waits unpaid-for finite, does not
        // refuse it, so a full node never falls behind its peers on confirmed calls.
        if (place && count >= this.limits.maxPendingCalls) {
          const lowest = this.coins.lowestCall(new Set(victims.keys()));
          if (!lowest || compareRate(place, lowest) <= 0) {
            const floor = lowest ? `; the lowest fee rate waiting is ${rateText(lowest)}, this anchor pays ${rateText(place)}` : '';
            throw new NodeError('overloaded', `the node holds ${count} pending calls, its max_pending_calls${floor}; retry once blocks have confirmed some, or pay a higher fee rate`);
          }
          victims.set(lowest.txid, 'outbid');
          count--;
        }
        a.place = place;
        if (place) this.coins.add(place);
        count++;
        seen.add(txid);
        admitted.push(a);
      } catch (e) {
        a.reject(e);
      }
    }
    return { admitted, victims };
  }

  /**
   * What pays for a new payload's wait (docs/STATE.md, "Coin evidence"): null when its
   * anchor's confirmation does (a confirmed inclusion that holds against a header this
   * node holds, or a stamp this node saw in a block it processed), else its place from
   * the coin intake checked (a call its evidence drops in a block this node holds waits
   * for nothing, and pays nothing): the checked coin's transaction confirmed in a header this
   * node holds or the anchor of a payload it holds (at most MAX_UNCONFIRMED_ANCESTORS
   * deep), and the fee its anchor pays out of proven coins. Throws coin_missing,
   * coin_unproven, coin_before_anchor or bad_coin. A payload given without evidence at all (the node's own
   * tools and tests, never intake, which always passes it) is not checked.
   */
  private async placeFor(txid: string, kind: 'call' | 'deploy', contractId: string, ev: Evidence | undefined, folded: FoldedRoots | undefined, coin: CheckedCoin | null | undefined): Promise<CoinPlace | null> {
    const l = this.ledger;
    if (!ev) return null;
    if (l.memory.orphans.has(txid)) return null;
    if (ev.confirmed) {
      const held = await this.inclusionHolds(txid, ev.confirmed, folded?.confirmed ?? null);
      if (held === 'holds') return null;
      if (held === 'false') {
        // Worded as the ledger's own refusal of a claim that does not hold (ledger/evidence.ts, placeClaim).
        const c = ev.confirmed;
        const header = await this.ledger.headerAt(c.height);
        const why = header && header.hash !== c.blockHash ? `block ${c.height} of this node's chain is not ${c.blockHash}` : `its branch does not place ${txid} at index ${c.txIndex} under block ${c.blockHash}'s merkle root`;
        throw new NodeError('bad_evidence', `the evidence sent with ${txid} does not hold against this node's chain: confirmation: ${why}`);
      }
      if (!coin) {
        throw new NodeError('coin_unproven', `the anchoring transaction ${txid} is placed in block ${ev.confirmed.blockHash} at height ${ev.confirmed.height}, a header this node does not hold yet, and no coin evidence was checked`, { awaits_header: ev.confirmed.height });
      }
    }
    // A call its evidence drops (a confirmed spend of its outpoint, in a block this node
    // holds) is decided on arrival, not waiting: nothing to pay for.
    if (kind === 'call' && ev.spentBy && (await this.inclusionHolds(spenderTxid(ev.spentBy.tx), ev.spentBy.at, folded?.spender ?? null)) === 'holds') return null;
    if (!coin || !ev.coin) {
      throw new NodeError('coin_missing', `the anchoring transaction ${txid} is not confirmed in a block this node holds, and the payload came without the evidence of the coin it spends (docs/STATE.md, "Coin evidence")`);
    }
    const proven: boolean[] = [];
    const parents: string[] = [];
    let depth = 0;
    for (const [i, prevTxid] of coin.prevTxids.entries()) {
      const at = ev.coin.prevTxs[i]?.at ?? null;
      if (at) {
        const held = await this.inclusionHolds(prevTxid, at, null);
        if (held === 'false') throw new NodeError('bad_coin', `the coin evidence places ${prevTxid} in block ${at.blockHash} at height ${at.height}, which does not hold against this node's header there`);
        if (held === 'holds') {
          proven.push(true);
          continue;
        }
      }
      const parent = await this.parentDepth(prevTxid);
      proven.push(parent !== null);
      if (parent !== null) {
        depth = Math.max(depth, parent + 1);
        parents.push(prevTxid);
      }
    }
    const named = coin.inputs[coin.vin]!.prev;
    if (!proven[named]) {
      const at = ev.coin.prevTxs[named]?.at ?? null;
      // Headers are held above the journal's anchor only: a coin confirmed at or below it
      // is never provable here, so the refusal says so instead of a wait that never ends.
      const anchor = l.anchor;
      if (at && anchor && at.height <= anchor.height) {
        throw new NodeError(
          'coin_before_anchor',
          `the coin ${coin.outpoint} comes from ${coin.prevTxids[named]}, confirmed in block ${at.height}, at or below this node's journal anchor ${anchor.height} (start_height), where it holds no header: spend the coin once into a new one and use that, or send the payload once its anchor confirms (docs/STATE.md, "Coin evidence")`,
          { coin_height: at.height, anchor_height: anchor.height },
        );
      }
      // What it waits for (core/unproven-pool.ts): the header its inclusion names, else the parent payload.
      const awaits = at ? { awaits_header: at.height } : { awaits_parent: coin.prevTxids[named]! };
      throw new NodeError('coin_unproven', `the coin ${coin.outpoint} comes from ${coin.prevTxids[named]}, which is neither confirmed in a block whose header this node holds nor the anchor of a payload it holds (docs/STATE.md, "Coin evidence")`, awaits);
    }
    if (depth > MAX_UNCONFIRMED_ANCESTORS) throw new NodeError('coin_unproven', `the coin ${coin.outpoint} hangs from ${depth} unconfirmed anchors, more than ${MAX_UNCONFIRMED_ANCESTORS}`);
    return { txid, kind, contractId, outpoint: coin.outpoint, fee: provenFee(coin, proven), vsize: coin.vsize, depth, parents };
  }

  /**
   * Unconfirmed anchors below the payload anchored by `txid` (0 when its anchor is
   * confirmed, or paid by confirmation), when this node holds it undecided or confirmed;
   * null when it holds nothing there or the payload was dropped.
   */
  private async parentDepth(txid: string): Promise<number | null> {
    const l = this.ledger;
    const place = this.coins.placeOf(txid);
    if (place) return place.depth;
    const held = await l.payloadAt(txid);
    if (!held) return null;
    if (held.kind === 'deploy') return l.contract(held.contract_id) ? 0 : null;
    const rec = await l.call(txid);
    return rec && rec.status !== 'dropped' ? 0 : null;
  }

  /** Whether `inc` places `txid` in a block whose header this node holds ('unknown': no header at that height). */
  private async inclusionHolds(txid: string, inc: Inclusion, root: Uint8Array | null): Promise<'holds' | 'false' | 'unknown'> {
    const header = await this.ledger.headerAt(inc.height);
    if (!header) return 'unknown';
    if (!txid) return 'false';
    let r = root;
    if (!r) {
      const f = foldInclusion(txid, inc);
      if (!f.ok) return 'false';
      r = f.root;
    }
    return inclusionMatchesHeader(inc, r, Buffer.from(header.hex, 'hex')) === true ? 'holds' : 'false';
  }

  /**
   * The places of the payloads pending at open, from their stored evidence (the coin
   * was checked when each was admitted; what the store holds is the node's own record).
   */
  async loadCoins(): Promise<void> {
    const l = this.ledger;
    const pending = [...[...l.memory.pending.keys()].map((txid) => ({ txid, kind: 'call' as const, contractId: '', outpoint: l.memory.pending.get(txid)!.rec.outpoint })), ...[...l.memory.pendingContracts.values()].map((c) => ({ txid: c.txid, kind: 'deploy' as const, contractId: c.contract_id, outpoint: null }))];
    const stored = await l.db.getMany(pending.map((p) => evidenceStore.key(p.txid)));
    const found: { p: (typeof pending)[number]; coin: CheckedCoin; ev: Evidence }[] = [];
    pending.forEach((p, i) => {
      const v = stored[i];
      if (!v) return;
      const ev = evidenceStore.decode(v);
      if (!ev.coin || ev.confirmed) return;
      const [t, vout] = p.outpoint ? (p.outpoint.split(':') as [string, string]) : [];
      const c = checkCoin(ev.anchorTx, t === undefined ? null : { txid: t, vout: Number(vout) }, ev.coin, { verify: false });
      if (c.ok) found.push({ p, coin: c.coin, ev });
    });
    const held = new Set(found.map((f) => f.p.txid));
    // Parents before children, so each depth is read from its parent's place.
    const byTxid = new Map(found.map((f) => [f.p.txid, f] as const));
    const depthOf = (txid: string, guard = 0): number => {
      const f = byTxid.get(txid);
      if (!f || guard > MAX_UNCONFIRMED_ANCESTORS) return 0;
      let d = 0;
      f.coin.prevTxids.forEach((t, i) => {
        if (!f.ev.coin!.prevTxs[i]!.at && held.has(t)) d = Math.max(d, depthOf(t, guard + 1) + 1);
      });
      return d;
    };
    for (const f of found) {
      const proven = f.coin.prevTxids.map((t, i) => f.ev.coin!.prevTxs[i]!.at !== null || l.memory.pending.has(t) || held.has(t));
      const parents = f.coin.prevTxids.filter((t, i) => f.ev.coin!.prevTxs[i]!.at === null && (l.memory.pending.has(t) || held.has(t)));
      this.coins.add({ txid: f.p.txid, kind: f.p.kind, contractId: f.p.contractId, outpoint: f.coin.outpoint, fee: provenFee(f.coin, proven), vsize: f.coin.vsize, depth: depthOf(f.p.txid), parents });
    }
  }

  private async commitAccepts(): Promise<void> {
    let group = this.accepts.splice(0, ACCEPT_GROUP_MAX);
    // Whatever is left (or arrives next) goes in the following batch.
    if (this.accepts.length > 0) void this.serial(() => this.commitAccepts());
    let results: Awaited<ReturnType<Ledger['acceptCalls']>>;
    try {
      const { admitted, victims } = await this.admit(group);
      group = admitted;
      await this.evictForCoins(victims);
      if (group.length === 0) return;
      results = await this.ledger.acceptCalls(
        group.map((a) => a.record),
        group.map((a) => a.outpoint),
        group.map((a) => a.evidence),
        group.map((a) => a.folded),
      );
    } catch (e) {
      for (const a of group) {
        if (a.place) this.coins.remove(a.record.txid);
        a.reject(e);
      }
      return;
    }
    // A place taken for a call that was not stored pending goes again.
    results.forEach((r, i) => {
      const a = group[i]!;
      if (a.place && (!r.ok || !r.created || r.record.status !== 'pending')) this.coins.remove(a.record.txid);
    });
    this.announce(results.flatMap((r, i) => (r.ok && r.held ? [{ txid: group[i]!.record.txid, held: r.held }] : [])));
    const pendingCalls = this.ledger.pendingCount;
    results.forEach((r, i) => {
      const a = group[i]!;
      if (!r.ok) return a.reject(r.error);
      if (r.replayFrom !== null) this.scheduleReplay(r.replayFrom);
      a.resolve({ created: r.created, record: r.record, pendingCalls });
    });
  }

  /** Evicts the pending payloads admission chose to make room for others (logged and counted). */
  private async evictForCoins(victims: Map<string, 'replaced' | 'outbid'>): Promise<void> {
    if (victims.size === 0) return;
    const gone = await this.ledger.evictPayloads([...victims.keys()]);
    if (gone.length === 0) return;
    this.changes++;
    let replaced = 0;
    for (const t of gone) {
      this.coins.remove(t);
      if (victims.get(t) === 'replaced') replaced++;
    }
    this.coinEvictions.replaced += replaced;
    this.coinEvictions.outbid += gone.length - replaced;
    this.log.info('pending payloads evicted for payloads that pay more', { replaced_on_their_coin: replaced, outbid_in_a_full_set: gone.length - replaced, txids: gone.slice(0, 8) });
    for (const f of this.payloadsRemoved) f(gone);
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

/** The refusal of a payload whose coin backs another pending payload that pays as much. */
function coinInUse(place: CoinPlace, holder: CoinPlace): NodeError {
  return new NodeError(
    'coin_in_use',
    `the coin ${place.outpoint} already backs pending ${holder.kind} ${holder.txid} (${holder.fee} sats, ${rateText(holder)}); one coin backs one waiting payload, and this anchor pays ${place.fee} sats (${rateText(place)})${holder.kind === 'call' && place.kind === 'call' ? ': a replacement must pay a higher fee and a higher fee rate' : ''}`,
  );
}

/** A spender's txid ('' when its bytes are no transaction: then no inclusion holds for it). */
function spenderTxid(tx: Uint8Array): string {
  try {
    return txidOfTx(tx);
  } catch {
    return '';
  }
}

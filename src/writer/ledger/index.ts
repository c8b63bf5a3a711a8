/**
 * The ledger: everything the writer thread knows and every rule of PROTOCOL.md sections
 * 3 to 5 that changes state. Hot state (active contracts, their storage, pending calls,
 * orphan stamps) lives in memory (memory.ts) with RocksDB as the durable copy; history
 * (decided calls, events, state roots, the block journal) is read from RocksDB (reads.ts).
 *
 * Every connected block is applied (apply-block.ts) in one atomic, synced write batch
 * that also carries its undo log (undo-log.ts) for the last JOURNAL_WINDOW blocks.
 * Rewinds (rewind.ts) run the undo logs; deeper rewinds, late payloads and cleared halts
 * re-apply the block journal (replay.ts), which keeps every stamped transaction the node
 * has seen. Payloads come in through accept.ts, memory is built by load.ts, and halts
 * are halt.ts. The decision rules themselves are packages/protocol/src/rules.ts.
 *
 * This class is the coordinator: it holds the processed tip, the halt flag and the
 * memory, orders writes (flushBlocks, writeOrHalt), and tells its observers
 * (observer.ts) what happened. Its public fields are shared with the phase modules of
 * this folder; elsewhere the ledger is read and driven through its methods.
 */
import type { BatchOp, Db, WriteBatch } from '../db.js';
import type { FieldProof } from '@svc-node/protocol/state/state-tree';
import { NodeError } from '@svc-node/protocol/errors';
import type { OutpointCheck, PendingPayload } from '../../messages/writer.js';
import type { HeldPayload } from '@svc-node/protocol/rules';
import type { Program } from '@svc-node/protocol/vm/types';
import type { Logger } from '../../log.js';
import type { BlockRecord, CallRecord, ContractRecord, EventRecord } from '../../records.js';
import { STORE_FORMAT, callBodies, calls as callsStore, contracts as contractsStore, evidence as evidenceStore, evidenceAt as evidenceAtStore, headers as headersStore, meta, orphanStamps, undo, payloads as payloadsStore, pendingCalls as pendingCallsStore, stateRoots, type StateRootAt, type Tip } from '../store/index.js';
import { headerHash, headerPrevHash, type ParsedHeader } from '@svc-node/protocol/bitcoin';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import { settlesAt, type DecisionProofJson, type Evidence, type FoldedRoots, type SpentBy } from '@svc-node/protocol/evidence';
import { bytesOf } from './bytes.js';
import { LedgerMemory } from './memory.js';
import { loadFromDisk } from './load.js';
import { acceptCalls, acceptDeploy, type AcceptedCall } from './accept.js';
import { applyBlock, type ApplicableBlock, type BlockDrop } from './apply-block.js';
import { rewindTo } from './rewind.js';
import { rederive, replayFrom } from './replay.js';
import { clearHalt, halt } from './halt.js';
import type { HaltKind } from '../store/meta.js';
import { owedReplayHeight, readDecisionProof, readCall, readCallIdUsed, readCalls, readCallPayload, readCallTxids, readCallsOf, readEvents, readForPeers, readPayloadAt, readStateRootAt, type PeerPayloadRead } from './reads.js';
import { evidenceBlocks, evidenceEffect, type EvidenceEffect, type HeaderOnlyBlock, type EvidenceReads, readForEvidence, headerAt, headersFrom, type JournalReads, loadHeaderTip, payloadEvidence, putHeaders } from './evidence.js';
import { JOURNAL_WINDOW, REPLAY_WINDOW } from './stored.js';
import type { LedgerObserver } from './observer.js';

export { JOURNAL_WINDOW } from './stored.js';
export { type Tip } from '../store/index.js';
export type { LedgerObserver } from './observer.js';

/**
 * Bytes of a run's write batch (header-only blocks applied together, `addToRun`) at which
 * it is handed to RocksDB before the update ends: bounds what the writer holds when the
 * run's blocks carry many payloads (each call decided adds its records). A header-only
 * block without payloads packs to ~650 bytes (6 operations), so the follower's updates
 * of 1,000 such blocks are one batch of ~0.65 MB.
 */
const RUN_MAX_BYTES = 4 << 20;

export class Ledger {
  /** The in-memory model; a load replaces it whole. */
  memory = new LedgerMemory();
  /**
   * Counts the reorgs this ledger has rewound (since it was opened), with the fork height
   * of the last ones (rewind.ts): a call checked before a reorg had the blocks above that
   * fork checked on another branch (accept.ts, droppedAt).
   */
  chainEpoch = 0;
  readonly reorgForks: { epoch: number; fork: number }[] = [];
  anchor: Tip | null = null;
  /** The highest verified header held (evidence.ts); may be above the processed tip. */
  headerTip: Tip | null = null;
  halted = false;
  /** What the halt is (halt.ts), null while not halted. */
  haltKind: HaltKind | null = null;
  haltReason: string | null = null;
  lastBlockAt: string | null = null;
  /**
   * The last applied block's batch while RocksDB writes it: the next block is computed
   * meanwhile (catch-up, replays) and handed over once this one is durable. `claims` are
   * its call-id claims, which a read of the disk may not show yet.
   */
  inflight: { done: Promise<Error | null>; claims: string[] } | null = null;
  /**
   * Aborted when the writer closes: replays and re-derivations (replay.ts) end at the next
   * block boundary, the state durable as of the last block they applied, and throw.
   */
  readonly stopping = new AbortController();
  /**
   * Journal entries of processed blocks amended in place (a late payload's anchor placed,
   * a drop recorded: accept.ts) since the ledger opened, counted once the write is done.
   * Blocks, rewinds and replays change entries too, as jobs `Writer.changeCount` counts.
   */
  journalAmendments = 0;
  /**
   * Header-only blocks of the chain update in hand, applied (memory holds them) but not yet
   * handed to RocksDB: their batches appended in order into one, written and synced once
   * (`handOverRun`, from `flushBlocks`). `claims` are their call-id claims.
   */
  private run: { batch: WriteBatch; claims: Set<string> } | null = null;
  private processedTip: Tip | null = null;
  private processedRoot: string | null = null;
  /** While above 0, state notices wait (`holdStateNotices`); `stateOwed`: one is due. */
  private stateHeld = 0;
  private stateOwed = false;
  private readonly observers: LedgerObserver[] = [];

  constructor(
    readonly db: Db,
    readonly log: Logger,
  ) {}

  /** The last block applied (the anchor before any). */
  get tip(): Tip | null {
    return this.processedTip;
  }

  /** The state root after `tip`. */
  get stateRoot(): string | null {
    return this.processedRoot;
  }

  /**
   * The root of `tip`'s decisions, which the state root folds with the contracts root
   * (packages/protocol/src/state/decisions.ts); null at the journal's anchor, whose root is the contracts
   * root (empty). What a field proof carries beside its contracts proof.
   */
  get decisionsRoot(): string | null {
    return this.processedDecisionsRoot;
  }
  private processedDecisionsRoot: string | null = null;

  /** Registers an observer, called from here on (observer.ts). */
  observe(o: LedgerObserver): void {
    this.observers.push(o);
  }

  /**
   * Sets the processed tip and state root together and tells the observers, synchronously
   * (or once, later, while notices are held: `holdStateNotices`).
   */
  setProcessed(tip: Tip | null, stateRoot: string | null, decisionsRoot: string | null): void {
    this.processedTip = tip;
    this.processedRoot = stateRoot;
    this.processedDecisionsRoot = decisionsRoot;
    if (this.stateHeld > 0) {
      this.stateOwed = true;
      return;
    }
    for (const o of this.observers) o.stateChanged(tip, stateRoot);
  }

  /**
   * Holds state notices until `release` (idempotent) is called: observers then hear the
   * processed state once, if it changed meanwhile, instead of once per block. The writer
   * holds them over a chain update (it sends each notice to the core, which wakes every
   * long poll of the REST read cache with it). Nobody reads the state between two blocks
   * of one job through the writer's queue, so no reader misses a version it could see.
   */
  holdStateNotices(): { release: () => void } {
    this.stateHeld++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        if (--this.stateHeld === 0 && this.stateOwed) {
          this.stateOwed = false;
          for (const o of this.observers) o.stateChanged(this.processedTip, this.processedRoot);
        }
      },
    };
  }

  // ---------------------------------------------------------------- durability

  /**
   * Waits until the last applied block is durable. A failed write halts the node (memory
   * is reloaded from what reached the disk) and throws `halted`. Every entry point that
   * changes state calls this first, and the writer calls it after each chain update.
   */
  async flushBlocks(): Promise<void> {
    if (this.run) await this.handOverRun();
    const f = this.inflight;
    if (!f) return;
    const err = await f.done;
    if (this.inflight === f) this.inflight = null;
    if (err) {
      const code = (err as NodeJS.ErrnoException).code ?? err.message;
      await this.halt('storage_write_failed', `storage write failed: ${code}`, false);
      throw new NodeError('halted', 'node is halted: storage write failed');
    }
  }

  /**
   * Adds a header-only block's batch, complete, to the run (written once, `handOverRun`);
   * a block that fails midway never reaches it. Past RUN_MAX_BYTES the run is handed over.
   */
  async addToRun(block: WriteBatch, claims: readonly string[]): Promise<void> {
    const r = (this.run ??= { batch: this.db.newBatch(), claims: new Set() });
    r.batch.append(block);
    for (const c of claims) r.claims.add(c);
    if (r.batch.bytes >= RUN_MAX_BYTES) await this.handOverRun();
  }

  /**
   * Hands the run's batch to RocksDB (synced) once the previous write is durable: from
   * here it is the write in flight, as a single block's batch is.
   */
  private async handOverRun(): Promise<void> {
    const r = this.run;
    if (!r) return;
    this.run = null;
    await this.flushBlocks();
    const done = this.db.commit(r.batch, true).then(
      () => null,
      (e: Error) => e,
    );
    this.inflight = { done, claims: [...r.claims] };
  }

  /** Forgets the run (a halt reloads memory from what reached the disk). */
  dropRun(): void {
    this.run = null;
  }

  /** Whether a call-id claim is in a batch not yet on disk (in flight or in the run), which a read of the disk may not show. */
  claimsUnwritten(): (claimId: string) => boolean {
    const inflight = new Set(this.inflight?.claims);
    const run = this.run?.claims;
    return (id) => inflight.has(id) || (run?.has(id) ?? false);
  }

  /** One synced batch; a failed write halts the node and throws `halted`. */
  async writeOrHalt(ops: BatchOp[], sync = true): Promise<void> {
    try {
      await this.db.batch(ops, sync);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      await this.halt('storage_write_failed', `storage write failed: ${code}`, false);
      throw new NodeError('halted', 'node is halted: storage write failed');
    }
  }

  refuseWhileHalted(): void {
    if (this.halted) throw new NodeError('halted', `node is halted: ${this.haltReason ?? 'unknown reason'}`);
  }

  // ---------------------------------------------------------------- loading

  /**
   * Rebuilds every in-memory structure from RocksDB (load.ts). Everything is built aside
   * and swapped in at once, so reads served while a rewind or replay runs never see a
   * half-loaded state.
   */
  async load(): Promise<void> {
    const loaded = await loadFromDisk(this.db);
    // The tip's root as stored: memory holds the contracts, the stored record the block's decisions too.
    const at = loaded.tip ? await readStateRootAt(this.db, loaded.tip.height) : null;
    // Swap in one synchronous step.
    this.memory = loaded.memory;
    this.anchor = loaded.anchor;
    this.halted = loaded.halt !== null;
    // A halt stored before halts had kinds was never a storage failure (those are not stored).
    this.haltKind = loaded.halt ? (loaded.halt.kind ?? 'internal_error') : null;
    this.haltReason = loaded.halt?.reason ?? null;
    this.rederiveOwed = loaded.rederiveOwed;
    this.setProcessed(loaded.tip, at?.state_root ?? loaded.memory.root(), at?.decisions_root ?? null);
    this.headerTip = await loadHeaderTip(this);
    const [low] = await this.db.rangeOf(undo.all(), { limit: 1 });
    this.undoLow = low ? undo.heightOf(low.key) : Infinity;
  }

  /** The store is of an earlier layout whose state roots are of another version (load.ts): Writer.open re-derives it. */
  rederiveOwed = false;

  /**
   * Re-derives a store of an earlier layout (every stored root of an earlier root version) from its
   * journal, then marks its layout current: a stop before the end leaves the old layout
   * marked, and the next start re-derives again.
   */
  async upgradeStore(): Promise<void> {
    if (!this.rederiveOwed || !this.tip || !this.anchor) return;
    // A halted store is not re-derived here (blocks are refused while halted): clearing the
    // halt re-derives it, and the next start marks the layout.
    if (this.halted) {
      this.log.warn('the store holds state roots of an earlier version and is halted: they are re-derived when the halt is cleared');
      return;
    }
    this.log.warn('the store holds state roots of an earlier version: re-deriving them from the block journal', { to: this.tip.height });
    await this.rederive(this.tip.height, { dropJournalAbove: false, verifyBelow: 0 });
    await this.writeOrHalt([{ type: 'put', key: meta.format.key, value: meta.format.encode(STORE_FORMAT) }], true);
    this.rederiveOwed = false;
  }

  /** What tests compare after a rewind: the memory a full load from disk would build. */
  memorySummary(): Record<string, unknown> {
    return { tip: this.tip, stateRoot: this.stateRoot, ...this.memory.summary() };
  }

  // ---------------------------------------------------------------- queries

  get pendingCount(): number {
    return this.memory.pending.size;
  }

  get contractCount(): number {
    return this.memory.contracts.size + this.memory.pendingContracts.size;
  }

  /** The lowest block a replay is owed from (reads.ts), null when nothing is owed. */
  owedReplayHeight(): number | null {
    return owedReplayHeight(this.memory);
  }

  knownHash(height: number): string | null {
    return this.memory.recentHashes.get(height) ?? null;
  }

  contractIds(): string[] {
    return [...this.memory.contracts.keys(), ...this.memory.pendingContracts.keys()].sort();
  }

  contract(id: string): ContractRecord | null {
    return this.memory.contracts.get(id)?.rec ?? this.memory.pendingContracts.get(id) ?? null;
  }

  program(id: string): Program | null {
    return this.memory.contracts.get(id)?.program ?? null;
  }

  call(txid: string): Promise<CallRecord | null> {
    return readCall(this.db, this.memory, txid);
  }

  /** Calls by txid (null where not held), read at once. */
  callsByTxid(txids: readonly string[]): Promise<(CallRecord | null)[]> {
    return readCalls(this.db, this.memory, txids);
  }

  /** What serving each of `txids` to a peer reads, in one multi-get (reads.ts). */
  readForPeers(txids: readonly string[]): Promise<PeerPayloadRead[]> {
    return readForPeers(this.db, this.memory, txids);
  }

  /** A call's payload (borsh envelope bytes) as received, or null. */
  callPayload(txid: string): Promise<Uint8Array | null> {
    return readCallPayload(this.db, txid);
  }

  /** What the node holds for a txid: a deploy (contract id) or a call. */
  payloadAt(txid: string): Promise<HeldPayload | null> {
    return readPayloadAt(this.db, txid);
  }

  storageGet(contractId: string, storageKey: Uint8Array): Uint8Array | undefined {
    const c = this.memory.contracts.get(contractId);
    return c ? this.memory.state.getStorage(c.id, storageKey) : undefined;
  }

  prove(contractId: string, storageKey: Uint8Array): FieldProof {
    return this.memory.state.prove(bytesOf(contractId), storageKey);
  }

  stateRootAt(height: number): Promise<StateRootAt | null> {
    return readStateRootAt(this.db, height);
  }

  /**
   * The branch of call `txid`'s decision under the state root of block `height`
   * (packages/protocol/src/state/decisions.ts): its leaf, or where its path ends when the block decided
   * nothing for it. Null when the node holds no root with decisions (version 2 on) for the block.
   */
  decisionProof(height: number, txid: string): Promise<DecisionProofJson | null> {
    return readDecisionProof(this.db, height, txid);
  }

  isCallIdUsed(caller: Uint8Array, callId: bigint): Promise<boolean> {
    return readCallIdUsed(this.db, caller, callId);
  }

  callCount(contractId: string): number {
    return this.memory.callCounts.get(contractId) ?? 0;
  }

  /** The contract's call log from `offset`: txids in (height, tx_index) order. */
  callTxids(contractId: string, offset: number, limit: number): Promise<string[]> {
    return readCallTxids(this.db, contractId, offset, limit);
  }

  callsOf(contractId: string, offset: number, limit: number): Promise<CallRecord[]> {
    return readCallsOf(this.db, this.memory, contractId, offset, limit);
  }

  events(contractId: string, fromHeight: number, toHeight: number, after: [number, number, number] | null, limit: number, name: string | null): Promise<EventRecord[]> {
    return readEvents(this.db, this.memory, contractId, fromHeight, toHeight, after, limit, name);
  }

  // ---------------------------------------------------------------- anchoring

  async initAnchor(tip: Tip): Promise<void> {
    await this.flushBlocks();
    if (this.tip) return;
    const root = this.memory.root();
    const ops: BatchOp[] = [
      { type: 'put', key: meta.format.key, value: meta.format.encode(STORE_FORMAT) },
      { type: 'put', key: meta.anchor.key, value: meta.anchor.encode(tip) },
      { type: 'put', key: meta.tip.key, value: meta.tip.encode(tip) },
      { type: 'put', key: stateRoots.key(tip.height), value: stateRoots.encode({ height: tip.height, block_hash: tip.hash, state_root: root }) },
    ];
    await this.writeOrHalt(ops);
    this.anchor = tip;
    this.memory.recentHashes.set(tip.height, tip.hash);
    this.setProcessed(tip, this.memory.root(), null);
    this.log.info('anchored block journal', { height: tip.height, hash: tip.hash });
  }

  // ---------------------------------------------------------------- intake (accept.ts)

  /** Stores a verified deploy registration durably; `created` is false when it was already known. */
  acceptDeploy(rec: ContractRecord, ev?: Evidence, folded?: FoldedRoots): Promise<{ created: boolean; record: ContractRecord; replayFrom: number | null }> {
    return acceptDeploy(this, rec, ev, folded);
  }

  /** Stores a verified call durably. */
  async acceptCall(rec: CallRecord, outpoint?: OutpointCheck, ev?: Evidence): Promise<{ created: boolean; record: CallRecord; replayFrom: number | null }> {
    const [r] = await this.acceptCalls([rec], [outpoint], [ev]);
    if (!r!.ok) throw r!.error;
    return r!;
  }

  /** Stores verified calls durably in one synced batch (group commit), one outcome per record. */
  acceptCalls(recs: readonly CallRecord[], outpoints: readonly (OutpointCheck | undefined)[] = [], evidences: readonly (Evidence | undefined)[] = [], folded: readonly (FoldedRoots | undefined)[] = []): Promise<AcceptedCall[]> {
    return acceptCalls(this, recs, outpoints, evidences, folded);
  }

  // ---------------------------------------------------------------- blocks (apply-block.ts)

  /**
   * Applies one block the chain brought on top of the tip. `batched`: its batch joins the
   * run (`addToRun`, a header-only block of a chain update) instead of being written alone.
   */
  applyBlock(b: ApplicableBlock, opts: { sync?: boolean; batched?: boolean } = {}): Promise<BlockRecord & { drops: BlockDrop[] }> {
    return this.timedApply(b, opts, false);
  }

  /** Applies a journal entry again (a late payload's replay, a re-derivation). */
  reapplyBlock(rec: BlockRecord, opts: { sync?: boolean }): Promise<BlockRecord> {
    return this.timedApply({ height: rec.height, hash: rec.hash, prevHash: rec.prevHash, txs: rec.txs, dropped: rec.dropped, unstamped: rec.unstamped }, opts, true);
  }

  private async timedApply(b: ApplicableBlock, opts: { sync?: boolean; batched?: boolean }, replay: boolean): Promise<BlockRecord & { drops: BlockDrop[] }> {
    const t0 = performance.now();
    const record = await applyBlock(this, b, opts);
    const seconds = (performance.now() - t0) / 1000;
    for (const o of this.observers) o.blockApplied(b.height, seconds, replay);
    return record;
  }

  // ---------------------------------------------------------------- headers and evidence (evidence.ts)

  /** Stores a verified, authenticated run of headers from `from` (evidence.ts). */
  putHeaders(from: number, run: readonly Uint8Array[], opts: { truncate: boolean }): Promise<Tip | null> {
    return putHeaders(this, from, run, opts);
  }

  /** The header at `height`, parsed, or null. */
  headerAt(height: number): Promise<ParsedHeader | null> {
    return headerAt(this, height);
  }

  /** Stored headers of heights [from, from + count), as far as they go. */
  headers(from: number, count: number): Promise<Buffer[]> {
    return headersFrom(this, from, count);
  }

  /** Removes the headers above `height` (the best chain ends there). */
  async truncateHeaders(height: number): Promise<void> {
    if (!this.headerTip || this.headerTip.height <= height) return;
    const ops: BatchOp[] = [];
    for (let h = height + 1; h <= this.headerTip.height; h++) ops.push({ type: 'del', key: headersStore.key(h) });
    await this.writeOrHalt(ops);
    const top = await headerAt(this, height);
    this.headerTip = top ? { height, hash: top.hash } : await loadHeaderTip(this);
  }

  /**
   * Blocks read as their header alone, with the transactions and spends the node's
   * evidence places in each (evidence.ts, evidenceBlocks: one read for them all); other
   * blocks as they are. Answers the leading blocks of `bs` up to the first header-only one
   * whose header is missing or is not its block's (at least one: when the first is such a
   * block, throws what is wrong with it), so that a caller applying them in order meets
   * that error where a block-by-block reading would.
   */
  async blocksFromEvidence(bs: readonly ApplicableBlock[]): Promise<{ block: ApplicableBlock; refused: number }[]> {
    // The hash and the link alone: the rest of the header (its merkle root) is parsed only
    // for the few blocks the node holds evidence in (evidenceBlocks), not for every one.
    const headerOf = (b: ApplicableBlock): Uint8Array => {
      if (!b.header) throw new NodeError('internal', `block ${b.height} is read as a header but comes without one`);
      if (b.header.length !== HEADER_BYTES || headerHash(b.header) !== b.hash || headerPrevHash(b.header) !== b.prevHash) throw new NodeError('internal', `header of block ${b.height} is not block ${b.hash}`);
      return b.header;
    };
    const take: ApplicableBlock[] = [];
    const read: HeaderOnlyBlock[] = [];
    for (const b of bs) {
      if (b.headerOnly) {
        let header: Uint8Array;
        try {
          header = headerOf(b);
        } catch (e) {
          if (take.length === 0) throw e;
          break;
        }
        read.push({ height: b.height, hash: b.hash, header });
      }
      take.push(b);
    }
    const found = await evidenceBlocks(this, read);
    let next = 0;
    return take.map((b) => {
      if (!b.headerOnly) return { block: b, refused: 0 };
      const ev = found[next++]!;
      return { block: { ...b, txs: ev.txs, spends: ev.spends, headerOnly: false }, refused: ev.refused };
    });
  }

  /** What `evidenceEffect` reads for a group of payloads, in one read (readForEvidence). */
  readForEvidence(items: readonly { txid: string; ev: Evidence | undefined }[]): Promise<EvidenceReads> {
    return readForEvidence(this, items);
  }

  /** The writes that keep a payload's evidence, and where it places or drops it (evidence.ts). */
  evidenceEffect(txid: string, kind: 'call' | 'deploy', outpoint: string | null, ev: Evidence, readAhead?: EvidenceReads, folded?: FoldedRoots): Promise<EvidenceEffect> {
    return evidenceEffect(this, txid, kind, outpoint, ev, readAhead, folded);
  }

  /** The evidence the node can serve for a payload (evidence.ts). */
  payloadEvidence(txid: string, decidedAt: { height: number; txIndex: number } | null, reads?: JournalReads, storedRaw?: { value: Buffer | undefined }): Promise<Evidence | null> {
    return payloadEvidence(this, txid, decidedAt, reads, storedRaw);
  }

  /** Which of `txids` are held pending, a call or a deploy (deferred checks forget the others at once). */
  stillPending(txids: readonly string[]): boolean[] {
    const deploys = new Set<string>();
    for (const c of this.memory.pendingContracts.values()) deploys.add(c.txid);
    return txids.map((t) => this.memory.pending.has(t) || deploys.has(t));
  }

  /**
   * Pending payloads, ascending by txid after `after`: what deferred checks and the peer
   * pull of evidence go through. `outpoint` is a call's named outpoint (null for a deploy);
   * `settles_at` the lowest block its stored evidence places or drops it in.
   */
  async pendingPayloads(after: string, limit: number): Promise<PendingPayload[]> {
    const all: Omit<PendingPayload, 'settles_at'>[] = [];
    for (const p of this.memory.pending.values()) if (p.rec.txid > after) all.push({ txid: p.rec.txid, kind: 'call', contract_id: p.rec.contract_id, outpoint: p.rec.outpoint });
    for (const c of this.memory.pendingContracts.values()) if (c.txid > after) all.push({ txid: c.txid, kind: 'deploy', contract_id: c.contract_id, outpoint: null });
    all.sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0));
    const page = all.slice(0, limit);
    const stored = await this.db.getMany(page.map((p) => evidenceStore.key(p.txid)));
    return page.map((p, i) => {
      const v = stored[i];
      return { ...p, settles_at: v ? settlesAt(evidenceStore.decode(v)) : null };
    });
  }

  /** Keeps a dropped call's spender evidence found in a block read in full (the core attaches it). */
  async storeSpentBy(items: readonly { txid: string; spentBy: SpentBy }[]): Promise<void> {
    if (items.length === 0) return;
    const got = await this.db.getMany(items.map((i) => evidenceStore.key(i.txid)));
    const ops: BatchOp[] = [];
    items.forEach((it, i) => {
      const v = got[i];
      if (!v) return; // a payload held without evidence (an older store): nothing to add to
      const ev = evidenceStore.decode(v);
      ops.push({ type: 'put', key: evidenceStore.key(it.txid), value: evidenceStore.encode({ ...ev, spentBy: it.spentBy }) });
    });
    if (ops.length > 0) await this.writeOrHalt(ops, false);
  }

  /**
   * Forgets pending payloads whose anchor the chain-data endpoint knows nowhere (neither
   * in its mempool nor on chain: deferred checks, src/core/deferred/), as if
   * never accepted: a payload is kept only while its anchor may still confirm, so storing
   * one costs its sender a Bitcoin transaction. Decided payloads are never touched.
   * Returns the txids removed.
   */
  async evictPayloads(txids: readonly string[]): Promise<string[]> {
    await this.flushBlocks();
    const m = this.memory;
    const ops: BatchOp[] = [];
    const gone: string[] = [];
    const deploys = new Map([...m.pendingContracts.values()].map((c) => [c.txid, c] as const));
    for (const txid of txids) {
      const id = bytesOf(txid);
      const call = m.pending.get(txid);
      const deploy = deploys.get(txid);
      if (!call && !deploy) continue;
      if (call) ops.push({ type: 'del', key: callsStore.key(id) }, { type: 'del', key: callBodies.key(id) }, { type: 'del', key: pendingCallsStore.key(id) });
      if (deploy) ops.push({ type: 'del', key: contractsStore.keyOf(deploy.contract_id) });
      ops.push({ type: 'del', key: payloadsStore.key(id) }, { type: 'del', key: evidenceStore.key(id) });
      if (m.orphans.has(txid)) ops.push({ type: 'del', key: orphanStamps.keyOf(txid) });
      gone.push(txid);
    }
    if (ops.length === 0) return [];
    await this.writeOrHalt(ops);
    for (const txid of gone) {
      if (m.pending.has(txid)) m.untrackPending(txid);
      const d = deploys.get(txid);
      if (d) m.pendingContracts.delete(d.contract_id);
      m.orphans.delete(txid);
    }
    return gone;
  }

  /** Heights below which claims filed under a block are no longer kept (a reorg there re-derives from the journal). */
  private claimsPrunedBelow = 0;

  /** Deletes claims for blocks out of the undo window: their anchors are in the journal by now. */
  async pruneClaims(): Promise<void> {
    if (!this.tip) return;
    const below = this.tip.height - JOURNAL_WINDOW;
    if (below <= this.claimsPrunedBelow) return;
    const rows = await this.db.rangeOf(evidenceAtStore.heights(this.claimsPrunedBelow, below - 1));
    if (rows.length > 0) await this.writeOrHalt(rows.map((r) => ({ type: 'del', key: r.key })), false);
    this.claimsPrunedBelow = below;
  }

  // ---------------------------------------------------------------- rewinds and replays (rewind.ts, replay.ts)

  /** The oldest height a reorganisation rolls back to through the undo logs (deeper, it re-derives). */
  get undoFloor(): number {
    if (!this.tip || !this.anchor) return 0;
    return Math.max(this.anchor.height, this.tip.height - JOURNAL_WINDOW);
  }

  /**
   * The lowest height whose undo log is stored (Infinity: none): set at load, raised as
   * blocks above REPLAY_WINDOW prune theirs. A store written before undo logs were kept
   * REPLAY_WINDOW blocks holds fewer, so the floor is what is stored, not the window.
   */
  undoLow = Infinity;

  /** The oldest height a late payload's replay rewinds to through the undo logs (deeper, it re-derives). */
  get replayFloor(): number {
    if (!this.tip || !this.anchor) return 0;
    const held = this.undoLow === Infinity ? this.tip.height : this.undoLow - 1;
    return Math.max(this.anchor.height, this.tip.height - REPLAY_WINDOW, held);
  }

  /**
   * Makes the state that after block `height`. Within the journal window the undo logs run
   * backwards, one atomic batch per block; deeper, the state is re-derived from the
   * journal. `dropJournal`: the blocks above `height` left the best chain (a reorg).
   */
  async rewindTo(height: number, opts: { dropJournal: boolean }): Promise<void> {
    const depth = await rewindTo(this, height, opts);
    if (depth > 0) for (const o of this.observers) o.rewound(depth, opts.dropJournal);
  }

  /**
   * Resets derived state to the anchor and replays the journal up to `height`. Heights
   * below `verifyBelow` must reproduce their stored state roots; a difference is a halt.
   */
  rederive(height: number, opts: { dropJournalAbove: boolean; verifyBelow: number }): Promise<void> {
    return rederive(this, height, opts);
  }

  /** Replays blocks from `fromHeight` after a late payload, keeping the journal. */
  replayFrom(fromHeight: number): Promise<void> {
    return replayFrom(this, fromHeight);
  }

  // ---------------------------------------------------------------- halts (halt.ts)

  halt(kind: HaltKind, reason: string, persist = true): Promise<void> {
    return halt(this, kind, reason, persist);
  }

  /** Operator action: re-derive from the journal and resume if it agrees with itself. */
  clearHalt(): Promise<void> {
    return clearHalt(this);
  }
}

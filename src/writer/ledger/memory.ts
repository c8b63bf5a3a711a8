/**
 * The ledger's in-memory model, in one class: active contracts and their storage (the
 * state tree), registered contracts, pending calls and their indexes, orphan stamps,
 * call counts, and the recent block hashes and spends. A load builds a new one and the
 * ledger swaps it in whole; a rewind restores it from undo entries; tests compare its
 * summary with a fresh load's. A field added here is built, restored and summarised here.
 *
 * Determinism: Maps are only iterated where order does not reach the state (or over
 * sorted keys).
 */
import { StateTree } from '@svc-node/protocol/state/state-tree';
import type { CallEnvelope } from '@svc-node/protocol/envelope';
import type { Host, Program } from '@svc-node/protocol/vm/types';
import type { CallRecord, ContractRecord, OrphanStamp } from '../../records.js';
import { Bucket, bucketOf, callCounts, callIds, contracts, meta, orphanStamps, storage, type Tip, type UndoEntry } from '../store/index.js';
import { hexOf, ownBytes, ownKey } from './bytes.js';
import type { StoredCall } from './stored.js';

export interface LiveContract {
  rec: ContractRecord;
  id: Uint8Array;
  codeHash: Uint8Array;
  program: Program;
  /** Parameter names of each event, from the ABI (looked up once, not per event). */
  eventParams: Map<string, string[]>;
}

function eventParamNames(abi: unknown[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of abi as { type?: string; name?: string; inputs?: { name?: string }[] }[]) {
    if (a && a.type === 'event' && typeof a.name === 'string') out.set(a.name, (a.inputs ?? []).map((x, i) => (typeof x?.name === 'string' ? x.name : String(i))));
  }
  return out;
}

export interface PendingCall {
  rec: CallRecord;
  envelope: CallEnvelope;
  /** Display order, a Buffer of its own (ownBytes): also the call-id index entry's value. */
  txid: Buffer;
  envelopeHash: Uint8Array;
  /** Its (caller, call_id) index key, and that key as a map key (latin1). */
  claimKey: Buffer;
  claimId: string;
  /**
   * Whether an executed or failed call already holds its (caller, call_id): read from disk
   * with its acceptance, then kept true by the blocks that claim the pair (pendingByClaim). Null
   * when unknown (after a load or a rewind): the block that confirms it reads the disk.
   */
  claimUsed: boolean | null;
}

/**
 * Pending txids by a string key (an outpoint, a call-id index key). Nearly every key has
 * one txid: it is stored as is, an array only for the rare key several calls share (a Set
 * per pending call cost as much as the rest of its bookkeeping).
 */
export class TxidIndex {
  private readonly map = new Map<string, string | string[]>();

  add(k: string, txid: string): void {
    const v = this.map.get(k);
    if (v === undefined) this.map.set(k, txid);
    else if (typeof v === 'string') {
      if (v !== txid) this.map.set(k, [v, txid]);
    } else if (!v.includes(txid)) v.push(txid);
  }

  remove(k: string, txid: string): void {
    const v = this.map.get(k);
    if (v === undefined) return;
    if (typeof v === 'string') {
      if (v === txid) this.map.delete(k);
      return;
    }
    const i = v.indexOf(txid);
    if (i >= 0) v.splice(i, 1);
    if (v.length === 1) this.map.set(k, v[0]!);
  }

  get(k: string): readonly string[] {
    const v = this.map.get(k);
    return v === undefined ? [] : typeof v === 'string' ? [v] : v;
  }

  /** The txids under `k` without building an array (block application asks once per call). */
  raw(k: string): string | readonly string[] | undefined {
    return this.map.get(k);
  }
}

/**
 * Spent outpoints of the latest live blocks the ledger keeps in memory (the core hands
 * every live block's spends over), to close the window between intake asking the chain
 * endpoint what spends a call's outpoint and the call reaching the writer: a block applied
 * meanwhile may spend it (acceptCalls). That window is one endpoint round trip (at most
 * esplora_timeout_ms) plus a group commit. Bounded by outpoints, not blocks: 200,000 are
 * ~25 MB, some 27 full mainnet blocks (hours at the tip), or thousands of small blocks
 * during a devnet's catch-up. A call whose window is not covered (a fast catch-up of
 * full blocks, a restart) is refused as retryable, once retried by intake itself.
 */
const RECENT_SPEND_LIMIT = 200_000;

export class LedgerMemory {
  readonly contracts = new Map<string, LiveContract>();
  /** Contracts registered but whose deploy is not confirmed: id -> record. */
  readonly pendingContracts = new Map<string, ContractRecord>();
  readonly state = new StateTree();
  readonly storageSize = new Map<string, number>();
  readonly pending = new Map<string, PendingCall>();
  readonly pendingByOutpoint = new TxidIndex();
  /** Pending calls by their (caller, call_id) index key (latin1). */
  readonly pendingByClaim = new TxidIndex();
  readonly orphans = new Map<string, OrphanStamp>();
  readonly callCounts = new Map<string, number>();
  readonly recentHashes = new Map<number, string>();
  /** Outpoints spent by the latest live blocks (RECENT_SPEND_LIMIT): height -> (outpoint, spender txid) pairs. */
  private readonly recentSpends = new Map<number, readonly (readonly [string, string])[]>();
  private recentSpendCount = 0;
  /** The same spends by outpoint: height and spender of each (an outpoint may be spent on several branches). */
  private readonly recentSpentBy = new Map<string, [number, string][]>();

  /** The state root of this memory, in hex. */
  root(): string {
    return hexOf(this.state.root());
  }

  // ---------------------------------------------------------------- contracts

  /** A contract whose deploy is confirmed, with its stored storage entries (a load) or none (its activation). */
  activate(rec: ContractRecord, codeHash: Uint8Array, program: Program, entries?: [Uint8Array, Uint8Array][], size = 0): void {
    const id = new Uint8Array(Buffer.from(rec.contract_id, 'hex'));
    this.pendingContracts.delete(rec.contract_id);
    this.contracts.set(rec.contract_id, { rec, id, codeHash, program, eventParams: eventParamNames(rec.artifact.abi) });
    this.state.addContract(id, codeHash, entries);
    this.storageSize.set(rec.contract_id, size);
  }

  /**
   * The VM's view of the ledger. One object for every call; contract lookups go through
   * liveOf, which answers the contract a call touches again (nearly every lookup) by a
   * 32-byte compare instead of a hex conversion.
   */
  readonly vmHost: Host = {
    program: (id) => this.liveOf(id)?.program,
    storageGet: (id, k) => this.state.getStorage(id, k),
    storageSize: (id) => {
      const live = this.liveOf(id);
      return live ? (this.storageSize.get(live.rec.contract_id) ?? 0) : 0;
    },
  };
  /** Cleared whenever a contract leaves `contracts`; entries are never changed in place. */
  private lastLive: LiveContract | null = null;

  private liveOf(id: Uint8Array): LiveContract | undefined {
    const last = this.lastLive;
    if (last !== null && last.id.length === id.length) {
      const own = last.id;
      let i = 0;
      while (i < id.length && id[i] === own[i]) i++;
      if (i === id.length) return last;
    }
    const live = this.contracts.get(hexOf(id));
    if (live) this.lastLive = live;
    return live;
  }

  // ---------------------------------------------------------------- pending calls

  /** `claimKey`: the call's (caller, call_id) index key when the caller already built it. */
  trackPending(full: CallRecord, envelope: CallEnvelope, claimUsed: boolean | null = null, claimKey = callIds.key(envelope.caller, envelope.callId)): void {
    // The payload stays on disk only (the callBody bucket): memory holds its decoded envelope.
    let rec = full;
    if (full.payload !== undefined) {
      const { payload: _onDisk, ...rest } = full;
      rec = rest;
    }
    const claimId = claimKey.toString('latin1');
    this.pending.set(rec.txid, { rec, envelope, txid: ownBytes(rec.txid), envelopeHash: ownBytes(rec.envelope_hash), claimKey: ownKey(claimKey), claimId, claimUsed });
    this.pendingByOutpoint.add(rec.outpoint, rec.txid);
    this.pendingByClaim.add(claimId, rec.txid);
  }

  untrackPending(txid: string, known?: PendingCall): void {
    const p = known ?? this.pending.get(txid);
    if (!p) return;
    this.pending.delete(txid);
    this.pendingByOutpoint.remove(p.rec.outpoint, txid);
    this.pendingByClaim.remove(p.claimId, txid);
  }

  // ---------------------------------------------------------------- recent spends

  /** The spends of live block `height`, undefined when memory does not cover it. */
  spendsAt(height: number): readonly (readonly [string, string])[] | undefined {
    return this.recentSpends.get(height);
  }

  /**
   * Keeps a live block's spends. Replays apply journal entries (no spends: the journal
   * keeps the verdicts), which are the blocks whose live spends are already here.
   */
  rememberSpends(height: number, spends: readonly (readonly [string, string])[]): void {
    if (this.recentSpends.has(height)) return;
    this.recentSpends.set(height, spends);
    this.recentSpendCount += spends.length;
    for (const [outpoint, spender] of spends) {
      const at = this.recentSpentBy.get(outpoint);
      if (at) at.push([height, spender]);
      else this.recentSpentBy.set(outpoint, [[height, spender]]);
    }
    // Oldest first (Map order is insertion order, and heights come in ascending order
    // but for a reorg's, which forgot the ones above its fork first).
    for (const [h] of this.recentSpends) {
      if (this.recentSpendCount <= RECENT_SPEND_LIMIT || h === height) break;
      this.forgetSpends(h);
    }
  }

  /** A reorg's rewind forgets the spends of the blocks it removes. */
  forgetSpends(height: number): void {
    const spends = this.recentSpends.get(height);
    if (!spends) return;
    this.recentSpendCount -= spends.length;
    this.recentSpends.delete(height);
    for (const [outpoint] of spends) {
      const at = this.recentSpentBy.get(outpoint);
      if (!at) continue;
      const rest = at.filter(([h]) => h !== height);
      if (rest.length > 0) this.recentSpentBy.set(outpoint, rest);
      else this.recentSpentBy.delete(outpoint);
    }
  }

  /** Where the live blocks memory remembers spent `outpoint`: [height, spender txid], lowest height first. */
  spentRecently(outpoint: string): readonly [number, string][] {
    const at = this.recentSpentBy.get(outpoint);
    return at ? [...at].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)) : [];
  }

  // ---------------------------------------------------------------- restore from undo

  /**
   * Why restoring memory from this undo entry is not expected (null when it is): the
   * entries a block writes are known (apply-block.ts: applyBlock, onDeployStamp,
   * putOrphan, finishCall, decideCall), and anything else sends a rewind to the full reload.
   */
  static undoEntryProblem(k: Buffer, prev: Buffer | null): string | null {
    switch (bucketOf(k)) {
      case Bucket.storage:
        return storage.isWellFormed(k) ? null : 'a storage key without a contract id';
      case Bucket.contract:
        return prev !== null && contracts.decode(prev).status !== 'active' ? null : 'a contract record that was not a registration';
      case Bucket.callDecision:
        return prev === null ? null : 'a decision that replaced another';
      case Bucket.meta:
        return meta.isTipKey(k) && prev !== null ? null : 'a meta key other than the tip';
      case Bucket.pendingCall:
      case Bucket.callIdIndex:
      case Bucket.orphanStamp:
      case Bucket.callCount:
      case Bucket.stateRoot:
      case Bucket.decisions:
      case Bucket.event:
      case Bucket.contractCalls:
      case Bucket.contractDrops:
        return null;
      default:
        return `a key of bucket ${bucketOf(k)}`;
    }
  }

  /**
   * Runs the undo logs of the rewound blocks (newest block first, each log backwards)
   * over memory, in one synchronous step; every entry passed `undoEntryProblem`.
   * `reopened`: the calls whose decision a rewound block made, pending again. `hashes`:
   * the recent block hashes to drop (heights above the rewind, when the journal drops
   * them) and to set (the window a load keeps). Returns the tip the logs restored.
   */
  restoreFromUndo(undone: readonly UndoEntry[][], reopened: readonly StoredCall[], tip: Tip | null, hashes: { drop: { above: number; upTo: number } | null; set: readonly [number, string][] }): Tip | null {
    const freedClaims: string[] = [];
    for (const entries of undone) {
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, prev] = entries[i]!;
        switch (bucketOf(k)) {
          case Bucket.storage: {
            // Own memory: a view would keep the whole undo log alive in the trie.
            const id = storage.contractIdOf(k);
            const storageKey = storage.fieldOf(k);
            const value = prev ? Buffer.from(new Uint8Array(prev)) : null;
            const replaced = this.state.setStorage(id, storageKey, value);
            const cid = hexOf(id);
            const delta = (value ? storageKey.length + value.length : 0) - (replaced ? storageKey.length + replaced.length : 0);
            this.storageSize.set(cid, (this.storageSize.get(cid) ?? 0) + delta);
            break;
          }
          case Bucket.contract: {
            // Activated by the rewound block: registered again, not active.
            const rec = contracts.decode(prev!);
            this.contracts.delete(rec.contract_id);
            this.state.removeContract(contracts.idOf(k));
            this.storageSize.delete(rec.contract_id);
            this.pendingContracts.set(rec.contract_id, rec);
            this.lastLive = null;
            break;
          }
          case Bucket.callIdIndex:
            freedClaims.push(k.toString('latin1'));
            break;
          case Bucket.orphanStamp:
            if (prev) {
              const o = orphanStamps.decode(prev);
              this.orphans.set(o.txid, o);
            } else this.orphans.delete(orphanStamps.txidOf(k));
            break;
          case Bucket.callCount:
            if (prev) this.callCounts.set(callCounts.contractOf(k), callCounts.decode(prev));
            else this.callCounts.delete(callCounts.contractOf(k));
            break;
          case Bucket.meta:
            tip = meta.tip.decode(prev!);
            break;
          // Decisions come back through `reopened`; markers, state roots, events and
          // call-log entries are not held in memory.
        }
      }
    }
    for (const { rec, envelope } of reopened) this.trackPending(rec, envelope);
    // A claim the rewound blocks had taken is free again: calls sharing it no longer know.
    for (const claim of freedClaims) for (const t of this.pendingByClaim.get(claim)) this.pending.get(t)!.claimUsed = null;
    if (hashes.drop) for (let h = hashes.drop.upTo; h > hashes.drop.above; h--) this.recentHashes.delete(h);
    for (const [h, hash] of hashes.set) this.recentHashes.set(h, hash);
    return tip;
  }

  // ---------------------------------------------------------------- tests

  /**
   * What tests compare after a rewind: the memory a full load from disk would build
   * (sorted, and without claimUsed, which a load leaves unknown on purpose; recent spends
   * are what live blocks brought since the node started, which no load rebuilds).
   */
  summary(): Record<string, unknown> {
    const sorted = <T>(m: Map<string, T>, f: (v: T) => unknown = (v) => v): [string, unknown][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, f(v)]);
    return {
      contracts: sorted(this.contracts, (c) => c.rec),
      pendingContracts: sorted(this.pendingContracts),
      storageSize: sorted(this.storageSize),
      pending: sorted(this.pending, (p) => [p.rec, p.claimId]),
      orphans: sorted(this.orphans),
      callCounts: sorted(this.callCounts),
      recentHashes: [...this.recentHashes].sort(([a], [b]) => a - b),
    };
  }
}

/**
 * The ledger: everything the writer thread knows and every rule of PROTOCOL.md sections
 * 3 to 5 that changes state. Hot state (active contracts, their storage, pending calls,
 * orphan stamps) lives in memory with RocksDB as the durable copy; history (decided
 * calls, events, state roots, the block journal) is read from RocksDB.
 *
 * Every connected block is applied in one atomic, synced write batch that also carries
 * its undo log (the previous value of every key it wrote, taken from memory, never read
 * back from disk) for the last JOURNAL_WINDOW blocks. Deeper rewinds re-derive the state
 * from the block journal, which keeps every stamped transaction the node has seen.
 *
 * Determinism: the order of application is the chain's (height, transaction index);
 * within a call the VM orders writes; Maps are only iterated where order does not reach
 * the state (or over sorted keys).
 */
import { createHash } from 'node:crypto';
import { Transaction } from 'bitcoinjs-lib';
import { Bucket, Db, key, prefixEnd, type BatchOp, type WriteBatch } from './db.js';
import { StateTree, type FieldProof } from '../state/state-tree.js';
import { NodeError } from '../errors.js';
import { toHex } from '../protocol/hash.js';
import { findStamp, type StampResult } from '../protocol/stamp.js';
import { decodeEnvelope, type CallEnvelope } from '../protocol/envelope.js';
import { checkCallBindingWithStamp } from '../protocol/binding.js';
import { callVerdict, dropsCall, repeatOrConflict, type HeldPayload } from '../protocol/rules.js';
import type { OutpointCheck } from '../messages.js';
import { contractId as deriveContractId } from '../protocol/contract.js';
import { execute } from '../vm/execute.js';
import { verifyArtifact } from '../vm/verifier.js';
import type { Host, Program } from '../vm/types.js';
import type { Logger } from '../log.js';
import { EVENT_CHUNK, decodeCallRecord, decodeBlockEvents, decodeBlockCalls, encodeBlockCalls, encodeBlockEvents, encodeCallDecision, encodeCallFixed, encodeBlockRecord, decodeBlockRecord, storedBlockHash, type CallOutcome, type StoredEventRow, type BlockInput, type BlockRecord, type CallRecord, type ContractRecord, type EventRecord, type OrphanStamp, type TxParts } from './records.js';

/** SERVICE-SPEC section 3: undo logs and the block journal cover the last 144 blocks. */
export const JOURNAL_WINDOW = 144;

/**
 * Layout of the stored records (records.ts). A data directory written with another
 * layout is refused at startup rather than misread; 2: binary call records; 3: state roots
 * from the Merkle trie (stored roots of format 2 would not replay), events in runs of
 * EVENT_CHUNK per key; 4: a call's decision in its own record (Bucket.callDecision),
 * event runs, decisions and journal entries binary.
 */
export const STORE_FORMAT = 4;

const hexOf = (b: Uint8Array): string => toHex(b);
const bytesOf = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
/** A copy of `k` in memory of its own (kept while a call is pending: not a slice of the shared pool). */
const ownKey = (k: Buffer): Buffer => {
  const b = Buffer.allocUnsafeSlow(k.length);
  k.copy(b);
  return b;
};
/** 32 bytes of hex in a Buffer of its own: kept while a call is pending, so not a slice of the shared pool. */
const ownBytes = (h: string): Buffer => {
  const b = Buffer.allocUnsafeSlow(h.length >>> 1);
  if (b.write(h, 'hex') !== b.length) throw new Error(`not hex: ${h}`);
  return b;
};
const u32be = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
};
const u64be = (n: bigint): Buffer => {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64BE(n, 0);
  return b;
};
const EMPTY = Buffer.alloc(0);
/** The decision of a dropped call: no position, no result (PROTOCOL section 5). */
const DROPPED: CallOutcome = { status: 'dropped', block_height: null, tx_index: null, result: null, error: null, instructions: null };
const bufferView = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
const parse = <T>(b: Buffer): T => JSON.parse(b.toString('utf8')) as T;

interface LiveContract {
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

interface PendingCall {
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
class TxidIndex {
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

/** Block records (event runs or call-log entries of one contract) read per page of a scan at most: bounds memory. */
const EVENT_PAGE = 64;
const CALL_LOG_PAGE = 64;

/** The decision fields of a call that is not decided yet. */

export interface Tip {
  height: number;
  hash: string;
}

/** Collects one block's writes with the previous value of each key, for its undo log. */
class UndoBatch {
  readonly undo = new UndoLog();
  /** Call-id index keys (latin1) this block claims. */
  readonly claims: string[] = [];
  /**
   * Per contract (hex id): this block's events and decided calls, written as one record
   * each at the end of the block rather than one key per event and per call.
   */
  readonly perContract = new Map<string, { id: Uint8Array; events: StoredEventRow[]; calls: Uint8Array[] }>();

  contractLog(cid: string, id: Uint8Array): { id: Uint8Array; events: StoredEventRow[]; calls: Uint8Array[] } {
    let c = this.perContract.get(cid);
    if (!c) {
      c = { id, events: [], calls: [] };
      this.perContract.set(cid, c);
    }
    return c;
  }
  private readonly seen = new Set<string>();
  /**
   * Storage writes by key (latin1): a key written by several calls of the block reaches
   * RocksDB once, with its last value (flushStorage); one native put costs about 2 us.
   */
  private readonly storage = new Map<string, [Buffer, Buffer | null]>();

  constructor(readonly out: WriteBatch) {}

  storageWrite(k: Buffer, v: Buffer | null, prev: Buffer | null): void {
    if (this.flushed) throw new Error('storage write after the block was flushed');
    const id = k.toString('latin1');
    const pending = this.storage.get(id);
    if (pending !== undefined) {
      pending[1] = v; // the first previous value is the one to restore
      return;
    }
    this.undo.add(k, prev);
    this.storage.set(id, [k, v]);
  }

  /** Once, after the block's last call: a write after it would be lost. */
  flushStorage(): void {
    if (this.flushed) throw new Error('block storage flushed twice');
    this.flushed = true;
    for (const [k, v] of this.storage.values()) {
      if (v) this.out.put(k, v);
      else this.out.del(k);
    }
  }
  private flushed = false;

  put(k: Buffer, v: Buffer, prev: Buffer | null): void {
    this.remember(k, prev);
    this.out.put(k, v);
  }

  del(k: Buffer, prev: Buffer | null): void {
    this.remember(k, prev);
    this.out.del(k);
  }

  delOnce(k: Buffer, prev: Buffer | null): void {
    this.undo.add(k, prev);
    this.out.del(k);
  }

  /**
   * A key this block creates and nothing else writes (an event, a call-id index entry, a
   * call-log entry): undone by deleting it, with no de-duplication bookkeeping.
   */
  putNew(k: Buffer, v: Buffer): void {
    this.undo.add(k, null);
    this.out.put(k, v);
  }

  /** A write that is not undone (the undo log itself, the journal). */
  raw(op: BatchOp): void {
    if (op.type === 'put') this.out.put(op.key, op.value!);
    else this.out.del(op.key);
  }

  private remember(k: Buffer, prev: Buffer | null): void {
    const id = k.toString('latin1');
    if (this.seen.has(id)) return; // the first previous value is the one to restore
    this.seen.add(id);
    this.undo.add(k, prev);
  }
}

/**
 * Undo log encoding: per entry u32le key length, key, u8 present, then (if present)
 * u32le value length and value. Binary, so no per-key hex or base64 work; written as
 * entries come (one growing buffer, no list of pairs encoded again at the end).
 */
export class UndoLog {
  private buf = Buffer.allocUnsafe(UNDO_INITIAL_BYTES);
  private len = 0;

  add(k: Buffer, v: Buffer | null): void {
    const need = 9 + k.length + (v ? v.length : 0);
    if (this.len + need > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + need));
      this.buf.copy(next, 0, 0, this.len);
      this.buf = next;
    }
    // set(), not copy(): copy() goes through a native call, about twice the cost for
    // entries this small (tens of bytes), and a block adds thousands of them.
    const out = this.buf;
    let o = out.writeUInt32LE(k.length, this.len);
    out.set(k, o);
    o += k.length;
    out[o++] = v ? 1 : 0;
    if (v) {
      o = out.writeUInt32LE(v.length, o);
      out.set(v, o);
      o += v.length;
    }
    this.len = o;
  }

  /** The encoded log (a view of the buffer: RocksDB copies it into its batch). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}
/** A block of 1,000 transfers writes about 220 KB of undo entries: a few doublings at most. */
const UNDO_INITIAL_BYTES = 64 * 1024;

/** One undo entry: a key and what it held before the block (null: absent). */
export type UndoEntry = [Buffer, Buffer | null];

/** Pending calls read back per getMany in a reload: one round trip per this many calls. */
const RELOAD_CHUNK = 512;

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
/** Reorg fork heights remembered for droppedAt: far more reorgs than one intake round trip can see. */
const REORG_LOG = 64;

/**
 * Why restoring memory from this undo entry is not expected (null when it is): the
 * entries a block writes are known (applyBlock, onDeployStamp, putOrphan, finishCall,
 * decideCall), and anything else sends a rewind to the full reload.
 */
function undoEntryProblem(k: Buffer, prev: Buffer | null): string | null {
  switch (k[0]) {
    case Bucket.storage:
      return k.length >= 33 ? null : 'a storage key without a contract id';
    case Bucket.contract:
      return prev !== null && parse<ContractRecord>(prev).status !== 'active' ? null : 'a contract record that was not a registration';
    case Bucket.callDecision:
      return prev === null ? null : 'a decision that replaced another';
    case Bucket.meta:
      return k.subarray(1).toString('utf8') === 'tip' && prev !== null ? null : 'a meta key other than the tip';
    case Bucket.pendingCall:
    case Bucket.callIdIndex:
    case Bucket.orphanStamp:
    case Bucket.callCount:
    case Bucket.stateRoot:
    case Bucket.event:
    case Bucket.contractCalls:
      return null;
    default:
      return `a key of bucket ${k[0]}`;
  }
}

export function decodeUndo(b: Buffer): UndoEntry[] {
  const out: UndoEntry[] = [];
  let o = 0;
  while (o < b.length) {
    const kl = b.readUInt32LE(o);
    o += 4;
    const k = b.subarray(o, o + kl);
    o += kl;
    const present = b[o++] === 1;
    if (!present) {
      out.push([k, null]);
      continue;
    }
    const vl = b.readUInt32LE(o);
    o += 4;
    out.push([k, b.subarray(o, o + vl)]);
    o += vl;
  }
  return out;
}

export class Ledger {
  private contracts = new Map<string, LiveContract>();
  /** Contracts registered but whose deploy is not confirmed: id -> record. */
  private pendingContracts = new Map<string, ContractRecord>();
  private state = new StateTree();
  private storageSize = new Map<string, number>();
  private pending = new Map<string, PendingCall>();
  private pendingByOutpoint = new TxidIndex();
  /** Pending calls by their (caller, call_id) index key (latin1). */
  private pendingByClaim = new TxidIndex();
  private orphans = new Map<string, OrphanStamp>();
  private callCounts = new Map<string, number>();
  private recentHashes = new Map<number, string>();
  /** Outpoints spent by the latest live blocks (RECENT_SPEND_LIMIT): height -> (outpoint, spender txid) pairs. */
  private recentSpends = new Map<number, readonly (readonly [string, string])[]>();
  private recentSpendCount = 0;
  /**
   * Counts the reorgs this ledger has rewound (since it was opened), with the fork height
   * of the last REORG_LOG of them: a call checked before a reorg had the blocks above
   * that fork checked on another branch (droppedAt).
   */
  chainEpoch = 0;
  private reorgForks: { epoch: number; fork: number }[] = [];
  tip: Tip | null = null;
  anchor: Tip | null = null;
  stateRoot: string | null = null;
  halted = false;
  haltReason: string | null = null;
  lastBlockAt: string | null = null;
  /**
   * The last applied block's batch while RocksDB writes it: the next block is computed
   * meanwhile (catch-up, replays) and handed over once this one is durable. `claims` are
   * its call-id claims, which a read of the disk may not show yet.
   */
  private inflight: { done: Promise<Error | null>; claims: string[] } | null = null;

  constructor(
    readonly db: Db,
    private readonly log: Logger,
  ) {}

  // ---------------------------------------------------------------- durability

  /**
   * Waits until the last applied block is durable. A failed write halts the node (memory
   * is reloaded from what reached the disk) and throws `halted`. Every entry point that
   * changes state calls this first, and the writer calls it after each chain update.
   */
  async flushBlocks(): Promise<void> {
    const f = this.inflight;
    if (!f) return;
    const err = await f.done;
    if (this.inflight === f) this.inflight = null;
    if (err) {
      const code = (err as NodeJS.ErrnoException).code ?? err.message;
      await this.halt(`storage write failed: ${code}`, false);
      throw new NodeError('halted', 'node is halted: storage write failed');
    }
  }

  // ---------------------------------------------------------------- loading

  /**
   * Rebuilds every in-memory structure from RocksDB. Everything is built aside and swapped
   * in at once, so reads served while a rewind or replay runs never see a half-loaded state.
   */
  async load(): Promise<void> {
    const next = new Ledger(this.db, this.log);
    const meta = async <T>(name: string): Promise<T | null> => {
      const v = await this.db.get(key(Bucket.meta, name));
      return v ? parse<T>(v) : null;
    };
    const tip = await meta<Tip>('tip');
    const anchor = await meta<Tip>('anchor');
    const halt = await meta<{ reason: string }>('halt');
    const format = await meta<number>('format');
    if (tip && format !== STORE_FORMAT) {
      throw new Error(`the data directory ${this.db.path} holds storage format ${format ?? 1}, this node reads format ${STORE_FORMAT}: move it aside and let the node sync again`);
    }

    for (const { value } of await this.db.range(key(Bucket.contract), prefixEnd(key(Bucket.contract)))) {
      const rec = parse<ContractRecord>(value);
      if (rec.status === 'active') await next.activateInMemory(rec);
      else next.pendingContracts.set(rec.contract_id, rec);
    }
    const pendingTxids = (await this.db.range(key(Bucket.pendingCall), prefixEnd(key(Bucket.pendingCall)))).map((r) => r.key.subarray(1));
    const calls = await this.readCalls(pendingTxids);
    calls.forEach((c, i) => {
      if (c === 'no record') return;
      if (c === 'no payload') throw new Error(`pending call ${pendingTxids[i]!.toString('hex')} has no stored payload`);
      next.trackPending(c.rec, c.envelope);
    });
    for (const { value } of await this.db.range(key(Bucket.orphanStamp), prefixEnd(key(Bucket.orphanStamp)))) {
      const o = parse<OrphanStamp>(value);
      next.orphans.set(o.txid, o);
    }
    for (const { key: k, value } of await this.db.range(key(Bucket.callCount), prefixEnd(key(Bucket.callCount)))) {
      next.callCounts.set(k.subarray(1).toString('hex'), Number(value.toString('utf8')));
    }
    if (tip) {
      // Up to the journal's last entry, which is above the tip only while a replay re-applies
      // the journal (or after a stop in one): those blocks are still this node's chain, and
      // the block watcher may ask for them meanwhile (knownHash).
      const [last] = await this.db.range(key(Bucket.block), prefixEnd(key(Bucket.block)), { limit: 1, reverse: true });
      const top = Math.max(tip.height, last ? last.key.readUInt32BE(1) : 0);
      for (const [h, hash] of await this.journalHashes(top - 2 * JOURNAL_WINDOW, top + 1)) next.recentHashes.set(h, hash);
      if (anchor) next.recentHashes.set(anchor.height, anchor.hash);
    }
    // Swap in one synchronous step.
    this.contracts = next.contracts;
    this.lastLive = null;
    this.pendingContracts = next.pendingContracts;
    this.state = next.state;
    this.storageSize = next.storageSize;
    this.pending = next.pending;
    this.pendingByOutpoint = next.pendingByOutpoint;
    this.pendingByClaim = next.pendingByClaim;
    this.orphans = next.orphans;
    this.callCounts = next.callCounts;
    this.recentHashes = next.recentHashes;
    this.recentSpends = new Map();
    this.recentSpendCount = 0;
    this.tip = tip;
    this.anchor = anchor;
    this.halted = halt !== null;
    this.haltReason = halt?.reason ?? null;
    this.stateRoot = hexOf(this.state.root());
  }

  /**
   * Records and payloads of these calls in batched reads (one round trip per
   * RELOAD_CHUNK calls), in order. Envelopes are decoded from a copy, as at acceptance,
   * so a call held in memory keeps no slice of a larger buffer.
   */
  private async readCalls(txids: readonly Buffer[]): Promise<({ rec: CallRecord; envelope: CallEnvelope } | 'no record' | 'no payload')[]> {
    const out: ({ rec: CallRecord; envelope: CallEnvelope } | 'no record' | 'no payload')[] = [];
    for (let i = 0; i < txids.length; i += RELOAD_CHUNK) {
      const chunk = txids.slice(i, i + RELOAD_CHUNK);
      const got = await this.db.getMany(chunk.flatMap((t) => [key(Bucket.call, t), key(Bucket.callBody, t)]));
      for (let j = 0; j < chunk.length; j++) {
        const fixed = got[2 * j];
        const body = got[2 * j + 1];
        out.push(!fixed ? 'no record' : !body ? 'no payload' : { rec: decodeCallRecord(fixed, undefined), envelope: decodeEnvelope(new Uint8Array(body)) });
      }
    }
    return out;
  }

  /** Block hashes of the journal entries at heights from..to-1 (from below 0 counts from 0). */
  private async journalHashes(from: number, to: number): Promise<[number, string][]> {
    if (to <= Math.max(0, from)) return [];
    const rows = await this.db.range(key(Bucket.block, u32be(Math.max(0, from))), key(Bucket.block, u32be(to)));
    return rows.map(({ key: k, value }) => [k.readUInt32BE(1), storedBlockHash(value)]);
  }

  private async activateInMemory(rec: ContractRecord): Promise<void> {
    const id = bytesOf(rec.contract_id);
    const v = verifyArtifact(rec.artifact as never);
    if (!v.ok) throw new Error(`stored contract ${rec.contract_id} no longer verifies: ${v.reason}`);
    const entries: [Uint8Array, Uint8Array][] = [];
    let size = 0;
    const prefix = key(Bucket.storage, id);
    for (const { key: k, value } of await this.db.range(prefix, prefixEnd(prefix))) {
      const sk = new Uint8Array(k.subarray(prefix.length));
      entries.push([sk, value]);
      size += sk.length + value.length;
    }
    this.contracts.set(rec.contract_id, { rec, id, codeHash: bytesOf(rec.code_hash), program: v.program, eventParams: eventParamNames(rec.artifact.abi) });
    this.state.addContract(id, bytesOf(rec.code_hash), entries);
    this.storageSize.set(rec.contract_id, size);
  }

  /** `claimKey`: the call's (caller, call_id) index key when the caller already built it. */
  private trackPending(full: CallRecord, envelope: CallEnvelope, claimUsed: boolean | null = null, claimKey = key(Bucket.callIdIndex, envelope.caller, u64be(envelope.callId))): void {
    // The payload stays on disk only (Bucket.callBody): memory holds its decoded envelope.
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

  private untrackPending(txid: string, known?: PendingCall): void {
    const p = known ?? this.pending.get(txid);
    if (!p) return;
    this.pending.delete(txid);
    this.pendingByOutpoint.remove(p.rec.outpoint, txid);
    this.pendingByClaim.remove(p.claimId, txid);
  }

  // ---------------------------------------------------------------- queries

  get pendingCount(): number {
    return this.pending.size;
  }

  get contractCount(): number {
    return this.contracts.size + this.pendingContracts.size;
  }

  /**
   * The lowest block a replay is owed from: a stored payload (pending call or deploy) whose
   * stamp is still an orphan was accepted late and its replay never finished (the node
   * stopped between the durable accept and the end of the replay; a replay rewinds the
   * orphan away). Null when nothing is owed.
   */
  owedReplayHeight(): number | null {
    let from: number | null = null;
    let deployTxids: Set<string> | null = null;
    for (const o of this.orphans.values()) {
      let owed: boolean;
      if (o.kind === 'call') owed = this.pending.has(o.txid);
      else {
        deployTxids ??= new Set([...this.pendingContracts.values()].map((r) => r.txid));
        owed = deployTxids.has(o.txid);
      }
      if (owed && (from === null || o.block_height < from)) from = o.block_height;
    }
    return from;
  }

  knownHash(height: number): string | null {
    return this.recentHashes.get(height) ?? null;
  }

  contractIds(): string[] {
    return [...this.contracts.keys(), ...this.pendingContracts.keys()].sort();
  }

  contract(id: string): ContractRecord | null {
    return this.contracts.get(id)?.rec ?? this.pendingContracts.get(id) ?? null;
  }

  program(id: string): Program | null {
    return this.contracts.get(id)?.program ?? null;
  }

  async call(txid: string): Promise<CallRecord | null> {
    const p = this.pending.get(txid);
    if (p) return p.rec;
    const t = bytesOf(txid);
    const [fixed, decision] = await this.db.getMany([key(Bucket.call, t), key(Bucket.callDecision, t)]);
    return fixed ? decodeCallRecord(fixed, decision) : null;
  }

  /** A call's payload (borsh envelope bytes) as received, or null. */
  async callPayload(txid: string): Promise<Uint8Array | null> {
    const v = await this.db.get(key(Bucket.callBody, bytesOf(txid)));
    return v ? new Uint8Array(v) : null;
  }

  /** What the node holds for a txid: a deploy (contract id) or a call. */
  async payloadAt(txid: string): Promise<{ kind: 'deploy'; contract_id: string; body_hash: string } | { kind: 'call'; contract_id: string; body_hash: string } | null> {
    const v = await this.db.get(key(Bucket.payload, bytesOf(txid)));
    return v ? parse(v) : null;
  }

  storageGet(contractId: string, storageKey: Uint8Array): Uint8Array | undefined {
    const c = this.contracts.get(contractId);
    return c ? this.state.getStorage(c.id, storageKey) : undefined;
  }

  prove(contractId: string, storageKey: Uint8Array): FieldProof {
    return this.state.prove(bytesOf(contractId), storageKey);
  }

  async stateRootAt(height: number): Promise<{ height: number; block_hash: string; state_root: string } | null> {
    const v = await this.db.get(key(Bucket.stateRoot, u32be(height)));
    return v ? parse(v) : null;
  }

  async isCallIdUsed(caller: Uint8Array, callId: bigint): Promise<boolean> {
    return (await this.db.get(key(Bucket.callIdIndex, caller, u64be(callId)))) !== undefined;
  }

  callCount(contractId: string): number {
    return this.callCounts.get(contractId) ?? 0;
  }

  /** The contract's call log from `offset`: txids in (height, tx_index) order. */
  async callTxids(contractId: string, offset: number, limit: number): Promise<string[]> {
    const prefix = key(Bucket.contractCalls, bytesOf(contractId));
    const out: string[] = [];
    let skipped = 0;
    // One record per block; read in bounded pages so a deep offset costs time, not memory.
    for await (const r of this.scan(prefix, prefixEnd(prefix), CALL_LOG_PAGE)) {
      for (const txid of decodeBlockCalls(r.value)) {
        if (skipped < offset) skipped++;
        else out.push(txid);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async callsOf(contractId: string, offset: number, limit: number): Promise<CallRecord[]> {
    const out: CallRecord[] = [];
    for (const t of await this.callTxids(contractId, offset, limit)) {
      const c = await this.call(t);
      if (c) out.push(c);
    }
    return out;
  }

  async events(contractId: string, fromHeight: number, toHeight: number, after: [number, number, number] | null, limit: number, name: string | null): Promise<EventRecord[]> {
    const id = bytesOf(contractId);
    const hi = toHeight >= 0xffffffff ? prefixEnd(key(Bucket.event, id)) : key(Bucket.event, id, u32be(toHeight + 1));
    let lo = key(Bucket.event, id, u32be(after ? after[0] : fromHeight));
    if (after) {
      // The run holding the cursor starts at or before it: the last run key <= the cursor's.
      const atCursor = key(Bucket.event, id, u32be(after[0]), u32be(after[1]), u32be(after[2]), Buffer.of(0));
      const [run] = await this.db.range(lo, atCursor, { limit: 1, reverse: true });
      if (run) lo = run.key;
    }
    // Enough runs for the page in one read when no name filter skips events.
    const page = Math.min(EVENT_PAGE, Math.ceil(limit / EVENT_CHUNK) + 1);
    const eventParams = this.contracts.get(contractId)?.eventParams;
    const names = (event: string): readonly string[] | undefined => eventParams?.get(event);
    const out: EventRecord[] = [];
    for await (const r of this.scan(lo, hi, page)) {
      for (const e of decodeBlockEvents(contractId, r.key.readUInt32BE(33), r.value, names)) {
        if (after && (e.block_height === after[0] && (e.tx_index < after[1] || (e.tx_index === after[1] && e.log_index <= after[2])))) continue;
        if (name === null || e.name === name) out.push(e);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }


  /** Entries in [gte, lt) in key order, read `page` at a time. */
  private async *scan(gte: Buffer, lt: Buffer, page: number): AsyncGenerator<{ key: Buffer; value: Buffer }> {
    let from = gte;
    for (;;) {
      const rows = await this.db.range(from, lt, { limit: page });
      yield* rows;
      if (rows.length < page) return;
      from = Buffer.concat([rows[rows.length - 1]!.key, Buffer.of(0)]);
    }
  }

  // ---------------------------------------------------------------- anchoring

  async initAnchor(tip: Tip): Promise<void> {
    await this.flushBlocks();
    if (this.tip) return;
    const ops: BatchOp[] = [
      { type: 'put', key: key(Bucket.meta, 'format'), value: json(STORE_FORMAT) },
      { type: 'put', key: key(Bucket.meta, 'anchor'), value: json(tip) },
      { type: 'put', key: key(Bucket.meta, 'tip'), value: json(tip) },
      { type: 'put', key: key(Bucket.stateRoot, u32be(tip.height)), value: json({ height: tip.height, block_hash: tip.hash, state_root: hexOf(this.state.root()) }) },
    ];
    await this.writeOrHalt(ops);
    this.anchor = tip;
    this.tip = tip;
    this.recentHashes.set(tip.height, tip.hash);
    this.stateRoot = hexOf(this.state.root());
    this.log.info('anchored block journal', { height: tip.height, hash: tip.hash });
  }

  // ---------------------------------------------------------------- intake

  /** Stores a verified deploy registration durably. Returns false when it was already known. */
  async acceptDeploy(rec: ContractRecord): Promise<{ created: boolean; record: ContractRecord; replayFrom: number | null }> {
    await this.flushBlocks();
    this.refuseWhileHalted();
    if (repeatOrConflict(await this.payloadAt(rec.txid), rec.txid, 'deploy', rec.body_hash) === 'repeat') {
      return { created: false, record: this.contract(rec.contract_id)!, replayFrom: null };
    }
    const ops: BatchOp[] = [
      { type: 'put', key: key(Bucket.contract, bytesOf(rec.contract_id)), value: json(rec) },
      { type: 'put', key: key(Bucket.payload, bytesOf(rec.txid)), value: json({ kind: 'deploy', contract_id: rec.contract_id, body_hash: rec.body_hash }) },
    ];
    await this.writeOrHalt(ops);
    this.pendingContracts.set(rec.contract_id, rec);
    const orphan = this.orphans.get(rec.txid);
    return { created: true, record: rec, replayFrom: orphan ? orphan.block_height : null };
  }

  /** Stores a verified call durably. */
  async acceptCall(rec: CallRecord, outpoint?: OutpointCheck): Promise<{ created: boolean; record: CallRecord; replayFrom: number | null }> {
    const [r] = await this.acceptCalls([rec], [outpoint]);
    if (!r!.ok) throw r!.error;
    return r!;
  }

  /**
   * Where a call accepted now was already dropped (PROTOCOL section 5): the height of the
   * processed block in which a transaction other than its anchor spent its outpoint, or
   * null when no processed block did (a block applied later drops it while it is
   * pending). `check` is what intake learned from the chain endpoint; the blocks applied
   * since intake's look-up are checked from memory (recentSpends). Without a check (the
   * node's own tests and tools) nothing is looked for. Throws a retryable refusal when
   * the window since the look-up is not covered.
   */
  private droppedAt(rec: CallRecord, check: OutpointCheck | undefined): number | null {
    const tip = this.tip;
    if (!check || !tip) return null;
    const s = check.spentBy;
    if (s && s.height <= tip.height) {
      if (s.height <= this.anchor!.height) {
        throw new NodeError('anchor_mismatch', `anchor mismatch: the outpoint ${rec.outpoint} was spent by ${s.txid} at height ${s.height}, before this node's journal begins; the anchoring transaction can never confirm`);
      }
      // On another branch than the endpoint's (a reorg in flight): the block that confirms
      // the spend on this node's chain drops the call, which is pending by then.
      return this.recentHashes.get(s.height) === s.blockHash ? s.height : null;
    }
    if (s) return null;
    // Blocks applied since the look-up, on whatever branch: above the lower of the height
    // looked up at and every fork since.
    let from = this.anchor!.height + 1;
    const at = check.lookedUpAt;
    if (at) {
      from = at.height + 1;
      if (at.epoch < this.chainEpoch) {
        const since = this.reorgForks.filter((r) => r.epoch > at.epoch);
        if (since.length < this.chainEpoch - at.epoch) from = this.anchor!.height + 1; // forgotten: everything
        for (const r of since) from = Math.min(from, r.fork + 1);
      }
    }
    for (let h = from; h <= tip.height; h++) {
      const spends = this.recentSpends.get(h);
      if (!spends) throw new NodeError('chain_unavailable', `the node applied blocks ${from}..${tip.height} while this call was being checked; send it again`, { reason: 'chain_moved' });
      for (const [outpoint, spender] of spends) if (outpoint === rec.outpoint && dropsCall(spender, rec.txid)) return h;
    }
    return null;
  }

  /**
   * Stores verified calls durably in one synced batch (group commit): one outcome per
   * record, in the given order, each exactly what `acceptCall` alone would give in that
   * order (a txid repeated in the batch is a repeat or a conflict of the first). Nothing
   * is stored, and every record fails, when the batch cannot be written. A call whose
   * outpoint a processed block already spent (`droppedAt`) is stored decided, `dropped`,
   * and recorded in that block's journal entry and undo log: the same record, with the
   * same fate in a reorg, as on a node that held it before the block.
   */
  async acceptCalls(recs: readonly CallRecord[], outpoints: readonly (OutpointCheck | undefined)[] = []): Promise<({ ok: true; created: boolean; record: CallRecord; replayFrom: number | null } | { ok: false; error: NodeError })[]> {
    await this.flushBlocks();
    this.refuseWhileHalted();
    // With each payload key, its (caller, call_id) key: whether the pair is already used is
    // then known before the confirming block, which need not read it (claimUsed).
    // Intake verified every payload, so each decodes. From a Uint8Array of its own: the
    // decoder then copies each field, so a pending call holds no slice of a pool slab.
    const envelopes = recs.map((r) => decodeEnvelope(new Uint8Array(Buffer.from(r.payload ?? '', 'base64'))));
    const claimKeys = envelopes.map((e) => key(Bucket.callIdIndex, e.caller, u64be(e.callId)));
    const read = await this.db.getMany([...recs.map((r) => key(Bucket.payload, bytesOf(r.txid))), ...claimKeys]);
    const stored = read.slice(0, recs.length);
    const inBatch = new Map<string, HeldPayload>();
    const ops: BatchOp[] = [];
    /** Journal entries gaining dropped calls: height -> txids. */
    const drops = new Map<number, string[]>();
    const out: ({ ok: true; created: boolean; record: CallRecord | null; replayFrom: number | null } | { ok: false; error: NodeError })[] = [];
    recs.forEach((rec, i) => {
      const payload = rec.payload ?? '';
      const bodyHash = createHash('sha256').update(rec.contract_id).update(payload).digest('hex');
      const v = stored[i];
      let dropAt: number | null;
      try {
        if (repeatOrConflict(inBatch.get(rec.txid) ?? (v ? parse<HeldPayload>(v) : null), rec.txid, 'call', bodyHash) === 'repeat') {
          out.push({ ok: true, created: false, record: null, replayFrom: null });
          return;
        }
        dropAt = this.droppedAt(rec, outpoints[i]);
      } catch (e) {
        out.push({ ok: false, error: e as NodeError });
        return;
      }
      const txid = bytesOf(rec.txid);
      const claim: HeldPayload = { kind: 'call', contract_id: rec.contract_id, body_hash: bodyHash };
      const body = Buffer.from(payload, 'base64');
      ops.push(
        { type: 'put', key: key(Bucket.call, txid), value: encodeCallFixed(rec) },
        { type: 'put', key: key(Bucket.callBody, txid), value: body },
        { type: 'put', key: key(Bucket.payload, txid), value: json(claim) },
        // Dropped already: decided now, as block `dropAt` decided it on nodes that held it.
        dropAt === null ? { type: 'put', key: key(Bucket.pendingCall, txid), value: EMPTY } : { type: 'put', key: key(Bucket.callDecision, txid), value: encodeCallDecision(DROPPED) },
      );
      if (dropAt !== null) drops.set(dropAt, [...(drops.get(dropAt) ?? []), rec.txid]);
      inBatch.set(rec.txid, claim);
      out.push({ ok: true, created: true, record: dropAt === null ? rec : { ...rec, status: 'dropped' }, replayFrom: null });
    });
    // A drop changes no state (no writes, events or claims): it is recorded in block
    // `dropAt`'s journal entry (what re-derivations replay) and undo log (a reorg that
    // removes the block makes the call pending again), in the same batch as the call, so
    // no replay is needed and a stop cannot leave it half done.
    for (const [height, txids] of drops) {
      const [raw, undo] = await this.db.getMany([key(Bucket.block, u32be(height)), key(Bucket.undo, u32be(height))]);
      if (!raw) throw new NodeError('internal', `block journal entry ${height} is missing`);
      const entry = decodeBlockRecord(raw);
      entry.dropped = [...entry.dropped, ...txids.filter((t) => !entry.dropped.includes(t))];
      ops.push({ type: 'put', key: key(Bucket.block, u32be(height)), value: encodeBlockRecord(entry) });
      if (undo) {
        const more = new UndoLog();
        for (const t of txids) {
          more.add(key(Bucket.callDecision, bytesOf(t)), null);
          more.add(key(Bucket.pendingCall, bytesOf(t)), EMPTY);
        }
        ops.push({ type: 'put', key: key(Bucket.undo, u32be(height)), value: Buffer.concat([undo, more.bytes()]) });
      }
    }
    if (ops.length > 0) await this.writeOrHalt(ops);
    out.forEach((r, i) => {
      if (!r.ok || !r.created) return;
      const rec = r.record!;
      if (rec.status === 'dropped') return;
      this.trackPending(rec, envelopes[i]!, read[recs.length + i] !== undefined, claimKeys[i]);
      r.replayFrom = this.orphans.get(rec.txid)?.block_height ?? null;
    });
    // Repeats are answered with the record as stored (a pending one from memory).
    return Promise.all(
      recs.map(async (rec, i) => {
        const r = out[i]!;
        return r.ok && r.record === null ? { ...r, record: (await this.call(rec.txid))! } : (r as typeof r & { record: CallRecord });
      }),
    );
  }

  private refuseWhileHalted(): void {
    if (this.halted) throw new NodeError('halted', `node is halted: ${this.haltReason ?? 'unknown reason'}`);
  }

  // ---------------------------------------------------------------- blocks

  /**
   * Applies one block on top of the tip: drops, activations and call decisions in position
   * order, then the state root; all in one atomic batch with the block's undo log.
   */
  async applyBlock(b: BlockInput & { dropped?: string[]; unstamped?: [number, string][] }, opts: { sync?: boolean } = {}): Promise<BlockRecord> {
    this.refuseWhileHalted();
    if (!this.tip) throw new NodeError('internal', 'block before the journal is anchored');
    if (b.height !== this.tip.height + 1) throw new NodeError('internal', `block ${b.height} does not follow tip ${this.tip.height}`);
    if (b.prevHash !== this.tip.hash) throw new NodeError('internal', `block ${b.height} does not link to tip ${this.tip.hash}`);
    const batch = new UndoBatch(this.db.newBatch());
    const height = b.height;

    // 1. Calls whose named outpoint another confirmed transaction spends are dropped.
    const dropped: string[] = [];
    if (b.spends) {
      for (const [outpoint, spender] of b.spends) {
        for (const txid of [...this.pendingByOutpoint.get(outpoint)].sort()) if (dropsCall(spender, txid)) dropped.push(txid);
      }
    } else if (b.dropped) dropped.push(...b.dropped);
    for (const txid of dropped) {
      const p = this.pending.get(txid);
      if (!p) continue;
      this.finishCall(batch, p, DROPPED);
    }

    // 2. Everything positioned in this block, in transaction order.
    type Item = { txIndex: number; txid: string; hex: string | null; parts?: TxParts };
    const items: Item[] = b.txs.map((t) => ({ txIndex: t.txIndex, txid: t.txid, hex: t.hex, parts: t.parts }));
    const unstamped: [number, string][] = [];
    if (b.txids) {
      const withSvc = new Set(b.txs.map((t) => t.txid));
      b.txids.forEach((txid, i) => {
        if (!withSvc.has(txid) && this.pending.has(txid)) unstamped.push([i, txid]);
      });
    } else if (b.unstamped) unstamped.push(...b.unstamped);
    for (const [txIndex, txid] of unstamped) items.push({ txIndex, txid, hex: null });
    items.sort((x, y) => x.txIndex - y.txIndex);

    // Whether each call's (caller, call_id) is taken is known since its acceptance for most
    // calls (claimUsed); the rest are read in one batch (not one awaited get per call). The
    // previous block may still be on its way to the disk: its claims come from memory.
    const pend = items.map((it) => this.pending.get(it.txid));
    const unknown = pend.filter((p): p is PendingCall => p !== undefined && p.claimUsed === null);
    const reading = this.db.getManyNow(unknown.map((p) => p.claimKey));
    // While RocksDB reads: the transactions and their stamps, which depend on nothing stored.
    const parsed = items.map((it) => {
      // Parts are the bitcoinjs shape the binding check and the context read.
      const tx = it.parts ? (it.parts as unknown as Transaction) : it.hex ? Transaction.fromBuffer(Buffer.from(it.hex, 'hex')) : null;
      return { tx, stamp: it.parts?.stamp ?? (tx ? findStamp(tx) : null) };
    });
    const found = await reading;
    if (unknown.length > 0) {
      const inflightClaims = new Set(this.inflight?.claims);
      found.forEach((v, i) => {
        const p = unknown[i]!;
        p.claimUsed = v !== undefined || inflightClaims.has(p.claimId);
      });
    }
    for (let n = 0; n < items.length; n++) {
      const it = items[n]!;
      const { tx, stamp } = parsed[n]!;
      if (stamp?.ok && stamp.stamp.kind === 'deploy') this.onDeployStamp(batch, it.txid, stamp.stamp.codeHash, height, it.txIndex);
      const p = pend[n];
      if (p) {
        this.decideCall(batch, p, tx, stamp, height, it.txIndex);
      } else if (stamp?.ok && stamp.stamp.kind === 'call' && !(await this.payloadAt(it.txid))) {
        this.putOrphan(batch, { txid: it.txid, kind: 'call', block_height: height, tx_index: it.txIndex });
      }
    }

    // 3. The state root and the journal.
    batch.flushStorage();
    const root = hexOf(this.state.root());
    const record: BlockRecord = { height, hash: b.hash, prevHash: b.prevHash, txs: b.txs.map((t) => ({ txIndex: t.txIndex, txid: t.txid, hex: t.hex })), dropped, unstamped, state_root: root };
    const prevTip = this.tip;
    batch.put(key(Bucket.stateRoot, u32be(height)), json({ height, block_hash: b.hash, state_root: root }), null);
    batch.put(key(Bucket.meta, 'tip'), json({ height, hash: b.hash }), json(prevTip));
    batch.raw({ type: 'put', key: key(Bucket.block, u32be(height)), value: encodeBlockRecord(record) });
    for (const cid of [...batch.perContract.keys()].sort()) {
      const c = batch.perContract.get(cid)!;
      for (let i = 0; i < c.events.length; i += EVENT_CHUNK) {
        const run = c.events.slice(i, i + EVENT_CHUNK);
        batch.putNew(key(Bucket.event, c.id, u32be(height), u32be(run[0]![0]), u32be(run[0]![1])), encodeBlockEvents(run));
      }
      if (c.calls.length > 0) batch.putNew(key(Bucket.contractCalls, c.id, u32be(height)), encodeBlockCalls(c.calls));
    }
    // Calls decided per contract in this block: the length of its call-log entry.
    for (const cid of [...batch.perContract.keys()].sort()) {
      const decided = batch.perContract.get(cid)!.calls.length;
      if (decided === 0) continue;
      const before = this.callCount(cid);
      const after = before + decided;
      batch.put(key(Bucket.callCount, bytesOf(cid)), Buffer.from(String(after)), before ? Buffer.from(String(before)) : null);
      this.callCounts.set(cid, after);
    }
    batch.raw({ type: 'put', key: key(Bucket.undo, u32be(height)), value: batch.undo.bytes() });
    if (height - JOURNAL_WINDOW > 0) batch.raw({ type: 'del', key: key(Bucket.undo, u32be(height - JOURNAL_WINDOW)) });
    // Hand the batch over once the previous block is durable, and go on: the caller may
    // compute the next block while RocksDB writes this one (flushBlocks waits for it).
    await this.flushBlocks();
    const done = this.db.commit(batch.out, opts.sync ?? true).then(
      () => null,
      (e: Error) => e,
    );
    this.inflight = { done, claims: batch.claims };
    this.tip = { height, hash: b.hash };
    this.recentHashes.set(height, b.hash);
    this.recentHashes.delete(height - 2 * JOURNAL_WINDOW - 1);
    // Replays apply journal entries (no spends: the journal keeps the verdicts), which are
    // the blocks whose live spends are already here; a reorg's rewind forgets its blocks.
    if (b.spends && !this.recentSpends.has(height)) {
      this.recentSpends.set(height, b.spends);
      this.recentSpendCount += b.spends.length;
      // Oldest first (Map order is insertion order, and heights come in ascending order
      // but for a reorg's, which forgot the ones above its fork first).
      for (const [h, spends] of this.recentSpends) {
        if (this.recentSpendCount <= RECENT_SPEND_LIMIT || h === height) break;
        this.recentSpends.delete(h);
        this.recentSpendCount -= spends.length;
      }
    }
    this.stateRoot = root;
    this.lastBlockAt = new Date().toISOString();
    return record;
  }

  private onDeployStamp(batch: UndoBatch, txid: string, codeHash: Uint8Array, height: number, txIndex: number): void {
    const id = hexOf(deriveContractId(bytesOf(txid), codeHash));
    const rec = this.pendingContracts.get(id);
    if (!rec) {
      if (!this.contracts.has(id)) this.putOrphan(batch, { txid, kind: 'deploy', block_height: height, tx_index: txIndex });
      return;
    }
    const prev = json(rec);
    const active: ContractRecord = { ...rec, status: 'active', block_height: height, tx_index: txIndex };
    batch.put(key(Bucket.contract, bytesOf(id)), json(active), prev);
    const v = verifyArtifact(active.artifact as never);
    if (!v.ok) throw new Error(`registered contract ${id} does not verify: ${v.reason}`);
    this.pendingContracts.delete(id);
    this.contracts.set(id, { rec: active, id: bytesOf(id), codeHash, program: v.program, eventParams: eventParamNames(active.artifact.abi) });
    this.state.addContract(bytesOf(id), codeHash);
    this.storageSize.set(id, 0);
  }

  private putOrphan(batch: UndoBatch, o: OrphanStamp): void {
    const prev = this.orphans.get(o.txid);
    batch.put(key(Bucket.orphanStamp, bytesOf(o.txid)), json(o), prev ? json(prev) : null);
    this.orphans.set(o.txid, o);
  }

  private finishCall(batch: UndoBatch, p: PendingCall, upd: CallOutcome): void {
    const txid = p.txid;
    // A pending call has no decision record: this block creates it (its undo deletes it).
    batch.putNew(key(Bucket.callDecision, txid), encodeCallDecision(upd));
    batch.delOnce(key(Bucket.pendingCall, txid), EMPTY);
    this.untrackPending(p.rec.txid, p);
    if (this.orphans.has(p.rec.txid)) {
      batch.del(key(Bucket.orphanStamp, txid), json(this.orphans.get(p.rec.txid)));
      this.orphans.delete(p.rec.txid);
    }
    if (upd.block_height !== null && upd.tx_index !== null) batch.contractLog(p.rec.contract_id, p.envelope.contractId).calls.push(txid);
  }

  /** Synchronous: a block's calls are decided without a promise and a microtask per call. */
  private decideCall(batch: UndoBatch, p: PendingCall, tx: Transaction | null, stamp: StampResult | null, height: number, txIndex: number): void {
    const e = p.envelope;
    const invalid = (code: string, message: string): void =>
      this.finishCall(batch, p, { status: 'invalid', block_height: height, tx_index: txIndex, result: null, error: { code, message }, instructions: null });

    // PROTOCOL section 4 (src/protocol/rules.ts): the binding again, against the
    // transaction as confirmed (consensus-critical), the contract active before the call,
    // and the (caller, call_id) pair not taken by a call decided earlier on the chain.
    const live = this.contracts.get(p.rec.contract_id);
    const verdict = callVerdict({
      binding: tx && stamp ? checkCallBindingWithStamp(tx, stamp, e, p.envelopeHash) : null,
      deployAt: live ? { height: live.rec.block_height!, txIndex: live.rec.tx_index! } : null,
      at: { height, txIndex },
      claimTaken: p.claimUsed === true,
    });
    if (!verdict.execute) return invalid(verdict.code, verdict.message);
    const anchorTx = tx!; // a binding was checked, so the transaction is there
    const callIdHex = p.claimId;

    const out = execute({
      contractId: e.contractId,
      function: e.function,
      args: e.args,
      context: {
        height,
        txid: p.txid,
        inputs: (anchorTx as unknown as TxParts).inputs ?? anchorTx.ins.map((i) => ({ txid: Uint8Array.from(i.hash).reverse(), vout: i.index })),
        // bitcoinjs and the core's parts both carry u64 values as bigint and scripts as bytes;
        // the VM never changes a value it reads (byte values it stores are copied).
        outputs: anchorTx.outs,
        caller: e.caller,
        callId: e.callId,
      },
      host: this.vmHost,
    });
    batch.claims.push(callIdHex);
    batch.putNew(p.claimKey, p.txid);
    // Other pending calls with this pair can no longer execute: known without a read.
    const sharing = this.pendingByClaim.raw(callIdHex);
    if (typeof sharing === 'string') this.pending.get(sharing)!.claimUsed = true;
    else if (sharing !== undefined) for (const t of sharing) this.pending.get(t)!.claimUsed = true;
    if (out.status === 'failed') {
      this.finishCall(batch, p, { status: 'failed', block_height: height, tx_index: txIndex, result: null, error: { code: out.code, message: out.message }, instructions: out.instructions });
      return;
    }
    // Writes come sorted by contract: the size bookkeeping is per run of one contract.
    let cid = '';
    let cidBytes: Uint8Array | null = null;
    let size = 0;
    for (const w of out.writes) {
      if (w.contractId !== cidBytes) {
        if (cidBytes) this.storageSize.set(cid, size);
        cidBytes = w.contractId;
        cid = this.contractHex(w.contractId, p);
        size = this.storageSize.get(cid) ?? 0;
      }
      // Buffer views, not copies (RocksDB copies into its batch, the undo log copies again),
      // made once: the tree keeps them, so a value is already a Buffer when it is replaced.
      const value = w.value ? bufferView(w.value) : null;
      const prev = this.state.setStorage(w.contractId, w.key, value);
      size += (value ? w.key.length + value.length : 0) - (prev ? w.key.length + prev.length : 0);
      batch.storageWrite(key(Bucket.storage, w.contractId, w.key), value, prev ? bufferView(prev) : null);
    }
    if (cidBytes) this.storageSize.set(cid, size);
    out.events.forEach((ev, logIndex) => {
      batch.contractLog(this.contractHex(ev.contractId, p), ev.contractId).events.push([txIndex, logIndex, ev.name, ev.params, p.txid]);
    });
    this.finishCall(batch, p, {
      status: 'executed',
      block_height: height,
      tx_index: txIndex,
      result: out.result,
      error: null,
      instructions: out.instructions,
    });
  }

  /** Hex of a contract id the call touched: the called contract's without converting (nearly always). */
  private contractHex(id: Uint8Array, p: PendingCall): string {
    const own = p.envelope.contractId;
    if (id.length === own.length) {
      let i = 0;
      while (i < id.length && id[i] === own[i]) i++;
      if (i === id.length) return p.rec.contract_id;
    }
    return hexOf(id);
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
  /** Cleared whenever `contracts` is replaced (load); entries are never changed in place. */
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

  // ---------------------------------------------------------------- rewinds

  /** The oldest height the undo logs can rewind to. */
  get undoFloor(): number {
    if (!this.tip || !this.anchor) return 0;
    return Math.max(this.anchor.height, this.tip.height - JOURNAL_WINDOW);
  }

  /**
   * Makes the state that after block `height`. Within the journal window the undo logs run
   * backwards, one atomic batch per block; deeper, the state is re-derived from the
   * journal. `dropJournal`: the blocks above `height` left the best chain (a reorg).
   */
  async rewindTo(height: number, opts: { dropJournal: boolean }): Promise<void> {
    await this.flushBlocks();
    if (!this.tip || height >= this.tip.height) return;
    if (height < this.anchor!.height) throw new NodeError('internal', `cannot rewind below the journal anchor ${this.anchor!.height}`);
    if (opts.dropJournal) {
      this.chainEpoch++;
      this.reorgForks.push({ epoch: this.chainEpoch, fork: height });
      if (this.reorgForks.length > REORG_LOG) this.reorgForks.shift();
    }
    if (height >= this.undoFloor) {
      const undone: UndoEntry[][] = [];
      for (let h = this.tip.height; h > height; h--) {
        const raw = await this.db.get(key(Bucket.undo, u32be(h)));
        if (!raw) throw new Error(`undo log of block ${h} is missing`);
        const entries = decodeUndo(raw);
        const ops: BatchOp[] = entries.map(([k, v]) => (v === null ? { type: 'del', key: k } : { type: 'put', key: k, value: v }));
        ops.push({ type: 'del', key: key(Bucket.undo, u32be(h)) });
        if (opts.dropJournal) {
          ops.push({ type: 'del', key: key(Bucket.block, u32be(h)) });
          this.recentSpendCount -= this.recentSpends.get(h)?.length ?? 0;
          this.recentSpends.delete(h);
        }
        await this.writeOrHalt(ops);
        undone.push(entries);
      }
      await this.restoreFromUndo(height, undone, opts.dropJournal);
      return;
    }
    await this.rederive(height, { dropJournalAbove: opts.dropJournal, verifyBelow: height + 1 });
  }

  /**
   * Brings memory to the state after block `height` once the undo logs of the blocks
   * above it are on disk. Each undo entry names a key a block wrote and what it held
   * before, so memory is restored from those entries alone (newest block first, each log
   * backwards): a rewind costs what the rewound blocks wrote, not what the node holds.
   * A full reload, as before, read every pending call and rebuilt every contract's trie:
   * a 1-block reorg or late payload with 100,000 calls pending took about 3 s.
   *
   * Reads come first; memory then changes in one synchronous step, so a read served
   * meanwhile never sees half of it. The restored state root must be the one stored for
   * `height`, and anything unexpected in a log falls back to the full reload.
   */
  private async restoreFromUndo(height: number, undone: UndoEntry[][], dropJournal: boolean): Promise<void> {
    const fallback = async (reason: string): Promise<void> => {
      this.log.warn('rewind: memory reloaded from disk', { height, reason });
      await this.load();
    };
    // Calls whose decision a rewound block made: pending again (their marker is back).
    const reopened: Buffer[] = [];
    for (const entries of undone) {
      for (const [k, prev] of entries) {
        const odd = undoEntryProblem(k, prev);
        if (odd) return fallback(odd);
        if (k[0] === Bucket.callDecision) reopened.push(k.subarray(1));
      }
    }
    const records: { rec: CallRecord; envelope: CallEnvelope }[] = [];
    const calls = await this.readCalls(reopened);
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i]!;
      if (typeof c === 'string') return fallback(`call ${reopened[i]!.toString('hex')}: ${c}`);
      records.push(c);
    }
    const stored = await this.db.get(key(Bucket.stateRoot, u32be(height)));
    // Block hashes a load keeps (JOURNAL_WINDOW * 2 below the tip) that memory dropped as
    // the rewound blocks came: as many journal entries as blocks rewound, at most.
    const oldTip = this.tip!.height;
    // A replay keeps the journal: the blocks above `height` stay this node's chain.
    const refill = dropJournal ? await this.journalHashes(height - 2 * JOURNAL_WINDOW, oldTip - 2 * JOURNAL_WINDOW) : [];

    // One synchronous step from here.
    let tip = this.tip;
    const freedClaims: string[] = [];
    for (const entries of undone) {
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, prev] = entries[i]!;
        switch (k[0]) {
          case Bucket.storage: {
            // Own memory: a view would keep the whole undo log alive in the trie.
            const id = k.subarray(1, 33);
            const storageKey = k.subarray(33);
            const value = prev ? Buffer.from(new Uint8Array(prev)) : null;
            const replaced = this.state.setStorage(id, storageKey, value);
            const cid = hexOf(id);
            const delta = (value ? storageKey.length + value.length : 0) - (replaced ? storageKey.length + replaced.length : 0);
            this.storageSize.set(cid, (this.storageSize.get(cid) ?? 0) + delta);
            break;
          }
          case Bucket.contract: {
            // Activated by the rewound block: registered again, not active.
            const rec = parse<ContractRecord>(prev!);
            this.contracts.delete(rec.contract_id);
            this.state.removeContract(k.subarray(1));
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
              const o = parse<OrphanStamp>(prev);
              this.orphans.set(o.txid, o);
            } else this.orphans.delete(hexOf(k.subarray(1)));
            break;
          case Bucket.callCount:
            if (prev) this.callCounts.set(hexOf(k.subarray(1)), Number(prev.toString('utf8')));
            else this.callCounts.delete(hexOf(k.subarray(1)));
            break;
          case Bucket.meta:
            tip = parse<Tip>(prev!);
            break;
          // Decisions are handled through `records`; markers, state roots, events and
          // call-log entries are not held in memory.
        }
      }
    }
    for (const { rec, envelope } of records) this.trackPending(rec, envelope);
    // A claim the rewound blocks had taken is free again: calls sharing it no longer know.
    for (const claim of freedClaims) for (const t of this.pendingByClaim.get(claim)) this.pending.get(t)!.claimUsed = null;
    if (dropJournal) for (let h = oldTip; h > height; h--) this.recentHashes.delete(h);
    for (const [h, hash] of refill) this.recentHashes.set(h, hash);
    if (this.anchor) this.recentHashes.set(this.anchor.height, this.anchor.hash);
    this.tip = tip;
    this.stateRoot = hexOf(this.state.root());
    const want = stored ? parse<{ state_root: string }>(stored).state_root : null;
    if (want !== null && want !== this.stateRoot) return fallback(`restored state root ${this.stateRoot} is not the stored ${want}`);
  }

  /**
   * What tests compare after a rewind: the memory a full load from disk would build
   * (sorted, and without claimUsed, which a load leaves unknown on purpose).
   */
  memorySummary(): Record<string, unknown> {
    const sorted = <T>(m: Map<string, T>, f: (v: T) => unknown = (v) => v): [string, unknown][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, f(v)]);
    return {
      tip: this.tip,
      stateRoot: this.stateRoot,
      contracts: sorted(this.contracts, (c) => c.rec),
      pendingContracts: sorted(this.pendingContracts),
      storageSize: sorted(this.storageSize),
      pending: sorted(this.pending, (p) => [p.rec, p.claimId]),
      orphans: sorted(this.orphans),
      callCounts: sorted(this.callCounts),
      recentHashes: [...this.recentHashes].sort(([a], [b]) => a - b),
    };
  }

  /**
   * Resets derived state to the anchor and replays the journal up to `height`. Heights
   * below `verifyBelow` must reproduce their stored state roots; a difference is a halt.
   */
  async rederive(height: number, opts: { dropJournalAbove: boolean; verifyBelow: number }): Promise<void> {
    await this.flushBlocks();
    const anchor = this.anchor!;
    this.log.warn('re-deriving state from the block journal', { from: anchor.height, to: height });
    const oldRoots = new Map<number, { block_hash: string; state_root: string }>();
    for (const { value } of await this.db.range(key(Bucket.stateRoot), prefixEnd(key(Bucket.stateRoot)))) {
      const r = parse<{ height: number; block_hash: string; state_root: string }>(value);
      oldRoots.set(r.height, r);
    }
    const ops: BatchOp[] = [];
    const wipe = async (bucket: Bucket, keep?: (k: Buffer) => boolean): Promise<void> => {
      for (const { key: k } of await this.db.range(key(bucket), prefixEnd(key(bucket)))) if (!keep || !keep(k)) ops.push({ type: 'del', key: k });
    };
    await wipe(Bucket.storage);
    await wipe(Bucket.event);
    await wipe(Bucket.undo);
    await wipe(Bucket.callIdIndex);
    await wipe(Bucket.contractCalls);
    await wipe(Bucket.callCount);
    await wipe(Bucket.orphanStamp);
    await wipe(Bucket.stateRoot, (k) => k.readUInt32BE(1) === anchor.height);
    if (opts.dropJournalAbove) await wipe(Bucket.block, (k) => k.readUInt32BE(1) <= height);
    await wipe(Bucket.callDecision);
    for (const { key: k } of await this.db.range(key(Bucket.call), prefixEnd(key(Bucket.call)))) {
      ops.push({ type: 'put', key: key(Bucket.pendingCall, k.subarray(1)), value: Buffer.alloc(0) });
    }
    for (const { key: k, value } of await this.db.range(key(Bucket.contract), prefixEnd(key(Bucket.contract)))) {
      const c = parse<ContractRecord>(value);
      ops.push({ type: 'put', key: k, value: json({ ...c, status: 'pending', block_height: null, tx_index: null }) });
    }
    ops.push({ type: 'put', key: key(Bucket.meta, 'tip'), value: json(anchor) });
    await this.writeOrHalt(ops);
    await this.load();

    for (let h = anchor.height + 1; h <= height; h++) {
      const raw = await this.db.get(key(Bucket.block, u32be(h)));
      if (!raw) throw new Error(`block journal entry ${h} is missing`);
      const rec = decodeBlockRecord(raw);
      // The undo window is rebuilt for the last blocks only; older undo logs are not kept.
      await this.applyBlock({ height: rec.height, hash: rec.hash, prevHash: rec.prevHash, txs: rec.txs, dropped: rec.dropped, unstamped: rec.unstamped }, { sync: false });
      const old = oldRoots.get(h);
      if (h < opts.verifyBelow && old && old.block_hash === rec.hash && old.state_root !== this.stateRoot) {
        await this.halt(`re-derivation disagrees with stored state at height ${h}: stored ${old.state_root}, replay ${this.stateRoot}`);
        return;
      }
    }
    // Undo logs beyond the window were pruned during replay; make the result durable.
    await this.flushBlocks();
    await this.writeOrHalt([{ type: 'put', key: key(Bucket.meta, 'tip'), value: json(this.tip) }], true);
    this.log.info('re-derivation done', { height: this.tip!.height, state_root: this.stateRoot });
  }

  /** Replays blocks from `fromHeight` after a late payload, keeping the journal. */
  async replayFrom(fromHeight: number): Promise<void> {
    await this.flushBlocks();
    if (!this.tip || fromHeight > this.tip.height) return;
    const target = this.tip.height;
    if (fromHeight - 1 >= this.undoFloor) {
      await this.rewindTo(fromHeight - 1, { dropJournal: false });
      for (let h = fromHeight; h <= target; h++) {
        const raw = await this.db.get(key(Bucket.block, u32be(h)));
        if (!raw) throw new Error(`block journal entry ${h} is missing`);
        const rec = decodeBlockRecord(raw);
        await this.applyBlock({ height: rec.height, hash: rec.hash, prevHash: rec.prevHash, txs: rec.txs, dropped: rec.dropped, unstamped: rec.unstamped });
      }
      await this.flushBlocks();
    } else {
      await this.rederive(target, { dropJournalAbove: false, verifyBelow: fromHeight });
    }
    this.log.info('replayed after a late payload', { from: fromHeight, to: target, state_root: this.stateRoot });
  }

  // ---------------------------------------------------------------- halts

  private async writeOrHalt(ops: BatchOp[], sync = true): Promise<void> {
    try {
      await this.db.batch(ops, sync);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      await this.halt(`storage write failed: ${code}`, false);
      throw new NodeError('halted', 'node is halted: storage write failed');
    }
  }

  async halt(reason: string, persist = true): Promise<void> {
    if (this.halted) return;
    this.halted = true;
    this.haltReason = reason;
    this.log.error('consensus halt', { reason });
    if (persist) {
      try {
        await this.db.batch([{ type: 'put', key: key(Bucket.meta, 'halt'), value: json({ reason }) }], true);
      } catch {
        /* the halt stays in memory; the reason is logged */
      }
    }
    // Memory may be ahead of what reached the disk: reload what is durable.
    try {
      await this.load();
      this.halted = true;
      this.haltReason = reason;
    } catch {
      /* reads may be stale until the operator clears the halt */
    }
  }

  /** Operator action: re-derive from the journal and resume if it agrees with itself. */
  async clearHalt(): Promise<void> {
    await this.flushBlocks().catch(() => undefined);
    const reason = this.haltReason;
    this.halted = false;
    this.haltReason = null;
    try {
      // After a storage failure RocksDB refuses writes until reopened.
      if (reason?.startsWith('storage write failed')) await this.db.reopen();
      await this.db.batch([{ type: 'del', key: key(Bucket.meta, 'halt') }], true);
    } catch (e) {
      this.halted = true;
      this.haltReason = reason;
      throw new NodeError('halted', `cannot clear the halt: storage still failing (${(e as NodeJS.ErrnoException).code ?? 'write error'})`);
    }
    await this.load();
    if (this.tip && this.anchor) await this.rederive(this.tip.height, { dropJournalAbove: false, verifyBelow: this.tip.height + 1 });
    if (this.halted) throw new NodeError('halted', `halt not cleared: ${this.haltReason}`);
    this.log.info('halt cleared', { previous_reason: reason });
  }
}

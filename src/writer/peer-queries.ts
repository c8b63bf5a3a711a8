/**
 * Peer data read from the writer's store (issue 8): contract summaries (docs/STATE.md,
 * "Contract summaries"), payload lists with positions, payloads in their wire form, and
 * state roots by height range. Read-only: nothing here changes the ledger.
 */
import canonicalizeModule from 'canonicalize';
import { EMPTY_ROOT, SortedMerkleTree } from '../state/merkle.js';
import { toHex } from '@svc-node/protocol/hash';
import { FINGERPRINT_BYTES, itemHash, PrefixFingerprints } from '@svc-node/protocol/fingerprint';
import type { Writer } from './writer.js';
import { payloads, stateRoots } from './store/index.js';
import type { HeldPayload } from '@svc-node/protocol/rules';
import type { ContractSummary, PayloadRef, PeerPayload, RangeAnswer, RangeQuery, StateRootRange, TxidPage } from '../messages.js';
import type { JournalReads } from './ledger/evidence.js';
import type { PeerPayloadRead } from './ledger/reads.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** Most heights answered by one state-root query (also the proto's documented cap). */
export const MAX_ROOT_RANGE = 1000;

/** Leaf value prefix: which kind of payload the txid anchors. */
const KIND_BYTE = { deploy: 0x01, call: 0x02 } as const;

/** The summary root of a contract with no payload stored (the empty tree's). */
const EMPTY_SUMMARY_ROOT = toHex(EMPTY_ROOT);

/** The fingerprint of an empty set. */
const EMPTY_FINGERPRINT = '00'.repeat(FINGERPRINT_BYTES);

/** Bytes of one index entry: txid (32) || kind (1) || payload hash (32). */
const ENTRY = 65;

/**
 * Call positions read per RocksDB multi-get when a txid list is built: read one after
 * another, the 100,000 calls of one contract took over 10 s, past the asking peer's
 * request deadline, and its whole first sync failed.
 */
const POSITION_READ_BATCH = 1024;

/**
 * Txid-list answers kept (PayloadRef objects, about 150 bytes each), least recently
 * used dropped first: 262,144 entries are about 40 MiB. A miss costs a read of each call
 * of the contract (its position, POSITION_READ_BATCH a multi-get), so this bounds memory while a peer that cycles through
 * more contracts than fit still pays only what one uncached answer costs.
 */
const TXIDS_CACHE_ENTRIES = 262_144;

/**
 * Journal entries kept between GetPayloads answers, the most recently read: a page of 256
 * payloads lies in a block or two, and the next pages (4 answered at once,
 * LIST_CONCURRENCY) mostly in the same ones. Read per answer (twice: its first 32
 * payloads, then the rest), the ~1.3 MB entry of a 2,000-call block was read, copied
 * and indexed ~236 times for a 30,000-payload catch-up instead of 15. An entry of a full
 * mainnet-sized block is ~3 MB with its index, so this holds ~12 MB at most.
 */
const JOURNAL_CACHE_ENTRIES = 4;

/**
 * The summary tree of one contract: a sorted Merkle tree (src/state/merkle.ts) whose leaf
 * key is the txid (32 bytes) and whose value is kind (1 byte) || payload_hash (32 bytes).
 * Sorted by txid, so the root does not depend on the order payloads arrived in.
 */
export function summaryTree(entries: { txid: string; kind: 'deploy' | 'call'; payload_hash: string }[]): SortedMerkleTree {
  return new SortedMerkleTree(
    entries.map((e) => [new Uint8Array(Buffer.from(e.txid, 'hex')), new Uint8Array(Buffer.concat([Buffer.of(KIND_BYTE[e.kind]), Buffer.from(e.payload_hash, 'hex')]))]),
  );
}

/**
 * One contract's payloads as packed entries (65 bytes each, appended in arrival order)
 * with their item hashes (packages/protocol/src/fingerprint.ts), and the set in txid order with
 * prefix fingerprints, brought up to date after additions by sorting only the new
 * entries and merging them in (O(n) per change, not a full sort). The summary root is
 * computed only when asked (GetContractSummary, GetContractMerkleRoot). The payload
 * bucket is append-only, so the entry count is the version of the set.
 */
export class ContractIndex {
  private buf = Buffer.alloc(ENTRY * 4);
  private hashes = Buffer.alloc(FINGERPRINT_BYTES * 4);
  n = 0;
  private sorted: { n: number; order: Uint32Array; sums: PrefixFingerprints } | null = null;
  private rootAt: { n: number; root: string } | null = null;

  add(txid: Buffer, kind: 'deploy' | 'call', hash: Buffer): void {
    if ((this.n + 1) * ENTRY > this.buf.length) {
      const bigger = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(bigger, 0, 0, this.n * ENTRY);
      this.buf = bigger;
      const moreHashes = Buffer.alloc(this.hashes.length * 2);
      this.hashes.copy(moreHashes, 0, 0, this.n * FINGERPRINT_BYTES);
      this.hashes = moreHashes;
    }
    const o = this.n * ENTRY;
    txid.copy(this.buf, o, 0, 32);
    this.buf[o + 32] = KIND_BYTE[kind];
    hash.copy(this.buf, o + 33, 0, 32);
    itemHash(this.buf.subarray(o, o + ENTRY)).copy(this.hashes, this.n * FINGERPRINT_BYTES);
    this.n++;
  }

  txidAt(i: number): string {
    return this.buf.toString('hex', i * ENTRY, i * ENTRY + 32);
  }

  isCall(i: number): boolean {
    return this.buf[i * ENTRY + 32] === KIND_BYTE.call;
  }

  /** Entry a's txid compared with entry b's. */
  private cmp(a: number, b: number): number {
    return this.buf.compare(this.buf, b * ENTRY, b * ENTRY + 32, a * ENTRY, a * ENTRY + 32);
  }

  /** Entries in txid order with prefix fingerprints; brought up to date after additions. */
  ordered(): { order: Uint32Array; sums: PrefixFingerprints } {
    if (this.sorted?.n === this.n) return this.sorted;
    const old = this.sorted?.order ?? new Uint32Array(0);
    // The new entries sorted by their first 4 txid bytes (a numeric key), ties by the rest.
    const b = this.buf;
    const fresh = Uint32Array.from({ length: this.n - old.length }, (_, k) => old.length + k);
    const base = old.length;
    const head = Uint32Array.from(fresh, (i) => b.readUInt32BE(i * ENTRY));
    fresh.sort((x, y) => head[x - base]! - head[y - base]! || this.cmp(x, y));
    const order = new Uint32Array(this.n);
    let i = 0;
    let j = 0;
    for (let k = 0; k < this.n; k++) order[k] = j >= fresh.length || (i < old.length && this.cmp(old[i]!, fresh[j]!) < 0) ? old[i++]! : fresh[j++]!;
    const h = this.hashes;
    const sums = new PrefixFingerprints(this.n, (k) => h.subarray(order[k]! * FINGERPRINT_BYTES, order[k]! * FINGERPRINT_BYTES + FINGERPRINT_BYTES));
    this.sorted = { n: this.n, order, sums };
    return this.sorted;
  }

  /** The summary root (docs/STATE.md); recomputed only after an addition. */
  root(): string {
    if (this.rootAt?.n === this.n) return this.rootAt.root;
    const { order } = this.ordered();
    const b = this.buf;
    const tree = new SortedMerkleTree(Array.from(order, (i): [Uint8Array, Uint8Array] => [b.subarray(i * ENTRY, i * ENTRY + 32), b.subarray(i * ENTRY + 32, i * ENTRY + ENTRY)]));
    this.rootAt = { n: this.n, root: toHex(tree.root()) };
    return this.rootAt.root;
  }

  /** The whole set's count and fingerprint. */
  fingerprint(): { count: number; fingerprint: string } {
    return { count: this.n, fingerprint: this.ordered().sums.range(0, this.n).toString('hex') };
  }

  /** Position in txid order of the first txid >= bound (bytewise; a proper prefix sorts first). */
  private lowerBound(order: Uint32Array, bound: Buffer): number {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const o = order[mid]! * ENTRY;
      // buf.compare(target, ...) compares the txid (source) with the bound (target).
      if (this.buf.compare(bound, 0, bound.length, o, o + 32) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Count and fingerprint of the txid range [lower, upper) (empty upper: the end), or its txids when at most `listUpTo`. */
  range(lower: Buffer, upper: Buffer, listUpTo: number): RangeAnswer {
    const { order, sums } = this.ordered();
    const i = this.lowerBound(order, lower);
    const j = upper.length === 0 ? order.length : Math.max(i, this.lowerBound(order, upper));
    const count = j - i;
    if (count <= listUpTo) return { count, fingerprint: '', txids: Array.from(order.subarray(i, j), (e) => this.txidAt(e)) };
    return { count, fingerprint: sums.range(i, j).toString('hex'), txids: null };
  }

  /** Up to `limit` (txid, payload hash) pairs after `after` (hex; '' = from the first), ascending. */
  page(after: string, limit: number): { payloads: { txid: string; payload_hash: string }[]; more: boolean } {
    const { order } = this.ordered();
    let from = 0;
    if (after) {
      const a = Buffer.from(after, 'hex');
      from = this.lowerBound(order, a);
      if (from < order.length && this.buf.compare(a, 0, a.length, order[from]! * ENTRY, order[from]! * ENTRY + 32) === 0) from++;
    }
    const to = Math.min(order.length, from + limit);
    const payloads = Array.from(order.subarray(from, to), (i) => ({ txid: this.txidAt(i), payload_hash: this.buf.toString('hex', i * ENTRY + 33, i * ENTRY + ENTRY) }));
    return { payloads, more: to < order.length };
  }
}

/**
 * Answers to peers' summary and txid questions, bounded per request (issue 10).
 *
 * Before, every GetContractSummary, GetContractMerkleRoot and GetContractTxids read the
 * whole payload bucket (every payload of every contract) and, for txids, one call record
 * per call: a signed peer could make the writer thread scan everything at its request
 * rate. Now the bucket is read once, on the first question, inside one serial job (so no
 * accept interleaves), and kept as a per-contract index (65 bytes per payload) that the
 * writer extends with each payload it stores (`Writer.payloadsStored`). Per request:
 * a summary root is recomputed only after the contract gained payloads; a txid list is
 * rebuilt only after a block, reorg or replay (`Writer.changeCount`), and extended (one
 * read per new call) when calls were merely added. What remains per request is the size
 * of the answer itself, which the gossip process rate-limits per peer
 * (src/gossip/service.ts, LIST_RATE_PER_S and FETCH_RATE_PER_S).
 */
export class PeerQueries {
  private index: Map<string, ContractIndex> | null = null;
  private building: Promise<Map<string, ContractIndex>> | null = null;
  private readonly txidsCache = new Map<string, { at: number; n: number; refs: PayloadRef[] }>();
  /** Journal entries read for payloads' evidence, valid while the ledger's journal is as at `at` (JOURNAL_CACHE_ENTRIES). */
  private journalCache: { at: string; reads: JournalReads } = { at: '', reads: new Map() };
  private txidsCached = 0;
  /** Full reads of the payload bucket made (1 once built); call-record reads for txid lists. */
  readonly stats = { bucketScans: 0, positionReads: 0 };

  constructor(private readonly w: Writer) {
    // Evictions are rare: the index is built again from the bucket at the next question.
    w.payloadsRemoved.push(() => {
      this.index = null;
      this.building = null;
      this.txidsCache.clear();
      this.txidsCached = 0;
    });
    w.payloadsStored.push((stored) => {
      // Before the build, the build's own scan (a later serial job) will see them; the
      // build and the jobs that store payloads are serial jobs, so none is missed or added twice.
      const idx = this.index;
      if (!idx) return;
      for (const p of stored) this.add(idx, Buffer.from(p.txid, 'hex'), p.held);
    });
  }

  /** The index with every payload stored so far. */
  private async current(): Promise<Map<string, ContractIndex>> {
    // A failed build (a read error) is forgotten, so the next question tries again.
    return (
      this.index ??
      (await (this.building ??= this.w.serial(() => this.build()).catch((e: unknown) => {
        this.building = null;
        throw e;
      })))
    );
  }

  private add(idx: Map<string, ContractIndex>, txid: Buffer, v: HeldPayload): void {
    let c = idx.get(v.contract_id);
    if (!c) idx.set(v.contract_id, (c = new ContractIndex()));
    c.add(txid, v.kind, Buffer.from(v.body_hash, 'hex'));
  }

  /** One read of the payload bucket; runs as a serial job, so nothing is stored meanwhile. */
  private async build(): Promise<Map<string, ContractIndex>> {
    const idx = new Map<string, ContractIndex>();
    this.stats.bucketScans++;
    for (const r of await this.w.db.rangeOf(payloads.all())) {
      this.add(idx, payloads.txidOf(r.key), payloads.decode(r.value));
    }
    this.index = idx;
    return idx;
  }

  /** The summary root and count, and one page of its pairs after `afterTxid` ('' = from the first). */
  async summary(contractId: string, afterTxid: string, limit: number): Promise<ContractSummary | null> {
    if (!this.w.ledger.contract(contractId)) return null;
    const c = (await this.current()).get(contractId);
    if (!c) return { contract_id: contractId, root: EMPTY_SUMMARY_ROOT, count: 0, payloads: [], more: false };
    return { contract_id: contractId, root: c.root(), count: c.n, ...c.page(afterTxid, limit) };
  }

  /** A contract's summary root and payload count only (GetContractMerkleRoot). */
  async root(contractId: string): Promise<{ root: string; count: number } | null> {
    if (!this.w.ledger.contract(contractId)) return null;
    const c = (await this.current()).get(contractId);
    return c ? { root: c.root(), count: c.n } : { root: EMPTY_SUMMARY_ROOT, count: 0 };
  }

  /** Every contract's whole-set count and fingerprint (each brought up to date only if it gained payloads). */
  async fingerprints(): Promise<Record<string, { count: number; fingerprint: string }>> {
    const idx = await this.current();
    const out: Record<string, { count: number; fingerprint: string }> = {};
    for (const id of this.w.ledger.contractIds()) out[id] = idx.get(id)?.fingerprint() ?? { count: 0, fingerprint: EMPTY_FINGERPRINT };
    return out;
  }

  /** Counts and fingerprints (or txid lists) of txid ranges of a contract (GetContractRanges). */
  async ranges(contractId: string, ranges: RangeQuery[]): Promise<RangeAnswer[] | null> {
    if (!this.w.ledger.contract(contractId)) return null;
    const c = (await this.current()).get(contractId);
    return ranges.map((r) => (c ? c.range(Buffer.from(r.lower, 'hex'), Buffer.from(r.upper, 'hex'), r.list_up_to) : { count: 0, fingerprint: '', txids: [] }));
  }

  /** One page of the list: the deploy first, then calls confirmed by (height, index), then pending calls by txid. */
  async txids(contractId: string, offset: number, limit: number): Promise<TxidPage | null> {
    const all = await this.allTxids(contractId);
    return all ? { refs: all.slice(offset, offset + limit), total: all.length } : null;
  }

  private async allTxids(contractId: string): Promise<PayloadRef[] | null> {
    const l = this.w.ledger;
    const idx = await this.current();
    // Positions read below must all belong to one ledger state: the count before and after.
    const at = this.w.changeCount;
    const c = l.contract(contractId);
    if (!c) return null;
    const ci = idx.get(contractId);
    const n = ci?.n ?? 0;
    const hit = this.txidsCache.get(contractId);
    let calls: PayloadRef[];
    if (hit && hit.at === at && hit.n === n) {
      calls = hit.refs;
    } else {
      // Same state, calls only added (accepts do not move stored calls): read the new ones.
      const from = hit && hit.at === at && hit.n < n ? hit.n : 0;
      const fresh = ci ? await this.positions(ci, from) : [];
      calls = from > 0 ? [...hit!.refs, ...fresh].sort(comparePositions) : fresh.sort(comparePositions);
      if (this.w.changeCount === at) this.remember(contractId, { at, n, refs: calls });
    }
    return [{ txid: c.txid, kind: 'deploy', height: c.block_height, tx_index: c.tx_index }, ...calls];
  }

  private async positions(ci: ContractIndex, from: number): Promise<PayloadRef[]> {
    const l = this.w.ledger;
    const txids: string[] = [];
    for (let i = from; i < ci.n; i++) if (ci.isCall(i)) txids.push(ci.txidAt(i));
    const out: PayloadRef[] = [];
    for (let i = 0; i < txids.length; i += POSITION_READ_BATCH) {
      const batch = txids.slice(i, i + POSITION_READ_BATCH);
      this.stats.positionReads += batch.length;
      const recs = await l.callsByTxid(batch);
      batch.forEach((txid, j) => out.push({ txid, kind: 'call', height: recs[j]?.block_height ?? null, tx_index: recs[j]?.tx_index ?? null }));
    }
    return out;
  }

  private remember(contractId: string, e: { at: number; n: number; refs: PayloadRef[] }): void {
    const old = this.txidsCache.get(contractId);
    if (old) {
      this.txidsCached -= old.refs.length;
      this.txidsCache.delete(contractId);
    }
    if (e.refs.length > TXIDS_CACHE_ENTRIES) return;
    for (const [k, v] of this.txidsCache) {
      if (this.txidsCached + e.refs.length <= TXIDS_CACHE_ENTRIES) break;
      this.txidsCache.delete(k);
      this.txidsCached -= v.refs.length;
    }
    this.txidsCache.set(contractId, e);
    this.txidsCached += e.refs.length;
  }

  /**
   * Payloads in their wire form, in the order asked (null: not held), read in one
   * multi-get, with the journal entries their evidence needs (JOURNAL_CACHE_ENTRIES).
   */
  async payloads(txids: readonly string[]): Promise<(PeerPayload | null)[]> {
    // A block, reorganisation or replay may rewrite entries, and an accepted late payload
    // amend one: they are kept for one state of the journal.
    const at = `${this.w.changeCount}:${this.w.ledger.journalAmendments}`;
    if (this.journalCache.at !== at) this.journalCache = { at, reads: new Map() };
    const reads = this.journalCache.reads;
    const held = await this.w.ledger.readForPeers(txids);
    let out: (PeerPayload | null)[];
    try {
      out = await Promise.all(txids.map((txid, i) => this.payloadOf(txid, held[i]!, reads)));
    } catch (e) {
      // A failed read stays in the map as a rejection: the next answer reads afresh.
      if (this.journalCache.reads === reads) this.journalCache = { at: '', reads: new Map() };
      throw e;
    }
    // The oldest read first out (a Map keeps insertion order).
    for (const h of reads.keys()) {
      if (reads.size <= JOURNAL_CACHE_ENTRIES) break;
      reads.delete(h);
    }
    return out;
  }

  /** One payload in its wire form, with this node's position for it (calls; null while pending). */
  async payload(txid: string): Promise<PeerPayload | null> {
    return (await this.payloads([txid]))[0]!;
  }

  private async payloadOf(txid: string, held: PeerPayloadRead, reads: JournalReads): Promise<PeerPayload | null> {
    const l = this.w.ledger;
    const { at, body, position } = held;
    const storedRaw = { value: held.evidence };
    if (!at) return null;
    if (at.kind === 'call') {
      if (!body) return null;
      const decided = position.block_height !== null && position.tx_index !== null ? { height: position.block_height, txIndex: position.tx_index } : null;
      const evidence = await l.payloadEvidence(txid, decided, reads, storedRaw);
      return { payload: { kind: 'call', txid, contract_id: at.contract_id, body, evidence }, height: position.block_height, tx_index: position.tx_index };
    }
    const c = l.contract(at.contract_id);
    if (!c) return null;
    // The registration record as REST received it; JCS so every node sends the same bytes.
    const record = canonicalize({ txid: c.txid, ...c.artifact }) ?? '';
    const evidence = await l.payloadEvidence(txid, c.block_height !== null && c.tx_index !== null ? { height: c.block_height, txIndex: c.tx_index } : null, reads, storedRaw);
    return { payload: { kind: 'deploy', txid, contract_id: '', body: new Uint8Array(Buffer.from(record, 'utf8')), evidence }, height: c.block_height, tx_index: c.tx_index };
  }

  async stateRoots(from: number, to: number): Promise<StateRootRange> {
    const l = this.w.ledger;
    const hi = Math.min(to, from + MAX_ROOT_RANGE - 1, 0xfffffffe);
    const roots: StateRootRange['roots'] = [];
    if (hi >= from) {
      for (const r of await this.w.db.rangeOf(stateRoots.heights(from, hi))) {
        roots.push(stateRoots.decode(r.value));
      }
    }
    return { roots, anchor_height: l.anchor?.height ?? null, tip_height: l.tip?.height ?? null };
  }
}

/** Up to `limit` of the ascending `ids` greater than `after` ('' = from the first). */
export function contractIdPage(ids: string[], after: string, limit: number): { ids: string[]; more: boolean } {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! <= after) lo = mid + 1;
    else hi = mid;
  }
  return { ids: ids.slice(lo, lo + limit), more: lo + limit < ids.length };
}

/** Confirmed before pending; confirmed by (height, tx_index); pending by txid. */
export function comparePositions(a: PayloadRef, b: PayloadRef): number {
  if (a.height !== null && b.height !== null) return a.height - b.height || (a.tx_index ?? 0) - (b.tx_index ?? 0);
  if (a.height !== null) return -1;
  if (b.height !== null) return 1;
  return a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0;
}

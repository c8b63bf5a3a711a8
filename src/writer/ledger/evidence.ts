/**
 * Bitcoin evidence and the header chain (docs/STATE.md, "Bitcoin evidence"): the node
 * keeps verified block headers from the journal's anchor up, and every payload comes
 * with the Bitcoin facts that decide it (its anchoring transaction and, once known, the
 * merkle branches placing the anchor, or a spender of the named outpoint, in a block).
 * A block the node reads as a header alone is applied with the payloads that evidence
 * places in it; a claim is checked against the header it names, never trusted, and a
 * claim for a block the node has not reached waits for it (`evidenceAt`).
 *
 * Intake has already checked what needs no chain (the anchor parses and hashes to the
 * txid, it binds the envelope, each branch folds to some root); here the root must be the
 * merkle root of the header the node holds at that height, with that hash.
 */
import { Transaction } from 'bitcoinjs-lib';
import type { BatchOp } from '../db.js';
import { parseHeaderBytes, type ParsedHeader } from '@svc-node/protocol/bitcoin';
import { foldBranch } from '@svc-node/protocol/merkle-branch';
import type { Evidence, FoldedRoots, Inclusion } from '@svc-node/protocol/evidence';
import type { BlockTx, OrphanStamp } from '../../records.js';
import { callDecisions, contractDrops, evidence as evidenceStore, evidenceAt, headers, journal, orphanStamps, pendingCalls, undo, type Tip } from '../store/index.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { Ledger } from './index.js';

/** Internal byte order of a display-order txid or hash. */
export function internalOf(displayHex: string): Buffer {
  return Buffer.from(displayHex, 'hex').reverse();
}

/** Whether `branch` places `txid` at `txIndex` under the header's merkle root. */
export function inclusionHolds(header: ParsedHeader, txid: string, txIndex: number, branch: readonly Uint8Array[]): boolean {
  const r = foldBranch(internalOf(txid), txIndex, branch);
  return r.ok && rootIs(header, r.root);
}

/** Whether `root` (internal order) is the header's merkle root. */
function rootIs(header: ParsedHeader, root: Uint8Array): boolean {
  return Buffer.from(root).reverse().toString('hex') === header.merkleRoot;
}

/** A stored claim's branch checked against the header: by the root folded when it was filed, else folded now. */
function claimHolds(header: ParsedHeader, txid: string, txIndex: number, c: { branch: Uint8Array[]; root?: Uint8Array }): boolean {
  return c.root ? rootIs(header, c.root) : inclusionHolds(header, txid, txIndex, c.branch);
}

// ------------------------------------------------------------------ the header chain

/** The highest stored header, or null before any. */
export async function loadHeaderTip(l: Ledger): Promise<Tip | null> {
  const [last] = await l.db.rangeOf(headers.all(), { limit: 1, reverse: true });
  if (!last) return null;
  return { height: headers.heightOf(last.key), hash: parseHeaderBytes(headers.decode(last.value)).hash };
}

export async function headerAt(l: Ledger, height: number): Promise<ParsedHeader | null> {
  const v = await l.db.get(headers.key(height));
  return v ? parseHeaderBytes(headers.decode(v)) : null;
}

/**
 * Stores a verified run of headers from height `from` (a suffix of the best chain as the
 * caller learned it). The run must link to the header the node holds at `from - 1` (or
 * to the journal's anchor) and within itself, and each must meet its own proof-of-work
 * target; the caller has authenticated it (the endpoint named its last block, or it came
 * from the endpoint). Headers from `from` on are replaced; `truncate` also removes any
 * stored above the run (the best chain got shorter). Returns the new header tip.
 */
export async function putHeaders(l: Ledger, from: number, run: readonly Uint8Array[], opts: { truncate: boolean }): Promise<Tip | null> {
  const anchor = l.anchor;
  if (!anchor) throw new NodeError('internal', 'headers before the journal is anchored');
  if (run.length === 0) return l.headerTip;
  if (from <= anchor.height) throw new NodeError('bad_request', `headers must start above the journal's anchor ${anchor.height}, not at ${from}`);
  const parsed = run.map((h) => {
    if (h.length !== headers.HEADER_BYTES) throw new NodeError('bad_request', `a block header is 80 bytes, not ${h.length}`);
    return parseHeaderBytes(h);
  });
  const below = from - 1 === anchor.height ? anchor.hash : (await headerAt(l, from - 1))?.hash;
  if (below === undefined) throw new NodeError('bad_request', `no header at ${from - 1} to link headers from ${from} to`);
  let prev = below;
  parsed.forEach((h, i) => {
    if (h.prevHash !== prev) throw new NodeError('bad_evidence', `header at ${from + i} does not link to the one below it`);
    prev = h.hash;
  });
  const ops: BatchOp[] = run.map((raw, i) => ({ type: 'put', key: headers.key(from + i), value: headers.encode(raw) }));
  const top = from + run.length - 1;
  if (opts.truncate && l.headerTip && l.headerTip.height > top) {
    for (let h = top + 1; h <= l.headerTip.height; h++) ops.push({ type: 'del', key: headers.key(h) });
  }
  await l.writeOrHalt(ops);
  if (opts.truncate || !l.headerTip || top >= l.headerTip.height || from <= l.headerTip.height) {
    // Replaced from `from` on: the stored chain now ends with the run unless more stood above it.
    l.headerTip = opts.truncate || !l.headerTip || top >= l.headerTip.height ? { height: top, hash: prev } : (await loadHeaderTip(l));
  }
  return l.headerTip;
}

/**
 * Up to this many headers are read by key rather than with an iterator,
 * whose creation costs more than a few gets: a peer's payload names one header, and
 * intake read it with an iterator of its own.
 */
const HEADERS_BY_KEY_MAX = 16;

/** The stored headers of heights [from, from + count), as far as they go. */
export async function headersFrom(l: Ledger, from: number, count: number): Promise<Buffer[]> {
  if (count <= 0) return [];
  if (count <= HEADERS_BY_KEY_MAX) {
    // Through `get`: concurrent look-ups share one getMany.
    const got = await Promise.all(Array.from({ length: count }, (_, i) => l.db.get(headers.key(from + i))));
    const end = got.indexOf(undefined);
    return (end === -1 ? got : got.slice(0, end)).map((v) => headers.decode(v!));
  }
  const rows = await l.db.rangeOf(headers.heights(from, from + count - 1));
  const out: Buffer[] = [];
  for (const r of rows) {
    if (headers.heightOf(r.key) !== from + out.length) break;
    out.push(headers.decode(r.value));
  }
  return out;
}

// ------------------------------------------------------------------ blocks from evidence

/** A block read as its header alone: its height, its hash and the 80 bytes that hash to it. */
export interface HeaderOnlyBlock {
  height: number;
  hash: string;
  header: Uint8Array;
}

/** What the node's evidence places in one block read as a header alone (evidenceBlocks). */
export interface EvidenceBlock {
  txs: BlockTx[];
  spends: [string, string][];
  /** Claims filed under the block that do not hold against its header (skipped). */
  refused: number;
}

/**
 * The transactions and spends of blocks read as a header alone that the node holds
 * evidence of, one entry per block of `blocks` (ascending heights; a header is parsed
 * only where claims are filed under it): anchors of payloads each block confirms (with their branches, so the journal
 * keeps them) and spends of named outpoints by other transactions. A claim whose branch
 * does not fold to its block's merkle root is skipped (and counted): a peer's word is
 * never taken.
 *
 * Read with one range over the heights of all the blocks (a chain update brings up to a
 * thousand; one iterator per block was a fifth of the writer's catch-up time). Claims
 * filed under another hash at a height (a branch the chain left, or a peer's block the
 * node does not have) belong to no block here and are left alone, as a read of the
 * block's own key range leaves them. Within a block the claims come in key order, as
 * that read gives them, so which of two claims for one index wins is the same.
 */
export async function evidenceBlocks(l: Ledger, blocks: readonly HeaderOnlyBlock[]): Promise<EvidenceBlock[]> {
  if (blocks.length === 0) return [];
  const wanted = new Map<number, string>();
  for (const b of blocks) wanted.set(b.height, b.hash);
  const heights = [...wanted.keys()];
  const rows = await l.db.rangeOf(evidenceAt.heights(Math.min(...heights), Math.max(...heights)));
  const byHeight = new Map<number, { key: Buffer; value: Buffer }[]>();
  for (const r of rows) {
    const h = evidenceAt.heightOf(r.key);
    if (wanted.get(h) !== evidenceAt.blockHashOf(r.key)) continue;
    let at = byHeight.get(h);
    if (!at) byHeight.set(h, (at = []));
    at.push(r);
  }
  return blocks.map((b) => {
    const rows = byHeight.get(b.height);
    return rows ? claimsInBlock(parseHeaderBytes(b.header), rows) : { txs: [], spends: [], refused: 0 };
  });
}

/** One block's claims (`rows`, in key order) checked against its header. */
function claimsInBlock(header: ParsedHeader, rows: readonly { key: Buffer; value: Buffer }[]): EvidenceBlock {
  const txs: BlockTx[] = [];
  const spends: [string, string][] = [];
  let refused = 0;
  const seen = new Set<number>();
  for (const r of rows) {
    const c = evidenceAt.decode(r.key, r.value);
    if (c.kind === evidenceAt.KIND_ANCHOR) {
      if (seen.has(c.txIndex) || !claimHolds(header, c.txid, c.txIndex, c)) {
        refused++;
        continue;
      }
      seen.add(c.txIndex);
      txs.push({ txIndex: c.txIndex, txid: c.txid, hex: Buffer.from(c.raw).toString('hex'), branch: c.branch });
    } else {
      if (!claimHolds(header, c.spenderTxid, c.spenderIndex, c)) {
        refused++;
        continue;
      }
      spends.push([c.outpoint, c.spenderTxid]);
    }
  }
  txs.sort((a, b) => a.txIndex - b.txIndex);
  spends.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return { txs, spends, refused };
}

// ------------------------------------------------------------------ evidence at acceptance

/** What storing a payload's evidence adds to its acceptance batch. */
export interface EvidenceEffect {
  /** The evidence record and claims filed under blocks not processed yet. */
  ops: BatchOp[];
  /** The anchor placed in a processed block: journalAmendments adds it there (a late payload's replay starts there). */
  place: { height: number; tx: BlockTx; kind: 'call' | 'deploy' } | null;
  /** A processed block in which another transaction spends the call's outpoint. */
  droppedAt: number | null;
  /** Claims that did not hold against the node's headers (not kept). */
  refused: string[];
}

/**
 * Where an inclusion claim stands against the node's chain: `processed` (a block the
 * node applied: the claim holds there), `ahead` (a block above the processed tip, checked
 * when it is applied; checked now too when its header is already held), or refused.
 * `root`: what the branch folds to (internal order), filed with an `ahead` claim so its
 * block's application compares roots instead of folding again. `folded`: that root as
 * intake's checkEvidence folded it from this same inclusion (FoldedRoots), else folded here.
 */
function placeClaim(l: Ledger, inc: Inclusion, txid: string, reads: EvidenceReads, folded: Uint8Array | null = null): { at: 'processed' | 'ahead'; root: Uint8Array } | string {
  const tip = l.tip!;
  if (inc.height <= l.anchor!.height) return `it names block ${inc.height}, at or below where this node's journal begins`;
  const header = reads.headers.get(inc.height) ?? null;
  if (inc.height <= tip.height && (!header || header.hash !== inc.blockHash)) return `block ${inc.height} of this node's chain is not ${inc.blockHash}`;
  const misplaced = `its branch does not place ${txid} at index ${inc.txIndex} under block ${inc.blockHash}'s merkle root`;
  let root = folded;
  if (!root) {
    const f = foldBranch(internalOf(txid), inc.txIndex, inc.branch);
    if (!f.ok) return `${misplaced}: ${f.reason}`;
    root = f.root;
  }
  // Not reached, or the node's headers name another block there for now: checked when applied.
  if (inc.height > tip.height && (!header || header.hash !== inc.blockHash)) return { at: 'ahead', root };
  if (!rootIs(header!, root)) return misplaced;
  return { at: inc.height <= tip.height ? 'processed' : 'ahead', root };
}

/**
 * What `evidenceEffect` reads for a group of payloads, read ahead in one getMany: each
 * payload's stored evidence and each header its claims name (parsed once, though a
 * block's payloads all name it). Read one by one, an acceptance group of 256 synced
 * calls waited on 512 reads in turn, the writer's largest cost in a catch-up.
 */
export interface EvidenceReads {
  stored: Map<string, Evidence | null>;
  headers: Map<number, ParsedHeader | null>;
}

export async function readForEvidence(l: Ledger, items: readonly { txid: string; ev: Evidence | undefined }[]): Promise<EvidenceReads> {
  const txids = [...new Set(items.filter((i) => i.ev).map((i) => i.txid))];
  const heights = new Set<number>();
  for (const { ev } of items) {
    if (ev?.confirmed) heights.add(ev.confirmed.height);
    if (ev?.spentBy) heights.add(ev.spentBy.at.height);
  }
  const hs = [...heights];
  const got = await l.db.getMany([...txids.map((t) => evidenceStore.key(t)), ...hs.map((h) => headers.key(h))]);
  const stored = new Map(txids.map((t, i) => [t, got[i] ? evidenceStore.decode(got[i]!) : null]));
  const parsed = new Map(hs.map((h, i) => {
    const v = got[txids.length + i];
    return [h, v ? parseHeaderBytes(headers.decode(v)) : null];
  }));
  return { stored, headers: parsed };
}

/**
 * What keeping `ev` for payload `txid` (kind, and for a call the outpoint it names)
 * takes, merged with what the node held before: the evidence record; claims for blocks
 * not processed yet, filed under their block; an anchor placed in a processed block
 * (`place`: the caller inserts it into that block's journal entry with an orphan stamp,
 * so the late payload replays as for a stamp seen in a raw block); a spend in a processed
 * block (`droppedAt`: the caller records the drop). `refused` lists claims that did not
 * hold; they are not kept. `readAhead`: what `readForEvidence` read for a group holding
 * this payload (read here when absent). `folded`: the roots intake folded `ev`'s branches to.
 */
export async function evidenceEffect(l: Ledger, txid: string, kind: 'call' | 'deploy', outpoint: string | null, ev: Evidence, readAhead?: EvidenceReads, folded?: FoldedRoots): Promise<EvidenceEffect> {
  const reads = readAhead ?? (await readForEvidence(l, [{ txid, ev }]));
  const out: EvidenceEffect = { ops: [], place: null, droppedAt: null, refused: [] };
  const prev = reads.stored.get(txid) ?? null;
  const keep: Evidence = { anchorTx: prev?.anchorTx ?? ev.anchorTx, confirmed: prev?.confirmed ?? null, spentBy: prev?.spentBy ?? null };
  // The coin that paid for the payload's wait is kept as it came first (served to peers while it waits).
  const coin = prev?.coin ?? ev.coin;
  if (coin) keep.coin = coin;

  const c = ev.confirmed;
  if (c) {
    const where = placeClaim(l, c, txid, reads, folded?.confirmed ?? null);
    if (typeof where === 'string') out.refused.push(`confirmation: ${where}`);
    else if (where.at === 'processed') {
      keep.confirmed = c;
      out.place = { height: c.height, kind, tx: { txIndex: c.txIndex, txid, hex: Buffer.from(ev.anchorTx).toString('hex'), branch: c.branch } };
    } else {
      keep.confirmed = c;
      out.ops.push({
        type: 'put',
        key: evidenceAt.key(c.height, c.blockHash, txid, evidenceAt.KIND_ANCHOR),
        value: evidenceAt.encode({ kind: evidenceAt.KIND_ANCHOR, txid, txIndex: c.txIndex, raw: ev.anchorTx, branch: c.branch, root: where.root }),
      });
    }
  }
  const s = ev.spentBy;
  if (s && outpoint) {
    const spenderTxid = spenderTxidOf(s.tx);
    const where = placeClaim(l, s.at, spenderTxid, reads, folded?.spender ?? null);
    if (typeof where === 'string') out.refused.push(`spend: ${where}`);
    else if (where.at === 'processed') {
      keep.spentBy = s;
      out.droppedAt = s.at.height;
    } else {
      keep.spentBy = s;
      out.ops.push({
        type: 'put',
        key: evidenceAt.key(s.at.height, s.at.blockHash, txid, evidenceAt.KIND_SPEND),
        value: evidenceAt.encode({ kind: evidenceAt.KIND_SPEND, txid, spenderIndex: s.at.txIndex, spenderTxid, outpoint, branch: s.at.branch, root: where.root }),
      });
    }
  }
  out.ops.push({ type: 'put', key: evidenceStore.key(txid), value: evidenceStore.encode(keep) });
  return out;
}

/** The txid (display order) of a raw transaction, with or without witness. */
export function spenderTxidOf(raw: Uint8Array): string {
  return Transaction.fromBuffer(Buffer.from(raw)).getId();
}

/** What one acceptance batch changes in processed blocks' journal entries. */
export class JournalAmendments {
  private readonly at = new Map<number, { txs: BlockTx[]; dropped: string[]; orphans: OrphanStamp[] }>();
  /** The contract (hex) of each dropped call. */
  private readonly contractOf = new Map<string, string>();

  private of(height: number): { txs: BlockTx[]; dropped: string[]; orphans: OrphanStamp[] } {
    let a = this.at.get(height);
    if (!a) this.at.set(height, (a = { txs: [], dropped: [], orphans: [] }));
    return a;
  }

  /** An anchor placed by evidence in processed block `height`, with the orphan stamp its payload replays from. */
  place(height: number, kind: 'call' | 'deploy', tx: BlockTx): void {
    const a = this.of(height);
    if (a.txs.some((t) => t.txid === tx.txid)) return;
    a.txs.push(tx);
    a.orphans.push({ txid: tx.txid, kind, block_height: height, tx_index: tx.txIndex });
  }

  /** A call block `height` drops (its outpoint spent there by another transaction). */
  drop(height: number, txid: string, contractId: string): void {
    const a = this.of(height);
    if (!a.dropped.includes(txid)) a.dropped.push(txid);
    this.contractOf.set(txid, contractId);
  }

  get empty(): boolean {
    return this.at.size === 0;
  }

  /**
   * The writes: each amended journal entry once; the orphan stamps of placed anchors that
   * the node did not already hold as stamps; and in each block's undo log (when still
   * kept) what a rewind of the block must undo (the stamp removed; a dropped call pending
   * again). A drop changes no state (no writes, events or claims), so it needs no replay;
   * a placed anchor does, from its block (the caller schedules it). Nor does a drop change
   * the block's decisions or state root: drops are not committed (state/decisions.ts), so
   * a root once published stays. Returns the stamps to add to memory once the batch is
   * durable.
   */
  async ops(l: Ledger): Promise<{ ops: BatchOp[]; orphans: OrphanStamp[] }> {
    const ops: BatchOp[] = [];
    const orphans: OrphanStamp[] = [];
    for (const [height, a] of [...this.at].sort((x, y) => x[0] - y[0])) {
      const [raw, undoRaw] = await l.db.getMany([journal.key(height), undo.key(height)]);
      if (!raw) throw new NodeError('internal', `block journal entry ${height} is missing`);
      const entry = journal.decode(raw);
      const newTxs = a.txs.filter((t) => !entry.txs.some((x) => x.txid === t.txid));
      const newDrops = a.dropped.filter((t) => !entry.dropped.includes(t));
      if (newTxs.length > 0 || newDrops.length > 0) {
        entry.txs = [...entry.txs, ...newTxs].sort((x, y) => x.txIndex - y.txIndex);
        entry.dropped = [...entry.dropped, ...newDrops];
        ops.push({ type: 'put', key: journal.key(height), value: journal.encode(entry) });
      }
      const more = new undo.UndoLog();
      for (const o of a.orphans) {
        if (l.memory.orphans.has(o.txid)) continue;
        ops.push({ type: 'put', key: orphanStamps.keyOf(o.txid), value: orphanStamps.encode(o) });
        more.add(orphanStamps.keyOf(o.txid), null);
        orphans.push(o);
      }
      for (const t of newDrops) {
        more.add(callDecisions.key(Buffer.from(t, 'hex')), null);
        more.add(pendingCalls.key(Buffer.from(t, 'hex')), pendingCalls.VALUE);
        // Listed with the block's drops, as on a node that held the call before the block.
        const listed = contractDrops.key(Buffer.from(this.contractOf.get(t)!, 'hex'), height, Buffer.from(t, 'hex'));
        ops.push({ type: 'put', key: listed, value: contractDrops.VALUE });
        more.add(listed, null);
      }
      if (undoRaw && more.bytes().length > 0) ops.push({ type: 'put', key: undo.key(height), value: undo.append(undoRaw, more) });
    }
    return { ops, orphans };
  }
}

/**
 * Whether a stored claim still stands on the node's chain: above the processed tip (not
 * checkable yet), or in the processed block at its height, whose header its branch
 * folds to. A claim kept for a block a reorganisation has since replaced (or one that
 * never held there) does not: served, it would make peers refuse the payload it comes with.
 */
async function standing(l: Ledger, inc: Inclusion | null, txid: () => string, reads: JournalReads): Promise<Inclusion | null> {
  if (!inc || !l.tip || inc.height > l.tip.height) return inc;
  if (inc.height <= l.anchor!.height) return null;
  const [entry, header] = await Promise.all([journalEntry(l, inc.height, reads), headerAt(l, inc.height)]);
  if (!entry || !header || entry.hash !== inc.blockHash || header.hash !== inc.blockHash) return null;
  return inclusionHolds(header, txid(), inc.txIndex, inc.branch) ? inc : null;
}

/**
 * Journal entries already read, by height, for the span of one question: a peer's
 * GetPayloads asks for up to 256 payloads, mostly of the same few blocks, and an entry
 * holds every transaction of its block (reading it per payload, for the placement and
 * again for each stored claim's block hash, made serving a block's payloads quadratic in
 * its size).
 */
export type JournalReads = Map<number, Promise<journal.EntryView | null>>;

/** The journal entry at `height`, read once per `reads`. */
function journalEntry(l: Ledger, height: number, reads: JournalReads): Promise<journal.EntryView | null> {
  let reading = reads.get(height);
  if (reading === undefined) {
    reading = l.db.get(journal.key(height)).then((j) => (j ? new journal.EntryView(j) : null));
    reads.set(height, reading);
  }
  return reading;
}

/**
 * The evidence the node holds for a payload, with its placement from the journal once a
 * block decided it; claims its chain no longer holds are left out. `storedRaw`: the
 * payload's stored evidence already read (readForPeers), else it is read here.
 */
export async function payloadEvidence(
  l: Ledger,
  txid: string,
  decidedAt: { height: number; txIndex: number } | null,
  reads: JournalReads = new Map(),
  storedRaw?: { value: Buffer | undefined },
): Promise<Evidence | null> {
  const raw = storedRaw ? storedRaw.value : await l.db.get(evidenceStore.key(txid));
  const stored = raw ? evidenceStore.decode(raw) : null;
  let anchorTx = stored?.anchorTx ?? null;
  // The journal's placement replaces a stored claim, whose standing is then not asked
  // (that check folds its branch against the header: a hash chain per payload served).
  let confirmed: Inclusion | null | undefined;
  if (decidedAt) {
    const entry = await journalEntry(l, decidedAt.height, reads);
    const t = entry?.tx(txid);
    if (entry && t) {
      anchorTx ??= Buffer.from(t.hex, 'hex');
      // A block read whole keeps no branch: the stored claim, where one holds, is then served.
      if (t.branch) confirmed = { blockHash: entry.hash, height: entry.height, txIndex: t.txIndex, branch: t.branch };
    }
  }
  if (confirmed === undefined) confirmed = await standing(l, stored?.confirmed ?? null, () => txid, reads);
  if (!anchorTx) return null;
  const s = stored?.spentBy ?? null;
  const spentAt = s ? await standing(l, s.at, () => spenderTxidOf(s.tx), reads) : null;
  const out: Evidence = { anchorTx, confirmed, spentBy: s && spentAt ? s : null };
  // The coin that paid for its wait travels while no confirmation does (docs/STATE.md, "Coin evidence").
  if (!confirmed && stored?.coin) out.coin = stored.coin;
  return out;
}

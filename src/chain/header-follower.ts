/**
 * Light following (chain_mode = "light", docs/ARCHITECTURE.md "Following the chain"): the
 * node keeps a verified header chain and applies blocks read as their header alone, with
 * the payloads their evidence places there; it reads a raw block only near the tip while
 * payloads wait for a confirmation, where one request finds every confirmation and every
 * conflicting spend of the block. So its cost at the chain-data endpoint follows its own
 * work, not Bitcoin's size.
 *
 * One poll:
 *  1. Headers. `GET /blocks` names the ten newest blocks (each header rebuilt and hashed
 *     by the client); those that link to the node's header chain extend it, replacing a
 *     suffix when the best chain reorganised. Further behind, pages of ten
 *     (`/blocks/:h`) walk up from the node's header tip, or down to the fork after a
 *     deeper reorganisation. Peers can bring long runs of headers instead (one endpoint
 *     answer authenticates a run: src/core/following/light-mode.ts); the endpoint is paged
 *     only while `mayPageEndpoint` allows.
 *  2. Blocks. From the highest block where the processed chain and the header chain agree
 *     (the fork, when they differ), blocks up to the header tip go to the writer in
 *     events: read as headers alone, or in full within `rawTipWindow` of the tip while the
 *     writer holds pending payloads. Calls a full block drops get their spender's evidence
 *     from the block in hand.
 *  3. Before blocks below that window are applied as headers while payloads are pending
 *     (a burst: the node was away, or the endpoint's blocks came at once), the held
 *     anchors are looked for in them (`findConfirmingBlocks`): one `/tx/:txid/status` per
 *     anchor asked, and the block it names read in full, which settles every other held
 *     anchor confirmed there; those blocks are then applied in full, so the payloads
 *     they confirm execute in their block, not in a replay after it.
 *
 * Every step checks the stop signal, so a stop ends a catch-up at the next event.
 */
import type { ParsedBlock, ParsedHeader } from '@svc-node/protocol/bitcoin';
import { headerHash, headerPrevHash, parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import { checkProofOfWork, decodeCompact, verifyHeaderRun } from '@svc-node/protocol/headers';
import type { PowParams } from '@svc-node/protocol/activation';
import type { ChainUpdate, ChainUpdateAnswer } from '../messages/writer.js';
import type { BlockInput } from '../records.js';
import type { SpentBy } from '@svc-node/protocol/evidence';
import { blockInputOf, connectedBlockOf, spentByIn } from './connected-block.js';
import { NodeError } from '@svc-node/protocol/errors';

/**
 * Times one applyBlocks call builds an event again because the writer's tip moved under
 * it (a late payload's replay ran first). One is the usual case; a few cover replays
 * queued back to back, and the bound keeps a writer that always moves from looping here.
 */
const MAX_CHAIN_MOVED_RETRIES = 8;

/**
 * Held anchors asked about per block of a burst (findConfirmingBlocks): one status request
 * per ten blocks, as many as the burst's headers cost (ten a page), so looking costs at
 * most what following the burst does, whatever the node holds pending. Each answer that
 * names a block settles every held anchor of that block (it is read in full), and
 * anchors usually confirm together, so a handful finds a burst's confirmations; what it
 * misses deferred checks find, and the payload replays from its block.
 */
const BLOCKS_PER_ANCHOR_PROBE = 10;

/** A block header as the endpoint's block list gives it (the client checked hash against the 80 bytes). */
export interface HeaderRow {
  height: number;
  hash: string;
  prevHash: string;
  header: Uint8Array;
}

/** What the follower asks of the chain-data endpoint. */
export interface HeaderSource {
  /** The ten blocks from `top` down (the ten newest without it), newest first. */
  blocks(top?: number): Promise<HeaderRow[]>;
  rawBlock(hash: string): Promise<ParsedBlock>;
  /** Where the endpoint's best chain confirmed `txid` (Esplora's `/tx/:txid/status`), null while it shows it unconfirmed or not at all. */
  txBlock(txid: string): Promise<{ height: number; hash: string } | null>;
}

export interface FollowerState {
  processed: { height: number; hash: string };
  headerTip: { height: number; hash: string } | null;
  /** The journal's anchor: the lowest height of both chains. */
  anchorHeight: number;
  /** Payloads waiting for a confirmation (pending calls and deploys). */
  pending: number;
}

/** What the follower asks of the writer. */
export interface FollowerSink {
  state(): Promise<FollowerState>;
  /** Stored headers of heights [from, from + count). */
  headers(from: number, count: number): Promise<Uint8Array[]>;
  /** The processed chain's block hash at `height` (the journal), null when it holds none. */
  processedHash(height: number): Promise<string | null>;
  putHeaders(from: number, run: Uint8Array[], truncate: boolean): Promise<void>;
  apply(update: ChainUpdate): Promise<ChainUpdateAnswer>;
  storeSpentBy(items: { txid: string; spentBy: SpentBy }[]): Promise<void>;
  /** The anchors of held pending payloads whose evidence places them in no block (the writer's pendingPayloads with no `settles_at`). */
  unplacedAnchors(): Promise<string[]>;
}

export interface HeaderFollowerOptions {
  source: HeaderSource;
  sink: FollowerSink;
  /** Read every block in full (chain_mode "blocks" uses the block watcher instead; tests may set it). */
  readAll?: boolean;
  /**
   * Blocks within this many of the header tip are read in full while payloads are pending
   * (one request a block finds every confirmation and conflicting spend there). Default 6:
   * a block older than an hour is rarely where a pending payload confirms, and deferred
   * checks find those.
   */
  rawTipWindow?: number;
  /** Blocks read as headers per event. Default 1,000: ~100 KB of headers, a few ms of writer work each. */
  maxHeaderBlocksPerEvent?: number;
  /** Blocks read in full per event. Default 8, as the block watcher's. */
  maxRawBlocksPerEvent?: number;
  /** Deepest reorganisation followed. Default 288 (twice the 144-block journal window). */
  maxReorgDepth?: number;
  /** The network's proof-of-work rules every header is checked against (packages/protocol/src/activation.ts). */
  pow: PowParams;
  /**
   * Whether the endpoint may be paged for `missing` headers now (ten a request). The core
   * waits for peers' headers while it has peers and the gap is long; the default always
   * allows it.
   */
  mayPageEndpoint?: (missing: number) => boolean;
  /** The highest block that may be applied now (the core holds blocks back while its first peer sync delivers). */
  applyCeiling?: () => number;
  /** Held anchors were looked for in heights [from, to] (findConfirmingBlocks): `asked` statuses, the confirming `blocks` found (read in full). */
  onLookup?: (r: { from: number; to: number; asked: number; blocks: number[] }) => void;
  signal?: AbortSignal;
}

/**
 * Checks a run of headers from height `from` against the network's rules before the node
 * keeps it (packages/protocol/src/headers.ts verifyHeaderRun: linkage to the header held below,
 * proof of work within the network's minimum, retarget bits exact where the period's
 * first header is held, within four times otherwise): the one check of every header the
 * node keeps, from the endpoint or from a peer. `headers` reads the node's stored ones.
 * Answers null, or why not.
 */
export async function checkHeaderRun(headers: (from: number, count: number) => Promise<Uint8Array[]>, from: number, run: readonly ParsedHeader[], pow: PowParams): Promise<string | null> {
  const read = async (height: number): Promise<ParsedHeader | null> => {
    if (height < 0) return null;
    const [h] = await headers(height, 1);
    return h ? parseHeaderBytes(h) : null;
  };
  const interval = pow.retargetInterval;
  const periodFirst = interval && from > 1 ? await read(Math.floor((from - 1) / interval) * interval) : null;
  const r = verifyHeaderRun({ height: from, prev: await read(from - 1), periodFirst }, run, pow);
  return r.ok ? null : r.reason;
}

/**
 * Whether an announced header is worth an endpoint request: it meets the network's proof
 * of work, and (where the network has no minimum-difficulty blocks) asks at least a
 * quarter of the work of the node's tip, the most a retarget can ease. On mainnet a
 * header that passes costs about a real block's work, so a lying peer cannot make the
 * node spend a request; on regtest and the devnet anyone can mine one.
 */
export function announcementWorthAsking(h: ParsedHeader, tip: ParsedHeader | null, pow: PowParams): boolean {
  if (checkProofOfWork(h.hash, h.bits, pow.powLimit) !== true) return false;
  if (!tip || pow.allowMinDifficulty) return true;
  return decodeCompact(h.bits).target <= 4n * decodeCompact(tip.bits).target;
}

/** Block `height` read as its stored header alone (its hash and link: nothing else of it is parsed here). */
function headerOnlyBlock(height: number, header: Uint8Array): BlockInput {
  return { height, hash: headerHash(header), prevHash: headerPrevHash(header), header, txs: [], headerOnly: true };
}

/** The best chain forked deeper than the follower goes, or below the journal's anchor. */
export class HeaderReorgTooDeep extends Error {}

/** The endpoint's pages do not link (an inconsistent answer). */
export class HeaderChainBroken extends Error {}

export class HeaderFollower {
  private readonly o: Required<Omit<HeaderFollowerOptions, 'signal'>> & { signal?: AbortSignal };
  /** The endpoint's tip as the last poll saw it. */
  endpointTip: { height: number; hash: string } | null = null;
  /** Blocks not applied yet where held anchors confirmed (findConfirmingBlocks): height -> hash. Read in full. */
  private readonly confirming = new Map<number, string>();
  /** The block up to which held anchors were looked for (findConfirmingBlocks); a header chain that no longer holds it is looked at again. */
  private lookedTo: { height: number; hash: string } | null = null;
  /**
   * Held anchors the endpoint showed unconfirmed, with its tip's height when asked: not
   * confirmed at or below it (on that chain). Those asked longest ago are asked first.
   */
  private readonly unconfirmedThrough = new Map<string, number>();

  constructor(opts: HeaderFollowerOptions) {
    this.o = {
      readAll: false,
      rawTipWindow: 6,
      maxHeaderBlocksPerEvent: 1_000,
      maxRawBlocksPerEvent: 8,
      maxReorgDepth: 288,
      mayPageEndpoint: () => true,
      applyCeiling: () => Infinity,
      onLookup: () => undefined,
      ...opts,
    };
  }

  /** The node's stored headers, as checkHeaderRun reads them. */
  private readonly storedHeaders = (from: number, count: number): Promise<Uint8Array[]> => this.o.sink.headers(from, count);

  private get stopped(): boolean {
    return this.o.signal?.aborted ?? false;
  }

  /** One poll: headers from the endpoint, then every block the writer can apply. */
  async poll(): Promise<void> {
    await this.followHeaders();
    await this.applyBlocks();
  }

  /**
   * A peer announced a block header above this node's header tip (its heartbeat; a hint,
   * never trusted). One endpoint request either way:
   * - while payloads wait for a confirmation and the header extends the node's tip (links
   *   to it, meets its target), the block itself by that hash: the endpoint's answer is
   *   checked against the hash (merkle root and all) and placed on the tip, where it finds
   *   every confirmation and conflicting spend (the client caches it for applyBlocks);
   * - otherwise one ordinary poll (the endpoint's ten newest headers), which also follows
   *   a reorganisation.
   * A block the endpoint serves by hash but no longer holds on its best chain (a stale
   * block a peer named) is undone by the next poll that sees the best chain, as any
   * reorganisation: the next announcement that does not link, or the node's own poll.
   * Answers `moved` (the header tip moved), `asked` (the endpoint was asked, the tip did
   * not move), `known` (the node reached that height meanwhile) or `unworthy` (the header
   * is not worth a request: announcementWorthAsking).
   */
  async followPeerTip(height: number, header: Uint8Array): Promise<'moved' | 'asked' | 'known' | 'unworthy'> {
    const st = await this.o.sink.state();
    const have = st.headerTip ?? st.processed;
    if (height <= have.height) return 'known';
    const h = parseHeaderBytes(header);
    const [tipRow] = await this.o.sink.headers(have.height, 1);
    const tip = tipRow ? parseHeaderBytes(tipRow) : null;
    if (!announcementWorthAsking(h, tip, this.o.pow)) return 'unworthy';
    const extendsTip = height === have.height + 1 && h.prevHash === have.hash && st.processed.hash === have.hash && (await checkHeaderRun(this.storedHeaders, height, [h], this.o.pow)) === null;
    if (extendsTip && st.pending > 0 && this.o.rawTipWindow > 0 && height <= this.o.applyCeiling()) {
      const block = await this.o.source.rawBlock(h.hash);
      if (block.hash !== h.hash) throw new HeaderChainBroken(`the endpoint answered block ${block.hash} for ${h.hash}`);
      this.endpointTip = { height, hash: h.hash };
      await this.putRun(height, [{ height, hash: h.hash, prevHash: h.prevHash, header }], true);
      await this.applyBlocks();
    } else {
      await this.poll();
    }
    const after = await this.o.sink.state();
    return (after.headerTip?.height ?? after.processed.height) > have.height ? 'moved' : 'asked';
  }

  // ---------------------------------------------------------------- headers

  /** Brings the header chain up to the endpoint's tip (as far as paging is allowed). */
  async followHeaders(): Promise<void> {
    const newest = await this.o.source.blocks();
    const [top] = newest;
    if (!top) return;
    this.endpointTip = { height: top.height, hash: top.hash };
    for (let guard = 0; !this.stopped; guard++) {
      const st = await this.o.sink.state();
      const have = st.headerTip ?? st.processed;
      if (have.height === this.endpointTip.height && have.hash === this.endpointTip.hash) return;
      // The newest ten link to the node's chain: extend (or replace a short suffix).
      const linked = await this.linkRun(newest, st);
      if (linked) {
        await this.putRun(linked.from, linked.run, true);
        return;
      }
      const missing = this.endpointTip.height - have.height;
      if (!this.o.mayPageEndpoint(missing)) return;
      if (guard > 1 + Math.ceil(Math.max(0, missing) / 10) + this.o.maxReorgDepth / 10) throw new HeaderChainBroken('the endpoint\'s block pages do not converge on its tip');
      await this.pageFrom(have, st);
    }
  }

  /**
   * The suffix of `rows` (newest first) that links to the node's header chain, ascending,
   * or null when none does: the highest row whose parent the node holds at its height - 1.
   */
  private async linkRun(rows: HeaderRow[], st: FollowerState): Promise<{ from: number; run: HeaderRow[] } | null> {
    const asc = [...rows].sort((a, b) => a.height - b.height);
    for (const [i, r] of asc.entries()) {
      const parent = await this.hashAt(r.height - 1, st);
      if (parent !== null && parent === r.prevHash) {
        // Rows above must link among themselves (the client checked each against its hash).
        const run = asc.slice(i);
        run.reduce((below, above) => {
          if (above.prevHash !== below.hash) throw new HeaderChainBroken(`the endpoint's blocks ${below.height} and ${above.height} do not link`);
          return above;
        });
        return { from: r.height, run };
      }
    }
    return null;
  }

  /** One page of ten: up from the node's header tip, or down towards a fork. */
  private async pageFrom(have: { height: number; hash: string }, st: FollowerState): Promise<void> {
    const page = await this.o.source.blocks(Math.min(this.endpointTip!.height, have.height + 10));
    const linked = await this.linkRun(page, st);
    if (linked) {
      await this.putRun(linked.from, linked.run, false);
      return;
    }
    // The page above the node's tip does not link: the best chain forked below it. Walk down.
    for (let top = have.height; top > st.anchorHeight && have.height - top < this.o.maxReorgDepth; top -= 10) {
      if (this.stopped) return;
      const lower = await this.o.source.blocks(top);
      const l2 = await this.linkRun(lower, st);
      if (l2) {
        await this.putRun(l2.from, l2.run, false);
        return;
      }
    }
    throw new HeaderReorgTooDeep(`no block of the endpoint's best chain links to this node's headers within ${this.o.maxReorgDepth} blocks of ${have.height}`);
  }

  private async putRun(from: number, rows: HeaderRow[], truncate: boolean): Promise<void> {
    const parsed = rows.map((r) => {
      const h = parseHeaderBytes(r.header);
      if (h.hash !== r.hash) throw new HeaderChainBroken(`the endpoint's header at ${r.height} hashes to ${h.hash}, not ${r.hash}`);
      return h;
    });
    const wrong = await checkHeaderRun(this.storedHeaders, from, parsed, this.o.pow);
    if (wrong !== null) throw new HeaderChainBroken(`the endpoint's ${wrong}`);
    await this.o.sink.putHeaders(from, rows.map((r) => r.header), truncate);
  }

  /** The node's chain at `height`: its header chain, else the processed chain (the journal, from the anchor). */
  private async hashAt(height: number, st: FollowerState): Promise<string | null> {
    if (height < st.anchorHeight) return null;
    if (height === st.processed.height) {
      // The header chain may differ from the processed one there (a reorg not applied yet).
      const [h] = await this.o.sink.headers(height, 1);
      return h ? parseHeaderBytes(h).hash : st.processed.hash;
    }
    const [h] = await this.o.sink.headers(height, 1);
    if (h) return parseHeaderBytes(h).hash;
    return this.o.sink.processedHash(height);
  }

  // ---------------------------------------------------------------- blocks

  /**
   * Applies blocks up to the header tip, one event at a time. While the writer applies a
   * header-only event, the next one's headers are read and hashed (`ahead`): building an
   * event of 1,000 blocks (the headers read back from the writer, each hashed) took ~7 ms
   * of every ~40 during which the writer waited. A prepared event is used only when it is
   * the one this loop would build next and the node still holds its last header (the
   * stored chain links, so the same top means the same run below it); otherwise it is
   * built again, as it always was.
   */
  async applyBlocks(): Promise<void> {
    let moved = 0;
    let ahead: { from: number; last: number; blocks: Promise<BlockInput[] | null> } | null = null;
    while (!this.stopped) {
      const st = await this.o.sink.state();
      if (!st.headerTip || st.headerTip.height <= st.anchorHeight) return;
      const fork = await this.forkHeight(st);
      const target = st.headerTip.height;
      if (fork === target && st.processed.height === target) return;
      const ceiling = this.o.applyCeiling();
      if (fork + 1 > ceiling) return;
      const disconnected: { height: number; hash: string }[] = [];
      for (let h = st.processed.height; h > fork; h--) {
        const hash = await this.o.sink.processedHash(h);
        if (hash === null) throw new HeaderReorgTooDeep(`the journal holds no block at ${h}`);
        disconnected.push({ height: h, hash });
      }
      // A reorganisation makes the payloads its rewound blocks decided pending again: the
      // new branch up to the old tip is read in full, where they most likely confirm again
      // (one request a block; reorganisations are rare and short). Its event ends at the old
      // tip, so the next one sees the pending count after the rewind.
      const reorgTop = disconnected.length > 0 ? Math.min(target, st.processed.height) : fork;
      // Blocks below the tip window would be read as headers: first find where held anchors confirmed in them.
      const headerTop = Math.min(target - this.o.rawTipWindow, ceiling);
      if (!this.o.readAll && st.pending > 0 && disconnected.length === 0 && headerTop > fork) {
        const looked = await this.lookedHeight();
        if (headerTop > Math.max(fork, looked)) {
          await this.findConfirmingBlocks(Math.max(fork, looked) + 1, headerTop);
          if (this.stopped) return;
        }
      }
      const full = (h: number): boolean => this.o.readAll || h <= reorgTop || (st.pending > 0 && target - h < this.o.rawTipWindow) || this.confirming.has(h);
      const firstFull = full(fork + 1);
      const cap = firstFull ? this.o.maxRawBlocksPerEvent : this.o.maxHeaderBlocksPerEvent;
      // A reorganisation is applied whole (see above); other events stop at the ceiling.
      let last = disconnected.length > 0 ? reorgTop : Math.min(target, fork + cap, ceiling);
      // An event is all headers or all full blocks, ending where the kind changes.
      if (disconnected.length === 0) for (let h = fork + 2; h <= last; h++) if (full(h) !== firstFull) last = h - 1;
      const headerOnly = disconnected.length === 0 && !firstFull;
      const prepared = ahead;
      ahead = null;
      let connected = headerOnly && prepared?.from === fork + 1 && prepared.last === last ? await this.stillHeld(await prepared.blocks, st) : null;
      const fullBlocks = new Map<number, ParsedBlock>();
      if (!connected) {
        const rows = await this.o.sink.headers(fork + 1, last - fork);
        if (rows.length !== last - fork) throw new HeaderChainBroken(`the node holds headers ${fork + 1}..${fork + rows.length}, not up to ${last}`);
        connected = [];
        for (const [i, row] of rows.entries()) {
          if (this.stopped) return;
          const h = fork + 1 + i;
          if (full(h)) {
            const b = await this.o.source.rawBlock(headerHash(row));
            fullBlocks.set(h, b);
            connected.push({ ...blockInputOf(connectedBlockOf(b, h)), header: row });
          } else connected.push(headerOnlyBlock(h, row));
        }
      }
      if (this.stopped) return;
      // The next event, as the next turn builds it if this one lands: its headers meanwhile.
      const nextLast = Math.min(target, last + cap, ceiling);
      if (headerOnly && nextLast > last) ahead = { from: last + 1, last: nextLast, blocks: this.readHeaderOnly(last + 1, nextLast) };
      let answer: ChainUpdateAnswer;
      try {
        answer = await this.o.sink.apply({ fork_height: fork, disconnected, connected });
      } catch (e) {
        // The writer's tip moved while this event was built (a replay ran first): build it
        // again from the tip it has now.
        if (e instanceof NodeError && e.detail?.['reason'] === 'chain_moved' && ++moved <= MAX_CHAIN_MOVED_RETRIES) continue;
        throw e;
      }
      await this.attachDrops(answer, fullBlocks);
      for (const h of this.confirming.keys()) if (h <= last) this.confirming.delete(h);
    }
  }

  /**
   * Finds the blocks of heights [from, to], not applied yet, where anchors of held
   * payloads confirmed, so they are read in full and their payloads execute with them
   * (a burst would otherwise apply them as headers and learn of the confirmations from
   * deferred checks, replaying from each). Held anchors are asked one at a time
   * (`/tx/:txid/status`, Esplora has no batch question), at most one per
   * BLOCKS_PER_ANCHOR_PROBE blocks of the range; a block one names (and the node holds at
   * that height) is read in full at once, and every other held anchor in it is settled
   * with it. Anchors never asked come first, then those asked longest ago.
   */
  private async findConfirmingBlocks(from: number, to: number): Promise<void> {
    const asks = Math.ceil((to - from + 1) / BLOCKS_PER_ANCHOR_PROBE);
    const anchors = await this.o.sink.unplacedAnchors();
    const held = new Set(anchors);
    for (const t of this.unconfirmedThrough.keys()) if (!held.has(t)) this.unconfirmedThrough.delete(t);
    const order = anchors
      .filter((t) => (this.unconfirmedThrough.get(t) ?? -1) < to)
      .sort((a, b) => (this.unconfirmedThrough.get(a) ?? -1) - (this.unconfirmedThrough.get(b) ?? -1));
    const settled = new Set<string>();
    let asked = 0;
    const blocks: number[] = [];
    for (const txid of order) {
      if (asked >= asks || this.stopped) break;
      if (settled.has(txid)) continue;
      asked++;
      const tipThen = this.endpointTip?.height ?? to;
      const at = await this.o.source.txBlock(txid);
      if (at === null) {
        this.unconfirmedThrough.set(txid, tipThen);
        continue;
      }
      this.unconfirmedThrough.delete(txid);
      // Below `from`: applied already (a deferred check places it); above `to`: read in full anyway.
      if (at.height < from || at.height > to || this.confirming.has(at.height)) continue;
      const [row] = await this.o.sink.headers(at.height, 1);
      if (!row || headerHash(row) !== at.hash) continue; // another branch than the node's headers
      const block = await this.o.source.rawBlock(at.hash);
      this.confirming.set(at.height, at.hash);
      blocks.push(at.height);
      for (const t of block.txids) if (held.has(t)) settled.add(t);
    }
    if (asked > 0) this.o.onLookup({ from, to, asked, blocks: blocks.sort((a, b) => a - b) });
    const [top] = await this.o.sink.headers(to, 1);
    this.lookedTo = top ? { height: to, hash: headerHash(top) } : null;
  }

  /** The height up to which held anchors were looked for, while the header chain still holds that block; else -1. */
  private async lookedHeight(): Promise<number> {
    const l = this.lookedTo;
    if (!l) return -1;
    const [row] = await this.o.sink.headers(l.height, 1);
    if (row && headerHash(row) === l.hash) return l.height;
    this.lookedTo = null;
    this.confirming.clear();
    return -1;
  }

  /** Heights [from, last] of the stored header chain as header-only blocks; null when the node does not hold them all. */
  private async readHeaderOnly(from: number, last: number): Promise<BlockInput[] | null> {
    try {
      const rows = await this.o.sink.headers(from, last - from + 1);
      if (rows.length !== last - from + 1) return null;
      return rows.map((row, i) => headerOnlyBlock(from + i, row));
    } catch {
      // Read again the usual way, which meets the same failure where it always did.
      return null;
    }
  }

  /**
   * `blocks`, read ahead, when they still extend the processed tip and the node still
   * holds their last header at its height (a header chain that changed meanwhile holds
   * another there); else null.
   */
  private async stillHeld(blocks: BlockInput[] | null, st: FollowerState): Promise<BlockInput[] | null> {
    const first = blocks?.[0];
    const top = blocks?.at(-1);
    if (!blocks || !first || !top || first.prevHash !== st.processed.hash) return null;
    const [row] = await this.o.sink.headers(top.height, 1);
    return row && headerHash(row) === top.hash ? blocks : null;
  }

  /** The highest height where the processed chain and the header chain hold the same block. */
  private async forkHeight(st: FollowerState): Promise<number> {
    let h = Math.min(st.processed.height, st.headerTip!.height);
    const floor = Math.max(st.anchorHeight, st.processed.height - this.o.maxReorgDepth);
    for (; h > st.anchorHeight; h--) {
      const [row] = await this.o.sink.headers(h, 1);
      const processed = h === st.processed.height ? st.processed.hash : await this.o.sink.processedHash(h);
      if (row && processed !== null && parseHeaderBytes(row).hash === processed) return h;
      if (h <= floor) throw new HeaderReorgTooDeep(`the header chain and the processed chain share no block above ${floor}`);
    }
    return st.anchorHeight;
  }

  /** Spender evidence for the calls full blocks dropped, from the blocks in hand. */
  private async attachDrops(answer: ChainUpdateAnswer, blocks: Map<number, ParsedBlock>): Promise<void> {
    const items: { txid: string; spentBy: SpentBy }[] = [];
    for (const d of answer.drops) {
      const b = blocks.get(d.height);
      const spentBy = b ? spentByIn({ hash: b.hash, height: d.height, txids: b.txids, txAt: (i) => b.txs[i]! }, d.outpoint, d.spender) : null;
      if (spentBy) items.push({ txid: d.txid, spentBy });
    }
    if (items.length > 0) await this.o.sink.storeSpentBy(items);
  }
}

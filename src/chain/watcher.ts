/**
 * Block watcher: follows the chain-data endpoint's best chain by hash from an anchor the
 * consumer provides (its last processed block), detects reorganisations by walking back
 * along previous-block hashes to the fork point, and hands the consumer one event per
 * step, awaiting it before going on (so the consumer applies strictly in order).
 *
 * Event (ChainEvent):
 *   { fork_height, disconnected, connected }
 *   - fork_height: height of the last block the consumer's chain and the new best chain
 *     share. For a plain extension it is the consumer's previous tip height.
 *   - disconnected: the consumer's blocks above fork_height, TIP FIRST (descending height:
 *     the order to undo them), as {height, hash}.
 *   - connected: the new best-chain blocks above fork_height, ASCENDING height (the order
 *     to apply them), each a ConnectedBlock with every transaction and every stamp.
 * After the consumer's callback resolves, its tip is connected[last] (or fork_height when
 * connected is empty: the chain got shorter). If the callback throws, nothing is
 * committed and the next poll recomputes the same step.
 *
 * Cost: one /block/:hash/raw per connected block (never one request per transaction),
 * plus /blocks/tip/height and one /block-height/:h per step (and one more per step of a
 * catch-up, for the next step's blocks fetched ahead).
 * Catch-up is split into events of at most `maxBlocksPerEvent` connected blocks (a reorg
 * event always reaches at least the old tip's height). A reorg event holds every block of
 * the new branch down to the fork in memory (deep reorgs are bounded by maxReorgDepth and
 * by the consumer's journal: the walk stops at the first height it does not know).
 * Pipelined catch-up: while the consumer applies one event, the blocks of the next one
 * (up to `maxBlocksPerEvent` above it, walked back from the best chain's block at that
 * height) are fetched and parsed, so fetching and applying overlap. They are held by
 * hash and only used if the next step's own walk meets those hashes: a reorg in between
 * costs some wasted fetches, never a wrong event. At most two events' blocks are in
 * memory at once.
 * If the chain moves during a step (a 404 for a height or a block that just left the best
 * chain), the step restarts from the new tip (up to 3 times per poll).
 * stop() ends a poll at the next step boundary: a catch-up of thousands of blocks stops
 * after the event in hand, never hands the consumer another one, and never waits for
 * the tip.
 */
import type { Transaction } from 'bitcoinjs-lib';
import { findStamp, type NoStampReason, type Stamp } from '@svc-node/protocol/stamp';
import type { ParsedBlock, ParsedHeader } from '@svc-node/protocol/bitcoin';
import type { ChainSource } from './esplora-client.js';
import { NodeError } from '@svc-node/protocol/errors';

export interface BlockRef {
  height: number;
  hash: string;
}

export interface ConnectedTx {
  txid: string;
  /** Index in the block (0 = coinbase): the second half of a protocol position. */
  index: number;
  tx: Transaction;
}

export interface BlockStamp {
  txIndex: number;
  txid: string;
  stamp: Stamp;
}

/** A transaction with "SVC" OP_RETURN output(s) that anchors nothing (PROTOCOL section 3). */
export interface RejectedStamp {
  txIndex: number;
  txid: string;
  reason: Exclude<NoStampReason, 'no_stamp'>;
}

export interface ConnectedBlock {
  height: number;
  hash: string;
  prevHash: string;
  header: ParsedHeader;
  /** Every transaction in block order. */
  txs: ConnectedTx[];
  /** Every valid stamp, in transaction order (coinbase included, like any transaction). */
  stamps: BlockStamp[];
  /** Transactions whose SVC outputs are malformed or more than one. */
  rejectedStamps: RejectedStamp[];
}

export interface ChainEvent {
  fork_height: number;
  disconnected: BlockRef[];
  connected: ConnectedBlock[];
}

export interface BlockWatcherOptions {
  source: ChainSource;
  /** The consumer's last processed block. */
  anchor: BlockRef;
  /** Awaited before the next step. */
  onEvent: (event: ChainEvent) => Promise<void>;
  /**
   * The hash of the consumer's block at `height`, or undefined/null when it holds none.
   * Consulted for heights below what the watcher itself has seen since start (after a
   * restart: the node's stored journal of its last 144+ blocks), so fork detection works
   * below the anchor. Without it, a reorg below the anchor is ReorgTooDeepError.
   */
  knownHash?: (height: number) => string | undefined | null | Promise<string | undefined | null>;
  /**
   * Alternative to knownHash: the consumer's last blocks (e.g. its 144+ journal entries),
   * contiguous up to the anchor. Both may be given; these are consulted first.
   */
  knownBlocks?: readonly BlockRef[];
  /** Seconds between polls; fractions allowed. Default 60 (SERVICE-SPEC section 8). */
  pollIntervalSeconds?: number;
  /**
   * Connected blocks per catch-up event. Default 8: with the next event's blocks fetched
   * ahead, at most 16 full blocks are in memory (as with the 16-block events before
   * fetching ahead), and a smaller event lets fetching and applying alternate finely.
   */
  maxBlocksPerEvent?: number;
  /** Deepest reorg followed. Default 288 (two days of blocks, twice the node's 144-block journal). */
  maxReorgDepth?: number;
  /** Errors of timer-driven polls (chain_unavailable, ReorgTooDeepError, consumer errors). */
  onError?: (e: unknown) => void;
}

/** The best chain forked below what the consumer (and the watcher) know, or deeper than maxReorgDepth. */
export class ReorgTooDeepError extends Error {
  constructor(
    readonly consumerHeight: number,
    readonly searchedDownTo: number,
  ) {
    super(`no common block with the best chain between heights ${searchedDownTo} and ${consumerHeight}`);
    this.name = 'ReorgTooDeepError';
  }
}

/** Extracts the block's transactions and stamps (one parse, no extra requests). */
export function connectedBlockOf(b: ParsedBlock, height: number): ConnectedBlock {
  const txs: ConnectedTx[] = [];
  const stamps: BlockStamp[] = [];
  const rejectedStamps: RejectedStamp[] = [];
  b.txs.forEach((tx, index) => {
    const txid = b.txids[index]!;
    txs.push({ txid, index, tx });
    const r = findStamp(tx);
    if (r.ok) stamps.push({ txIndex: index, txid, stamp: r.stamp });
    else if (r.reason !== 'no_stamp') rejectedStamps.push({ txIndex: index, txid, reason: r.reason });
  });
  return { height, hash: b.hash, prevHash: b.header.prevHash, header: b.header, txs, stamps, rejectedStamps };
}

/** Blocks fetched ahead by hash, and the background walk fetching them. */
interface FetchAhead {
  blocks: Map<string, Promise<ParsedBlock>>;
  stopped: boolean;
  done: Promise<void>;
}

export class BlockWatcher {
  private readonly source: ChainSource;
  private readonly onEvent: (e: ChainEvent) => Promise<void>;
  private readonly knownHash?: BlockWatcherOptions['knownHash'];
  private readonly intervalMs: number;
  private readonly maxBlocks: number;
  private readonly maxDepth: number;
  private readonly onError: (e: unknown) => void;
  /** Hashes of the consumer's chain that the watcher has seen (anchor and every connected block), bounded. */
  private readonly held = new Map<number, string>();
  private tipRef: BlockRef;
  private serial: Promise<unknown> = Promise.resolve();
  private pending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** Aborted by stop(): polls end at the next step boundary, later ones do nothing. */
  private readonly stopping = new AbortController();
  /** Blocks of the next catch-up step fetched while the consumer applies the current one. */
  private ahead: FetchAhead | null = null;

  constructor(opts: BlockWatcherOptions) {
    if (!Number.isSafeInteger(opts.anchor.height) || opts.anchor.height < 0) throw new RangeError('anchor height');
    this.source = opts.source;
    this.onEvent = opts.onEvent;
    this.knownHash = opts.knownHash;
    const secs = opts.pollIntervalSeconds ?? 60;
    if (!(secs > 0)) throw new RangeError('pollIntervalSeconds must be > 0');
    this.intervalMs = Math.max(1, Math.round(secs * 1000));
    this.maxBlocks = Math.max(1, opts.maxBlocksPerEvent ?? 8);
    this.maxDepth = Math.max(1, opts.maxReorgDepth ?? 288);
    this.onError = opts.onError ?? (() => undefined);
    this.tipRef = { ...opts.anchor };
    for (const b of opts.knownBlocks ?? []) if (b.height <= opts.anchor.height) this.held.set(b.height, b.hash);
    this.held.set(opts.anchor.height, opts.anchor.hash);
  }

  /** The consumer's tip as the watcher knows it (last event applied). */
  get tip(): BlockRef {
    return { ...this.tipRef };
  }

  /** Starts timer-driven polling (first poll at once). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  /**
   * Stops polling and waits for a poll in progress to end: after the event the consumer
   * is applying, if any; a step still fetching hands it no event.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.serial;
  }

  /**
   * Polls now (after any poll in progress) until the consumer has caught up with the
   * tip seen; resolves when done, rejects with the poll's error. Concurrent calls made
   * while a poll waits to start share it.
   */
  pollNow(): Promise<void> {
    if (this.pending) return this.pending;
    const p: Promise<void> = this.serial.then(() => {
      if (this.pending === p) this.pending = null;
      return this.poll();
    });
    this.pending = p;
    this.serial = p.catch(() => undefined);
    return p;
  }

  private tick(): void {
    this.pollNow()
      .catch((e: unknown) => this.onError(e))
      .finally(() => {
        if (!this.running) return;
        this.timer = setTimeout(() => this.tick(), this.intervalMs);
        this.timer.unref?.();
      });
  }

  private async known(height: number): Promise<string | undefined> {
    const h = this.held.get(height);
    if (h !== undefined) return h;
    if (!this.knownHash) return undefined;
    return (await this.knownHash(height)) ?? undefined;
  }

  private async poll(): Promise<void> {
    let restarts = 0;
    try {
      for (;;) {
        if (this.stopping.signal.aborted) return;
        let step: boolean;
        try {
          step = await this.step();
        } catch (e) {
          // The best chain moved under the walk (a height vanished, a block left the best
          // chain and now answers 404): start the step again from the new tip, a few times.
          if (e instanceof NodeError && e.code === 'not_found' && restarts < 3) {
            restarts++;
            continue;
          }
          throw e;
        }
        if (!step) return;
      }
    } finally {
      // Nothing fetched ahead outlives the poll (stop() waits for this).
      await this.dropAhead();
    }
  }

  /**
   * The block `hash`, from the blocks fetched ahead when it is among them. One that failed
   * there is asked for again, so the error a step reports is always its own.
   */
  private block(hash: string): Promise<ParsedBlock> {
    const got = this.ahead?.blocks.get(hash);
    if (!got) return this.source.rawBlock(hash);
    this.ahead!.blocks.delete(hash);
    return got.catch(() => this.source.rawBlock(hash));
  }

  /**
   * Starts fetching the blocks above `fromHeight` up to `toHeight` in the background,
   * walking back from the best chain's block at `toHeight`. A failure ends the walk; the
   * step that needs those blocks fetches them itself (see block()).
   */
  private fetchAhead(fromHeight: number, toHeight: number): void {
    const ahead: FetchAhead = { blocks: new Map(), stopped: false, done: Promise.resolve() };
    ahead.done = (async () => {
      let hash = await this.source.blockHashAt(toHeight);
      for (let h = toHeight; h > fromHeight && !ahead.stopped; h--) {
        const p = this.source.rawBlock(hash);
        p.catch(() => undefined); // the step that takes it sees the rejection
        ahead.blocks.set(hash, p);
        hash = (await p).header.prevHash;
      }
    })().catch(() => undefined);
    this.ahead = ahead;
  }

  private async dropAhead(): Promise<void> {
    const ahead = this.ahead;
    if (!ahead) return;
    this.ahead = null;
    ahead.stopped = true;
    await ahead.done;
  }

  /** One event's worth of work; true when more remains (catch-up). */
  private async step(): Promise<boolean> {
    // Blocks still being fetched ahead are this step's most likely: let that walk finish
    // rather than asking for the same blocks twice.
    await this.ahead?.done;
    const ourH = this.tipRef.height;
    const tipH = await this.source.tipHeight();
    const target = tipH <= ourH ? tipH : Math.min(tipH, ourH + this.maxBlocks);
    const targetHash = await this.source.blockHashAt(target);
    if (target === ourH && targetHash === this.tipRef.hash) return false;

    // Walk back from the target along previous-block hashes to a block the consumer holds.
    const connected: ConnectedBlock[] = [];
    let h = target;
    let hash = targetHash;
    for (;;) {
      if (h <= ourH) {
        const k = await this.known(h);
        if (k === hash) break;
        // The consumer's blocks are contiguous up to its tip: below one it lacks, nothing matches.
        if (k === undefined) throw new ReorgTooDeepError(ourH, h);
      }
      if (h < 0 || ourH - h >= this.maxDepth) throw new ReorgTooDeepError(ourH, Math.max(0, h));
      const b = await this.block(hash);
      connected.push(connectedBlockOf(b, h));
      hash = b.header.prevHash;
      h--;
    }
    connected.reverse();
    const fork = h;
    const disconnected: BlockRef[] = [];
    for (let x = ourH; x > fork; x--) {
      const k = await this.known(x);
      if (k === undefined) throw new ReorgTooDeepError(ourH, x);
      disconnected.push({ height: x, hash: k });
    }

    // Blocks fetched ahead that this walk did not meet belong to a branch that is gone.
    await this.dropAhead();
    if (this.stopping.signal.aborted) return false;
    if (target < tipH) this.fetchAhead(target, Math.min(tipH, target + this.maxBlocks));
    await this.onEvent({ fork_height: fork, disconnected, connected });

    for (let x = ourH; x > fork; x--) this.held.delete(x);
    for (const c of connected) this.held.set(c.height, c.hash);
    this.tipRef = { height: target, hash: targetHash };
    if (this.held.size > this.maxDepth + this.maxBlocks + 1) {
      const keepFrom = target - this.maxDepth - this.maxBlocks;
      for (const k of this.held.keys()) if (k < keepFrom) this.held.delete(k);
    }
    return target < tipH;
  }
}

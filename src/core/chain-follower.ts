/**
 * Follows the chain-data endpoint for the writer: anchors the block journal of a node
 * with no data (below the network's protocol activation, or at start_height), then, from
 * the writer's last processed block, hands the writer each update in order:
 * - chain_mode "light" (the default): the header follower (src/chain/header-follower.ts):
 *   a verified header chain, blocks read as headers with the payloads' evidence, raw
 *   blocks only near the tip while payloads wait for a confirmation; peers' header runs
 *   come in through `submitHeaders`, authenticated by one endpoint answer;
 * - chain_mode "blocks": the block watcher (src/chain/watcher.ts): every block raw.
 */
import { BlockWatcher, type ChainEvent } from '../chain/watcher.js';
import { blockInputOf } from '../chain/connected-block.js';
import { HeaderFollower, type HeaderRow } from '../chain/header-follower.js';
import { parseHeaderBytes, hashMeetsTarget } from '../protocol/bitcoin.js';
import type { EsploraClient, RequestOptions } from '../chain/esplora-client.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../messages.js';
import { NodeError } from '../errors.js';
import { logger } from '../log.js';
import { journalAnchorHeight } from '../protocol/activation.js';

const log = logger('chain');
/** Following the chain comes first in the chain-data budget (src/chain/budget.ts). */
const TIP: RequestOptions = { priority: 'tip' };

/** Anchoring retries start here and double up to the cap while the endpoint is down. */
const ANCHOR_RETRY_BASE_MS = 500;
const ANCHOR_RETRY_CAP_MS = 30_000;
/** Catch-up progress is logged at most this often. */
const PROGRESS_EVERY_MS = 5_000;
/**
 * Headers a light node with peers fetches from the endpoint once its first peer sync has
 * ended (the peers brought what they hold): 1,000 is 100 requests (ten a page), a seventh
 * of an hour's budget on a public endpoint. Before that sync ends it pages nothing (a
 * peer's run costs one request), and a longer gap waits up to PEER_HEADER_WAIT_MS from
 * start for a later round's run.
 */
const ENDPOINT_HEADER_PAGING_FREE = 1_000;
const PEER_HEADER_WAIT_MS = 120_000;
/**
 * A light node with peers holds block application back until its first sync with them
 * has ended (payloads and their evidence arrive first, so blocks are applied once with
 * them rather than replayed as each arrives late), at most this long after start.
 */
const INITIAL_SYNC_WAIT_MS = 120_000;

export type ChainMode = 'light' | 'blocks';

export class ChainFollower {
  private watcher: BlockWatcher | null = null;
  private light: HeaderFollower | null = null;
  private lightTimer: NodeJS.Timeout | null = null;
  private lightPoll: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private readonly startedAt = Date.now();
  /** The first peer sync ended (gossip says so), or there are no peers to wait for. */
  private initialSyncDone: boolean;
  private stopped = false;
  chainTipHeight: number | null = null;
  chainTipHash: string | null = null;
  lastError: string | null = null;
  /** `lastError` came from the chain endpoint (cleared as soon as it answers again). */
  private lastErrorFromChain = false;
  private progress = { since: 0, blocksAtStart: 0, lastLog: 0 };

  constructor(
    private readonly chain: EsploraClient,
    private readonly writer: RpcClient<WriterApi>,
    private readonly opts: { pollIntervalS: number; startHeight: number | null; mode: ChainMode; hasPeers: boolean; onStatus: (s: WriterStatus) => void },
  ) {
    this.initialSyncDone = !opts.hasPeers;
  }

  /** Whether peers' header runs are taken (light following; submitHeaders). */
  get takesPeerHeaders(): boolean {
    return this.opts.mode === 'light';
  }

  /** Gossip's first sync round with the peers ended (or failed for every peer). */
  noteInitialSync(): void {
    if (this.initialSyncDone) return;
    this.initialSyncDone = true;
    void this.pollNow().catch(() => undefined);
  }

  /**
   * The chain-data endpoint's health: the outcome of the client's last attempt (issue 20).
   * It was `lastError === null`, which turned false only once a whole request had failed
   * (every retry, about a minute) and true again only when the next block was applied.
   */
  get endpointOk(): boolean {
    return this.chain.lastAttemptOk ?? this.lastError === null;
  }

  async start(): Promise<void> {
    let status = await this.writer.call('status', {});
    let delay = ANCHOR_RETRY_BASE_MS;
    while (status.processedHeight === null && !this.stopped) {
      try {
        const height = journalAnchorHeight(await this.chain.blockHashAt(0, TIP), this.opts.startHeight);
        const hash = await this.chain.blockHashAt(height, TIP);
        status = await this.writer.call('initAnchor', { height, hash });
        this.opts.onStatus(status);
        this.lastError = null;
      } catch (e) {
        this.lastError = (e as Error).message;
        log.warn('cannot anchor the block journal yet; retrying', { error: this.lastError, retry_ms: delay });
        await new Promise((r) => setTimeout(r, delay).unref());
        delay = Math.min(delay * 2, ANCHOR_RETRY_CAP_MS);
      }
    }
    if (this.stopped) return;
    this.progress = { since: Date.now(), blocksAtStart: status.processedHeight!, lastLog: 0 };
    if (this.opts.mode === 'light') this.startLight();
    else this.startBlocks(status);
  }

  private startBlocks(status: WriterStatus): void {
    const source = {
      tipHeight: async () => {
        const h = await this.chain.tipHeight(TIP);
        this.chainTipHeight = h;
        // The endpoint answers again: an error it caused is over (a halt or a writer error stays).
        if (this.lastErrorFromChain) this.lastError = null;
        return h;
      },
      tipHash: () => this.chain.tipHash(TIP),
      blockHashAt: (h: number) => this.chain.blockHashAt(h, TIP),
      rawBlock: (hash: string) => this.chain.rawBlock(hash, TIP),
    };
    this.watcher = new BlockWatcher({
      source,
      anchor: { height: status.processedHeight!, hash: status.processedHash! },
      knownHash: (height) => this.writer.call('knownHash', { height }),
      pollIntervalSeconds: this.opts.pollIntervalS,
      onEvent: (ev) => this.apply(ev),
      onError: (e) => this.onError(e),
    });
    this.watcher.start();
  }

  private onError(e: unknown): void {
    // Stopping closes the chain client under a step still fetching: not a failure.
    if (this.stopped) return;
    this.lastError = (e as Error).message;
    this.lastErrorFromChain = e instanceof NodeError && e.code === 'chain_unavailable';
    if (e instanceof NodeError && e.code === 'halted') log.debug('block application paused: node halted');
    else log.warn('block watching failed; will retry', { error: this.lastError });
  }

  /** Light following: the header follower polled on the block check interval. */
  private startLight(): void {
    const writer = this.writer;
    this.light = new HeaderFollower({
      source: {
        blocks: async (top?: number) => {
          const rows = await this.chain.blocks(top, TIP);
          if (top === undefined && rows[0]) {
            this.chainTipHeight = rows[0].height;
            this.chainTipHash = rows[0].hash;
            if (this.lastErrorFromChain) this.lastError = null;
          }
          return rows;
        },
        rawBlock: (hash: string) => this.chain.rawBlock(hash, TIP),
      },
      sink: {
        state: async () => {
          const st = await writer.call('status', {});
          this.opts.onStatus(st);
          return {
            processed: { height: st.processedHeight!, hash: st.processedHash! },
            headerTip: st.headerHeight === null ? null : { height: st.headerHeight, hash: st.headerHash! },
            anchorHeight: st.anchorHeight!,
            pending: st.pendingCalls + st.pendingDeploys,
          };
        },
        headers: (from, count) => writer.call('headers', { from, count }),
        processedHash: (height) => writer.call('knownHash', { height }),
        putHeaders: async (from, run, truncate) => void this.opts.onStatus(await writer.call('putHeaders', { from, headers: run, truncate })),
        apply: async (u) => {
          // A catch-up says so as it starts: a light one may apply a thousand blocks an event.
          const last = u.connected[u.connected.length - 1];
          if (last && this.chainTipHeight !== null && this.chainTipHeight - u.fork_height > 1) this.logProgress(u.fork_height, null, 0);
          const answer = await writer.call('applyChainUpdate', u);
          this.noteApplied(answer, u.disconnected.length);
          return answer;
        },
        storeSpentBy: async (items) => void (await writer.call('storeSpentBy', { items })),
      },
      mayPageEndpoint: (missing) =>
        !this.opts.hasPeers || Date.now() - this.startedAt >= PEER_HEADER_WAIT_MS || (this.initialSyncDone && missing <= ENDPOINT_HEADER_PAGING_FREE),
      mayApply: () => this.initialSyncDone || Date.now() - this.startedAt >= INITIAL_SYNC_WAIT_MS,
      signal: this.stopping.signal,
    });
    const tick = (): void => {
      if (this.stopped) return;
      this.pollNow()
        .catch((e: unknown) => this.onError(e))
        .finally(() => {
          if (this.stopped) return;
          this.lightTimer = setTimeout(tick, Math.max(1, Math.round(this.opts.pollIntervalS * 1000)));
          this.lightTimer.unref();
        });
    };
    tick();
  }

  /**
   * A run of headers from a peer (gossip), from height `from`: verified (linked to the
   * node's header chain, proof of work) and authenticated by the endpoint before the
   * writer keeps it: the endpoint must name the run's last block at its height (one
   * request, none when the last poll already named it). Then the follower applies it.
   */
  async submitHeaders(from: number, run: Uint8Array[]): Promise<{ accepted: number }> {
    if (this.opts.mode !== 'light' || run.length === 0) return { accepted: 0 };
    const parsed = run.map((h) => {
      if (h.length !== 80) throw new NodeError('bad_request', 'a block header is 80 bytes');
      return parseHeaderBytes(h);
    });
    parsed.forEach((h, i) => {
      if (!hashMeetsTarget(h.hash, h.bits)) throw new NodeError('bad_evidence', `header ${from + i} does not meet its proof-of-work target`);
      if (i > 0 && h.prevHash !== parsed[i - 1]!.hash) throw new NodeError('bad_evidence', `headers ${from + i - 1} and ${from + i} do not link`);
    });
    const top = from + run.length - 1;
    const topHash = parsed[parsed.length - 1]!.hash;
    const known = this.chainTipHeight === top ? this.chainTipHash : null;
    const endpointHash = known ?? (await this.chain.blockHashAt(top, TIP));
    if (endpointHash !== topHash) throw new NodeError('bad_evidence', `the chain-data endpoint names block ${endpointHash} at height ${top}, not the peer's ${topHash}`);
    this.opts.onStatus(await this.writer.call('putHeaders', { from, headers: run, truncate: false }));
    void this.pollNow().catch(() => undefined);
    return { accepted: run.length };
  }

  /** The status the writer answered for an update, and progress lines. */
  private noteApplied(status: WriterStatus, reorgDepth: number): void {
    this.lastError = null;
    this.opts.onStatus(status);
    this.logProgress(status.processedHeight!, status.stateRoot, reorgDepth);
  }

  /** Polls the chain now (tests, and pushes from the devnet). */
  pollNow(): Promise<void> {
    if (this.light) {
      // One poll at a time; a poll asked for meanwhile runs after it.
      const prev = this.lightPoll ?? Promise.resolve();
      const next: Promise<void> = prev.catch(() => undefined).then(() => this.light!.poll());
      this.lightPoll = next;
      void next.finally(() => {
        if (this.lightPoll === next) this.lightPoll = null;
      }).catch(() => undefined);
      return next;
    }
    return this.watcher ? this.watcher.pollNow() : Promise.resolve();
  }

  private async apply(ev: ChainEvent): Promise<void> {
    const status = await this.writer.call('applyChainUpdate', {
      fork_height: ev.fork_height,
      disconnected: ev.disconnected,
      connected: ev.connected.map(blockInputOf),
      // The watcher's event ends at the best chain's block it saw: headers above are a gone branch's.
      endsChain: true,
    });
    const last = ev.connected[ev.connected.length - 1];
    if (last) this.chainTipHash = this.chainTipHeight === last.height ? last.hash : this.chainTipHash;
    this.noteApplied(status, ev.disconnected.length);
  }

  private logProgress(done: number, stateRoot: string | null, reorgDepth: number): void {
    const now = Date.now();
    const left = Math.max(0, (this.chainTipHeight ?? done) - done);
    if (left > 0 && now - this.progress.lastLog >= PROGRESS_EVERY_MS) {
      const secs = (now - this.progress.since) / 1000;
      const rate = secs > 0 ? (done - this.progress.blocksAtStart) / secs : 0;
      log.info('catching up', { processed_height: done, blocks_left: left, blocks_per_s: Math.round(rate * 10) / 10, eta_s: rate > 0 ? Math.round(left / rate) : null });
      this.progress.lastLog = now;
    } else if (left === 0) {
      log.info('block applied', { height: done, state_root: stateRoot, reorg_depth: reorgDepth || undefined });
    }
  }

  /** Ends block watching after the update the writer is applying, if any (watcher.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.lightTimer) clearTimeout(this.lightTimer);
    await Promise.all([this.watcher?.stop(), this.lightPoll?.catch(() => undefined)]);
  }
}

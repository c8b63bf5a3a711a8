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
import { blockInputOf, spentByIn } from '../chain/connected-block.js';
import { HeaderFollower, checkHeaderRun } from '../chain/header-follower.js';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import type { EsploraClient, RequestOptions } from '../chain/esplora-client.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../messages.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../log.js';
import { journalAnchorHeight, networkParams, type PowParams } from '@svc-node/protocol/activation';
import { InitialSyncHold } from './initial-sync-hold.js';
import { CatchUpProgress } from './catch-up-progress.js';

const log = logger('chain');
/** Following the chain comes first in the chain-data budget (src/chain/budget.ts). */
const TIP: RequestOptions = { priority: 'tip' };

/** Anchoring retries start here and double up to the cap while the endpoint is down. */
const ANCHOR_RETRY_BASE_MS = 500;
const ANCHOR_RETRY_CAP_MS = 30_000;
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
 * While peers lead (a peer's tip announcement brought the last new block before this
 * node's own poll found it), the node's own poll runs only when this many poll intervals
 * pass without a new block: 30 at the default 60 s is half an hour, longer than 95% of
 * Bitcoin's block intervals, so a block costs about one request (the announced one)
 * instead of ten polls; peers that fall silent cost at most that long, and the first
 * block the node's own poll finds before any peer announces it ends the lead.
 */
const PEER_LED_POLL_INTERVALS = 30;
/**
 * The light timer waits its interval times a factor drawn from [1 - this, 1 + this]:
 * nodes polling on the same interval would otherwise keep the phases they started with,
 * and the same node would find every block first, never letting a peer lead. The
 * average interval stays block_check_interval_s. (Timing only: nothing on the path from
 * payload to state root depends on it.)
 */
const POLL_JITTER = 0.5;

function jittered(ms: number): number {
  return Math.max(1, Math.round(ms * (1 - POLL_JITTER + 2 * POLL_JITTER * Math.random())));
}

/** Pending payloads listed from the writer per request when a burst's held anchors are looked for. */
const PENDING_PAGE = 4_096;

/** Proven announcers remembered: far more than a node's peers (gossip.max_peers); past it the set starts afresh. */
const MAX_PROVEN_ANNOUNCERS = 256;

export type ChainMode = 'light' | 'blocks';

export class ChainFollower {
  private watcher: BlockWatcher | null = null;
  private light: HeaderFollower | null = null;
  private lightTimer: NodeJS.Timeout | null = null;
  private lightPoll: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private readonly startedAt = Date.now();
  /** Block application waits for the first peer sync while it delivers (initial-sync-hold.ts). */
  private readonly initialSync: InitialSyncHold;
  private stopped = false;
  chainTipHeight: number | null = null;
  chainTipHash: string | null = null;
  lastError: string | null = null;
  /** `lastError` came from the chain endpoint (cleared as soon as it answers again). */
  private lastErrorFromChain = false;
  private progress = new CatchUpProgress(0, 0);
  /** Payloads the first peer sync has handed over (the progress line while it holds blocks back). */
  private syncPayloadsTaken = 0;
  /** Payloads peers' syncs listed to fetch, as they were listed: what the taken ones are out of. */
  private syncPayloadsListed = 0;
  /** The writer's last status as this follower saw it (header tip for announcements). */
  private lastStatus: WriterStatus | null = null;
  /** Peers' tip announcements brought the last new block (see PEER_LED_POLL_INTERVALS). */
  private peerLed = false;
  /** When the endpoint last told this node of a new block, or its own poll last ran. */
  private lastEndpointLookAt = 0;
  /**
   * Announcers (peer keys, or the URLs this node called) whose last announcement brought
   * a new block: theirs are followed at once, always. After an announcement that brought
   * none, the others' wait a poll interval: a lying peer (under any number of keys) costs
   * at most one request an interval, and cannot delay a proven peer's announcements.
   */
  private readonly provenAnnouncers = new Set<string>();
  /** Until when unproven announcers are not followed (set by an announcement that brought no block). */
  private unprovenWaitUntil = -Infinity;

  constructor(
    private readonly chain: EsploraClient,
    private readonly writer: RpcClient<WriterApi>,
    private readonly opts: {
      pollIntervalS: number;
      startHeight: number | null;
      mode: ChainMode;
      hasPeers: boolean;
      onStatus: (s: WriterStatus) => void;
      /** The network's proof-of-work rules when known beforehand (the simulation); a node learns them at start from the endpoint's genesis block. */
      pow?: PowParams;
    },
  ) {
    this.initialSync = new InitialSyncHold(this.startedAt, opts.hasPeers);
    this.pow = opts.pow ?? null;
  }

  /** The proof-of-work rules of the endpoint's network (by its genesis hash), once known. */
  private pow: PowParams | null;

  /** Whether peers' header runs are taken (light following; submitHeaders). */
  get takesPeerHeaders(): boolean {
    return this.opts.mode === 'light';
  }

  /** A peer's sync listed `count` payloads to fetch (the `catching up` line's total for those taken). */
  notePeerPayloadsListed(count: number): void {
    this.syncPayloadsListed += count;
  }

  /** `count` payloads of a peer's sync were taken: the first sync still delivers (InitialSyncHold). */
  notePeerPayloads(count: number): void {
    this.initialSync.notePayloads(Date.now());
    this.syncPayloadsTaken += count;
    // While the sync holds blocks back, none may be applied for a long while: say how it goes.
    if (this.light && this.lastStatus?.processedHeight != null) this.logProgress(this.lastStatus.processedHeight, null, 0);
  }

  /**
   * The first peer sync has taken every payload anchored at or below `height` (Infinity:
   * every one its peer listed): blocks up to it are applied now, while the rest is
   * fetched (InitialSyncHold.noteDelivered), in the light follower's turn. No endpoint
   * request: the headers are held already.
   */
  notePeerDelivered(height: number): void {
    if (!this.initialSync.noteDelivered(height) || !this.light || this.applyQueued) return;
    const light = this.light;
    this.applyQueued = true;
    void this.serialPoll(() => {
      this.applyQueued = false;
      return light.applyBlocks();
    }).catch((e: unknown) => this.onError(e));
  }

  /** A block application for `notePeerDelivered` waits in the light follower's turn (one is enough). */
  private applyQueued = false;

  /** Gossip's first sync round with the peers ended (or failed for every peer). */
  noteInitialSync(): void {
    if (this.initialSync.isDone) return;
    this.initialSync.done();
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
    this.lastStatus = status;
    let delay = ANCHOR_RETRY_BASE_MS;
    // The genesis hash names the network: where the journal is anchored, and (light
    // following) the proof-of-work rules every header is checked against.
    let genesis: string | null = null;
    while ((status.processedHeight === null || (this.opts.mode === 'light' && this.pow === null)) && !this.stopped) {
      try {
        genesis ??= await this.chain.blockHashAt(0, TIP);
        this.pow ??= networkParams(genesis).pow;
        if (status.processedHeight !== null) break;
        const height = journalAnchorHeight(genesis, this.opts.startHeight);
        const hash = await this.chain.blockHashAt(height, TIP);
        status = await this.writer.call('initAnchor', { height, hash });
        this.noteStatus(status);
        this.lastError = null;
      } catch (e) {
        this.lastError = (e as Error).message;
        log.warn('cannot anchor the block journal yet; retrying', { error: this.lastError, retry_ms: delay });
        await new Promise((r) => setTimeout(r, delay).unref());
        delay = Math.min(delay * 2, ANCHOR_RETRY_CAP_MS);
      }
    }
    if (this.stopped) return;
    this.progress = new CatchUpProgress(Date.now(), status.processedHeight!);
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
      pow: this.pow!,
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
        txBlock: async (txid: string) => {
          const s = await this.chain.txStatus(txid, TIP);
          return s.confirmed ? { height: s.block_height, hash: s.block_hash } : null;
        },
      },
      sink: {
        state: async () => {
          const st = await writer.call('status', {});
          this.noteStatus(st);
          return {
            processed: { height: st.processedHeight!, hash: st.processedHash! },
            headerTip: st.headerHeight === null ? null : { height: st.headerHeight, hash: st.headerHash! },
            anchorHeight: st.anchorHeight!,
            pending: st.pendingCalls + st.pendingDeploys,
          };
        },
        headers: (from, count) => writer.call('headers', { from, count }),
        processedHash: (height) => writer.call('knownHash', { height }),
        putHeaders: async (from, run, truncate) => void this.noteStatus(await writer.call('putHeaders', { from, headers: run, truncate })),
        apply: async (u) => {
          // A catch-up says so as it starts: a light one may apply a thousand blocks an event.
          const last = u.connected[u.connected.length - 1];
          if (last && this.chainTipHeight !== null && this.chainTipHeight - u.fork_height > 1) this.logProgress(u.fork_height, null, 0);
          const answer = await writer.call('applyChainUpdate', u);
          this.noteApplied(answer, u.disconnected.length);
          return answer;
        },
        storeSpentBy: async (items) => void (await writer.call('storeSpentBy', { items })),
        unplacedAnchors: async () => {
          const out: string[] = [];
          for (let after = ''; ; ) {
            const page = await writer.call('pendingPayloads', { after, limit: PENDING_PAGE });
            for (const p of page) if (p.settles_at === null) out.push(p.txid);
            if (page.length < PENDING_PAGE) return out;
            after = page[page.length - 1]!.txid;
          }
        },
      },
      mayPageEndpoint: (missing) =>
        !this.opts.hasPeers || Date.now() - this.startedAt >= PEER_HEADER_WAIT_MS || (this.initialSync.isDone && missing <= ENDPOINT_HEADER_PAGING_FREE),
      applyCeiling: () => this.initialSync.ceiling(Date.now()),
      onLookup: (r) => log.info('held anchors looked for before applying blocks as headers', { from: r.from, to: r.to, asked: r.asked, confirming_blocks: r.blocks }),
      signal: this.stopping.signal,
    });
    const intervalMs = Math.max(1, Math.round(this.opts.pollIntervalS * 1000));
    const tick = (): void => {
      if (this.stopped) return;
      const led = this.peerLed && Date.now() - this.lastEndpointLookAt < PEER_LED_POLL_INTERVALS * intervalMs;
      (led ? Promise.resolve() : this.ownPoll())
        .catch((e: unknown) => this.onError(e))
        .finally(() => {
          if (this.stopped) return;
          this.lightTimer = setTimeout(tick, jittered(intervalMs));
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
    if (this.pow === null) throw new NodeError('chain_unavailable', 'the chain-data endpoint has not named its network yet', { reason: 'starting' });
    const wrong = await checkHeaderRun((f, c) => this.writer.call('headers', { from: f, count: c }), from, parsed, this.pow);
    if (wrong !== null) throw new NodeError('bad_evidence', wrong);
    const top = from + run.length - 1;
    const topHash = parsed[parsed.length - 1]!.hash;
    const known = this.chainTipHeight === top ? this.chainTipHash : null;
    const endpointHash = known ?? (await this.chain.blockHashAt(top, TIP));
    if (endpointHash !== topHash) throw new NodeError('bad_evidence', `the chain-data endpoint names block ${endpointHash} at height ${top}, not the peer's ${topHash}`);
    this.noteStatus(await this.writer.call('putHeaders', { from, headers: run, truncate: false }));
    void this.pollNow().catch(() => undefined);
    return { accepted: run.length };
  }

  /** Peers' announcements lead: the node's own poll waits PEER_LED_POLL_INTERVALS (node_status.chain.peers_lead). */
  get peersLead(): boolean {
    return this.peerLed;
  }

  /** Every writer status the follower receives, passed on to the core. */
  private noteStatus(st: WriterStatus): void {
    this.lastStatus = st;
    this.opts.onStatus(st);
  }

  private get headerTipHeight(): number | null {
    return this.lastStatus?.headerHeight ?? this.lastStatus?.processedHeight ?? null;
  }

  /**
   * A peer's heartbeat announced its best block header (docs/GOSSIP.md, "Tip
   * announcements"): when it is above this node's header tip, the header follower asks
   * the endpoint (one request: followPeerTip). An announcer whose last announcement
   * brought a new block is followed at once; after an announcement that brought none,
   * the others wait a poll interval. One that arrives while a poll runs is kept and
   * followed when the poll ends, unless the poll brought its block (one kept: a proven
   * announcer's before another's, then the highest); dropped, it waited for the
   * announcer's next heartbeat, and a liar's second announcement, sent right after one
   * not worth a request, slipped past the interval's budget unasked. Announcements are
   * ignored before the first peer sync ends (the catch-up takes its own course).
   */
  notePeerTip(height: number, header: Uint8Array, announcer: string): void {
    if (this.stopped || !this.light || header.length !== 80 || !this.initialSync.isDone) return;
    if (this.lightPoll !== null) {
      const held = this.heldTip;
      const proven = this.provenAnnouncers.has(announcer);
      const heldProven = held !== null && this.provenAnnouncers.has(held.announcer);
      if (held === null || (proven && !heldProven) || (proven === heldProven && height > held.height)) this.heldTip = { height, header, announcer };
      return;
    }
    const have = this.headerTipHeight;
    if (have === null || height <= have) return;
    if (!this.provenAnnouncers.has(announcer) && Date.now() < this.unprovenWaitUntil) return;
    const light = this.light;
    const broughtNone = (): void => {
      this.provenAnnouncers.delete(announcer);
      this.unprovenWaitUntil = Date.now() + this.opts.pollIntervalS * 1000;
    };
    void this.serialPoll(async () => {
      const outcome = await light.followPeerTip(height, header).catch((e: unknown) => {
        broughtNone();
        throw e;
      });
      if (outcome === 'known') return;
      if (outcome === 'unworthy') {
        // Nothing was asked of the endpoint: the announcer loses its standing, no one waits.
        this.provenAnnouncers.delete(announcer);
        return;
      }
      if (outcome === 'asked') {
        broughtNone();
        return;
      }
      if (this.provenAnnouncers.size >= MAX_PROVEN_ANNOUNCERS) this.provenAnnouncers.clear();
      this.provenAnnouncers.add(announcer);
      this.peerLed = true;
      this.lastEndpointLookAt = Date.now();
      const t = light.endpointTip;
      if (t && (this.chainTipHeight ?? -1) <= t.height) {
        this.chainTipHeight = t.height;
        this.chainTipHash = t.hash;
      }
    }).catch((e: unknown) => log.debug('a peer\'s tip announcement was not followed', { height, error: (e as Error).message }));
  }

  /**
   * The header tip heartbeats announce: its height and 80 bytes (read from the writer once
   * per new tip), or null before the node holds a header.
   */
  async announcedTip(): Promise<{ height: number; header: Uint8Array } | null> {
    const st = this.lastStatus;
    const height = st?.headerHeight ?? null;
    const hash = st?.headerHash ?? null;
    if (height === null || hash === null) return null;
    if (this.announced?.hash !== hash) {
      const [header] = await this.writer.call('headers', { from: height, count: 1 });
      if (!header || parseHeaderBytes(header).hash !== hash) return this.announced ? { height: this.announced.height, header: this.announced.header } : null;
      this.announced = { height, hash, header };
    }
    return { height: this.announced.height, header: this.announced.header };
  }
  private announced: { height: number; hash: string; header: Uint8Array } | null = null;

  /** The status the writer answered for an update, and progress lines. */
  private noteApplied(status: WriterStatus, reorgDepth: number): void {
    this.lastError = null;
    this.noteStatus(status);
    this.logProgress(status.processedHeight!, status.stateRoot, reorgDepth);
  }

  /** Polls the chain now (tests, and pushes from the devnet). */
  pollNow(): Promise<void> {
    if (this.light) {
      const light = this.light;
      return this.serialPoll(() => light.poll());
    }
    return this.watcher ? this.watcher.pollNow() : Promise.resolve();
  }

  /**
   * The light timer's own poll: a new block it finds before any peer announced it ends the
   * peers' lead. The tip is compared inside the poll's turn, so a block an announcement
   * brought in the poll queued ahead of it is not taken for one this poll found.
   */
  private ownPoll(): Promise<void> {
    const light = this.light!;
    return this.serialPoll(async () => {
      const before = this.headerTipHeight;
      await light.poll();
      this.lastEndpointLookAt = Date.now();
      const after = this.headerTipHeight;
      if (before !== null && after !== null && after > before) this.peerLed = false;
    });
  }

  /** One light poll at a time; one asked for meanwhile runs after it. The last one's end follows an announcement held meanwhile (notePeerTip). */
  private serialPoll(poll: () => Promise<unknown>): Promise<void> {
    const prev = this.lightPoll ?? Promise.resolve();
    const next: Promise<void> = prev.catch(() => undefined).then(async () => void (await poll()));
    this.lightPoll = next;
    void next
      .finally(() => {
        if (this.lightPoll !== next) return;
        this.lightPoll = null;
        const held = this.heldTip;
        this.heldTip = null;
        if (held) this.notePeerTip(held.height, held.header, held.announcer);
      })
      .catch(() => undefined);
    return next;
  }

  /** An announcement that arrived while a poll ran (notePeerTip). */
  private heldTip: { height: number; header: Uint8Array; announcer: string } | null = null;

  private async apply(ev: ChainEvent): Promise<void> {
    const status = await this.writer.call('applyChainUpdate', {
      fork_height: ev.fork_height,
      disconnected: ev.disconnected,
      connected: ev.connected.map(blockInputOf),
      // The watcher's event ends at the best chain's block it saw: headers above are a gone branch's.
      endsChain: true,
    });
    // The spender evidence of the calls these blocks dropped, kept for proofs and peers (as the light follower does).
    const items = status.drops.flatMap((d) => {
      const b = ev.connected.find((c) => c.height === d.height);
      const spentBy = b ? spentByIn({ hash: b.hash, height: b.height, txids: b.txs.map((t) => t.txid), txAt: (i) => b.txs[i]!.tx }, d.outpoint, d.spender) : null;
      return spentBy ? [{ txid: d.txid, spentBy }] : [];
    });
    if (items.length > 0) await this.writer.call('storeSpentBy', { items });
    const last = ev.connected[ev.connected.length - 1];
    if (last) this.chainTipHash = this.chainTipHeight === last.height ? last.hash : this.chainTipHash;
    this.noteApplied(status, ev.disconnected.length);
  }

  /** A `catching up` line now and then while behind (CatchUpProgress), else one per block applied. */
  private logProgress(done: number, stateRoot: string | null, reorgDepth: number): void {
    const tip = this.chainTipHeight ?? done;
    if (tip <= done) {
      if (stateRoot !== null) log.info('block applied', { height: done, state_root: stateRoot, reorg_depth: reorgDepth || undefined });
      return;
    }
    // Only a light follower holds blocks back for the first sync (its applyCeiling).
    const hold = { ceiling: this.light ? this.initialSync.ceiling(Date.now()) : Infinity, payloadsTaken: this.syncPayloadsTaken, payloadsListed: this.syncPayloadsListed };
    const fields = this.progress.line(Date.now(), done, tip, hold);
    if (fields) log.info('catching up', fields);
  }

  /** Ends block watching after the update the writer is applying, if any (watcher.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.lightTimer) clearTimeout(this.lightTimer);
    await Promise.all([this.watcher?.stop(), this.lightPoll?.catch(() => undefined)]);
  }
}

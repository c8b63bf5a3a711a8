/**
 * Follows the chain-data endpoint for the writer: anchors the block journal of a node
 * with no data (anchor.ts), then, from the writer's last processed block, hands the
 * writer each update in order, in the mode chain_mode picks:
 * - "light" (the default, light-mode.ts): a verified header chain, blocks read as headers
 *   with the payloads' evidence; peers' header runs come in through `submitHeaders` and
 *   their tip announcements through `notePeerTip` (tip-announcements.ts);
 * - "blocks" (blocks-mode.ts): every block raw.
 * The follower holds what node_status shows of the chain (its tip as the endpoint named
 * it, the last error) and the first peer sync's hold on block application.
 */
import type { EsploraClient } from '../../chain/esplora-client.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../../messages/writer.js';
import { NodeError } from '@svc-node/protocol/errors';
import type { PowParams } from '@svc-node/protocol/activation';
import { logger } from '../../log.js';
import { InitialSyncHold } from '../initial-sync-hold.js';
import { anchorJournal } from './anchor.js';
import { BlocksMode } from './blocks-mode.js';
import { LightMode, takePeerHeaders } from './light-mode.js';
import { AnnouncedTip } from './tip-announcements.js';
import { ProgressLog } from './progress-log.js';
import type { ChainMode, FollowingHost } from './host.js';

export type { ChainMode } from './host.js';

const log = logger('chain');

export class ChainFollower {
  private mode: LightMode | BlocksMode | null = null;
  private readonly stopping = new AbortController();
  private readonly startedAt = Date.now();
  /** Block application waits for the first peer sync while it delivers (initial-sync-hold.ts). */
  private readonly initialSync: InitialSyncHold;
  private readonly progressLog = new ProgressLog();
  private readonly announced: AnnouncedTip;
  private readonly host: FollowingHost;
  private stopped = false;
  chainTipHeight: number | null = null;
  chainTipHash: string | null = null;
  lastError: string | null = null;
  /** `lastError` came from the chain endpoint (cleared as soon as it answers again). */
  private lastErrorFromChain = false;
  /** The writer's last status as this follower saw it (header tip for announcements). */
  private lastStatus: WriterStatus | null = null;
  /** The proof-of-work rules of the endpoint's network (by its genesis hash), once known. */
  private pow: PowParams | null;

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
    this.announced = new AnnouncedTip(writer);
    this.host = this.hostOfModes();
  }

  /** Whether peers' header runs are taken (light following; submitHeaders). */
  get takesPeerHeaders(): boolean {
    return this.opts.mode === 'light';
  }

  /** A peer's sync listed `count` payloads to fetch (the `catching up` line's total for those taken). */
  notePeerPayloadsListed(count: number): void {
    this.progressLog.notePayloadsListed(count);
  }

  /** `count` payloads of a peer's sync were taken: the first sync still delivers (InitialSyncHold). */
  notePeerPayloads(count: number): void {
    this.initialSync.notePayloads(Date.now());
    this.progressLog.notePayloadsTaken(count);
    // While the sync holds blocks back, none may be applied for a long while: say how it goes.
    if (this.mode instanceof LightMode && this.lastStatus?.processedHeight != null) this.logProgress(this.lastStatus.processedHeight, null, 0);
  }

  /**
   * The first peer sync has taken every payload anchored at or below `height` (Infinity:
   * every one its peer listed): blocks up to it are applied now, while the rest is
   * fetched (InitialSyncHold.noteDelivered), in the light follower's turn.
   */
  notePeerDelivered(height: number): void {
    if (!this.initialSync.noteDelivered(height) || !(this.mode instanceof LightMode)) return;
    this.mode.applyDelivered();
  }

  /** Gossip's first sync round with the peers ended (or failed for every peer). */
  noteInitialSync(): void {
    if (this.initialSync.isDone) return;
    this.initialSync.done();
    this.pollInBackground();
  }

  /**
   * The chain-data endpoint's health: the outcome of the client's last attempt, not
   * whether a whole request (every retry, about a minute) last failed.
   */
  get endpointOk(): boolean {
    return this.chain.lastAttemptOk ?? this.lastError === null;
  }

  async start(): Promise<void> {
    const first = await this.writer.call('status', {});
    this.lastStatus = first;
    const status = await anchorJournal(this.chain, this.writer, first, {
      mode: this.opts.mode,
      startHeight: this.opts.startHeight,
      isStopped: () => this.stopped,
      pow: () => this.pow,
      learnedPow: (pow) => (this.pow = pow),
      noteStatus: (st) => this.noteStatus(st),
      noteError: (message) => (this.lastError = message),
    });
    if (this.stopped) return;
    this.progressLog.start(Date.now(), status.processedHeight!);
    if (this.opts.mode === 'light') {
      const light = new LightMode(this.host, { pow: this.pow!, pollIntervalS: this.opts.pollIntervalS, hasPeers: this.opts.hasPeers, startedAt: this.startedAt, initialSync: this.initialSync, signal: this.stopping.signal });
      this.mode = light;
      light.start();
    } else {
      const blocks = new BlocksMode(this.host, { height: status.processedHeight!, hash: status.processedHash! }, this.opts.pollIntervalS);
      this.mode = blocks;
      blocks.start();
    }
  }

  /**
   * A run of headers from a peer (gossip), from height `from`: verified and authenticated
   * by the endpoint before the writer keeps it (takePeerHeaders). Then the follower
   * applies it.
   */
  async submitHeaders(from: number, run: Uint8Array[]): Promise<{ accepted: number }> {
    if (this.opts.mode !== 'light' || run.length === 0) return { accepted: 0 };
    const taken = await takePeerHeaders(this.host, this.pow, from, run);
    this.pollInBackground();
    return taken;
  }

  /** Peers' announcements lead: the node's own poll waits (node_status.chain.peers_lead). */
  get peersLead(): boolean {
    return this.mode instanceof LightMode && this.mode.peersLead;
  }

  /**
   * A peer's heartbeat announced its best block header (docs/GOSSIP.md, "Tip
   * announcements"): when it is above this node's header tip, the light follower may ask
   * the endpoint (LightMode.notePeerTip). Announcements are ignored before the first peer
   * sync ends (the catch-up takes its own course).
   */
  notePeerTip(height: number, header: Uint8Array, announcer: string): void {
    if (this.stopped || !(this.mode instanceof LightMode) || header.length !== 80 || !this.initialSync.isDone) return;
    this.mode.notePeerTip({ height, header, announcer });
  }

  /** The header tip heartbeats announce: its height and 80 bytes, or null before the node holds a header. */
  announcedTip(): Promise<{ height: number; header: Uint8Array } | null> {
    return this.announced.of(this.lastStatus);
  }

  /** Polls the chain now (after any poll queued). */
  pollNow(): Promise<void> {
    return this.mode ? this.mode.pollNow() : Promise.resolve();
  }

  /** Ends block watching after the update the writer is applying, if any (watcher.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await this.mode?.stop();
  }

  /** What the modes read of this follower and report to it (host.ts). */
  private hostOfModes(): FollowingHost {
    return {
      chain: this.chain,
      writer: this.writer,
      isStopped: () => this.stopped,
      tipHeight: () => this.chainTipHeight,
      tipHash: () => this.chainTipHash,
      setTip: (height, hash) => {
        this.chainTipHeight = height;
        if (hash !== undefined) this.chainTipHash = hash;
      },
      endpointAnswered: () => {
        if (this.lastErrorFromChain) this.lastError = null;
      },
      headerTipHeight: () => this.lastStatus?.headerHeight ?? this.lastStatus?.processedHeight ?? null,
      noteStatus: (st) => this.noteStatus(st),
      noteApplied: (st, reorgDepth) => {
        this.lastError = null;
        this.noteStatus(st);
        this.logProgress(st.processedHeight!, st.stateRoot, reorgDepth);
      },
      logProgress: (done, stateRoot, reorgDepth) => this.logProgress(done, stateRoot, reorgDepth),
      pollFailed: (e) => this.pollFailed(e),
    };
  }

  /**
   * A poll asked for without waiting for it (the first peer sync ended, a peer's header
   * run was taken): its failure is reported as the timer's poll reports one (pollFailed).
   */
  private pollInBackground(): void {
    void this.pollNow().catch((e: unknown) => this.pollFailed(e));
  }

  /** Every writer status the follower receives, passed on to the core. */
  private noteStatus(st: WriterStatus): void {
    this.lastStatus = st;
    this.opts.onStatus(st);
  }

  /** The one place a failed poll is reported, whichever path ran it: node_status's chain.last_error and a log line. */
  private pollFailed(e: unknown): void {
    // Stopping closes the chain client under a step still fetching: not a failure.
    if (this.stopped) return;
    this.lastError = (e as Error).message;
    this.lastErrorFromChain = e instanceof NodeError && e.code === 'chain_unavailable';
    if (e instanceof NodeError && e.code === 'halted') log.debug('block application paused: node halted');
    else log.warn('block watching failed; will retry', { error: this.lastError });
  }

  private logProgress(done: number, stateRoot: string | null, reorgDepth: number): void {
    // Only a light follower holds blocks back for the first sync (its applyCeiling).
    const light = this.mode instanceof LightMode;
    this.progressLog.line(done, this.chainTipHeight, stateRoot, reorgDepth, () => (light ? this.initialSync.ceiling(Date.now()) : Infinity));
  }
}

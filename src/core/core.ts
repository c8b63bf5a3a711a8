/**
 * The core process: hosts the writer thread (sole owner of RocksDB), the verification/VM
 * worker pool, the chain follower, and the RPC socket the REST front and gossip call.
 */
import { Worker } from 'node:worker_threads';
import { RpcClient, RpcServer, portTransport, type Handlers } from '../ipc/rpc.js';
import { WorkPool } from '../pool/pool.js';
import { EsploraClient } from '../chain/esplora-client.js';
import { ChainMetrics } from '../chain/metrics.js';
import { ChainFollower } from './following/follower.js';
import { DeferredChecks } from './deferred/checks.js';
import { Intake } from './intake.js';
import { settlesAt, type Evidence } from '@svc-node/protocol/evidence';
import { StateVersions } from './state-version.js';
import { readHandlers } from './read-handlers.js';
import { peerHandlers, PeerState, callPayload, deployPayload, submitPeerPayload } from './peer-handlers.js';
import { UnprovenPool } from './unproven-pool.js';
import { unpackOwn } from '../packed-payload.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../log.js';
import { secretsOf } from '../config/options.js';
import { PAYLOAD_ACCEPTED_EVENT, type CoreEvents, type PackedPayload } from '../messages/gossip.js';
import type { ChainBudgetStatus, CoreApi, NodeStatus } from '../messages/core.js';
import type { WriterApi, WriterEvents, WriterInit, WriterStatus } from '../messages/writer.js';
import type { InitMessage } from '../supervisor/child.js';

const log = logger('core');

/**
 * How long the core waits for the writer to take its stop request: the writer thread
 * answers between two blocks, in milliseconds; an unanswered request still leaves the
 * close (8 s) to end it.
 */
const WRITER_STOP_ASK_MS = 1_000;

export class Core {
  private server: RpcServer<CoreApi, CoreEvents> | null = null;
  private readonly startedAt = Date.now();
  private writerStatus: WriterStatus | null = null;
  readonly chain: EsploraClient;
  /** Chain-endpoint requests, errors and latency by route (GET /metrics). */
  readonly chainMetrics = new ChainMetrics();
  readonly follower: ChainFollower;
  /** What intake no longer asks the endpoint on its hot path (deferred/checks.ts). */
  readonly deferred: DeferredChecks;
  readonly intake: Intake;
  /** What the gossip process reports (peers, counters, divergence), for node_status. */
  readonly peerState = new PeerState();
  /** The processed state version as the writer announces it (state-version.ts). */
  readonly state: StateVersions;
  /** Peers' payloads waiting for a header this node lacks yet (unproven-pool.ts). */
  readonly unproven = new UnprovenPool<PackedPayload>();
  /** The header tip the unproven pool last saw: a higher one tries its payloads again. */
  private unprovenTip = -1;

  private constructor(
    private readonly init: InitMessage,
    private readonly writerThread: Worker,
    readonly writer: RpcClient<WriterApi, WriterEvents>,
    readonly pool: WorkPool,
  ) {
    const c = init.config;
    this.state = new StateVersions(writer);
    this.chain = new EsploraClient({
      baseUrl: c.esploraUrl,
      timeoutMs: c.esploraTimeoutMs,
      budget: { requestsPerHour: c.esploraRequestsPerHour, burst: c.esploraBurst, maxConcurrent: c.esploraMaxConcurrent },
      observe: this.chainMetrics.observe,
    });
    this.chainMetrics.watchBudget(() => this.chain.budgetStatus());
    this.follower = new ChainFollower(this.chain, writer, {
      pollIntervalS: c.blockCheckIntervalS,
      startHeight: c.startHeight,
      mode: c.chainMode,
      hasPeers: c.peers.length > 0,
      onStatus: (s) => void this.noteWriterStatus(s),
    });
    // First checks after a block's time at the default interval (ten polls of the chain).
    this.deferred = new DeferredChecks(this.chain, writer, 10 * c.blockCheckIntervalS * 1000);
    this.intake = new Intake({
      writer,
      pool,
      chain: this.chain,
      halted: () => (this.writerStatus?.halted ? (this.writerStatus.haltReason ?? 'unknown') : null),
      // The writer's state events, not its last polled status: a status taken during a
      // burst or a late payload's replay can be behind the tip the answer's record is read at.
      tipHeight: () => this.state.knownHeight ?? this.writerStatus?.processedHeight ?? null,
      chainBudgetMs: c.esploraTimeoutMs,
      maxPendingCalls: c.maxPendingCalls,
      onPending: (txid, kind, outpoint, evidence) => this.deferred.added(txid, kind, outpoint, this.writerStatus?.processedHeight ?? 0, this.settlesOnHeaders(evidence)),
    });
  }

  /**
   * The block a new payload's evidence decides it in, when that block's header is held:
   * the claim was then checked against it (the peer handlers refuse another block, the
   * writer folds the branch to its merkle root), so its deferred check waits for the
   * block. A claim above the header tip is unchecked yet, and a false one must not
   * keep the payload from its checks: it is scheduled as if it had no evidence.
   */
  private settlesOnHeaders(evidence: Evidence | null): number | null {
    const at = evidence ? settlesAt(evidence) : null;
    return at !== null && at <= (this.writerStatus?.headerHeight ?? -1) ? at : null;
  }

  /** Every writer status the core receives: the cached halt flag and intake's pending count. */
  private noteWriterStatus(s: WriterStatus): WriterStatus {
    this.writerStatus = s;
    this.intake.notePending(s.pendingCalls);
    if (s.processedHeight !== null) this.deferred.processedAt(s.processedHeight, s.headerHeight ?? s.processedHeight);
    if (s.headerHeight !== null && s.headerHeight !== this.unprovenTip) {
      const advanced = s.headerHeight > this.unprovenTip;
      this.unprovenTip = s.headerHeight;
      if (advanced && this.unproven.size > 0) this.retryUnproven();
    }
    return s;
  }

  /**
   * A peer's payload was refused: when only because its evidence names a block above this
   * node's header tip (the writer's coin_unproven with `awaits_header`) or its coin's
   * parent payload is not here yet (`awaits_parent`), it is kept in the unproven pool to
   * be tried again when the header tip advances. Any other refusal is not kept.
   */
  holdUnproven(payload: PackedPayload, from: string, e: unknown): void {
    const tip = this.writerStatus?.headerHeight ?? null;
    // The refusal may be older than the tip read here: the awaited header can have come while
    // intake ran (the writer applied its block between the refusal and this status), so a
    // header at or below the tip is still waited for, and the retry below takes it at once.
    const awaits = tip === null ? null : this.awaitedHeader(e, tip, true);
    if (awaits === null) return;
    if (this.unproven.offer({ txid: unpackOwn(payload).txid, from, payload, bytes: payload.length, awaits }, tip!, undefined, this.follower.chainTipHeight ?? undefined)) {
      // The header may have come while intake ran: the advance that would retry it is past.
      this.retryUnproven();
    }
  }

  /**
   * The header height a refusal waits for, null when it is no wait for a header (see
   * holdUnproven). `fresh`: the refusal of a payload's first intake, which may predate the
   * tip known now; a retry's refusal at or below the tip is final (the header is not coming).
   */
  private awaitedHeader(e: unknown, tip: number, fresh = false): number | null {
    if (!(e instanceof NodeError) || e.code !== 'coin_unproven') return null;
    const h = e.detail?.['awaits_header'];
    if (typeof h === 'number') return h > tip || fresh ? h : null;
    return typeof e.detail?.['awaits_parent'] === 'string' ? tip + 1 : null;
  }

  /**
   * The header tip advanced: each kept payload whose awaited header it reaches goes
   * through a peer payload's intake again; one taken is announced as REST's are, so
   * gossip forwards it; one still unproven is kept until its wait ends.
   */
  private retryUnproven(): void {
    const tip = this.unprovenTip;
    for (const x of this.unproven.due(tip)) {
      void submitPeerPayload(this, x.payload).then(
        (r) => {
          if (!r.created) return;
          this.unproven.noteTaken();
          this.server?.broadcast(PAYLOAD_ACCEPTED_EVENT, unpackOwn(x.payload));
        },
        (e: unknown) => {
          const now = this.unprovenTip;
          const awaits = this.awaitedHeader(e, now);
          if (awaits === null) {
            if (e instanceof NodeError && e.code === 'coin_unproven') this.unproven.noteExpired();
            else this.unproven.noteRefused();
            return;
          }
          if (this.unproven.has(x.txid)) return; // kept again meanwhile, from another copy
          if (!this.unproven.offer({ txid: x.txid, from: x.from, payload: x.payload, bytes: x.bytes, awaits }, now, x.expiresAt)) this.unproven.noteExpired();
          else if (this.unprovenTip > now) this.retryUnproven();
        },
      );
    }
  }

  static async start(init: InitMessage): Promise<Core> {
    const { config } = init;
    const workerData: WriterInit = { dbPath: config.dbPath, nodeId: config.nodeId, maxPendingCalls: config.maxPendingCalls, logFilter: config.logFilter, secrets: secretsOf(config) };
    const thread = new Worker(new URL('../writer/thread.js', import.meta.url), { workerData });
    const writer = new RpcClient<WriterApi, WriterEvents>(portTransport(thread));
    await new Promise<void>((resolve, reject) => {
      writer.on('ready', () => resolve());
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`writer thread exited with code ${code} before it was ready`)));
    });
    thread.on('error', (e) => {
      log.error('writer thread failed; the core restarts', { error: e });
      process.exit(1);
    });
    const pool = new WorkPool({ threads: config.workers.poolSize, queueLimit: config.workers.queueLimit });
    const core = new Core(init, thread, writer, pool);
    core.noteWriterStatus(await writer.call('status', {}));
    core.server = new RpcServer<CoreApi, CoreEvents>(core.handlers(), (e, method) => log.error('core bug', { method, error: e }));
    await core.server.listen(init.ipcPath);
    // Startup order (SERVICE-SPEC section 1): storage is open and the registry loaded by
    // the writer; anchoring and block watching run in the background so the node serves
    // reads even while the chain-data endpoint is unreachable.
    void core.follower
      .start()
      .then(async () => {
        const st = await writer.call('status', {});
        if (st.processedHeight !== null) await core.deferred.seed(st.processedHeight, st.headerHeight ?? st.processedHeight);
      })
      .catch((e: Error) => log.error('chain follower failed', { error: e }));
    return core;
  }

  private handlers(): Handlers<CoreApi> {
    return {
      ...readHandlers(this),
      ...peerHandlers(this),
      ping: async () => {
        this.noteWriterStatus(await this.writer.call('status', {}));
        return { ok: true as const };
      },
      nodeStatus: () => this.nodeStatus(),
      // A payload newly stored by REST intake is announced to the gossip process, which
      // forwards it to peers; peers' payloads are forwarded by gossip itself.
      submitCall: async (p) => {
        const { evidence, ...r } = await this.intake.submitCall(p);
        if (r.created) this.server?.broadcast(PAYLOAD_ACCEPTED_EVENT, callPayload(p, evidence ?? null));
        return r;
      },
      submitDeploy: async (p) => {
        const { evidence, ...r } = await this.intake.submitDeploy(p.body, { anchor_tx: p.anchor_tx, coin: p.coin });
        if (r.created) this.server?.broadcast(PAYLOAD_ACCEPTED_EVENT, deployPayload(p.body, evidence ?? null));
        return r;
      },
      callStatus: (p) => this.intake.callStatus(p.txid, p.proof === true),
      stateRoot: async (p) => {
        const r = await this.writer.call('stateRoot', { height: p.height });
        if (!r) throw new NodeError('not_found', p.height === null ? 'no state root yet: the block journal is not anchored' : `no state root at height ${p.height}`);
        return r;
      },
      clearHalt: async () => {
        this.noteWriterStatus(await this.writer.call('clearHalt', {}));
        return { halted: false as const };
      },
    };
  }

  /** node_status.chain.budget (the core's client always has a budget). */
  private budgetStatus(): ChainBudgetStatus {
    const b = this.chain.budgetStatus()!;
    return { requests_per_hour: b.requests_per_hour, burst: b.burst, available: b.available, used_last_hour: b.used_last_hour, waiting: b.waiting, throttled_total: b.throttled_total };
  }

  async nodeStatus(): Promise<NodeStatus> {
    const w = this.noteWriterStatus(await this.writer.call('status', {}));
    const pool = this.pool.stats();
    const f = this.follower;
    return {
      node_id: this.init.config.nodeId,
      version: this.init.version,
      tip_height: f.chainTipHeight,
      processed_height: w.processedHeight,
      state_root: w.stateRoot,
      halted: w.halted,
      halt_reason: w.haltReason,
      peers: this.peerState.peers,
      pending_calls: w.pendingCalls,
      pending_evicted: w.coinEvictions,
      contracts: w.contracts,
      gossip_public_key: this.init.identity.publicKeyHex,
      caught_up: w.processedHeight !== null && f.chainTipHeight !== null && w.processedHeight >= f.chainTipHeight,
      pool: { threads: pool.threads, queued: pool.queued, queue_limit: pool.queue_limit, saturated: pool.saturated },
      chain: {
        endpoint: this.init.config.esploraUrl,
        endpoint_ok: f.endpointOk,
        // While the endpoint fails attempt by attempt (a 429's wait, a retried 5xx) before a
        // whole request has failed, the client's last failure names why.
        last_error: f.lastError ?? (f.endpointOk ? null : this.chain.lastAttemptError),
        tip_hash: f.chainTipHash,
        mode: this.init.config.chainMode,
        header_height: w.headerHeight,
        peers_lead: f.peersLead,
        deferred_checks: this.deferred.snapshot(),
        budget: this.budgetStatus(),
      },
      last_block_processed_at: w.lastBlockAt,
      uptime_s: Math.floor((Date.now() - this.startedAt) / 1000),
      gossip: this.peerState.counters,
      unproven_pool: this.unproven.status(),
      divergence: this.peerState.divergence,
    };
  }

  /**
   * The node is stopping (the supervisor's `stopping`, before the front drains): the
   * writer ends a replay or re-derivation at its next block and takes no more chain
   * updates, so requests still draining that wait on it are answered at once, and block
   * watching ends after the update in hand. Serving reads and intake goes on until stop().
   */
  async beginStop(): Promise<void> {
    // First the writer: the update it is applying may be a long re-derivation, which then
    // ends at its next block instead of holding the follower's stop until it is done.
    await this.writer.call('stop', {}, WRITER_STOP_ASK_MS).catch(() => undefined);
    this.deferred.stop();
    await this.follower.stop();
  }

  async stop(): Promise<void> {
    await this.server?.close();
    await this.writer.call('stop', {}, WRITER_STOP_ASK_MS).catch(() => undefined);
    // The follower ends after the update the writer is applying; closing the chain client
    // meanwhile fails a step's fetches (and retry waits) at once instead of letting them
    // run out their timeouts and backoffs.
    this.deferred.stop();
    await Promise.all([this.follower.stop(), this.chain.close()]);
    await this.pool.close();
    const exited = new Promise<void>((resolve) => this.writerThread.once('exit', () => resolve()));
    await this.writer.call('close', {}, 8000);
    await exited;
    log.info('core stopped');
  }
}

/**
 * Follows the chain-data endpoint for the writer: anchors the block journal of a node
 * with no data (below the network's protocol activation, or at start_height), then runs the block watcher from the
 * writer's last processed block and hands each update to the writer, in order.
 */
import { BlockWatcher, type ChainEvent, type ConnectedBlock } from '../chain/watcher.js';
import type { EsploraClient, RequestOptions } from '../chain/esplora-client.js';
import type { RpcClient } from '../ipc/rpc.js';
import { txPartsOf, type BlockInput } from '../writer/records.js';
import type { StampResult } from '../protocol/stamp.js';
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

export function blockInputOf(b: ConnectedBlock): BlockInput {
  // The watcher parsed every stamp once: the writer is handed its result, not the work.
  const stampAt = new Map<number, StampResult>([
    ...b.stamps.map((s): [number, StampResult] => [s.txIndex, { ok: true, stamp: s.stamp }]),
    ...b.rejectedStamps.map((s): [number, StampResult] => [s.txIndex, { ok: false, reason: s.reason }]),
  ]);
  const txs = b.txs
    .filter((t) => stampAt.has(t.index))
    .map((t) => ({
      txIndex: t.index,
      txid: t.txid,
      hex: t.tx.toHex(),
      parts: txPartsOf(t.tx, stampAt.get(t.index)),
    }));
  const spends: [string, string][] = [];
  for (const t of b.txs) {
    if (t.index === 0) continue; // the coinbase spends nothing
    for (const i of t.tx.ins) spends.push([`${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`, t.txid]);
  }
  return { height: b.height, hash: b.hash, prevHash: b.prevHash, txs, txids: b.txs.map((t) => t.txid), spends };
}

export class ChainFollower {
  private watcher: BlockWatcher | null = null;
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
    private readonly opts: { pollIntervalS: number; startHeight: number | null; onStatus: (s: WriterStatus) => void },
  ) {}

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
    this.progress = { since: Date.now(), blocksAtStart: status.processedHeight!, lastLog: 0 };
    this.watcher = new BlockWatcher({
      source,
      anchor: { height: status.processedHeight!, hash: status.processedHash! },
      knownHash: (height) => this.writer.call('knownHash', { height }),
      pollIntervalSeconds: this.opts.pollIntervalS,
      onEvent: (ev) => this.apply(ev),
      onError: (e) => {
        // Stopping closes the chain client under a step still fetching: not a failure.
        if (this.stopped) return;
        this.lastError = (e as Error).message;
        this.lastErrorFromChain = e instanceof NodeError && e.code === 'chain_unavailable';
        if (e instanceof NodeError && e.code === 'halted') log.debug('block application paused: node halted');
        else log.warn('block watching failed; will retry', { error: this.lastError });
      },
    });
    this.watcher.start();
  }

  /** Polls the chain now (tests, and pushes from the devnet). */
  pollNow(): Promise<void> {
    return this.watcher ? this.watcher.pollNow() : Promise.resolve();
  }

  private async apply(ev: ChainEvent): Promise<void> {
    const status = await this.writer.call('applyChainUpdate', {
      fork_height: ev.fork_height,
      disconnected: ev.disconnected,
      connected: ev.connected.map(blockInputOf),
    });
    this.lastError = null;
    const last = ev.connected[ev.connected.length - 1];
    if (last) this.chainTipHash = this.chainTipHeight === last.height ? last.hash : this.chainTipHash;
    this.opts.onStatus(status);
    const now = Date.now();
    const done = status.processedHeight!;
    const left = Math.max(0, (this.chainTipHeight ?? done) - done);
    if (left > 0 && now - this.progress.lastLog >= PROGRESS_EVERY_MS) {
      const secs = (now - this.progress.since) / 1000;
      const rate = secs > 0 ? (done - this.progress.blocksAtStart) / secs : 0;
      log.info('catching up', { processed_height: done, blocks_left: left, blocks_per_s: Math.round(rate * 10) / 10, eta_s: rate > 0 ? Math.round(left / rate) : null });
      this.progress.lastLog = now;
    } else if (left === 0) {
      log.info('block applied', { height: done, state_root: status.stateRoot, reorg_depth: ev.disconnected.length || undefined });
    }
  }

  /** Ends block watching after the update the writer is applying, if any (watcher.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.watcher?.stop();
  }
}

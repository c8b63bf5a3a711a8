/**
 * chain_mode "light" (the default): the header follower (src/chain/header-follower.ts)
 * keeps a verified header chain and reads blocks as headers with the payloads' evidence,
 * raw blocks only near the tip while payloads wait for a confirmation. It polls on the
 * block check interval (resting while peers' tip announcements lead: tip-announcements.ts)
 * and takes peers' header runs, authenticated by one endpoint answer (takePeerHeaders).
 * Polls run one at a time, in one queue.
 */
import { HeaderFollower, checkHeaderRun } from '../../chain/header-follower.js';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import type { PowParams } from '@svc-node/protocol/activation';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../log.js';
import type { InitialSyncHold } from '../initial-sync-hold.js';
import { TIP, type FollowingHost } from './host.js';
import { TipAnnouncements, type PeerTip } from './tip-announcements.js';

const log = logger('chain');

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

export interface LightModeOptions {
  pow: PowParams;
  pollIntervalS: number;
  hasPeers: boolean;
  /** When the follower was made (Date.now()): PEER_HEADER_WAIT_MS counts from it. */
  startedAt: number;
  /** Block application waits for the first peer sync while it delivers (initial-sync-hold.ts). */
  initialSync: InitialSyncHold;
  signal: AbortSignal;
}

export class LightMode {
  private readonly follower: HeaderFollower;
  private readonly announcements: TipAnnouncements;
  private timer: NodeJS.Timeout | null = null;
  /** The last poll queued (serialPoll), null when none runs. */
  private polling: Promise<void> | null = null;
  /** A block application for applyDelivered waits in the queue (one is enough). */
  private applyQueued = false;

  constructor(
    private readonly host: FollowingHost,
    private readonly opts: LightModeOptions,
  ) {
    this.announcements = new TipAnnouncements(Date.now, opts.pollIntervalS);
    const { chain, writer } = host;
    this.follower = new HeaderFollower({
      pow: opts.pow,
      source: {
        blocks: async (top?: number) => {
          const rows = await chain.blocks(top, TIP);
          if (top === undefined && rows[0]) {
            host.setTip(rows[0].height, rows[0].hash);
            host.endpointAnswered();
          }
          return rows;
        },
        rawBlock: (hash: string) => chain.rawBlock(hash, TIP),
        txBlock: async (txid: string) => {
          const s = await chain.txStatus(txid, TIP);
          return s.confirmed ? { height: s.block_height, hash: s.block_hash } : null;
        },
      },
      sink: {
        state: async () => {
          const st = await writer.call('status', {});
          host.noteStatus(st);
          return {
            processed: { height: st.processedHeight!, hash: st.processedHash! },
            headerTip: st.headerHeight === null ? null : { height: st.headerHeight, hash: st.headerHash! },
            anchorHeight: st.anchorHeight!,
            pending: st.pendingCalls + st.pendingDeploys,
          };
        },
        headers: (from, count) => writer.call('headers', { from, count }),
        processedHash: (height) => writer.call('knownHash', { height }),
        putHeaders: async (from, run, truncate) => void host.noteStatus(await writer.call('putHeaders', { from, headers: run, truncate })),
        apply: async (u) => {
          // A catch-up says so as it starts: a light one may apply a thousand blocks an event.
          const last = u.connected[u.connected.length - 1];
          const tip = host.tipHeight();
          if (last && tip !== null && tip - u.fork_height > 1) host.logProgress(u.fork_height, null, 0);
          const answer = await writer.call('applyChainUpdate', u);
          host.noteApplied(answer, u.disconnected.length);
          return answer;
        },
        storeSpentBy: async (items) => void (await writer.call('storeSpentBy', { items })),
        unplacedAnchors: async () => {
          const out: string[] = [];
          for (let after = ''; ; ) {
            const page = await writer.call('pendingPayloads', { after, limit: PENDING_PAGE });
            for (const p of page) if (p.settles_at === null) out.push(p.txid);
            const lastOfPage = page[page.length - 1];
            if (page.length < PENDING_PAGE || !lastOfPage) return out;
            after = lastOfPage.txid;
          }
        },
      },
      mayPageEndpoint: (missing) =>
        !opts.hasPeers || Date.now() - opts.startedAt >= PEER_HEADER_WAIT_MS || (opts.initialSync.isDone && missing <= ENDPOINT_HEADER_PAGING_FREE),
      applyCeiling: () => opts.initialSync.ceiling(Date.now()),
      onLookup: (r) => log.info('held anchors looked for before applying blocks as headers', { from: r.from, to: r.to, asked: r.asked, confirming_blocks: r.blocks }),
      signal: opts.signal,
    });
  }

  /** Peers' announcements lead: the node's own poll waits (tip-announcements.ts). */
  get peersLead(): boolean {
    return this.announcements.peersLead;
  }

  /** Starts the timer: a poll now, then one every block check interval (jittered), unless peers lead. */
  start(): void {
    const intervalMs = Math.max(1, Math.round(this.opts.pollIntervalS * 1000));
    const tick = (): void => {
      if (this.host.isStopped()) return;
      (this.announcements.ownPollDue(intervalMs) ? this.ownPoll() : Promise.resolve())
        .catch((e: unknown) => this.host.pollFailed(e))
        .finally(() => {
          if (this.host.isStopped()) return;
          this.timer = setTimeout(tick, jittered(intervalMs));
          this.timer.unref();
        });
    };
    tick();
  }

  /** One poll, after any queued. */
  pollNow(): Promise<void> {
    return this.serialPoll(() => this.follower.poll());
  }

  /** Blocks the first peer sync delivered are applied now, in the queue (no endpoint request: the headers are held already). */
  applyDelivered(): void {
    if (this.applyQueued) return;
    this.applyQueued = true;
    void this.serialPoll(() => {
      this.applyQueued = false;
      return this.follower.applyBlocks();
    }).catch((e: unknown) => this.host.pollFailed(e));
  }

  /**
   * A peer's heartbeat announced its best block header above this node's header tip:
   * followed (one endpoint request: followPeerTip) as the announcement policy decides
   * (TipAnnouncements.offer); one that arrives while a poll runs is offered again when the
   * poll ends.
   */
  notePeerTip(tip: PeerTip): void {
    if (this.host.isStopped()) return;
    if (this.announcements.offer(tip, this.host.headerTipHeight(), this.polling !== null) !== 'follow') return;
    const { height, header, announcer } = tip;
    void this.serialPoll(async () => {
      const outcome = await this.follower.followPeerTip(height, header).catch((e: unknown) => {
        this.announcements.settle(announcer, 'failed');
        throw e;
      });
      if (!this.announcements.settle(announcer, outcome)) return;
      const t = this.follower.endpointTip;
      if (t && (this.host.tipHeight() ?? -1) <= t.height) this.host.setTip(t.height, t.hash);
    })
      // Not a failed poll (pollFailed): an announcement is a peer's hint, and one the endpoint
      // cannot follow (a stale block by hash) says nothing of the endpoint's health. The
      // policy counts it as bringing nothing.
      .catch((e: unknown) => log.debug('a peer\'s tip announcement was not followed', { height, error: (e as Error).message }));
  }

  /** Ends the timer and waits for the poll running, if any. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.polling?.catch(() => undefined);
  }

  /**
   * The timer's own poll: a new block it finds before any peer announced it ends the
   * peers' lead. The tip is compared inside the poll's turn, so a block an announcement
   * brought in the poll queued ahead of it is not taken for one this poll found.
   */
  private ownPoll(): Promise<void> {
    return this.serialPoll(async () => {
      const before = this.host.headerTipHeight();
      await this.follower.poll();
      const after = this.host.headerTipHeight();
      this.announcements.noteOwnPoll(before !== null && after !== null && after > before);
    });
  }

  /** One poll at a time; one asked for meanwhile runs after it. The last one's end offers an announcement held meanwhile again (notePeerTip). */
  private serialPoll(poll: () => Promise<unknown>): Promise<void> {
    const prev = this.polling ?? Promise.resolve();
    const next: Promise<void> = prev.catch(() => undefined).then(async () => void (await poll()));
    this.polling = next;
    void next
      .finally(() => {
        if (this.polling !== next) return;
        this.polling = null;
        const held = this.announcements.takeHeld();
        if (held) this.notePeerTip(held);
      })
      .catch(() => undefined);
    return next;
  }
}

/**
 * A run of headers from a peer (gossip), from height `from`: verified (linked to the
 * node's header chain, proof of work) and authenticated by the endpoint before the
 * writer keeps it: the endpoint must name the run's last block at its height (one
 * request, none when the last poll already named it).
 */
export async function takePeerHeaders(host: FollowingHost, pow: PowParams | null, from: number, run: Uint8Array[]): Promise<{ accepted: number }> {
  const parsed = run.map((h) => {
    if (h.length !== 80) throw new NodeError('bad_request', 'a block header is 80 bytes');
    return parseHeaderBytes(h);
  });
  if (pow === null) throw new NodeError('chain_unavailable', 'the chain-data endpoint has not named its network yet', { reason: 'starting' });
  const wrong = await checkHeaderRun((f, c) => host.writer.call('headers', { from: f, count: c }), from, parsed, pow);
  if (wrong !== null) throw new NodeError('bad_evidence', wrong);
  const top = from + run.length - 1;
  const lastHeader = parsed[parsed.length - 1];
  if (!lastHeader) return { accepted: 0 };
  const topHash = lastHeader.hash;
  const known = host.tipHeight() === top ? host.tipHash() : null;
  const endpointHash = known ?? (await host.chain.blockHashAt(top, TIP));
  if (endpointHash !== topHash) throw new NodeError('bad_evidence', `the chain-data endpoint names block ${endpointHash} at height ${top}, not the peer's ${topHash}`);
  host.noteStatus(await host.writer.call('putHeaders', { from, headers: run, truncate: false }));
  return { accepted: run.length };
}

/**
 * Peers' tip announcements (docs/GOSSIP.md, "Tip announcements"): which announcements a
 * light node follows (one endpoint request each, HeaderFollower.followPeerTip), when its
 * own poll may rest because peers lead, and the tip this node announces in turn. The
 * policy reads time only through the clock it is given.
 */
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import type { RpcClient } from '../../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../../messages/writer.js';

/**
 * While peers lead (a peer's tip announcement brought the last new block before this
 * node's own poll found it), the node's own poll runs only when this many poll intervals
 * pass without a new block: 30 at the default 60 s is half an hour, longer than 95% of
 * Bitcoin's block intervals, so a block costs about one request (the announced one)
 * instead of ten polls; peers that fall silent cost at most that long, and the first
 * block the node's own poll finds before any peer announces it ends the lead.
 */
export const PEER_LED_POLL_INTERVALS = 30;

/** Proven announcers remembered: far more than a node's peers (gossip.max_peers); past it the set starts afresh. */
const MAX_PROVEN_ANNOUNCERS = 256;

export interface PeerTip {
  height: number;
  header: Uint8Array;
  /** The peer's key, or the URL this node called. */
  announcer: string;
}

/** What following an announcement came to (HeaderFollower.followPeerTip), or `failed`. */
export type FollowOutcome = 'moved' | 'asked' | 'known' | 'unworthy' | 'failed';

export class TipAnnouncements {
  /**
   * Announcers whose last announcement brought a new block: theirs are followed at once,
   * always. After an announcement that brought none, the others' wait a poll interval: a
   * lying peer (under any number of keys) costs at most one request an interval, and
   * cannot delay a proven peer's announcements.
   */
  private readonly provenAnnouncers = new Set<string>();
  /** Until when unproven announcers are not followed (set by an announcement that brought no block). */
  private unprovenWaitUntil = -Infinity;
  /** Peers' tip announcements brought the last new block (see PEER_LED_POLL_INTERVALS). */
  private peerLed = false;
  /** When the endpoint last told this node of a new block, or its own poll last ran. */
  private lastEndpointLookAt = 0;
  /** An announcement that arrived while a poll ran, followed when it ends. */
  private held: PeerTip | null = null;

  /** `now`: the clock (ms); `pollIntervalS`: block_check_interval_s. */
  constructor(
    private readonly now: () => number,
    private readonly pollIntervalS: number,
  ) {}

  /** Peers' announcements lead: the node's own poll waits PEER_LED_POLL_INTERVALS (node_status.chain.peers_lead). */
  get peersLead(): boolean {
    return this.peerLed;
  }

  /**
   * An announcement: `follow` it now (ask the endpoint), or not (`ignored`), or, while a
   * poll runs (`polling`), `held` for the poll's end, unless the poll brought its block:
   * one kept, a proven announcer's before another's, then the highest. Dropped, it waited
   * for the announcer's next heartbeat, and a liar's second announcement, sent right
   * after one not worth a request, slipped past the interval's budget unasked.
   * `headerTip`: the node's header tip height.
   */
  offer(tip: PeerTip, headerTip: number | null, polling: boolean): 'follow' | 'held' | 'ignored' {
    if (polling) {
      const held = this.held;
      const proven = this.provenAnnouncers.has(tip.announcer);
      const heldProven = held !== null && this.provenAnnouncers.has(held.announcer);
      if (held === null || (proven && !heldProven) || (proven === heldProven && tip.height > held.height)) this.held = tip;
      return 'held';
    }
    if (headerTip === null || tip.height <= headerTip) return 'ignored';
    if (!this.provenAnnouncers.has(tip.announcer) && this.now() < this.unprovenWaitUntil) return 'ignored';
    return 'follow';
  }

  /** The announcement held while the poll that just ended ran (offer), now to be offered again. */
  takeHeld(): PeerTip | null {
    const held = this.held;
    this.held = null;
    return held;
  }

  /** What following `announcer`'s announcement came to; true when it brought a new block. */
  settle(announcer: string, outcome: FollowOutcome): boolean {
    switch (outcome) {
      case 'known':
        return false;
      case 'unworthy':
        // Nothing was asked of the endpoint: the announcer loses its standing, no one waits.
        this.provenAnnouncers.delete(announcer);
        return false;
      case 'asked':
      case 'failed':
        this.provenAnnouncers.delete(announcer);
        this.unprovenWaitUntil = this.now() + this.pollIntervalS * 1000;
        return false;
      case 'moved':
        if (this.provenAnnouncers.size >= MAX_PROVEN_ANNOUNCERS) this.provenAnnouncers.clear();
        this.provenAnnouncers.add(announcer);
        this.peerLed = true;
        this.lastEndpointLookAt = this.now();
        return true;
    }
  }

  /** Whether the node's own poll runs now (`intervalMs`: its interval): not while peers lead. */
  ownPollDue(intervalMs: number): boolean {
    return !(this.peerLed && this.now() - this.lastEndpointLookAt < PEER_LED_POLL_INTERVALS * intervalMs);
  }

  /** The node's own poll ran; `foundBlock`: it found a new block before any peer announced it, which ends the peers' lead. */
  noteOwnPoll(foundBlock: boolean): void {
    this.lastEndpointLookAt = this.now();
    if (foundBlock) this.peerLed = false;
  }
}

/**
 * The header tip heartbeats announce: its height and 80 bytes, read from the writer once
 * per new tip.
 */
export class AnnouncedTip {
  private announced: { height: number; hash: string; header: Uint8Array } | null = null;

  constructor(private readonly writer: RpcClient<WriterApi>) {}

  /** The tip for the writer's last status `st`, or null before the node holds a header. */
  async of(st: WriterStatus | null): Promise<{ height: number; header: Uint8Array } | null> {
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
}

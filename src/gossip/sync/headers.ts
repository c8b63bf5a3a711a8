/**
 * Header sync (a light node): when the peer's verified header chain is above this node's,
 * pull it in pages (GetHeaders) and hand runs of up to HEADER_RUN_MAX headers to the core
 * (ChainFollower.submitHeaders: linkage, proof of work, and the chain-data endpoint naming
 * the run's top: one request per run). A run that does not verify or does not end in the
 * endpoint's block is refused and counted against the peer.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import { GET_HEADERS_MAX, LIST_CONCURRENCY } from '../limits.js';
import type { Peer } from '../peers.js';
import type { PeerResponse } from '../wire-types.js';
import type { SyncDeps } from './deps.js';
import { nextWait, type Retries } from './retries.js';

/**
 * Headers per run handed to the core: ten GetHeaders pages (1.6 MB). Each run costs one
 * endpoint request (its top is authenticated), so a year of blocks (52,560) is 3
 * requests; longer runs would save little and hold more in memory.
 */
const HEADER_RUN_MAX = 10 * GET_HEADERS_MAX;

/**
 * A peer's run ends this many blocks below its header tip: the endpoint authenticates the
 * top, and the last few blocks are where an honest peer and the endpoint may differ for a
 * while (a block found at once by two miners, a tip the endpoint has not seen yet). Six
 * blocks are where Bitcoin's settlement convention puts a reorganisation out of reach;
 * the light follower's own poll of the ten newest blocks brings the rest in one request.
 */
const HEADER_RUN_TIP_MARGIN = 6;

/** A peer refused for a false answer is not asked for headers for 1, 2, 4 ... up to this many rounds. */
const FALSE_ANSWER_BACKOFF_MAX = 64;

export class HeaderSync {
  /** Per peer url: header sync with it waits until round `next` after a false run. */
  private readonly falseHeaders = new Map<string, { next: number; wait: number }>();

  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
  ) {}

  /**
   * Pulls the peer's verified headers above this node's header tip, in runs the core
   * verifies and authenticates (one endpoint request each); answers how many were taken.
   * Only a light node takes them. A run that is refused (`bad_evidence`) is counted
   * against the peer, whose headers are then not asked for 1, 2, 4 ... rounds, and ends
   * this round's sync with it (the error is thrown on); one that
   * does not link to this node's chain (the peer is on another branch, or this node's tip
   * is) ends header sync with it for this round; an endpoint failure likewise, without
   * blame; payload sync goes on then.
   */
  async sync(peer: Peer): Promise<number> {
    const core = this.d.core();
    const local = await core.call('peerHeaderState', {});
    if (!local.takesHeaders || local.anchor === null) return 0;
    const backoff = this.falseHeaders.get(peer.url);
    if (backoff && this.retries.round < backoff.next) return 0;
    let from = Math.max(local.tip ?? local.anchor, local.anchor) + 1;
    let taken = 0;
    const pages = new HeaderPages((height) => this.retries.ask(peer, 'GetHeaders', { from_height: height, count: GET_HEADERS_MAX }), from, Math.min(this.d.concurrency, LIST_CONCURRENCY));
    for (;;) {
      const run: Uint8Array[] = [];
      let peerTip = 0;
      while (run.length < HEADER_RUN_MAX) {
        const r = await pages.next();
        peerTip = r.tip_height;
        const n = r.headers.length / HEADER_BYTES;
        for (let i = 0; i < n; i++) run.push(r.headers.subarray(i * HEADER_BYTES, (i + 1) * HEADER_BYTES));
        if (n < GET_HEADERS_MAX) break;
      }
      // The run ends HEADER_RUN_TIP_MARGIN below the peer's tip (see there).
      const keep = Math.max(0, Math.min(run.length, peerTip - HEADER_RUN_TIP_MARGIN - from + 1));
      if (keep === 0) return taken;
      try {
        const r = await core.call('peerSubmitHeaders', { from, headers: run.slice(0, keep) });
        if (!r.linked) {
          this.d.log.debug('peer headers do not link to this node\'s chain', { peer: peer.url, from });
          return taken;
        }
        taken += r.accepted;
        this.d.counters.sync_headers_accepted += r.accepted;
      } catch (e) {
        if (e instanceof NodeError && e.code === 'bad_evidence') {
          const wait = nextWait(backoff, FALSE_ANSWER_BACKOFF_MAX);
          this.falseHeaders.set(peer.url, { next: this.retries.round + wait, wait });
          this.retries.falseAnswer(peer, `headers ${from}..${from + keep - 1}`, e);
          // Nothing else it says this round is taken either: its payloads' evidence would
          // be checked against headers this node does not hold yet.
          throw new NodeError('bad_evidence', `the peer sent a false header run: ${e.message}`);
        }
        this.d.log.debug('peer headers not taken', { peer: peer.url, from, error: (e as Error).message });
        return taken;
      }
      from += keep;
      if (keep < run.length || run.length < HEADER_RUN_MAX) return taken;
    }
  }
}

/**
 * A peer's GetHeaders pages from a height on, in order, up to `ahead` asked at once: one
 * page after another, a year of headers (27 pages) waited on 27 round trips through the
 * peer's core and writer, with the node a third busy, before any payload was asked for.
 * Asked ahead, the next pages come while the core verifies and stores a run. A page
 * shorter than GET_HEADERS_MAX is the peer's last: none is asked past it. Pages asked
 * ahead of where the caller stops (a run that does not link, a refusal) are left
 * unread; their failures are not reported (nothing waits on them).
 */
class HeaderPages {
  private readonly asked: Promise<PeerResponse<'GetHeaders'>>[] = [];
  private nextHeight: number;
  private ended = false;

  constructor(
    private readonly get: (height: number) => Promise<PeerResponse<'GetHeaders'>>,
    from: number,
    private readonly ahead: number,
  ) {
    this.nextHeight = from;
  }

  async next(): Promise<PeerResponse<'GetHeaders'>> {
    while (!this.ended && this.asked.length < Math.max(1, this.ahead)) {
      const page = this.get(this.nextHeight);
      page.catch(() => undefined);
      this.asked.push(page);
      this.nextHeight += GET_HEADERS_MAX;
    }
    const r = await this.asked.shift()!;
    if (r.headers.length / HEADER_BYTES < GET_HEADERS_MAX) this.ended = true;
    return r;
  }
}

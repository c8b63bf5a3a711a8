/**
 * When sync asks again, in one place for every part of it: a request that fails for a
 * moment (`ask`), a payload intake refused (remembered, and fetched again after a backoff
 * counted in sync rounds, or never), a peer that answered something false
 * (`falseAnswer`), and what this round already fetched. The round clock the backoffs
 * count in is kept here.
 */
import * as grpc from '@grpc/grpc-js';
import type { NodeError } from '@svc-node/protocol/errors';
import { refusalIsRetryable } from '@svc-node/protocol/rules';
import { RpcFailure } from '../client.js';
import type { Peer } from '../peers.js';
import type { PeerMethod } from '../protocols.js';
import type { PeerRequest, PeerResponse, WireInit } from '../wire-types.js';
import type { SyncDeps } from './deps.js';
import { BoundedMap } from '../../bounded.js';

/** Refusals of what a peer's copy came with, not of the payload: filed per peer, retried after the backoff. */
const EVIDENCE_REFUSALS: ReadonlySet<string> = new Set(['bad_evidence', 'bad_coin', 'coin_missing', 'coin_before_anchor']);

/**
 * Payloads intake refused, remembered so sync does not fetch them again every round: an
 * intrinsic refusal (packages/protocol/src/rules.ts) for good, a retryable one (the anchor not
 * visible at this node's endpoint, the node overloaded) again after 1, 2, 4 ... up to
 * REFUSED_BACKOFF_MAX rounds. At most REFUSED_MAX txids (oldest forgotten first): enough
 * for any honest peer set; a peer that lists junk costs one fetch per txid per backoff.
 */
const REFUSED_MAX = 100_000;
/** 64 rounds of the default 5-minute sync: a retryable refusal is retried at least every ~5 h. */
const REFUSED_BACKOFF_MAX = 64;

/**
 * Tries of one sync request that fails transiently (the peer out of its list or fetch
 * budget, LIST_RATE_PER_S and FETCH_RATE_PER_S, or unreachable for a moment) before the sync with the peer goes on
 * without it, the first retry after FETCH_RETRY_MS and each next after twice as long
 * (0.5, 1, 2 s); a request past its deadline is asked once more (DEADLINE_RETRIES), so a
 * peer that hangs holds the sync two deadlines, not four. Without retries a payload the
 * first sync leaves out arrives after its block and replays the chain from there: 2 of
 * 118 GetPayloads of a 30,000-payload catch-up failed, and a 100,000-payload one lost its
 * whole first sync to one txid page past its deadline, then re-derived ~52,000 blocks
 * per late batch.
 */
const FETCH_ATTEMPTS = 4;
const FETCH_RETRY_MS = 500;
const DEADLINE_RETRIES = 1;

/** Whether a sync request that failed with `e` after `failures` tries (counting this one) is asked again. */
function askAgain(e: unknown, failures: number): boolean {
  if (!(e instanceof RpcFailure) || failures >= FETCH_ATTEMPTS) return false;
  if (e.grpcCode === grpc.status.DEADLINE_EXCEEDED) return failures <= DEADLINE_RETRIES;
  return e.grpcCode === grpc.status.RESOURCE_EXHAUSTED || e.grpcCode === grpc.status.UNAVAILABLE;
}

/** Rounds a refusal waits: 1 the first time, then twice the last wait, at most `max`. */
export function nextWait(last: { wait: number } | undefined, max: number): number {
  return last ? Math.min(last.wait * 2, max) : 1;
}

export class Retries {
  /** Sync rounds started (the clock of `refused`). */
  private roundNo = 0;
  /**
   * Refused txids: retried from round `next` (never when intrinsic); `wait` doubles per
   * refusal. A payload refused for the evidence a peer sent with it (`bad_evidence`) is
   * filed under "<peer url> <txid>": that peer's copy waits out its backoff, another
   * peer's copy is fetched at once.
   */
  private readonly refused = new BoundedMap<string, { next: number; wait: number; code: string }>(REFUSED_MAX);
  /** Txids fetched this round (they came with their evidence: not asked for it again). */
  private fetchedThisRound = new Set<string>();

  constructor(private readonly d: SyncDeps) {}

  /** A sync round starts: the backoffs' clock moves on, and nothing is fetched yet. */
  newRound(): void {
    this.roundNo++;
    this.fetchedThisRound = new Set();
  }

  /** Sync rounds started so far. */
  get round(): number {
    return this.roundNo;
  }

  /** Whether a refusal filed under `key` keeps it from being fetched this round. */
  private waiting(key: string): boolean {
    const r = this.refused.get(key);
    if (!r) return false;
    // bad_evidence is filed per peer only, and that peer's copy is asked again after its
    // backoff (its evidence may have named a block of a branch this node left since); so
    // are the coin refusals of what a peer's copy came with (bad_coin, coin_missing,
    // coin_before_anchor: once its anchor confirms, the copy comes with that instead).
    const retryable = EVIDENCE_REFUSALS.has(r.code) || refusalIsRetryable(r.code);
    return !retryable || this.roundNo < r.next;
  }

  /** Whether sync should fetch `txid` (from `peer`) now: not refused, or its backoff is over. */
  worthFetching(txid: string, peer?: Peer): boolean {
    return !this.waiting(txid) && !(peer && this.waiting(`${peer.url} ${txid}`));
  }

  noteRefused(key: string, code: string): void {
    const prev = this.refused.get(key);
    const wait = nextWait(prev, REFUSED_BACKOFF_MAX);
    this.refused.set(key, { next: this.roundNo + wait, wait, code });
  }

  /** A payload was taken: a refusal of it filed before is forgotten. */
  taken(txid: string): void {
    this.refused.delete(txid);
  }

  /** Refused txids sync currently skips (node_status, tests). */
  get refusedCount(): number {
    let n = 0;
    for (const key of this.refused.keys()) if (this.waiting(key)) n++;
    return n;
  }

  /** A payload came from a peer this round (with its evidence). */
  fetched(txid: string): void {
    this.fetchedThisRound.add(txid);
  }

  /** Whether a payload came from a peer this round. */
  fetchedNow(txid: string): boolean {
    return this.fetchedThisRound.has(txid);
  }

  /** False answers each peer gave since this node started (a sync that met one does not end as a good one). */
  private readonly falseAnswers = new WeakMap<Peer, number>();

  /** A peer answered something false (a header run, evidence, a list): counted, logged, and the peer marked failed. */
  falseAnswer(peer: Peer, what: string, e: NodeError): void {
    this.d.counters.sync_bad_evidence++;
    this.falseAnswers.set(peer, this.falseAnswersOf(peer) + 1);
    this.d.peers.failed(peer);
    this.d.log.warn('peer sent false evidence', { peer: peer.url, what, reason: e.message });
  }

  /** False answers `peer` gave so far. */
  falseAnswersOf(peer: Peer): number {
    return this.falseAnswers.get(peer) ?? 0;
  }

  /** One request of a sync, asked again while `askAgain` says so. */
  async ask<M extends PeerMethod>(peer: Peer, method: M, req: WireInit<PeerRequest<M>>): Promise<PeerResponse<M>> {
    for (let failures = 1; ; failures++) {
      try {
        return await peer.client.call(method, req);
      } catch (e) {
        if (!askAgain(e, failures)) throw e;
        this.d.log.info('sync request failed; asking again', { peer: peer.url, method, attempt: failures, error: (e as Error).message });
        await new Promise((resolve) => setTimeout(resolve, FETCH_RETRY_MS << (failures - 1)));
      }
    }
  }
}

/**
 * Outbound gossip: each accepted payload goes to at most peer_limit peers (never back to
 * its sender), collected per peer into signed SubmitPayload batches of up to
 * gossip.batch_max payloads or gossip.batch_delay_ms, split so no request exceeds the
 * peer's message limit, and sent through one p-queue with a concurrency cap.
 *
 * Per peer, at most PEER_SEND_INFLIGHT batches are in the p-queue at once and at most
 * PEER_SEND_BACKLOG wait behind them; a batch beyond that is dropped and counted
 * (payloads_forward_dropped). Dropping is safe: gossip is best effort and the periodic
 * sync transfers whatever a peer lacks. Without the bound, a peer that accepts the
 * connection and never answers held every send slot for the request deadline and the
 * p-queue grew by one batch (up to 64 KiB) per accepted payload.
 */
import type PQueue from 'p-queue';
import { MAX_GRPC_MESSAGE_BYTES } from './limits.js';
import { encodedSize, toProtoPayload } from './wire.js';
import type { PeerSet, Peer } from './peers.js';
import type { GossipCounters, WirePayload } from '../messages/gossip.js';
import type { Logger } from '../log.js';

/** Room for auth (~120 bytes) and the request's own framing inside one message. */
const BATCH_BYTES = MAX_GRPC_MESSAGE_BYTES - 512;

/**
 * Batches of one peer in the send queue at once: a peer that hangs until the request
 * deadline holds at most 2 of gossip.send_concurrency (8) slots, so the others keep
 * flowing. Two, not one, so a live peer's round trip overlaps the next batch.
 */
export const PEER_SEND_INFLIGHT = 2;

/**
 * Batches of one peer waiting for a slot: at most 16 x 64 KiB = 1 MiB per peer (64 MiB at
 * the maximum default gossip.max_peers of 64). At the ~150 payloads/s intake sustains,
 * honest batches hold one or two payloads and a live peer never has more than a few waiting.
 */
export const PEER_SEND_BACKLOG = 16;

interface Outbox {
  waiting: WirePayload[][];
  inflight: number;
}

interface Batch {
  peer: Peer;
  items: WirePayload[];
  bytes: number;
  timer: NodeJS.Timeout | null;
}

export class Forwarder {
  private readonly batches = new Map<string, Batch>();
  /** Per peer URL, batches flushed and not yet answered; an entry exists only while non-empty. */
  private readonly outboxes = new Map<string, Outbox>();

  constructor(
    private readonly peers: PeerSet,
    private readonly queue: PQueue,
    private readonly o: { peerLimit: number; batchMax: number; batchDelayMs: number },
    private readonly counters: GossipCounters,
    private readonly log: Logger,
  ) {}

  /** Forwards `p` to up to peer_limit peers other than `excludeKey`. */
  forward(p: WirePayload, excludeKey: string | null): number {
    const targets = this.peers.targets(this.o.peerLimit, excludeKey);
    for (const peer of targets) this.add(peer, p);
    return targets.length;
  }

  private add(peer: Peer, p: WirePayload): void {
    const size = encodedSize(p);
    let b = this.batches.get(peer.url);
    if (b && b.bytes + size > BATCH_BYTES) {
      this.flush(b);
      b = undefined;
    }
    if (!b) {
      b = { peer, items: [], bytes: 0, timer: null };
      this.batches.set(peer.url, b);
    }
    b.items.push(p);
    b.bytes += size;
    if (b.items.length >= this.o.batchMax) this.flush(b);
    else if (!b.timer) {
      const batch = b;
      b.timer = setTimeout(() => this.flush(batch), this.o.batchDelayMs);
    }
  }

  private flush(b: Batch): void {
    if (this.batches.get(b.peer.url) === b) this.batches.delete(b.peer.url);
    if (b.timer) clearTimeout(b.timer);
    b.timer = null;
    if (b.items.length === 0) return;
    const ob = this.outboxes.get(b.peer.url) ?? { waiting: [], inflight: 0 };
    if (ob.waiting.length >= PEER_SEND_BACKLOG) {
      this.counters.payloads_forward_dropped += b.items.length;
      this.log.debug('gossip send backlog full: batch dropped', { peer: b.peer.url, payloads: b.items.length, inflight: ob.inflight });
      return;
    }
    ob.waiting.push(b.items);
    this.outboxes.set(b.peer.url, ob);
    this.pump(b.peer, ob);
  }

  /** Moves a peer's waiting batches into the send queue, up to PEER_SEND_INFLIGHT at once. */
  private pump(peer: Peer, ob: Outbox): void {
    while (ob.inflight < PEER_SEND_INFLIGHT && ob.waiting.length > 0) {
      const items = ob.waiting.shift()!;
      ob.inflight++;
      void this.queue.add(async () => {
        try {
          // A peer heard from recently is alive: wait for its connection if it is being
          // re-established (a restart) rather than dropping the batch; others fail fast.
          await peer.client.call('SubmitPayload', { payloads: items.map(toProtoPayload) }, undefined, this.peers.isActive(peer));
          this.counters.payloads_forwarded += items.length;
          this.peers.ok(peer);
        } catch (e) {
          this.peers.failed(peer);
          this.log.debug('gossip send failed', { peer: peer.url, payloads: items.length, error: (e as Error).message });
        } finally {
          ob.inflight--;
          if (ob.inflight === 0 && ob.waiting.length === 0) {
            if (this.outboxes.get(peer.url) === ob) this.outboxes.delete(peer.url);
          } else this.pump(peer, ob);
        }
      });
    }
  }

  /** Batches of every peer waiting or in flight (tests, node_status). */
  get backlog(): number {
    let n = 0;
    for (const ob of this.outboxes.values()) n += ob.waiting.length + ob.inflight;
    return n;
  }

  /** Sends every batch now (shutdown, tests). */
  flushAll(): void {
    for (const b of [...this.batches.values()]) this.flush(b);
  }
}

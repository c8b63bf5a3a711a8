/**
 * Outbound gossip: each accepted payload goes to at most peer_limit peers (never back to
 * its sender), collected per peer into signed SubmitPayload batches of up to
 * gossip.batch_max payloads or gossip.batch_delay_ms, split so no request exceeds the
 * peer's message limit, and sent through one p-queue with a concurrency cap.
 */
import type PQueue from 'p-queue';
import { MAX_GRPC_MESSAGE_BYTES } from './limits.js';
import { encodedSize, toProtoPayload } from './wire.js';
import type { PeerSet, Peer } from './peers.js';
import type { GossipCounters, WirePayload } from '../messages.js';
import type { Logger } from '../log.js';

/** Room for auth (~120 bytes) and the request's own framing inside one message. */
const BATCH_BYTES = MAX_GRPC_MESSAGE_BYTES - 512;

interface Batch {
  peer: Peer;
  items: WirePayload[];
  bytes: number;
  timer: NodeJS.Timeout | null;
}

export class Forwarder {
  private readonly batches = new Map<string, Batch>();

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
    const items = b.items;
    const peer = b.peer;
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
      }
    });
  }

  /** Sends every batch now (shutdown, tests). */
  flushAll(): void {
    for (const b of [...this.batches.values()]) this.flush(b);
  }
}

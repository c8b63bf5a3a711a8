/**
 * The live feed's connections and the one loop that serves all their subscriptions
 * (docs/STREAM.md).
 *
 * The hub keeps the blocks it has delivered (`recent`, newest last). Each step asks the
 * writer, in one job (`streamStep`, src/writer/stream-queries.ts), which of them are still
 * on the chain, the durable blocks after them, and every read the subscriptions need up
 * to one height `to`: so everything a step delivers belongs to one chain and is durable.
 * A step that finds its last delivered block gone first tells each subscription that saw
 * anything from the fork on (`rollback`), then delivers the new branch in order.
 *
 * The hub knows no kind of subscription: each kind is one class (kinds.ts) that says what
 * it reads in a step, how it starts, rolls back and delivers (subscription.ts). Reads are
 * shared: caught-up subscriptions of one (contract, event name) share one read per step
 * and one serialised message tail, so a thousand subscribers of one contract cost one read
 * and one JSON.stringify per event. Subscriptions behind read pages of their own until
 * they catch up (`synced`), paced by their socket (BACKLOG_PAUSE_BYTES). Once synced, a
 * subscription is never paced: everything after is sent as it becomes durable, and a
 * reader that cannot keep up is closed at MAX_BUFFERED_BYTES (4008) rather than held
 * behind the chain.
 */
import { NodeError, asNodeError } from '@svc-node/protocol/errors';
import { logger } from '../../log.js';
import type { StreamBlock, StreamStep, StreamStepParams, StateVersion } from '../../messages.js';
import { Connection, type FeedCounters, type StreamSocket } from './connection.js';
import { KINDS, subscription } from './kinds.js';
import { CLOSE_FEED_RESET, MAX_SUBSCRIPTIONS, RECENT_BLOCKS, errorMessage, parseClientMessage } from './protocol.js';
import { StepPlan, StepResult, type Subscription } from './subscription.js';
import { subscribedMessage, unsubscribedMessage } from '@svc-node/protocol/feed';

const log = logger('rest::stream');

/** Where a step's reads come from: the core's `streamStep` (one writer job). */
export type StepSource = (p: StreamStepParams) => Promise<StreamStep>;

/** Most new blocks per step: a catching-up feed delivers in bounded steps. */
const STEP_BLOCKS = 100;
/** Wait after a failed step (core restarting) before the next. */
const RETRY_MS = 200;

export interface HubStats {
  connections: number;
  subscriptions: number;
  buffered_bytes: number;
  slow_consumers_closed: number;
  messages_sent: number;
  rollbacks: number;
  steps: number;
}

export class StreamHub {
  private readonly conns = new Set<Connection>();
  private readonly counters: FeedCounters = { sent: 0, slowClosed: 0, rollbacks: 0 };
  private recent: StreamBlock[] = [];
  private running = false;
  private again = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readOffset = 0;
  private steps = 0;

  constructor(private readonly step: StepSource) {}

  get head(): StreamBlock | null {
    return this.recent[this.recent.length - 1] ?? null;
  }

  stats(): HubStats {
    let subs = 0;
    let buffered = 0;
    for (const c of this.conns) {
      subs += c.subs.size;
      buffered += c.socket.buffered();
    }
    const { sent, slowClosed, rollbacks } = this.counters;
    return { connections: this.conns.size, subscriptions: subs, buffered_bytes: buffered, slow_consumers_closed: slowClosed, messages_sent: sent, rollbacks, steps: this.steps };
  }

  /** A new state version was announced (or the hub should look again). */
  onVersion(_v: StateVersion | null): void {
    this.kick();
  }

  open(socket: StreamSocket): Connection {
    const c = new Connection(socket, this.counters);
    this.conns.add(c);
    return c;
  }

  closed(c: Connection): void {
    c.closed = true;
    this.conns.delete(c);
  }

  /** The socket drained: backlog reads paused for it may go on. */
  drained(c: Connection): void {
    if (!c.paused()) this.kick();
  }

  /** Stops stepping and closes every connection with `code`. */
  stop(code: number, reason: string): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const c of [...this.conns]) c.socket.end(code, reason);
  }

  /** One text frame from a client: a subscribe or unsubscribe, or an error message back. */
  message(c: Connection, text: string): void {
    let m;
    try {
      m = parseClientMessage(text);
    } catch (e) {
      c.send(errorMessage(asNodeError(e)));
      return;
    }
    if (m.type === 'unsubscribe') {
      if (!c.subs.delete(m.id)) return void c.send(errorMessage(new NodeError('not_found', `no subscription ${m.id}`), m.id));
      c.send(unsubscribedMessage(m.id));
      return;
    }
    const r = m.sub;
    if (c.subs.has(r.id)) return void c.send(errorMessage(new NodeError('bad_request', `subscription id ${r.id} is in use on this connection`, { field: 'id' }), r.id));
    if (c.subs.size >= MAX_SUBSCRIPTIONS) return void c.send(errorMessage(new NodeError('overloaded', `at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`), r.id));
    c.subs.set(r.id, subscription(c, r));
    c.send(subscribedMessage(r.id, r.kind));
    this.kick();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          const more = await this.runStep();
          if (more) this.again = true;
        } catch (e) {
          if (!(e instanceof NodeError)) log.error('stream step failed', { error: e });
          // The core is restarting or unreachable: look again shortly.
          if (!this.retryTimer && !this.stopped) {
            this.retryTimer = setTimeout(() => {
              this.retryTimer = null;
              this.kick();
            }, RETRY_MS);
          }
          return;
        }
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }

  /** One step; true when some subscription is still behind (step again at once). */
  private async runStep(): Promise<boolean> {
    const plan = new StepPlan(this.head?.height ?? null);
    const subs: Subscription[] = [];
    for (const c of this.conns) for (const s of c.subs.values()) subs.push(s);
    // Round-robin start, so a step that cut a list of reads (StepPlan.share) serves the others next time.
    const start = subs.length === 0 ? 0 : this.readOffset++ % subs.length;
    for (let i = 0; i < subs.length; i++) subs[(start + i) % subs.length]!.plan(plan);
    const known = this.recent.map((b) => ({ height: b.height, hash: b.block_hash })).reverse();
    const res = await this.step({
      known,
      max_blocks: known.length === 0 ? RECENT_BLOCKS : STEP_BLOCKS,
      events: plan.events,
      call_pages: plan.callPages,
      contracts: [...plan.contracts],
      block_pages: plan.blockPages,
      call_contracts: [...plan.callContracts],
      txids: [...plan.txids],
    });
    this.steps++;
    if (this.stopped) return false;

    // ---- everything below is synchronous: the step is delivered as one piece
    if (res.to === null) return false; // the node has no block yet
    let fork: number | null = null;
    if (known.length > 0) {
      if (res.common === null) {
        // Deeper than every block remembered: the retractions are unknown. Start over.
        log.warn('reorg deeper than the live feed remembers; closing stream connections', { remembered_from: known[known.length - 1]!.height });
        this.recent = [];
        for (const c of [...this.conns]) c.socket.end(CLOSE_FEED_RESET, 'reorg deeper than the feed remembers; resume from your cursor');
        return false;
      }
      if (plan.head !== null && res.common < plan.head) fork = res.common + 1;
    }
    if (fork !== null) {
      this.counters.rollbacks++;
      this.recent = this.recent.filter((b) => b.height < fork!);
    }
    this.recent.push(...res.blocks);
    if (this.recent.length > RECENT_BLOCKS) this.recent = this.recent.slice(-RECENT_BLOCKS);
    const step = new StepResult(plan, res, res.to, this.head?.height ?? null, this.counters);
    // Rollbacks before any message of the new branch.
    if (fork !== null) for (const s of subs) if (!s.conn.closed && s.rollback(fork, step)) step.rolledBack.add(s);
    // Subscriptions that start at the head start after `to`: this step's reads did not include them.
    for (const s of subs) s.start(step);
    for (const kind of KINDS) kind.deliver(subs, step);

    // Behind: the feed itself (a step holds at most STEP_BLOCKS new blocks: after a burst
    // the rest is stepped through now, not at the next block's announcement, which left the
    // feed and every subscription at its head a step per block behind the node), or some
    // subscription has more to read now (not paused).
    const head = step.head ?? res.to;
    if (res.tip !== null && head < res.tip) return true;
    return subs.some((s) => !s.conn.closed && s.conn.subs.get(s.id) === s && s.behind(head));
  }
}

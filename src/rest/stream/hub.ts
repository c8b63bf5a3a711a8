/**
 * The live feed's subscriptions and the one loop that serves them all (docs/STREAM.md).
 *
 * The hub keeps the blocks it has delivered (`recent`, newest last). Each step asks the
 * writer, in one job (`streamStep`, src/writer/stream-queries.ts), which of them are still
 * on the chain, the durable blocks after them, and every read the subscriptions need up
 * to one height `to`: so everything a step delivers belongs to one chain and is durable.
 * A step that finds its last delivered block gone first tells each subscription that saw
 * anything from the fork on (`rollback`), then delivers the new branch in order.
 *
 * A subscription is complete through a height (`covered`) and has delivered up to a
 * position (`pos`); the next read starts after the later of the two. Subscriptions that
 * are caught up share one read per (contract, event name) per step and one serialised
 * message tail, so a thousand subscribers of one contract cost one read and one
 * JSON.stringify per event. Subscriptions behind read pages of their own until they catch
 * up (`synced`), paced by their socket (BACKLOG_PAUSE_BYTES). Once synced, a subscription
 * is never paced: everything after is sent as it becomes durable, and a reader that cannot
 * keep up is closed at MAX_BUFFERED_BYTES (4008) rather than held behind the chain.
 */
import { NodeError, asNodeError } from '../../errors.js';
import { logger } from '../../log.js';
import { cursorAt, endOf, type Pos } from '../../protocol/cursor.js';
import type { CallStatusBody, EventJson, StreamBlock, StreamCall, StreamStep, StreamStepParams, StateVersion } from '../../messages.js';
import {
  BACKLOG_PAUSE_BYTES,
  CLOSE_FEED_RESET,
  CLOSE_SLOW_CONSUMER,
  MAX_BUFFERED_BYTES,
  MAX_SUBSCRIPTIONS,
  errorMessage,
  parseClientMessage,
  type SubscribeRequest,
} from './protocol.js';

const log = logger('rest::stream');

/** What the hub needs of one WebSocket (uWS in src/rest/stream/socket.ts). */
export interface StreamSocket {
  /** Queues a text message; false once the socket is closed. */
  send(text: string): boolean;
  /** Bytes queued and not yet written to the client. */
  buffered(): number;
  end(code: number, reason: string): void;
}

/** Where a step's reads come from: the core's `streamStep` (one writer job). */
export type StepSource = (p: StreamStepParams) => Promise<StreamStep>;

/**
 * Blocks the hub remembers (and sends as `known` each step). Above the 144-block undo
 * window, so every reorg the node rewinds through undo logs finds its fork among them; a
 * deeper one resets the feed (CLOSE_FEED_RESET) and clients resume from their cursors.
 */
const RECENT_BLOCKS = 160;
/** Most new blocks per step: a catching-up feed delivers in bounded steps. */
const STEP_BLOCKS = 100;
/** Events per read: a page is a few hundred KiB of JSON at most. */
const EVENTS_PAGE = 1000;
/** Decided calls per page for a calls subscription that is behind (whole blocks: a page may hold more). */
const CALLS_PAGE = 1000;
/** Blocks per page for a block subscription that is behind. */
const BLOCKS_PAGE = 500;
/** Most distinct reads in one step (taken round-robin); the others wait for the next step. */
const MAX_READS_PER_STEP = 256;
/**
 * Retracted cursors or txids remembered per subscription for `rollback` messages, over the
 * last RECENT_BLOCKS blocks. Beyond it the list is cut (`complete: false`); the rollback's
 * `cursor` still says exactly what is retracted (everything after it).
 */
const RETAIN_PER_SUB = 256;
/** Wait after a failed step (core restarting) before the next. */
const RETRY_MS = 200;

let nextUid = 0;

function cmp(a: Pos, b: Pos): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function later(a: Pos | null, b: Pos | null): Pos | null {
  if (a === null) return b;
  if (b === null) return a;
  return cmp(a, b) >= 0 ? a : b;
}

interface Conn {
  socket: StreamSocket;
  subs: Map<string, Sub>;
  closed: boolean;
}

interface EventsSub {
  kind: 'events';
  id: string;
  /** Distinguishes reads that must not be shared (a cursor not yet checked against the chain). */
  uid: number;
  conn: Conn;
  contract: string;
  name: string | null;
  /** Last event delivered (or the client's cursor). */
  pos: Pos | null;
  /** The client's cursor locator, until checked against the chain (hex tags). */
  tags: string[] | null;
  /** Send `progress` messages (complete through a height), and the last height sent. */
  progress: boolean;
  reported: number;
  /** Every matching event up to this height has been delivered; null: start at the head. */
  covered: number | null;
  synced: boolean;
  /** Delivered cursors of the recent blocks (for rollback messages), oldest first. */
  retained: { height: number; cursor: string }[];
  cut: boolean;
}

interface BlocksSub {
  kind: 'blocks';
  id: string;
  conn: Conn;
  /** Next height to deliver; null: start at the head. */
  next: number | null;
  synced: boolean;
}

interface CallsSub {
  kind: 'calls';
  id: string;
  uid: number;
  conn: Conn;
  contract: string | null;
  txids: Set<string> | null;
  /** Contract subscriptions: last call delivered from the call log (or the client's cursor), as for events. */
  pos: Pos | null;
  /** Contract subscriptions: every decided call up to this height was delivered; null: start at the head. */
  covered: number | null;
  synced: boolean;
  tags: string[] | null;
  cut: boolean;
  progress: boolean;
  reported: number;
  /** Txids whose status the node did not know yet (asked again each step). */
  unknown: Set<string>;
  /** Contracts of the watched txids. */
  contracts: Set<string>;
  /** Whether the first statuses were sent. */
  started: boolean;
  /** Calls delivered as decided in recent blocks, by txid (for rollback). */
  decided: Map<string, CallStatusBody>;
}

type Sub = EventsSub | BlocksSub | CallsSub;

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
  private readonly conns = new Set<Conn>();
  private recent: StreamBlock[] = [];
  private running = false;
  private again = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readOffset = 0;
  private slowClosed = 0;
  private sent = 0;
  private rollbacks = 0;
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
    return { connections: this.conns.size, subscriptions: subs, buffered_bytes: buffered, slow_consumers_closed: this.slowClosed, messages_sent: this.sent, rollbacks: this.rollbacks, steps: this.steps };
  }

  /** A new state version was announced (or the hub should look again). */
  onVersion(_v: StateVersion | null): void {
    this.kick();
  }

  open(socket: StreamSocket): Conn {
    const c: Conn = { socket, subs: new Map(), closed: false };
    this.conns.add(c);
    return c;
  }

  closed(c: Conn): void {
    c.closed = true;
    this.conns.delete(c);
  }

  /** The socket drained: backlog reads paused for it may go on. */
  drained(c: Conn): void {
    if (c.socket.buffered() < BACKLOG_PAUSE_BYTES) this.kick();
  }

  /** Stops stepping and closes every connection with `code`. */
  stop(code: number, reason: string): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const c of [...this.conns]) c.socket.end(code, reason);
  }

  /** One text frame from a client: a subscribe or unsubscribe, or an error message back. */
  message(c: Conn, text: string): void {
    let m;
    try {
      m = parseClientMessage(text);
    } catch (e) {
      this.send(c, errorMessage(asNodeError(e)));
      return;
    }
    if (m.type === 'unsubscribe') {
      if (!c.subs.delete(m.id)) return void this.send(c, errorMessage(new NodeError('not_found', `no subscription ${m.id}`), m.id));
      this.send(c, JSON.stringify({ type: 'unsubscribed', sub: m.id }));
      return;
    }
    const r = m.sub;
    if (c.subs.has(r.id)) return void this.send(c, errorMessage(new NodeError('bad_request', `subscription id ${r.id} is in use on this connection`, { field: 'id' }), r.id));
    if (c.subs.size >= MAX_SUBSCRIPTIONS) return void this.send(c, errorMessage(new NodeError('overloaded', `at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`), r.id));
    c.subs.set(r.id, this.newSub(c, r));
    this.send(c, JSON.stringify({ type: 'subscribed', sub: r.id, kind: r.kind }));
    this.kick();
  }

  private newSub(conn: Conn, r: SubscribeRequest): Sub {
    switch (r.kind) {
      case 'events': {
        // A cursor inside block h: everything through h - 1 was delivered.
        const covered = r.after ? r.after.pos[0] - 1 : r.from_height !== null ? r.from_height - 1 : null;
        return { kind: 'events', id: r.id, uid: nextUid++, conn, contract: r.contract_id, name: r.event_name, pos: r.after?.pos ?? null, tags: tagsHex(r.after), covered, synced: false, retained: [], cut: false, progress: r.progress, reported: covered ?? -1 };
      }
      case 'blocks':
        return { kind: 'blocks', id: r.id, conn, next: r.from_height, synced: false };
      case 'calls': {
        const covered = r.after ? r.after.pos[0] - 1 : r.from_height !== null ? r.from_height - 1 : null;
        return {
          kind: 'calls', id: r.id, uid: nextUid++, conn, contract: r.contract_id, txids: r.txids ? new Set(r.txids) : null, unknown: new Set(r.txids ?? []),
          contracts: new Set(), started: r.txids === null, decided: new Map(),
          pos: r.after?.pos ?? null, covered, synced: false, tags: tagsHex(r.after), cut: false, progress: r.progress, reported: covered ?? -1,
        };
      }
    }
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

  private paused(c: Conn): boolean {
    return c.socket.buffered() >= BACKLOG_PAUSE_BYTES;
  }

  /** Where a subscription's next event or call-log read starts (exclusive), or null with a from height. */
  private static readAfter(s: EventsSub | CallsSub): Pos | null {
    return later(s.pos, s.covered === null || s.covered < 0 ? null : endOf(s.covered));
  }

  /** One step; true when some subscription is still behind (step again at once). */
  private async runStep(): Promise<boolean> {
    const head = this.head;
    const headHeight = head?.height ?? -1;
    // ---- the reads this step needs, deduplicated
    const eventKeys = new Map<string, { req: StreamStepParams['events'][number]; subs: EventsSub[] }>();
    const callKeys = new Map<string, { req: StreamStepParams['call_pages'][number]; subs: CallsSub[] }>();
    const blockKeys = new Map<number, BlocksSub[]>();
    const atHead = new Set<string>();
    const callContracts = new Set<string>();
    const txids = new Set<string>();
    const subs: Sub[] = [];
    for (const c of this.conns) for (const s of c.subs.values()) subs.push(s);
    // Round-robin start, so a step cut at MAX_READS_PER_STEP serves the others next time.
    const start = subs.length === 0 ? 0 : this.readOffset++ % subs.length;
    for (let i = 0; i < subs.length; i++) {
      const s = subs[(start + i) % subs.length]!;
      if (s.kind === 'events') {
        if (head === null) continue;
        if (s.covered === null) {
          atHead.add(s.contract); // starts at the head: resolved below, once the contract is known to exist
          continue;
        }
        if (s.covered < headHeight && !s.synced && this.paused(s.conn)) continue;
        const after = StreamHub.readAfter(s);
        // A cursor still to check is read alone: its answer may be a rollback for it only.
        const k = `${s.contract}|${s.name ?? ''}|${after ? after.join(':') : `h${s.covered + 1}`}${s.tags ? `|u${s.uid}` : ''}`;
        const g = eventKeys.get(k);
        if (g) g.subs.push(s);
        else if (eventKeys.size < MAX_READS_PER_STEP) eventKeys.set(k, { req: { contract_id: s.contract, event_name: s.name, after, from_height: s.covered + 1, limit: EVENTS_PAGE, ...(s.tags ? { tags: s.tags } : {}) }, subs: [s] });
      } else if (s.kind === 'calls' && s.contract !== null) {
        if (head === null) continue;
        if (s.covered === null) {
          atHead.add(s.contract);
          continue;
        }
        if (s.covered < headHeight && !s.synced && this.paused(s.conn)) continue;
        const after = StreamHub.readAfter(s);
        const k = `${s.contract}|${after ? after.join(':') : `h${s.covered + 1}`}${s.tags ? `|u${s.uid}` : ''}`;
        const g = callKeys.get(k);
        if (g) g.subs.push(s);
        else if (callKeys.size < MAX_READS_PER_STEP) callKeys.set(k, { req: { contract_id: s.contract, after, from_height: s.covered + 1, limit: CALLS_PAGE, ...(s.tags ? { tags: s.tags } : {}) }, subs: [s] });
      } else if (s.kind === 'blocks') {
        if (s.next === null || head === null || s.next > headHeight) continue; // at the head: new blocks come with the step
        if (!s.synced && this.paused(s.conn)) continue;
        const g = blockKeys.get(s.next);
        if (g) g.push(s);
        else if (blockKeys.size < MAX_READS_PER_STEP) blockKeys.set(s.next, [s]);
      } else {
        for (const t of s.unknown) txids.add(t);
        if (!s.started && s.txids) for (const t of s.txids) txids.add(t);
        for (const cid of s.contracts) callContracts.add(cid);
      }
    }
    const events = [...eventKeys.values()];
    const callPages = [...callKeys.values()];
    const blockPages = [...blockKeys.entries()];
    const callList = [...callContracts];
    const txidList = [...txids];
    const known = this.recent.map((b) => ({ height: b.height, hash: b.block_hash })).reverse();
    const res = await this.step({
      known,
      max_blocks: known.length === 0 ? RECENT_BLOCKS : STEP_BLOCKS,
      events: events.map((e) => e.req),
      call_pages: callPages.map((c) => c.req),
      contracts: [...atHead],
      block_pages: blockPages.map(([from]) => ({ from_height: from, limit: BLOCKS_PAGE })),
      call_contracts: callList,
      txids: txidList,
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
      if (res.common < headHeight) fork = res.common + 1;
    }
    const cursorOf = (pos: Pos): string => cursorAt(pos, res.locators[pos[0]] ?? '');
    const rolledBack = new Set<Sub>();
    if (fork !== null) {
      this.rollbacks++;
      this.recent = this.recent.filter((b) => b.height < fork!);
      for (const s of subs) if (!s.conn.closed && this.rollback(s, fork, cursorOf)) rolledBack.add(s);
    }
    this.recent.push(...res.blocks);
    if (this.recent.length > RECENT_BLOCKS) this.recent = this.recent.slice(-RECENT_BLOCKS);
    const to = res.to;
    const newHead = this.head;
    const missing = new Set(res.missing);

    // Subscriptions that start at the head start after `to`: this step's reads did not include them.
    for (const s of subs) {
      if ((s.kind === 'events' || (s.kind === 'calls' && s.contract !== null)) && s.covered === null && atHead.has(s.kind === 'events' ? s.contract : s.contract!)) {
        if (s.conn.subs.get(s.id) !== s) continue;
        const contract = s.kind === 'events' ? s.contract : s.contract!;
        if (missing.has(contract)) {
          this.notFound(s, contract);
          continue;
        }
        s.covered = to;
        s.synced = true;
        s.reported = to;
        this.send(s.conn, JSON.stringify({ type: 'synced', sub: s.id, height: to, cursor: cursorOf(endOf(to)) }));
      }
      if (s.kind === 'blocks' && s.next === null) {
        s.next = to + 1;
        s.synced = true;
        this.send(s.conn, JSON.stringify({ type: 'synced', sub: s.id, height: to }));
      }
    }

    // Event pages, then call-log pages (contract calls subscriptions), delivered alike.
    const ctx = { to, head: newHead?.height ?? to, rolledBack, cursorOf };
    events.forEach((e, i) => {
      const page = res.events[i]!;
      const tails = page.events.map((ev) => eventTail(ev, cursorOf));
      this.deliverLog(e.subs, page, 'event', page.events.map((ev, j) => ({ pos: [ev.block_height, ev.tx_index, ev.log_index] as Pos, text: tails[j]!.text, sent: (s: Sub) => this.retain(s as EventsSub, ev.block_height, tails[j]!.cursor) })), ctx);
    });
    callPages.forEach((c, i) => {
      const page = res.call_pages[i]!;
      this.deliverLog(c.subs, page, 'call', page.calls.map((x) => ({ pos: x.pos, text: callTail(x, cursorOf), sent: (s: Sub) => this.retainCall(s as CallsSub, x.body) })), ctx);
    });

    // Blocks: pages for subscriptions behind, then this step's new blocks for those at the head.
    blockPages.forEach(([, list], i) => {
      const page = res.block_pages[i]!;
      // A short page reached `to` (heights below the anchor have no block); a full one did not.
      const through = page.length < BLOCKS_PAGE ? to : page[page.length - 1]!.height;
      for (const s of list) if (!rolledBack.has(s)) this.deliverBlocks(s, page, through);
    });
    for (const s of subs) if (s.kind === 'blocks' && !rolledBack.has(s) && s.next !== null && res.blocks.length > 0 && s.next >= res.blocks[0]!.height) this.deliverBlocks(s, res.blocks, to);

    // Calls: first statuses, statuses the node learnt, then decisions of the new blocks.
    const status = new Map<string, CallStatusBody>();
    txidList.forEach((t, i) => {
      const b = res.txids[i];
      if (b) status.set(t, b);
    });
    const decided = new Map(res.calls.map((c) => [c.contract_id, c.calls]));
    for (const s of subs) if (s.kind === 'calls' && s.txids) this.deliverCalls(s, status, decided, callList);

    // Behind: some subscription has more to read now (not paused).
    return subs.some((s) => !s.conn.closed && s.conn.subs.get(s.id) === s && this.behind(s, newHead?.height ?? to));
  }

  /**
   * Delivers one page of a log (events, or a contract's decided calls) to the subscriptions
   * that share its read: each gets the items after its own position; a page that reached
   * the step's height completes them through it (`synced` once at the head).
   */
  private deliverLog(
    subs: (EventsSub | CallsSub)[],
    page: { more: boolean; unknown?: true; fork?: number },
    type: 'event' | 'call',
    items: { pos: Pos; text: string; sent: (s: Sub) => void }[],
    ctx: { to: number; head: number; rolledBack: Set<Sub>; cursorOf: (p: Pos) => string },
  ): void {
    if (page.unknown) {
      for (const s of subs) this.notFound(s, s.contract!);
      return;
    }
    const live = (s: Sub): boolean => !s.conn.closed && !ctx.rolledBack.has(s) && s.conn.subs.get(s.id) === s;
    if (page.fork !== undefined) {
      for (const s of subs) if (live(s)) this.staleCursor(s, page.fork, ctx.cursorOf);
      return;
    }
    for (const s of subs) {
      // A read that started after the fork skipped the new branch below it: read again next step.
      if (!live(s)) continue;
      if (s.tags && s.pos && s.pos[0] <= ctx.to) s.tags = null; // checked: on the chain
      const prefix = `{"type":"${type}","sub":${JSON.stringify(s.id)},`;
      for (const it of items) {
        if (s.pos && cmp(it.pos, s.pos) <= 0) continue;
        if (!this.send(s.conn, prefix + it.text)) break;
        s.pos = it.pos;
        it.sent(s);
      }
      if (!page.more) {
        s.covered = Math.max(s.covered!, ctx.to);
        if (!s.synced && s.covered >= ctx.head) {
          s.synced = true;
          this.send(s.conn, JSON.stringify({ type: 'synced', sub: s.id, height: s.covered, cursor: ctx.cursorOf(endOf(s.covered)) }));
        }
      }
      this.reportProgress(s);
    }
  }

  private behind(s: Sub, head: number): boolean {
    if (s.kind === 'events' || (s.kind === 'calls' && s.contract !== null)) return s.covered !== null && s.covered < head && (s.synced || !this.paused(s.conn));
    if (s.kind === 'blocks') return s.next !== null && s.next <= head && (s.synced || !this.paused(s.conn));
    return false;
  }

  /** Complete through a height (every event or decided call up to it was sent): a `progress` message if asked for and it moved. */
  private reportProgress(s: EventsSub | CallsSub): void {
    if (!s.progress || s.covered === null) return;
    const through = Math.max(s.covered, s.pos ? s.pos[0] - 1 : -1);
    if (through <= s.reported) return;
    s.reported = through;
    this.send(s.conn, JSON.stringify({ type: 'progress', sub: s.id, height: through }));
  }

  /** The subscription's contract is not on this node: an error closes it. */
  private notFound(s: EventsSub | CallsSub, contract: string): void {
    if (s.conn.subs.get(s.id) !== s) return;
    s.conn.subs.delete(s.id);
    this.send(s.conn, errorMessage(new NodeError('not_found', `no contract ${contract}; the subscription is closed`), s.id));
  }

  /**
   * The client's cursor names a block a reorg retracted (it resumed after missing the
   * rollback): a rollback to the fork its locator finds, then the new branch from there.
   */
  private staleCursor(s: EventsSub | CallsSub, fork: number, cursorOf: (p: Pos) => string): void {
    this.rollbacks++;
    const resume = fork > 0 ? endOf(fork - 1) : null;
    s.pos = resume;
    s.covered = fork - 1;
    s.reported = Math.min(s.reported, fork - 1);
    s.tags = null;
    s.synced = false;
    const cursor = resume ? cursorOf(resume) : null;
    const what = s.kind === 'events' ? { retracted: [] } : { txids: [] };
    this.send(s.conn, JSON.stringify({ type: 'rollback', sub: s.id, fork_height: fork, cursor, ...what, complete: false }));
  }

  private retainCall(s: CallsSub, b: CallStatusBody): void {
    if (b.block_height === null) return;
    s.decided.set(b.txid, b);
    if (s.decided.size > RETAIN_PER_SUB) {
      s.decided.delete(s.decided.keys().next().value!);
      s.cut = true;
    }
  }

  /** Delivers `blocks`, every stored block up to `through` from the subscription's next height. */
  private deliverBlocks(s: BlocksSub, blocks: StreamBlock[], through: number): void {
    if (s.conn.closed || s.conn.subs.get(s.id) !== s) return;
    for (const b of blocks) {
      if (b.height < s.next!) continue;
      if (!this.send(s.conn, JSON.stringify({ type: 'block', sub: s.id, height: b.height, block_hash: b.block_hash, state_root: b.state_root }))) return;
      s.next = b.height + 1;
    }
    s.next = Math.max(s.next!, through + 1);
    if (!s.synced && s.next > (this.head?.height ?? through)) {
      s.synced = true;
      this.send(s.conn, JSON.stringify({ type: 'synced', sub: s.id, height: s.next! - 1 }));
    }
  }

  private deliverCalls(s: CallsSub, status: Map<string, CallStatusBody>, decided: Map<string, CallStatusBody[]>, asked: string[]): void {
    if (s.conn.closed || s.conn.subs.get(s.id) !== s) return;
    const sendStatus = (b: CallStatusBody): void => {
      this.send(s.conn, `{"type":"call","sub":${JSON.stringify(s.id)},${JSON.stringify(b).slice(1)}`);
      this.retainCall(s, b);
    };
    // Statuses as of this step for txids met the first time (or learnt since).
    const fresh = new Set<string>();
    if (s.txids) {
      for (const t of s.started ? s.unknown : s.txids) {
        const b = status.get(t);
        if (!b) continue;
        s.unknown.delete(t);
        s.contracts.add(b.contract_id);
        fresh.add(t);
        sendStatus(b);
      }
      if (!s.started) {
        s.started = true;
        this.send(s.conn, JSON.stringify({ type: 'synced', sub: s.id, height: this.head?.height ?? null, unknown: [...s.unknown] }));
      }
    }
    // Decisions of this step's blocks (only for contracts whose call logs were read).
    for (const cid of s.contracts) {
      if (!asked.includes(cid)) continue;
      for (const b of decided.get(cid) ?? []) {
        if (s.txids && !s.txids.has(b.txid)) continue;
        if (fresh.has(b.txid)) continue; // its status above already says it
        sendStatus(b);
      }
    }
  }

  /** Sends the rollback a subscription needs for a fork; true if it had anything at or above it. */
  private rollback(s: Sub, fork: number, cursorOf: (p: Pos) => string): boolean {
    const resume = endOf(Math.max(0, fork - 1));
    if (s.kind === 'events') {
      const at = StreamHub.readAfter(s);
      if (at === null || at[0] < fork) return false;
      const gone = s.retained.filter((r) => r.height >= fork);
      const complete = !s.cut || (s.retained[0]?.height ?? Infinity) < fork;
      s.retained = s.retained.filter((r) => r.height < fork);
      s.pos = s.pos && cmp(s.pos, resume) > 0 ? resume : s.pos;
      s.covered = Math.min(s.covered!, fork - 1);
      s.reported = Math.min(s.reported, fork - 1);
      s.synced = false;
      this.send(s.conn, JSON.stringify({ type: 'rollback', sub: s.id, fork_height: fork, cursor: cursorOf(resume), retracted: gone.map((r) => r.cursor), complete }));
      return true;
    }
    if (s.kind === 'blocks') {
      if (s.next === null || s.next <= fork) return false;
      this.send(s.conn, JSON.stringify({ type: 'rollback', sub: s.id, fork_height: fork, retracted_heights: [fork, s.next - 1] }));
      s.next = fork;
      s.synced = false;
      return true;
    }
    const gone = [...s.decided.values()].filter((b) => b.block_height! >= fork);
    // A contract subscription re-reads its call log from the fork; a txids one gets the new
    // branch's decisions as call messages.
    const log = s.contract !== null && s.covered !== null && (StreamHub.readAfter(s)?.[0] ?? -1) >= fork;
    if (gone.length === 0 && !log) return false;
    const complete = !s.cut || [...s.decided.values()].some((b) => b.block_height! < fork);
    this.send(s.conn, JSON.stringify({ type: 'rollback', sub: s.id, fork_height: fork, cursor: cursorOf(resume), txids: gone.map((b) => b.txid), complete }));
    for (const b of gone) {
      s.decided.delete(b.txid);
      const pending: CallStatusBody = { ...b, status: 'pending', block_height: null, tx_index: null, result: null, error: null, confirmations: null };
      this.send(s.conn, `{"type":"call","sub":${JSON.stringify(s.id)},${JSON.stringify(pending).slice(1)}`);
    }
    if (!log) return false;
    s.pos = s.pos && cmp(s.pos, resume) > 0 ? resume : s.pos;
    s.covered = Math.min(s.covered!, fork - 1);
    s.reported = Math.min(s.reported, fork - 1);
    s.synced = false;
    return true;
  }

  private retain(s: EventsSub, height: number, cursor: string): void {
    const floor = (this.head?.height ?? height) - RECENT_BLOCKS;
    while (s.retained.length > 0 && s.retained[0]!.height <= floor) s.retained.shift();
    s.retained.push({ height, cursor });
    if (s.retained.length > RETAIN_PER_SUB) {
      s.retained.shift();
      s.cut = true;
    }
  }

  /** Sends one message; a connection over MAX_BUFFERED_BYTES is closed as a slow consumer. */
  private send(c: Conn, text: string): boolean {
    if (c.closed) return false;
    c.socket.send(text);
    this.sent++;
    if (c.socket.buffered() > MAX_BUFFERED_BYTES) {
      c.closed = true;
      this.slowClosed++;
      c.socket.end(CLOSE_SLOW_CONSUMER, 'slow consumer: resume from your last cursor');
      return false;
    }
    return true;
  }
}

/** An event's message after `"sub":...,`, serialised once per step for every subscriber. */
function eventTail(e: EventJson, cursorOf: (p: Pos) => string): { text: string; cursor: string } {
  const cursor = cursorOf([e.block_height, e.tx_index, e.log_index]);
  return { cursor, text: `"cursor":"${cursor}",${JSON.stringify(e).slice(1)}` };
}

/** A decided call's message after `"sub":...,`, with its call-log cursor. */
function callTail(c: StreamCall, cursorOf: (p: Pos) => string): string {
  return `"cursor":"${cursorOf(c.pos)}",${JSON.stringify(c.body).slice(1)}`;
}

/** A client cursor's locator as the writer checks it (hex tags), or null when it names no branch. */
function tagsHex(c: { tags: Buffer[] } | null): string[] | null {
  return c && c.tags.length > 0 ? c.tags.map((t) => t.toString('hex')) : null;
}

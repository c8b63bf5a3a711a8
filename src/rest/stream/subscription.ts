/**
 * What a live-feed subscription is to the hub (hub.ts), whatever its kind: the hub plans a
 * step by asking every subscription what it needs read (`plan`), and once the writer has
 * answered, tells each one of a fork (`rollback`), lets those waiting for the head start
 * (`start`), has each kind deliver the answer (`Kind.deliver`), and asks who is still
 * behind. Each kind is one class: events.ts, calls.ts (a contract's call log, or txids'
 * statuses), blocks.ts; kinds.ts lists them. Events and a contract's calls are both read
 * as a log by position, which `LogSubscription` below holds once.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { cursorAt, endOf, type Cursor, type Pos } from '@svc-node/protocol/cursor';
import { feedHead, progressMessage, rollbackLogMessage, splicedMessage, syncedLogMessage, type FeedHead, type FeedTail } from '@svc-node/protocol/feed';
import type { StreamStep, StreamStepParams } from '../../messages.js';
import type { Connection, FeedCounters } from './connection.js';
import { errorMessage } from './protocol.js';

/** Most distinct reads of one list in one step (taken round-robin); the others wait for the next step. */
const MAX_READS_PER_STEP = 256;

export function cmp(a: Pos, b: Pos): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function later(a: Pos | null, b: Pos | null): Pos | null {
  if (a === null) return b;
  if (b === null) return a;
  return cmp(a, b) >= 0 ? a : b;
}

/** A read that subscriptions share: its place in its list of the request, and who reads it. */
export interface SharedRead<S> {
  index: number;
  subs: S[];
}

/** The request of one step, as the subscriptions fill it (the hub adds the blocks it knows). */
export class StepPlan {
  readonly events: StreamStepParams['events'] = [];
  readonly callPages: StreamStepParams['call_pages'] = [];
  readonly blockPages: StreamStepParams['block_pages'] = [];
  /** Contracts asked whether they exist (subscriptions that start at the head read nothing yet). */
  readonly contracts = new Set<string>();
  /** Contracts whose decisions in this step's new blocks are asked. */
  readonly callContracts = new Set<string>();
  /** Txids whose current status is asked. */
  readonly txids = new Set<string>();
  private readonly shared = new Map<unknown[], Map<string | number, SharedRead<unknown>>>();

  /** @param head height of the newest block the feed delivered before this step; null: none yet. */
  constructor(readonly head: number | null) {}

  /**
   * `s` needs the read `key` of `list`: shared with the subscriptions that asked for the
   * same key this step, else added (built by `request`) while the list has room.
   */
  share<R, S>(list: R[], key: string | number, s: S, request: () => R): void {
    let reads = this.shared.get(list);
    if (!reads) this.shared.set(list, (reads = new Map()));
    const read = reads.get(key);
    if (read) read.subs.push(s);
    else if (reads.size < MAX_READS_PER_STEP) reads.set(key, { index: list.push(request()) - 1, subs: [s] });
  }

  /** The shared reads of `list`, in its order (the answer's list has the same order). */
  reads<S>(list: unknown[]): SharedRead<S>[] {
    return [...(this.shared.get(list)?.values() ?? [])] as SharedRead<S>[];
  }
}

/** One step's answer, as the subscriptions deliver it. */
export class StepResult {
  /** Subscriptions sent a rollback this step: their reads started above the fork, so they skip them and read again next step. */
  readonly rolledBack = new Set<Subscription>();
  readonly missing: Set<string>;

  constructor(
    readonly plan: StepPlan,
    readonly answer: StreamStep,
    /** Height every read of this step stops at. */
    readonly to: number,
    /** Height of the newest block the feed has delivered, this step's included. */
    readonly head: number | null,
    private readonly counters: FeedCounters,
  ) {
    this.missing = new Set(answer.missing);
  }

  /** A position's cursor, with the locator of its height on this step's chain. */
  cursorOf(pos: Pos): string {
    return cursorAt(pos, this.answer.locators[pos[0]] ?? '');
  }

  /** A rollback the hub did not see as a fork (a client's cursor that a reorg retracted). */
  countRollback(): void {
    this.counters.rollbacks++;
  }
}

/** One subscription on one connection. */
export interface Subscription {
  /** The client's name for it (`sub` in every message about it). */
  readonly id: string;
  readonly conn: Connection;
  /** Adds what it needs from the next step to `plan` (nothing while it waits for its socket or the head). */
  plan(plan: StepPlan): void;
  /** Blocks from `fork` up left the chain: sends its rollback; true if its reads of this step started above the fork. */
  rollback(fork: number, step: StepResult): boolean;
  /** Starts it at this step's height if it starts at the head (or refuses it). */
  start(step: StepResult): void;
  /** Whether it has more to read at once (not waiting for its socket). */
  behind(head: number): boolean;
}

/** A kind of subscription, as the hub calls it once per step. */
export interface Kind {
  /** Delivers a step's answer to this kind's subscriptions; `subs` is every subscription of the step, in the hub's order. */
  deliver(subs: readonly Subscription[], step: StepResult): void;
}

let nextUid = 0;

/** One item of a log page, serialised once for every subscription that shares the read. */
export interface LogItem<T extends 'event' | 'call'> {
  pos: Pos;
  /** The message after `"sub":...,`. */
  text: FeedTail<T>;
}

/** What the writer answers for one log read. */
export interface LogPage {
  more: boolean;
  /** The node holds no such contract. */
  unknown?: true;
  /** The cursor's block left the chain: roll back to this height (nothing was read). */
  fork?: number;
}

/**
 * A subscription that reads a contract's log by position (events, or a contract's decided
 * calls): complete through a height (`covered`), delivered up to a position (`pos`); the
 * next read starts after the later of the two.
 */
export abstract class LogSubscription<T extends 'event' | 'call', Item extends LogItem<T>> implements Subscription {
  /** Distinguishes reads that must not be shared (a cursor not yet checked against the chain). */
  protected readonly uid = nextUid++;
  /** `{"type":...,"sub":...,` of its messages. */
  protected readonly head: FeedHead<T>;
  /** Last item delivered (or the client's cursor). */
  protected pos: Pos | null;
  /** Every item up to this height has been delivered; null: start at the head. */
  protected covered: number | null;
  /** The client's cursor locator, until checked against the chain (hex tags). */
  protected tags: string[] | null;
  protected synced = false;
  /** The last height a `progress` message was sent for. */
  private reported: number;

  constructor(
    readonly id: string,
    readonly conn: Connection,
    type: T,
    protected readonly contract: string,
    after: Cursor | null,
    fromHeight: number | null,
    /** Send `progress` messages (complete through a height). */
    private readonly progress: boolean,
  ) {
    this.head = feedHead(type, id);
    // A cursor inside block h: everything through h - 1 was delivered.
    this.covered = after ? after.pos[0] - 1 : fromHeight !== null ? fromHeight - 1 : null;
    this.pos = after?.pos ?? null;
    this.tags = after && after.tags.length > 0 ? after.tags.map((t) => t.toString('hex')) : null;
    this.reported = this.covered ?? -1;
  }

  /** Adds its read to `plan`: `after` is where it starts (exclusive), `fromHeight` where it starts without a position. */
  protected abstract share(plan: StepPlan, after: Pos | null, fromHeight: number): void;
  /** The rollback's list of what it retracts: `retracted` (event cursors) or `txids`. */
  protected abstract readonly retractedField: 'retracted' | 'txids';
  /** An item was sent: remember what a rollback must retract. */
  protected abstract sent(item: Item, step: StepResult): void;
  abstract rollback(fork: number, step: StepResult): boolean;

  /** Where its next read starts (exclusive), or null with a from height. */
  protected readAfter(): Pos | null {
    return later(this.pos, this.covered === null || this.covered < 0 ? null : endOf(this.covered));
  }

  plan(plan: StepPlan): void {
    if (plan.head === null) return;
    if (this.covered === null) {
      plan.contracts.add(this.contract); // starts at the head: resolved after the step, once the contract is known to exist
      return;
    }
    if (this.covered < plan.head && !this.synced && this.conn.paused()) return;
    this.share(plan, this.readAfter(), this.covered + 1);
  }

  /** A read key: one per (its `what`, start); a cursor still to check is read alone (its answer may be a rollback for it only). */
  protected readKey(what: string, after: Pos | null): string {
    return `${what}|${after ? after.join(':') : `h${this.covered! + 1}`}${this.tags ? `|u${this.uid}` : ''}`;
  }

  /** The locator of a cursor still to check, as the read asks it. */
  protected tagsField(): { tags?: string[] } {
    return this.tags ? { tags: this.tags } : {};
  }

  start(step: StepResult): void {
    if (this.covered !== null || !step.plan.contracts.has(this.contract)) return;
    if (this.conn.subs.get(this.id) !== this) return;
    if (step.missing.has(this.contract)) return this.notFound();
    this.covered = step.to;
    this.synced = true;
    this.reported = step.to;
    this.conn.send(syncedLogMessage(this.id, step.to, step.cursorOf(endOf(step.to))));
  }

  behind(head: number): boolean {
    return this.covered !== null && this.covered < head && (this.synced || !this.conn.paused());
  }

  /** Moves it back to `resume` (the end of block fork - 1): the next read starts there. */
  protected rewind(fork: number, resume: Pos): void {
    this.pos = this.pos && cmp(this.pos, resume) > 0 ? resume : this.pos;
    this.covered = Math.min(this.covered!, fork - 1);
    this.reported = Math.min(this.reported, fork - 1);
    this.synced = false;
  }

  protected rollbackMessage(fork: number, cursor: string | null, retracted: string[], complete: boolean): string {
    return rollbackLogMessage(this.id, fork, cursor, this.retractedField, retracted, complete);
  }

  /**
   * Delivers one page of the log to the subscriptions that share its read: each gets the
   * items after its own position; a page that reached the step's height completes them
   * through it (`synced` once at the head).
   */
  static deliverPage<T extends 'event' | 'call', Item extends LogItem<T>>(subs: LogSubscription<T, Item>[], page: LogPage, items: Item[], step: StepResult): void {
    if (page.unknown) {
      for (const s of subs) s.notFound();
      return;
    }
    const live = (s: LogSubscription<T, Item>): boolean => !s.conn.closed && !step.rolledBack.has(s) && s.conn.subs.get(s.id) === s;
    if (page.fork !== undefined) {
      for (const s of subs) if (live(s)) s.staleCursor(page.fork, step);
      return;
    }
    const head = step.head ?? step.to;
    for (const s of subs) {
      // A read that started after the fork skipped the new branch below it: read again next step.
      if (!live(s)) continue;
      if (s.tags && s.pos && s.pos[0] <= step.to) s.tags = null; // checked: on the chain
      for (const it of items) {
        if (s.pos && cmp(it.pos, s.pos) <= 0) continue;
        if (!s.conn.send(splicedMessage(s.head, it.text))) break;
        s.pos = it.pos;
        s.sent(it, step);
      }
      if (!page.more) {
        s.covered = Math.max(s.covered!, step.to);
        if (!s.synced && s.covered >= head) {
          s.synced = true;
          s.conn.send(syncedLogMessage(s.id, s.covered, step.cursorOf(endOf(s.covered))));
        }
      }
      s.reportProgress();
    }
  }

  /** Complete through a height (every item up to it was sent): a `progress` message if asked for and it moved. */
  private reportProgress(): void {
    if (!this.progress || this.covered === null) return;
    const through = Math.max(this.covered, this.pos ? this.pos[0] - 1 : -1);
    if (through <= this.reported) return;
    this.reported = through;
    this.conn.send(progressMessage(this.id, through));
  }

  /** The subscription's contract is not on this node: an error closes it. */
  private notFound(): void {
    if (this.conn.subs.get(this.id) !== this) return;
    this.conn.subs.delete(this.id);
    this.conn.send(errorMessage(new NodeError('not_found', `no contract ${this.contract}; the subscription is closed`), this.id));
  }

  /**
   * The client's cursor names a block a reorg retracted (it resumed after missing the
   * rollback): a rollback to the fork its locator finds, then the new branch from there.
   */
  private staleCursor(fork: number, step: StepResult): void {
    step.countRollback();
    const resume = fork > 0 ? endOf(fork - 1) : null;
    this.pos = resume;
    this.covered = fork - 1;
    this.reported = Math.min(this.reported, fork - 1);
    this.tags = null;
    this.synced = false;
    this.conn.send(this.rollbackMessage(fork, resume ? step.cursorOf(resume) : null, [], false));
  }
}

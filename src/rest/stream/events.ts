/**
 * `events` subscriptions (docs/STREAM.md): a contract's events, of one name or all, read as
 * a log by position. Caught-up subscriptions of one (contract, event name) share one read
 * per step and one serialisation per event.
 */
import { endOf, type Pos } from '@svc-node/protocol/cursor';
import { eventTail } from '@svc-node/protocol/feed';
import type { Connection } from './connection.js';
import { RECENT_BLOCKS, RETAIN_PER_SUB, type SubscribeRequest } from './protocol.js';
import { LogSubscription, type LogItem, type StepPlan, type StepResult, type Subscription } from './subscription.js';

/** Events per read: a page is a few hundred KiB of JSON at most. */
const EVENTS_PAGE = 1000;

interface EventItem extends LogItem<'event'> {
  cursor: string;
}

export class EventsSubscription extends LogSubscription<'event', EventItem> {
  protected readonly retractedField = 'retracted';
  private readonly name: string | null;
  /** Delivered cursors of the recent blocks (for rollback messages), oldest first. */
  private retained: { height: number; cursor: string }[] = [];
  /** Whether `retained` lost its oldest entries to RETAIN_PER_SUB. */
  private cut = false;

  constructor(conn: Connection, r: Extract<SubscribeRequest, { kind: 'events' }>) {
    super(r.id, conn, 'event', r.contract_id, r.after, r.from_height, r.progress);
    this.name = r.event_name;
  }

  protected share(plan: StepPlan, after: Pos | null, fromHeight: number): void {
    const key = this.readKey(`${this.contract}|${this.name ?? ''}`, after);
    plan.share(plan.events, key, this, () => ({ contract_id: this.contract, event_name: this.name, after, from_height: fromHeight, limit: EVENTS_PAGE, ...this.tagsField() }));
  }

  protected sent(item: EventItem, step: StepResult): void {
    const floor = (step.head ?? item.pos[0]) - RECENT_BLOCKS;
    while (this.retained.length > 0 && this.retained[0]!.height <= floor) this.retained.shift();
    this.retained.push({ height: item.pos[0], cursor: item.cursor });
    if (this.retained.length > RETAIN_PER_SUB) {
      this.retained.shift();
      this.cut = true;
    }
  }

  rollback(fork: number, step: StepResult): boolean {
    const at = this.readAfter();
    if (at === null || at[0] < fork) return false;
    const resume = endOf(Math.max(0, fork - 1));
    const gone = this.retained.filter((r) => r.height >= fork);
    const complete = !this.cut || (this.retained[0]?.height ?? Infinity) < fork;
    this.retained = this.retained.filter((r) => r.height < fork);
    this.rewind(fork, resume);
    this.conn.send(this.rollbackMessage(fork, step.cursorOf(resume), gone.map((r) => r.cursor), complete));
    return true;
  }

  /** Each event page to the subscriptions that share its read, its messages serialised once. */
  static deliver(_subs: readonly Subscription[], step: StepResult): void {
    for (const read of step.plan.reads<EventsSubscription>(step.plan.events)) {
      const page = step.answer.events[read.index]!;
      const items = page.events.map((e): EventItem => {
        const pos: Pos = [e.block_height, e.tx_index, e.log_index];
        const cursor = step.cursorOf(pos);
        return { pos, cursor, text: eventTail(cursor, e) };
      });
      LogSubscription.deliverPage(read.subs, page, items, step);
    }
  }
}

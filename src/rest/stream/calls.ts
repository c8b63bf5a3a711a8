/**
 * `calls` subscriptions (docs/STREAM.md), two ways: a contract's call log (every call the
 * chain decided, read as a log by position like events), or a list of txids (their
 * current statuses, then every change). Both remember the calls they delivered as decided
 * in recent blocks, which a rollback sends back to `pending`.
 */
import type { CallStatusBody } from '../../records.js';
import type { StreamCall } from '../../messages/rest.js';
import { endOf, type Cursor, type Pos } from '@svc-node/protocol/cursor';
import { callTail, feedHead, rollbackLogMessage, splicedMessage, syncedTxidsMessage, type FeedHead } from '@svc-node/protocol/feed';
import type { Connection } from './connection.js';
import { RETAIN_PER_SUB } from './protocol.js';
import { BoundedMap } from '../../bounded.js';
import { LogSubscription, type LogItem, type StepPlan, type StepResult, type Subscription } from './subscription.js';

/** Decided calls per page for a contract's call log that is behind (whole blocks: a page may hold more). */
const CALLS_PAGE = 1000;

/** Calls a subscription delivered as decided in recent blocks, by txid (for rollback). */
class DecidedCalls {
  private readonly byTxid = new BoundedMap<string, { b: CallStatusBody; height: number }>(RETAIN_PER_SUB);
  /** Whether the oldest were dropped at RETAIN_PER_SUB. */
  private cut = false;

  /** `height`: the block that decided it (a drop's too, which has no `block_height`). */
  add(b: CallStatusBody, height: number): void {
    if (this.byTxid.set(b.txid, { b, height })) this.cut = true;
  }

  /**
   * Sends the rollback of `fork` (everything after `cursor` retracted) with the txids
   * delivered as decided from the fork on, each then back to `pending`. Sent when there
   * were any, or `always`; false when nothing was sent.
   */
  rollback(sub: string, conn: Connection, head: FeedHead<'call'>, fork: number, cursor: string, always: boolean): boolean {
    const gone = [...this.byTxid.values()].filter((d) => d.height >= fork).map((d) => d.b);
    if (gone.length === 0 && !always) return false;
    const complete = !this.cut || [...this.byTxid.values()].some((d) => d.height < fork);
    conn.send(rollbackLogMessage(sub, fork, cursor, 'txids', gone.map((b) => b.txid), complete));
    for (const b of gone) {
      this.byTxid.delete(b.txid);
      const pending: CallStatusBody = { ...b, status: 'pending', block_height: null, tx_index: null, result: null, error: null, confirmations: null };
      conn.send(splicedMessage(head, callTail(pending)));
    }
    return true;
  }
}

interface CallItem extends LogItem<'call'> {
  body: CallStatusBody;
}

/** A contract's call log: decided calls, each with its status and a cursor. */
export class ContractCallsSubscription extends LogSubscription<'call', CallItem> {
  protected readonly retractedField = 'txids';
  private readonly decided = new DecidedCalls();

  constructor(conn: Connection, id: string, contract: string, after: Cursor | null, fromHeight: number | null, progress: boolean) {
    super(id, conn, 'call', contract, after, fromHeight, progress);
  }

  protected share(plan: StepPlan, after: Pos | null, fromHeight: number): void {
    plan.share(plan.callPages, this.readKey(this.contract, after), this, () => ({ contract_id: this.contract, after, from_height: fromHeight, limit: CALLS_PAGE, ...this.tagsField() }));
  }

  protected sent(item: CallItem): void {
    this.decided.add(item.body, item.pos[0]);
  }

  /** Its decided calls from the fork on go back to `pending`, and its call log is read again from the fork. */
  rollback(fork: number, step: StepResult): boolean {
    const resume = endOf(Math.max(0, fork - 1));
    const log = this.covered !== null && (this.readAfter()?.[0] ?? -1) >= fork;
    if (!this.decided.rollback(this.id, this.conn, this.head, fork, step.cursorOf(resume), log) || !log) return false;
    this.rewind(fork, resume);
    return true;
  }

  /** Each call-log page to the subscriptions that share its read. */
  static deliver(_subs: readonly Subscription[], step: StepResult): void {
    for (const read of step.plan.reads<ContractCallsSubscription>(step.plan.callPages)) {
      const page = step.answer.call_pages[read.index]!;
      const items = page.calls.map((c): CallItem => ({ pos: c.pos, body: c.body, text: callTail(c.body, step.cursorOf(c.pos)) }));
      LogSubscription.deliverPage(read.subs, page, items, step);
    }
  }
}

/** A list of txids: the current status of each the node knows, then every change. */
export class TxidCallsSubscription implements Subscription {
  private readonly head: FeedHead<'call'>;
  private readonly txids: Set<string>;
  /** Txids whose status the node did not know yet (asked again each step). */
  private readonly unknown: Set<string>;
  /** Contracts of the watched txids (their decisions are asked each step). */
  private readonly contracts = new Set<string>();
  /** Whether the first statuses were sent. */
  private started = false;
  private readonly decided = new DecidedCalls();

  constructor(
    readonly conn: Connection,
    readonly id: string,
    txids: string[],
  ) {
    this.head = feedHead('call', id);
    this.txids = new Set(txids);
    this.unknown = new Set(txids);
  }

  plan(plan: StepPlan): void {
    for (const t of this.unknown) plan.txids.add(t);
    if (!this.started) for (const t of this.txids) plan.txids.add(t);
    for (const cid of this.contracts) plan.callContracts.add(cid);
  }

  /** Its calls decided from the fork on go back to `pending`; the new branch's decisions come as call messages. */
  rollback(fork: number, step: StepResult): boolean {
    this.decided.rollback(this.id, this.conn, this.head, fork, step.cursorOf(endOf(Math.max(0, fork - 1))), false);
    return false;
  }

  /** It starts with the statuses of its first step (`deliver`). */
  start(): void {}

  behind(): boolean {
    return false;
  }

  /** First statuses, statuses the node learnt, then decisions of the step's new blocks. */
  static deliver(subs: readonly Subscription[], step: StepResult): void {
    const status = new Map<string, CallStatusBody>();
    let i = 0;
    for (const t of step.plan.txids) {
      const b = step.answer.txids[i++];
      if (b) status.set(t, b);
    }
    const decided = new Map(step.answer.calls.map((c) => [c.contract_id, c.calls]));
    for (const s of subs) if (s instanceof TxidCallsSubscription) s.deliverStatuses(status, decided, step);
  }

  private deliverStatuses(status: Map<string, CallStatusBody>, decided: Map<string, StreamCall[]>, step: StepResult): void {
    if (this.conn.closed || this.conn.subs.get(this.id) !== this) return;
    // Statuses as of this step for txids met the first time (or learnt since).
    const fresh = new Set<string>();
    for (const t of this.started ? this.unknown : this.txids) {
      const b = status.get(t);
      if (!b) continue;
      this.unknown.delete(t);
      this.contracts.add(b.contract_id);
      fresh.add(t);
      this.sendStatus(b);
    }
    if (!this.started) {
      this.started = true;
      this.conn.send(syncedTxidsMessage(this.id, step.head, [...this.unknown]));
    }
    // Decisions of this step's blocks (only for contracts whose call logs were read).
    for (const cid of this.contracts) {
      if (!step.plan.callContracts.has(cid)) continue;
      for (const { pos, body } of decided.get(cid) ?? []) {
        if (!this.txids.has(body.txid)) continue;
        if (fresh.has(body.txid)) continue; // its status above already says it
        this.sendStatus(body, pos[0]);
      }
    }
  }

  /** `height`: the block that decided it, when known (a status read alone does not say where a drop was decided). */
  private sendStatus(b: CallStatusBody, height?: number): void {
    this.conn.send(splicedMessage(this.head, callTail(b)));
    const at = height ?? b.block_height;
    if (at !== null && b.status !== 'pending') this.decided.add(b, at);
  }
}

/**
 * `blocks` subscriptions (docs/STREAM.md): every block the node applied and stored, from a
 * height or from the head. Behind the feed they read pages of stored blocks (shared by
 * subscriptions at the same height); at the head they get each step's new blocks.
 */
import type { StreamBlock } from '../../messages.js';
import { blockMessage, rollbackBlocksMessage, syncedBlocksMessage } from '@svc-node/protocol/feed';
import type { Connection } from './connection.js';
import type { SubscribeRequest } from './protocol.js';
import type { StepPlan, StepResult, Subscription } from './subscription.js';

/** Blocks per page for a block subscription that is behind. */
const BLOCKS_PAGE = 500;

export class BlocksSubscription implements Subscription {
  readonly id: string;
  /** Next height to deliver; null: start at the head. */
  private next: number | null;
  private synced = false;

  constructor(
    readonly conn: Connection,
    r: Extract<SubscribeRequest, { kind: 'blocks' }>,
  ) {
    this.id = r.id;
    this.next = r.from_height;
  }

  plan(plan: StepPlan): void {
    const from = this.next;
    if (from === null || plan.head === null || from > plan.head) return; // at the head: new blocks come with the step
    if (!this.synced && this.conn.paused()) return;
    plan.share(plan.blockPages, from, this, () => ({ from_height: from, limit: BLOCKS_PAGE }));
  }

  rollback(fork: number): boolean {
    if (this.next === null || this.next <= fork) return false;
    this.conn.send(rollbackBlocksMessage(this.id, fork, this.next - 1));
    this.next = fork;
    this.synced = false;
    return true;
  }

  start(step: StepResult): void {
    if (this.next !== null) return;
    this.next = step.to + 1;
    this.synced = true;
    this.conn.send(syncedBlocksMessage(this.id, step.to));
  }

  behind(head: number): boolean {
    return this.next !== null && this.next <= head && (this.synced || !this.conn.paused());
  }

  /** Pages to the subscriptions behind, then this step's new blocks to those at the head. */
  static deliver(subs: readonly Subscription[], step: StepResult): void {
    for (const read of step.plan.reads<BlocksSubscription>(step.plan.blockPages)) {
      const page = step.answer.block_pages[read.index]!;
      // A short page reached `to` (heights below the anchor have no block); a full one did not.
      const through = page.length < BLOCKS_PAGE ? step.to : page[page.length - 1]!.height;
      for (const s of read.subs) if (!step.rolledBack.has(s)) s.deliverBlocks(page, through, step);
    }
    const fresh = step.answer.blocks;
    if (fresh.length === 0) return;
    for (const s of subs) if (s instanceof BlocksSubscription && !step.rolledBack.has(s) && s.next !== null && s.next >= fresh[0]!.height) s.deliverBlocks(fresh, step.to, step);
  }

  /** Delivers `blocks`, every stored block up to `through` from the subscription's next height. */
  private deliverBlocks(blocks: StreamBlock[], through: number, step: StepResult): void {
    if (this.conn.closed || this.conn.subs.get(this.id) !== this) return;
    for (const b of blocks) {
      if (b.height < this.next!) continue;
      if (!this.conn.send(blockMessage(this.id, b))) return;
      this.next = b.height + 1;
    }
    this.next = Math.max(this.next!, through + 1);
    if (!this.synced && this.next > (step.head ?? through)) {
      this.synced = true;
      this.conn.send(syncedBlocksMessage(this.id, this.next - 1));
    }
  }
}

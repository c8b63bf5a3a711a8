/**
 * The writer's half of the live feed (src/rest/stream/): one step reads, from one state,
 * which of the feed's delivered blocks are still on the chain, the durable blocks after
 * them, event pages, call decisions of those blocks and call statuses.
 *
 * Durability: the state version the REST front follows is announced when a block's root
 * is set, which is before the block's batch is durable (block writes are pipelined; the
 * chain update waits for them at its end). A step is a `writer.serial` job, so it runs
 * between two writer jobs, after the chain update (or replay) that applied the blocks has
 * flushed them; and every disk read waits for the writes handed over before it. So a step
 * never answers a block that a crash could still lose, and all its reads see one chain.
 */
import { statusBody } from './records.js';
import { contractCalls, stateRoots } from './store/index.js';
import type { Writer } from './writer.js';
import type { CallStatusBody, StreamBlock, StreamStep, StreamStepParams } from '../messages.js';

export class StreamQueries {
  constructor(private readonly writer: Writer) {}

  streamStep(p: StreamStepParams): Promise<StreamStep> {
    return this.writer.serial(async () => {
      const l = this.writer.ledger;
      const tip = l.tip?.height ?? null;
      const common = await this.common(p.known);
      const out: StreamStep = { common, to: null, blocks: [], events: [], block_pages: [], calls: [], txids: [] };
      if (tip === null) {
        out.events = p.events.map(() => ({ events: [], more: false }));
        out.block_pages = p.block_pages.map(() => []);
        out.calls = p.call_contracts.map((contract_id) => ({ contract_id, calls: [] }));
        out.txids = await Promise.all(p.txids.map(async (t) => this.status(t, tip)));
        return out;
      }
      // Without a common block the feed starts over: the last max_blocks blocks up to the tip.
      const to = common === null ? tip : Math.min(tip, common + p.max_blocks);
      out.to = to;
      out.blocks = await this.blocks(common === null ? Math.max(0, to - p.max_blocks + 1) : common + 1, to);
      out.events = await Promise.all(
        p.events.map(async (e) => {
          if (!l.contract(e.contract_id)) return { events: [], more: false, unknown: true as const };
          if (e.after !== null && e.after[0] > to) return { events: [], more: false };
          const rows = await l.events(e.contract_id, e.from_height, to, e.after, e.limit + 1, e.event_name);
          const page = rows.slice(0, e.limit);
          return {
            events: page.map((r) => ({ name: r.name, params: r.params, txid: r.txid, block_height: r.block_height, tx_index: r.tx_index, log_index: r.log_index })),
            more: rows.length > e.limit,
          };
        }),
      );
      out.block_pages = await Promise.all(p.block_pages.map((b) => (b.from_height > to ? [] : this.blocks(b.from_height, to, b.limit))));
      const from = common === null ? to + 1 : common + 1;
      out.calls = await Promise.all(p.call_contracts.map(async (contract_id) => ({ contract_id, calls: from > to ? [] : await this.decided(contract_id, from, to, tip) })));
      out.txids = await Promise.all(p.txids.map(async (t) => this.status(t, tip)));
      return out;
    });
  }

  /** The highest of `known` whose stored hash still matches; the newest is checked alone first (the usual answer). */
  private async common(known: StreamStepParams['known']): Promise<number | null> {
    if (known.length === 0) return null;
    const l = this.writer.ledger;
    const first = await l.stateRootAt(known[0]!.height);
    if (first?.block_hash === known[0]!.hash) return known[0]!.height;
    const rest = await l.db.getMany(known.slice(1).map((k) => stateRoots.key(k.height)));
    for (let i = 0; i < rest.length; i++) {
      const v = rest[i];
      if (v && stateRoots.decode(v).block_hash === known[i + 1]!.hash) return known[i + 1]!.height;
    }
    return null;
  }

  /** Stored blocks in [from, to], at most `limit` (heights below the anchor have none). */
  private async blocks(from: number, to: number, limit?: number): Promise<StreamBlock[]> {
    if (from > to) return [];
    const rows = await this.writer.ledger.db.rangeOf(stateRoots.heights(from, to), limit === undefined ? {} : { limit });
    return rows.map((r) => {
      const v = stateRoots.decode(r.value);
      return { height: v.height, block_hash: v.block_hash, state_root: v.state_root };
    });
  }

  /** Calls of a contract decided in blocks [from, to], from its call log (one record per block). */
  private async decided(contractId: string, from: number, to: number, tip: number): Promise<CallStatusBody[]> {
    const l = this.writer.ledger;
    const id = Buffer.from(contractId, 'hex');
    const rows = await l.db.rangeOf(contractCalls.inBlocks(id, from, to));
    const txids = rows.flatMap((r) => contractCalls.decode(r.value));
    const recs = await Promise.all(txids.map((t) => l.call(t)));
    return recs.flatMap((r) => (r ? [statusBody(r, tip)] : []));
  }

  private async status(txid: string, tip: number | null): Promise<CallStatusBody | null> {
    const r = await this.writer.ledger.call(txid);
    return r ? statusBody(r, tip) : null;
  }
}

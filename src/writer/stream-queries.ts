/**
 * The writer's half of the live feed (src/rest/stream/): one step reads, from one state,
 * which of the feed's delivered blocks are still on the chain, the durable blocks after
 * them, event pages, call-log pages, call decisions of those blocks and call statuses,
 * and the cursor locators (packages/protocol/src/cursor.ts) of everything it answers.
 *
 * Durability: the state version the REST front follows is announced when a block's root
 * is set, which is before the block's batch is durable (block writes are pipelined; the
 * chain update waits for them at its end). A step is a `writer.serial` job, so it runs
 * between two writer jobs, after the chain update (or replay) that applied the blocks has
 * flushed them; and every disk read waits for the writes handed over before it. So a step
 * never answers a block that a crash could still lose, and all its reads see one chain.
 */
import { statusBody } from '../records.js';
import { contractCalls, contractDrops, stateRoots } from './store/index.js';
import { blockTag, branchFork, locatorHeights, type Cursor, type Pos } from '@svc-node/protocol/cursor';
import type { Writer } from './writer.js';
import type { Ledger } from './ledger/index.js';
import type { CallStatusBody, StreamBlock, StreamCall, StreamStep, StreamStepParams } from '../messages.js';

/** Block hashes of the best chain at `heights` (absent: no block stored there). */
async function hashesAt(l: Ledger, heights: Iterable<number>): Promise<Map<number, string>> {
  const hs = [...new Set(heights)].filter((h) => h >= 0);
  const rows = await l.db.getMany(hs.map((h) => stateRoots.key(h)));
  const out = new Map<number, string>();
  rows.forEach((v, i) => {
    if (v) out.set(hs[i]!, stateRoots.decode(v).block_hash);
  });
  return out;
}

/** Cursor locators (hex of the concatenated tags) of blocks at `heights`, read from the chain as stored now. */
export async function locatorsAt(l: Ledger, heights: Iterable<number>): Promise<Record<number, string>> {
  const floor = l.anchor?.height ?? 0;
  const tip = l.tip?.height ?? -1;
  const wanted = [...new Set(heights)].filter((h) => h >= floor && h <= tip);
  const hashes = await hashesAt(l, wanted.flatMap((h) => locatorHeights(h, floor)));
  const out: Record<number, string> = {};
  for (const h of wanted) {
    let hex = '';
    for (const a of locatorHeights(h, floor)) {
      const hash = hashes.get(a);
      if (hash === undefined) break;
      hex += blockTag(hash).toString('hex');
    }
    out[h] = hex;
  }
  return out;
}

/**
 * The fork height a cursor must roll back to when its block left the chain, else null
 * (on the chain, a version 1 cursor, or above the tip: not checkable yet).
 */
export async function cursorFork(l: Ledger, pos: Pos, tags: readonly string[] | undefined): Promise<number | null> {
  if (!tags || tags.length === 0 || l.tip === null || pos[0] > l.tip.height) return null;
  const c: Cursor = { pos, tags: tags.map((t) => Buffer.from(t, 'hex')) };
  const floor = l.anchor?.height ?? 0;
  const hashes = await hashesAt(l, locatorHeights(pos[0], floor));
  return branchFork(c, (h) => hashes.get(h));
}

export class StreamQueries {
  constructor(private readonly writer: Writer) {}

  streamStep(p: StreamStepParams): Promise<StreamStep> {
    return this.writer.serial(async () => {
      const l = this.writer.ledger;
      const tip = l.tip?.height ?? null;
      const common = await this.common(p.known);
      const missing = p.contracts.filter((c) => !l.contract(c));
      const out: StreamStep = { common, to: null, tip, blocks: [], events: [], call_pages: [], block_pages: [], calls: [], txids: [], missing, locators: {} };
      if (tip === null) {
        out.events = p.events.map(() => ({ events: [], more: false }));
        out.call_pages = p.call_pages.map(() => ({ calls: [], more: false }));
        out.block_pages = p.block_pages.map(() => []);
        out.calls = p.call_contracts.map((contract_id) => ({ contract_id, calls: [] }));
        out.txids = await Promise.all(p.txids.map(async (t) => this.status(t, tip)));
        return out;
      }
      // Without a common block the feed starts over: the last max_blocks blocks up to the tip.
      const to = common === null ? tip : Math.min(tip, common + p.max_blocks);
      out.to = to;
      const located = new Set<number>([to]);
      if (common !== null) located.add(common);
      out.blocks = await this.blocks(common === null ? Math.max(0, to - p.max_blocks + 1) : common + 1, to);
      out.events = await Promise.all(
        p.events.map(async (e) => {
          if (!l.contract(e.contract_id)) return { events: [], more: false, unknown: true as const };
          if (e.after !== null) {
            const fork = await cursorFork(l, e.after, e.tags);
            if (fork !== null) {
              located.add(fork - 1);
              return { events: [], more: false, fork };
            }
          }
          if (e.after !== null && e.after[0] > to) return { events: [], more: false };
          const rows = await l.events(e.contract_id, e.from_height, to, e.after, e.limit + 1, e.event_name);
          const page = rows.slice(0, e.limit);
          for (const r of page) located.add(r.block_height);
          return {
            events: page.map((r) => ({ name: r.name, params: r.params, txid: r.txid, block_height: r.block_height, tx_index: r.tx_index, log_index: r.log_index })),
            more: rows.length > e.limit,
          };
        }),
      );
      out.call_pages = await Promise.all(
        p.call_pages.map(async (c) => {
          if (!l.contract(c.contract_id)) return { calls: [], more: false, unknown: true as const };
          if (c.after !== null) {
            const fork = await cursorFork(l, c.after, c.tags);
            if (fork !== null) {
              located.add(fork - 1);
              return { calls: [], more: false, fork };
            }
          }
          const from = Math.max(c.from_height, c.after ? c.after[0] : 0);
          if (from > to) return { calls: [], more: false };
          const page = await this.callPage(c.contract_id, from, to, c.after, c.limit, tip);
          for (const x of page.calls) located.add(x.pos[0]);
          return page;
        }),
      );
      out.block_pages = await Promise.all(p.block_pages.map((b) => (b.from_height > to ? [] : this.blocks(b.from_height, to, b.limit))));
      const from = common === null ? to + 1 : common + 1;
      out.calls = await Promise.all(p.call_contracts.map(async (contract_id) => ({ contract_id, calls: from > to ? [] : await this.decided(contract_id, from, to, tip) })));
      out.txids = await Promise.all(p.txids.map(async (t) => this.status(t, tip)));
      out.locators = await locatorsAt(l, located);
      return out;
    });
  }

  /** The highest of `known` whose stored hash still matches; the newest is checked alone first (the usual answer). */
  private async common(known: StreamStepParams['known']): Promise<number | null> {
    if (known.length === 0) return null;
    const l = this.writer.ledger;
    const first = await l.stateRootAt(known[0]!.height);
    if (first?.block_hash === known[0]!.hash) return known[0]!.height;
    const rest = await hashesAt(l, known.slice(1).map((k) => k.height));
    for (const k of known.slice(1)) if (rest.get(k.height) === k.hash) return k.height;
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

  /**
   * A contract's decided calls after `after` in blocks [from, to]: whole blocks of its call
   * log until at least `limit` calls (a block is never split, so a page ends at a block).
   */
  private async callPage(contractId: string, from: number, to: number, after: Pos | null, limit: number, tip: number): Promise<{ calls: StreamCall[]; more: boolean }> {
    const l = this.writer.ledger;
    const calls: StreamCall[] = [];
    let next = from;
    // Blocks of the log are read a few at a time: most blocks decide few calls of one contract.
    const BLOCKS_PER_READ = 64;
    while (next <= to && calls.length < limit) {
      const { blocks, through } = await this.logBlocks(contractId, next, to, BLOCKS_PER_READ);
      next = through + 1;
      for (const b of blocks) {
        const recs = await Promise.all(b.txids.map((t) => l.call(t)));
        recs.forEach((rec, i) => {
          const pos: Pos = [b.height, i, 0];
          if (!rec || (after && (pos[0] < after[0] || (pos[0] === after[0] && pos[1] <= after[1])))) return;
          calls.push({ pos, body: statusBody(rec, tip) });
        });
        if (calls.length >= limit) {
          next = b.height + 1;
          break;
        }
      }
    }
    if (calls.length < limit) return { calls, more: false };
    // Full: more only if another block of the log follows before `to`.
    const rest = next > to ? { blocks: [] } : await this.logBlocks(contractId, next, to, 1);
    return { calls, more: rest.blocks.length > 0 };
  }

  /**
   * A contract's call log in blocks [from, to], block by block: the calls each block decided
   * with a position (tx_index order), then those it dropped (txid order; they have no
   * position). At most `blocks` blocks of positioned calls are read at once (all without it): the answer is
   * complete through `through` (the drops of a block without positioned calls included).
   */
  private async logBlocks(contractId: string, from: number, to: number, blocks?: number): Promise<{ blocks: { height: number; txids: string[] }[]; through: number }> {
    const db = this.writer.ledger.db;
    const id = Buffer.from(contractId, 'hex');
    const rows = await db.rangeOf(contractCalls.inBlocks(id, from, to), blocks === undefined ? {} : { limit: blocks });
    const through = blocks !== undefined && rows.length === blocks ? contractCalls.heightOf(rows[rows.length - 1]!.key) : to;
    const byHeight = new Map<number, string[]>();
    for (const r of rows) byHeight.set(contractCalls.heightOf(r.key), contractCalls.decode(r.value));
    for (const r of await db.rangeOf(contractDrops.inBlocks(id, from, through))) {
      const h = contractDrops.heightOf(r.key);
      let txids = byHeight.get(h);
      if (!txids) byHeight.set(h, (txids = []));
      txids.push(contractDrops.txidOf(r.key));
    }
    return { blocks: [...byHeight].sort((a, b) => a[0] - b[0]).map(([height, txids]) => ({ height, txids })), through };
  }

  /** Calls of a contract decided in blocks [from, to], with their place in the call log. */
  private async decided(contractId: string, from: number, to: number, tip: number): Promise<StreamCall[]> {
    const l = this.writer.ledger;
    const { blocks } = await this.logBlocks(contractId, from, to);
    const out: StreamCall[] = [];
    for (const b of blocks) {
      const recs = await Promise.all(b.txids.map((t) => l.call(t)));
      recs.forEach((r, i) => {
        if (r) out.push({ pos: [b.height, i, 0], body: statusBody(r, tip) });
      });
    }
    return out;
  }

  private async status(txid: string, tip: number | null): Promise<CallStatusBody | null> {
    const r = await this.writer.ledger.call(txid);
    return r ? statusBody(r, tip) : null;
  }
}

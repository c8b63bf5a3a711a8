/**
 * Test kit of the PostgreSQL sink: runs the sink (in-process or as the `svc sink postgres`
 * process) and compares its tables with what the node serves.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PostgresSink, type SinkOptions } from '../../src/sink/sink.js';
import type { PgServer } from '../helpers/postgres.js';
import { repoRoot } from '../helpers/paths.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

export const TOKEN = 'sink-test-token';

/** A sink in this process; `lines` collects its log, `commits` wakes waiters. */
export class InProcessSink {
  readonly lines: string[] = [];
  through = -1;
  private readonly stop = new AbortController();
  private waiters: (() => void)[] = [];
  readonly done: Promise<unknown>;

  constructor(opts: Omit<SinkOptions, 'log' | 'signal' | 'onCommit'>) {
    const sink = new PostgresSink({
      ...opts,
      log: (l) => {
        this.lines.push(l);
        this.wake();
      },
      signal: this.stop.signal,
      onCommit: (t) => {
        this.through = t;
        this.wake();
      },
    });
    this.done = sink.run().then(
      () => null,
      (e) => e,
    );
    void this.done.then(() => this.wake());
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits for `cond` (checked after each log line or commit, at least every 500 ms). */
  async until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await cond())) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; sink log:\n${this.lines.slice(-10).join('\n')}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.done;
  }
}

/** `svc sink postgres ...` as its own process (for kill -9). */
export function spawnSink(args: string[]): ChildProcess & { out: string[] } {
  const p = spawn(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'sink', 'postgres', ...args], { stdio: ['ignore', 'pipe', 'pipe'] }) as ChildProcess & { out: string[] };
  p.out = [];
  p.stdout!.on('data', (d: Buffer) => p.out.push(...d.toString().split('\n').filter(Boolean)));
  p.stderr!.on('data', (d: Buffer) => p.out.push(...d.toString().split('\n').filter(Boolean)));
  return p;
}

/** Every event of a contract by GET /events, paged by cursor. */
export async function nodeEvents(restUrl: string, contractId: string): Promise<{ block_height: number; tx_index: number; log_index: number; name: string; params: unknown; txid: string }[]> {
  const out = [];
  let cursor: string | null = null;
  for (;;) {
    const r = (await (await fetch(`${restUrl}/events/${contractId}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`)).json()) as JsonAnswer;
    out.push(...r.events.map((e: JsonAnswer) => ({ block_height: e.block_height, tx_index: e.tx_index, log_index: e.log_index, name: e.name, params: e.params, txid: e.txid })));
    if (r.events.length < 1000) return out;
    cursor = r.next_cursor;
  }
}

/** The sink's events of a contract, in the node's order and shape. */
export async function sinkEvents(pg: PgServer, contractId: string, schema = 'svc'): Promise<Awaited<ReturnType<typeof nodeEvents>>> {
  const r = await pg.query(`SELECT block_height, tx_index, log_index, name, params, encode(txid, 'hex') AS txid FROM ${schema}.events WHERE contract_id = decode($1, 'hex') ORDER BY block_height, tx_index, log_index`, [contractId]);
  return r.rows.map((e) => ({ block_height: Number(e.block_height), tx_index: e.tx_index, log_index: e.log_index, name: e.name, params: e.params, txid: e.txid }));
}

/** The height the sink's database is complete through (blocks and every followed contract). */
export async function sinkThrough(pg: PgServer, schema = 'svc'): Promise<number> {
  const b = await pg.query(`SELECT value FROM ${schema}.sink_meta WHERE key = 'blocks_through'`);
  const c = await pg.query(`SELECT min(through_height) AS t FROM ${schema}.contracts`);
  const through = b.rows[0];
  assert.ok(through, 'the sink has recorded blocks_through');
  const least = c.rows[0]!.t; // an aggregate: one row
  return Math.min(Number(through.value), least === null ? Infinity : Number(least));
}

/**
 * The sink's tables equal what the node serves: every event (GET /events), every call the
 * node's call log holds with its status, every call row's status as GET /contract_call
 * answers it, and the blocks with their hashes and roots.
 */
export async function assertEqualToNode(pg: PgServer, restUrl: string, contracts: string[], schema = 'svc'): Promise<void> {
  for (const id of contracts) {
    const want = await nodeEvents(restUrl, id);
    const got = await sinkEvents(pg, id, schema);
    assert.equal(got.length, want.length, `events of ${id}: ${got.length} in the sink, ${want.length} on the node`);
    assert.deepEqual(got, want, `events of ${id}`);
    const log = (await (await fetch(`${restUrl}/calls/${id}?limit=500`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as JsonAnswer;
    const rows = (await pg.query(`SELECT encode(txid, 'hex') AS txid, status, block_height, tx_index, result, error_code, function, call_id::text AS call_id FROM ${schema}.calls WHERE contract_id = decode($1, 'hex')`, [id])).rows;
    const byTxid = new Map(rows.map((r) => [r.txid, r]));
    for (const c of log.calls) {
      const r = byTxid.get(c.txid);
      assert.ok(r, `call ${c.txid} (${c.status} at ${c.block_height}) is in the sink`);
    }
    for (const r of rows) {
      const s = (await (await fetch(`${restUrl}/contract_call/${r.txid}/status`)).json()) as JsonAnswer;
      assert.deepEqual(
        { status: r.status, block_height: r.block_height === null ? null : Number(r.block_height), tx_index: r.tx_index, result: r.result, error: r.error_code, function: r.function, call_id: r.call_id },
        { status: s.status, block_height: s.block_height, tx_index: s.tx_index, result: s.result, error: s.error?.code ?? null, function: s.function, call_id: String(s.call_id) },
        `call ${r.txid}`,
      );
    }
  }
  const blocks = (await pg.query(`SELECT height, encode(block_hash, 'hex') AS hash, encode(state_root, 'hex') AS root FROM ${schema}.blocks ORDER BY height DESC LIMIT 10`)).rows;
  for (const b of blocks) {
    const r = (await (await fetch(`${restUrl}/v2/state_root/${b.height}`)).json()) as JsonAnswer;
    assert.deepEqual([b.hash, b.root], [r.block_hash, r.state_root], `block ${b.height}`);
  }
}

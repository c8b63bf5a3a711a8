/**
 * Exactly once under kill -9: `svc sink postgres` (its own process) is killed with SIGKILL
 * while it catches up on 72,000 events in 36 blocks, every time with its committed height
 * (read from PostgreSQL) strictly between where that run started and the node's tip; once
 * inside the rollback of a reorg that happened mid-catch-up, and once inside the rollback
 * the restart after it makes; then, live at the tip, inside the commit of a new block,
 * between blocks (more blocks are mined while it is down), and inside the rollback of a
 * live reorg of depth 2. After each kill the tables hold exactly the node's history up to
 * the stored height and cursor (no partial block, nothing above it); each restart resumes
 * from there (its first line names the height). At the end the tables equal what the node
 * serves, and, row for row, the tables of a second sink (schema `ref`) that ran beside it
 * the whole time and was never killed.
 *
 * Why the kills land mid-work by construction, not by timing: the test holds a lock (a
 * gate) on the table `sink_meta`, whose `blocks_through` row every commit and rollback of
 * the sink updates. The sink's transactions stop there one at a time; the test sees one
 * waiting (pg_blocking_pids), reads the committed height, and either lets that one
 * transaction through (releases the lock and takes it again, which waits for the
 * transaction's end) or kills. A transaction holds at most TXN_ROWS rows (4 of these
 * blocks), so each step moves the height by a few blocks, and a target drawn from the seed
 * in the first 24 of the 36 blocks is reached before the tip. The seed is printed;
 * SINK_CRASH_SEED=N replays it. The kill points: just after a commit (between
 * transactions), inside a commit after its COPY (waiting at sink_meta), inside a commit
 * after its height update (waiting at its contracts row, held by a second gate), inside a
 * rollback. Polls of the database stand for every wait; nothing sleeps.
 *
 * The rollback during a catch-up also proves that no transaction starts once the sink
 * leaves the feed (`settle` in src/sink/sink.ts): the commit in flight when the rollback
 * arrives ends, and the next buffered blocks are not committed beside the rollback on the
 * same connection.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { startPostgres, type PgServer } from '../helpers/postgres.js';
import { ensureSchema } from '../../src/sink/schema.js';
import { TXN_ROWS } from '../../src/sink/sink.js';
import { blockTag, decodeCursor, endOf } from '@svc-node/protocol/cursor';
import { TOKEN, assertEqualToNode, nodeEvents, sinkEvents, sinkThrough, spawnSink } from './kit.js';

/** Emitter calls, 2,000 events each, one per block: 4 blocks fill a transaction (TXN_ROWS). */
const BURSTS = 36;
/** Kills during the catch-up before the reorg. */
const KILLS = 5;
/**
 * Blocks at the top never drawn as a target. A kill lands at most 3 blocks above its
 * target (a transaction holds 4 of these blocks), so the tip stays 2 transactions away,
 * and the reorg retracts at least 11 blocks: its new first block holds 9 or more calls,
 * larger than a transaction.
 */
const HEADROOM = 12;
/** Burst calls mined while the sink follows live (and one while it is down). */
const LIVE_CALLS = 4;
const POLL_MS = 5;
const DEADLINE_MS = 120_000;

type Kind = 'after a commit' | 'inside a commit, after its COPY' | 'inside a commit, after its height update';
const KINDS: Kind[] = ['after a commit', 'inside a commit, after its COPY', 'inside a commit, after its height update'];

let devnet: DevnetChainHandle;
let node: NodeProcess;
let pgs: PgServer;
let emitterId = '';
let svc: ReturnType<typeof client>;
let emitter: ReturnType<typeof compileFixture>;
/** Each burst call's txid and height, in chain order. */
let bursts: { txid: string; height: number }[] = [];

/** mulberry32: a small seeded generator, so a failing run replays exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A lock held in an open transaction, on one of two connections of its own: a step
 * queues the other connection's lock behind the transaction waiting at the gate before
 * the holder lets go, so that transaction passes alone and the sink's next one waits at
 * the gate again. (Taking the lock again on the same connection after letting go left a
 * window in which the sink's next transaction, already queued, could pass too.) A gate
 * that is stepped locks the table, not a row: table locks are granted in the order asked.
 * A row lock's waiter follows the row to the version the transaction ahead of it wrote,
 * and a transaction starting meanwhile could lock that version first (the sink's rollback
 * once passed a step that way, and the test waited for it at the gate until its deadline).
 */
class Gate {
  c: pg.Client;
  private spare: pg.Client;
  pid = 0;
  private sparePid = 0;
  private held = false;
  constructor(
    url: string,
    private readonly lockSql: string,
    private readonly params: unknown[] = [],
  ) {
    this.c = new pg.Client({ connectionString: url });
    this.spare = new pg.Client({ connectionString: url });
  }
  async open(): Promise<void> {
    await Promise.all([this.c.connect(), this.spare.connect()]);
    this.pid = (await this.c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    this.sparePid = (await this.spare.query('SELECT pg_backend_pid() AS p')).rows[0].p;
  }
  /** Both connections' backends (the test's own, not the sink's). */
  get pids(): number[] {
    return [this.pid, this.sparePid];
  }
  async take(): Promise<void> {
    await this.c.query('BEGIN');
    await this.c.query(this.lockSql, this.params);
    this.held = true;
  }
  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.c.query('COMMIT');
  }
  /** Lets the transaction waiting at the gate through, and only that one: the spare takes the lock as it ends. */
  async step(): Promise<void> {
    if (!this.held) return this.take();
    await this.spare.query('BEGIN');
    const locked = this.spare.query(this.lockSql, this.params);
    // Queued at the row before the holder lets go (a poll of the database, as every wait here).
    while ((await this.c.query('SELECT cardinality(pg_blocking_pids($1)) AS n', [this.sparePid])).rows[0].n === 0) {
      await new Promise<void>((r) => setTimeout(r, POLL_MS));
    }
    await this.c.query('COMMIT');
    await locked;
    [this.c, this.spare] = [this.spare, this.c];
    [this.pid, this.sparePid] = [this.sparePid, this.pid];
  }
  async end(): Promise<void> {
    await Promise.all([this.c.end().catch(() => undefined), this.spare.end().catch(() => undefined)]);
  }
}

type Sink = ReturnType<typeof spawnSink>;
interface Run {
  p: Sink;
  /** The stored height when the run started. */
  from: number;
  exited: Promise<void>;
}

before(async () => {
  [pgs, devnet] = await Promise.all([startPostgres(), startDevnet()]);
  node = await startDevnetNode(devnet, { env: { SVC_API_TOKEN: TOKEN } });
  const wallet = testWallet(24);
  await fund(devnet, wallet, BURSTS + LIVE_CALLS + 4);
  svc = client(node, devnet, wallet);
  emitter = compileFixture('emitter.svc');
  emitterId = (await svc.deploy(emitter)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  for (let i = 0; i < BURSTS; i++) {
    const txid = (await svc.call({ contractId: emitterId, function: 'burst', args: [], abi: emitter.abi })).anchor.txid;
    bursts.push({ txid, height: devnet.chain.mine(1, [txid]).height });
  }
  await waitSynced(node, devnet, 60_000);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
  await pgs?.stop();
});

test(`kill -9 mid-catch-up of ${BURSTS * 2000} events at ${KILLS} seeded points, inside the rollbacks of a reorg, and while following live blocks and a live reorg: each restart resumes from the stored cursor; equal to the node and to a never-killed sink`, async () => {
  const seed = Number(process.env['SINK_CRASH_SEED'] ?? Date.now() % 1_000_000);
  console.log(`sink crash seed ${seed} (replay: SINK_CRASH_SEED=${seed})`);
  const random = rng(seed);
  const args = ['--node', node.restUrl, '--database', pgs.url, '--contract', emitterId];
  const db = new pg.Client({ connectionString: pgs.url });
  await db.connect();
  // The schema exists before the first run so the gate's row does (the sink uses it as it is).
  await ensureSchema(db, 'svc');
  // EXCLUSIVE lets plain reads through (the test's own, the sink's at start) and stops
  // every write; the sink writes sink_meta only in its height updates.
  const meta = new Gate(pgs.url, 'LOCK TABLE svc.sink_meta IN EXCLUSIVE MODE');
  const contract = new Gate(pgs.url, `SELECT through_height FROM svc.contracts WHERE contract_id = decode($1, 'hex') FOR UPDATE`, [emitterId]);
  await meta.open();
  await contract.open();
  // The test's own connections (the gates, `db`, and the helper's behind sinkThrough).
  const ours = [...meta.pids, ...contract.pids, (await db.query('SELECT pg_backend_pid() AS p')).rows[0].p as number, (await pgs.query('SELECT pg_backend_pid() AS p')).rows[0].p as number];
  const through = (): Promise<number> => sinkThrough(pgs);
  const runs: Run[] = [];
  // The never-killed sink: its own schema, its own process, never gated (its connection is
  // named so the waits for a killed sink's backend leave it out).
  const refProcess = spawnSink(['--node', node.restUrl, '--database', `${pgs.url}?application_name=ref`, '--schema', 'ref', '--contract', emitterId]);
  const reference: Run = { p: refProcess, from: -1, exited: new Promise<void>((r) => refProcess.once('exit', () => r())) };
  runs.push(reference);

  /** Polls the database (or the sink's output) until `cond` gives a value; fails if the sink exits. */
  const until = async <T>(run: Run | null, what: string, cond: () => Promise<T | null | undefined | false>): Promise<T> => {
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      const v = await cond();
      if (v) return v;
      if (run) assert.equal(run.p.exitCode, null, `the sink exited while waiting for ${what}:\n${run.p.out.slice(-8).join('\n')}`);
      assert.ok(Date.now() < deadline, `timed out waiting for ${what}; sink output:\n${run?.p.out.slice(-8).join('\n') ?? ''}`);
      await new Promise<void>((r) => setTimeout(r, POLL_MS)); // the interval of a poll of the database
    }
  };
  /** The sink's statement waiting at `gate`. */
  const waitingAt = (run: Run, gate: Gate, what: string): Promise<{ pid: number; query: string }> =>
    until(run, what, async () => (await db.query('SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [gate.pid])).rows[0]);
  const line = (run: Run, re: RegExp): Promise<RegExpMatchArray> => until(run, `a line matching ${re}`, async () => run.p.out.map((l) => l.match(re)).find((m) => m));

  const start = async (gated: boolean): Promise<Run> => {
    const from = await through();
    if (gated) await meta.take();
    const p = spawnSink(args);
    const run = { p, from, exited: new Promise<void>((r) => p.once('exit', () => r())) };
    runs.push(run);
    return run;
  };
  /** SIGKILL while the committed height is frozen (a gate held, or the sink waiting at one); returns that height. */
  const kill = async (run: Run): Promise<number> => {
    const frozen = await through();
    run.p.kill('SIGKILL');
    await run.exited;
    // A backend waiting for a lock notices its client gone only once it has the lock; its
    // statement then ends and the next read finds the socket closed: the transaction aborts
    // (node-postgres sends a statement only after the previous one's answer, so no COMMIT
    // can be waiting behind it).
    await meta.release();
    await contract.release();
    await until(null, "the killed sink's backend to end", async () => (await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> 'ref' AND NOT (pid = ANY($1))`, [ours])).rows[0].n === 0);
    assert.equal(await through(), frozen, 'nothing committed after the kill');
    return frozen;
  };

  // The node's history before the reorg, and the heights and hashes of its blocks.
  const history = await nodeEvents(node.restUrl, emitterId);
  assert.equal(history.length, BURSTS * 2000);
  const hashAt = async (h: number): Promise<string> => ((await (await fetch(`${node.restUrl}/v2/state_root/${h}`)).json()) as { block_hash: string }).block_hash;
  const storedHash = async (h: number): Promise<string> => {
    const r = (await db.query(`SELECT encode(block_hash, 'hex') AS h FROM svc.blocks WHERE height = $1`, [h])).rows[0] as { h: string } | undefined;
    assert.ok(r, `block ${h} is stored`);
    return r.h;
  };
  /** The tables hold exactly `events` and the calls decided in `decided` up to height t, with the stored heights and cursor at t. */
  const assertStoredThrough = async (t: number, events: typeof history, decided: typeof bursts, tipHash: string): Promise<void> => {
    const m = (await db.query(`SELECT (SELECT value FROM svc.sink_meta WHERE key = 'blocks_through') AS b, through_height AS c, cursor FROM svc.contracts`)).rows[0];
    assert.deepEqual([Number(m.b), Number(m.c)], [t, t], 'blocks and the contract stored through the same height');
    const cursor = decodeCursor(m.cursor);
    assert.deepEqual(cursor.pos, endOf(t), 'the stored cursor is the end of that block');
    assert.deepEqual(cursor.tags[0], blockTag(tipHash), "the stored cursor names that block's branch");
    const blocks = (await db.query(`SELECT count(*)::int AS n, max(height)::int AS top, encode((SELECT block_hash FROM svc.blocks WHERE height = $1), 'hex') AS hash FROM svc.blocks`, [t])).rows[0];
    assert.deepEqual(blocks, { n: t + 1, top: t, hash: tipHash }, 'every block 0..t, no more');
    const got = await sinkEvents(pgs, emitterId);
    const want = events.filter((e) => e.block_height <= t);
    assert.equal(got.length, want.length, `events through ${t}: ${got.length} stored, ${want.length} on the node`);
    assert.deepEqual(got, want, `events through ${t}`);
    const calls = (await db.query(`SELECT encode(txid, 'hex') AS txid, status, block_height::int AS height FROM svc.calls WHERE block_height IS NOT NULL ORDER BY block_height, txid`)).rows;
    const wantCalls = decided.filter((b) => b.height <= t).map((b) => ({ txid: b.txid, status: 'executed', height: b.height }));
    assert.deepEqual(calls, wantCalls.sort((a, b) => a.height - b.height || (a.txid < b.txid ? -1 : 1)), `calls through ${t}`);
  };

  const tip = devnet.chain.height;
  const first = bursts[0]!.height;
  // Targets: one per run (KILLS, then the reorg run), each drawn in its own stretch of
  // [first, tip - HEADROOM), so every run has blocks left to commit before its kill.
  const span = tip - HEADROOM - first;
  const targets = Array.from({ length: KILLS + 1 }, (_, k) => first + Math.floor(((k + random()) * span) / (KILLS + 1)));
  const kinds: Kind[] = [...KINDS, ...Array.from({ length: KILLS - KINDS.length }, () => KINDS[Math.floor(random() * KINDS.length)]!)];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  const landed: string[] = [];
  try {
    // ---- KILLS kills during the catch-up
    for (let k = 0; k < KILLS; k++) {
      const run = await start(true);
      await line(run, new RegExp(`^svc sink: following 1 contract\\(s\\) from height ${run.from + 1}$`)); // resumes from the stored height
      const goal = Math.max(targets[k]!, run.from + 1);
      const kind = kinds[k]!;
      let t: number;
      for (;;) {
        await waitingAt(run, meta, 'a transaction at the gate');
        t = await through();
        if (t >= goal && kind !== 'after a commit') break;
        await meta.step();
        t = await through();
        if (t >= goal && kind === 'after a commit') break;
      }
      if (kind === 'inside a commit, after its height update') {
        await contract.take();
        await meta.release();
        const w = await waitingAt(run, contract, 'the transaction at the contracts row');
        assert.match(w.query, /UPDATE "svc"\.contracts SET through_height/);
      }
      assert.ok(t > run.from && t < tip, `the kill lands mid-catch-up: ${run.from} < ${t} < ${tip}`);
      assert.equal(await kill(run), t);
      landed.push(`${kind} at ${t} (run from ${run.from})`);
      await assertStoredThrough(t, history, bursts, await hashAt(t));
    }

    // ---- a reorg while the sink is mid-catch-up; the kill inside its rollback
    let run = await start(true);
    await line(run, new RegExp(`^svc sink: following 1 contract\\(s\\) from height ${run.from + 1}$`));
    const goal = Math.max(targets[KILLS]!, run.from + 1);
    let t: number;
    for (;;) {
      await waitingAt(run, meta, 'a transaction at the gate');
      t = await through();
      if (t >= goal) break;
      await meta.step();
    }
    assert.ok(t > run.from && t < tip, `the reorg comes mid-catch-up: ${run.from} < ${t} < ${tip}`);
    // The fork at or up to 2 blocks below the committed height: the rollback retracts committed rows.
    const fork = Math.max(first, t - Math.floor(random() * 3));
    const removed = bursts.filter((b) => b.height >= fork);
    // Left out of the new branch: one call the sink had committed as executed (it must turn
    // back to pending), and one mined again above.
    const pending = removed.splice(Math.floor(random() * (t - fork + 1)), 1)[0]!;
    const dropped = removed.splice(Math.floor(random() * removed.length), 1)[0]!;
    // The new branch: the other calls of the retracted blocks in its first block (larger than
    // a transaction: committed alone), then empty blocks, then one dropped call mined on top;
    // the other stays pending.
    devnet.chain.reorg({ depth: tip - fork + 1, blocks: tip - fork + 2, txids: removed.map((b) => b.txid) });
    const decidedAfter = [...bursts.filter((b) => b.height < fork), ...removed.map((b) => ({ txid: b.txid, height: fork })), { txid: dropped.txid, height: devnet.chain.mine(1, [dropped.txid]).height }];
    await waitSynced(node, devnet, 120_000);
    const newTip = devnet.chain.height;
    // Let the sink's transactions through until the one waiting at the gate is the rollback's.
    let w: { query: string };
    for (;;) {
      w = await waitingAt(run, meta, 'the rollback at the gate');
      if (w.query.includes('value::bigint >=')) break; // the rollback's height update (commit's has no lower bound)
      await meta.step();
    }
    t = await kill(run);
    assert.ok(t >= fork, `the committed height ${t} is at or above the fork ${fork}: the rollback had rows to retract`);
    assert.notEqual(await storedHash(fork), await hashAt(fork), 'the old branch is still stored');
    await assertStoredThrough(t, history, bursts, await storedHash(t));
    landed.push(`inside the rollback of a reorg to ${fork} at ${t} (run from ${run.from})`);

    // ---- the restart finds the fork from its stored blocks; the kill inside that rollback
    run = await start(true);
    await line(run, new RegExp(`^svc sink: stored block ${fork} is no longer on the node's chain; rolling back to it$`));
    w = await waitingAt(run, meta, 'the rollback at the gate');
    assert.match(w.query, /value::bigint >=/);
    assert.equal(await kill(run), t);
    await assertStoredThrough(t, history, bursts, await storedHash(t));
    landed.push(`inside the rollback at restart, at ${t}`);

    // ---- catch up to the tip, then live: kills while the sink follows new blocks
    /** Calls decided on the node's chain, with their heights, as the tables must end. */
    const decided = [...decidedAfter];
    /** A burst call mined in a block of its own; returns that block's height. */
    const mineBurst = async (txids: string[] = []): Promise<number> => {
      const txid = (await svc.call({ contractId: emitterId, function: 'burst', args: [], abi: emitter.abi })).anchor.txid;
      const h = devnet.chain.mine(1, [...txids, txid]).height;
      decided.push(...[...txids, txid].map((x) => ({ txid: x, height: h })));
      await waitSynced(node, devnet, 60_000);
      return h;
    };
    /** Lets the sink's transactions through one at a time until the stored height is `h`. */
    const stepTo = async (r: Run, h: number): Promise<void> => {
      while ((await through()) < h) {
        await waitingAt(r, meta, `a transaction at the gate (to ${h})`);
        await meta.step();
      }
      assert.equal(await through(), h, `the sink stops at the tip ${h}`);
    };
    run = await start(true);
    await stepTo(run, newTip); // the rollback at restart, then the catch-up
    await line(run, new RegExp(`^svc sink: following 1 contract\\(s\\) from height ${fork}$`));
    // Live at the tip (every block stored, nothing waiting): a new block; the kill inside its commit.
    let live = await mineBurst();
    w = await waitingAt(run, meta, "the new block's commit at the gate");
    assert.doesNotMatch(w.query, /value::bigint >=/, 'a commit, not a rollback');
    assert.equal(await kill(run), newTip, 'the live block is not committed');
    await assertStoredThrough(newTip, await nodeEvents(node.restUrl, emitterId), decided, await hashAt(newTip));
    landed.push(`live, inside the commit of block ${live} at ${newTip}`);

    // The restart takes the block it lost; live again; a kill between blocks, then blocks mined while it is down.
    run = await start(true);
    await stepTo(run, live);
    await line(run, new RegExp(`^svc sink: following 1 contract\\(s\\) from height ${newTip + 1}$`));
    assert.equal(await kill(run), live);
    landed.push(`live, between blocks at ${live}`);
    const down = [await mineBurst(), await mineBurst()];
    await assertStoredThrough(live, await nodeEvents(node.restUrl, emitterId), decided, await hashAt(live));

    // Live again at the new tip; a reorg of depth 2 retracts both blocks the sink committed
    // live (one of their calls left out); the kill inside the live rollback.
    run = await start(true);
    await stepTo(run, down[1]!);
    await line(run, new RegExp(`^svc sink: following 1 contract\\(s\\) from height ${live + 1}$`));
    const liveTip = down[1]!;
    const historyBefore = await nodeEvents(node.restUrl, emitterId);
    const decidedBefore = [...decided];
    const [kept, left] = decided.splice(-2, 2);
    assert.ok(kept && left);
    devnet.chain.reorg({ depth: 2, blocks: 3, txids: [kept.txid] });
    decided.push({ txid: kept.txid, height: down[0]! });
    await waitSynced(node, devnet, 60_000);
    w = await waitingAt(run, meta, 'the live rollback at the gate');
    assert.match(w.query, /value::bigint >=/, 'the rollback, nothing committed before it');
    assert.equal(await kill(run), liveTip);
    assert.notEqual(await storedHash(down[0]!), await hashAt(down[0]!), 'the old branch is still stored');
    await assertStoredThrough(liveTip, historyBefore, decidedBefore, await storedHash(liveTip));
    landed.push(`live, inside the rollback of a reorg to ${down[0]} at ${liveTip}`);
    console.log(`kills: ${landed.join('; ')}; tip ${tip}, after the first reorg ${newTip}`);

    // ---- the last run, free: the rollback at restart, the new branch, a live block with
    // the call the reorg left out; then a clean stop.
    run = await start(false);
    await line(run, new RegExp(`^svc sink: stored block ${down[0]} is no longer on the node's chain; rolling back to it$`));
    await until(run, `the sink through ${devnet.chain.height}`, async () => (await through()) >= devnet.chain.height);
    live = await mineBurst([left.txid]);
    await until(run, `the sink through the live block ${live}`, async () => (await through()) >= live);
    run.p.kill('SIGTERM');
    await run.exited;
    assert.equal(run.p.exitCode, 0, 'SIGTERM ends it cleanly');
    await assertEqualToNode(pgs, node.restUrl, [emitterId]);
    await assertStoredThrough(live, await nodeEvents(node.restUrl, emitterId), decided, await hashAt(live));
    assert.deepEqual(
      (await db.query(`SELECT status, block_height FROM svc.calls WHERE txid = decode($1, 'hex')`, [pending.txid])).rows,
      [{ status: 'pending', block_height: null }],
      'the call the first reorg left out is pending again',
    );

    // ---- the same rows as the sink that was never killed
    await until(reference, `the never-killed sink through ${live}`, async () => (await sinkThrough(pgs, 'ref')) >= live);
    reference.p.kill('SIGTERM');
    await reference.exited;
    assert.equal(reference.p.exitCode, 0, 'the never-killed sink stops cleanly');
    for (const [table, cols] of [
      ['blocks', '*'],
      ['events', '*'],
      ['calls', '*'],
      ['contracts', 'contract_id, alias, name, abi, through_height, cursor'],
      ['sink_meta', '*'],
    ] as const) {
      const n = (await db.query(`SELECT count(*)::int AS n FROM svc.${table}`)).rows[0].n as number;
      const diff = (await db.query(`SELECT (SELECT count(*) FROM (SELECT ${cols} FROM svc.${table} EXCEPT ALL SELECT ${cols} FROM ref.${table}) a)::int AS extra, (SELECT count(*) FROM (SELECT ${cols} FROM ref.${table} EXCEPT ALL SELECT ${cols} FROM svc.${table}) b)::int AS missing`)).rows[0];
      assert.deepEqual(diff, { extra: 0, missing: 0 }, `svc.${table} (${n} rows) equals the never-killed sink's, row for row`);
    }
    // Every transaction held at most TXN_ROWS rows, or one block (xmin: the inserting transaction).
    const txns = (await db.query(`SELECT xmin::text, count(*)::int AS n, count(DISTINCT block_height)::int AS blocks FROM svc.events GROUP BY 1`)).rows;
    for (const x of txns) assert.ok(x.n <= TXN_ROWS || x.blocks === 1, `a transaction of ${x.n} events in ${x.blocks} blocks`);
    assert.ok(txns.some((x) => x.blocks === 1 && x.n > TXN_ROWS), 'the large block was committed alone');
  } finally {
    for (const r of runs) if (r.p.exitCode === null && r.p.signalCode === null) r.p.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
    await meta.end();
    await contract.end();
    await db.end();
  }
});

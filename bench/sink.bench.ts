/**
 * `svc sink postgres` (docs/INDEXING.md) against a real node on the devnet chain and a
 * real PostgreSQL (a throwaway cluster, test/helpers/postgres.ts), with references measured
 * in the same run:
 *
 * - catch-up: events per second the sink writes while catching up on EVENTS events (from
 *   its start to the database complete through the tip: connecting, making the schema,
 *   subscribing, reading the feed and committing), against the same rows written by COPY
 *   alone into the same table and indexes (one COPY in one transaction, the rows already
 *   encoded: what the database takes at best).
 * - write path: the same rows by multi-row INSERT (bind parameters, statements of 7,281
 *   rows), against COPY alone: why the sink writes events with COPY.
 * - the feed alone: the sink's catch-up against a plain reader of the same subscriptions
 *   (blocks, the contract's events and calls, from height 0, each message JSON-parsed,
 *   nothing written) until all three have passed the tip: what the node serves at best,
 *   a ceiling of the sink's catch-up as real as COPY's.
 * - delay: from a block durable on the node (its "block applied" log line, written once the
 *   block's write finished; 1 ms resolution) to its rows committed by the sink, against the
 *   feed's own latency: the same block's event reaching a plain feed subscriber.
 *
 * Rounds alternate reference and subject so machine noise hits both alike. The load average
 * at the start is in each figure's notes.
 */
import { loadavg } from 'node:os';
import WebSocket from 'ws';
import { figure, stat, type Figure } from './harness.js';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../test/helpers/devnet-node.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { PostgresSink, TXN_ROWS } from '../src/sink/sink.js';
import { copyRows, insertRows } from '../src/sink/copy.js';

/** Emitter calls (2,000 events each, one block each) of the catch-up: 6 sink transactions (TXN_ROWS). */
const CALLS = 30;
const EVENTS = CALLS * 2000;
const ROUNDS = 3;
/** Blocks of one event each for the delay: enough for a median that one slow block does not move. */
const LATENCY_ROUNDS = 9;

export default async function sinkBench(): Promise<Figure[]> {
  const load = loadavg()[0]!.toFixed(1);
  const [pg, devnet] = await Promise.all([startPostgres(), startDevnet()]);
  const node = await startDevnetNode(devnet);
  const figures: Figure[] = [];
  try {
    const wallet = testWallet(31);
    await fund(devnet, wallet, CALLS + LATENCY_ROUNDS + 4);
    const svc = client(node, devnet, wallet);
    const emitter = compileFixture('emitter.svc');
    const counter = compileFixture('counter.svc');
    const emitterId = (await svc.deploy(emitter)).contractId;
    const counterId = (await svc.deploy(counter)).contractId;
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    for (let i = 0; i < CALLS; i++) {
      const t = (await svc.call({ contractId: emitterId, function: 'burst', args: [], abi: emitter.abi })).anchor.txid;
      devnet.chain.mine(1, [t]);
    }
    await waitSynced(node, devnet);
    const tip = devnet.chain.height;

    /** Start -> first event rows committed (connect, schema, subscribe, first pages), per catch-up. */
    const startupMs: number[] = [];
    /** One catch-up into a fresh schema; events per second from start to complete through the tip. */
    const catchUp = async (schema: string): Promise<number> => {
      const stop = new AbortController();
      let resolveDone: () => void = () => undefined;
      const done = new Promise<void>((r) => (resolveDone = r));
      const t0 = performance.now();
      let first = 0;
      const sink = new PostgresSink({
        nodeUrl: node.restUrl, databaseUrl: pg.url, schema, contracts: [{ alias: null, id: emitterId }], log: () => undefined, signal: stop.signal,
        onCommit: (through, rows) => {
          if (rows > 0 && first === 0) first = performance.now() - t0;
          if (through >= tip) resolveDone();
        },
      });
      const running = sink.run();
      await done;
      const s = (performance.now() - t0) / 1000;
      stop.abort();
      await running;
      const n = (await pg.query(`SELECT count(*)::int AS n FROM ${schema}.events`)).rows[0]!.n; // count(*): one row
      if (n !== EVENTS) throw new Error(`the sink wrote ${n} events, not ${EVENTS}`);
      startupMs.push(first);
      return EVENTS / s;
    };

    /** A plain reader of the sink's subscriptions from height 0; events per second until all three pass the tip. */
    const feedAlone = async (): Promise<number> => {
      const t0 = performance.now();
      const ws = new WebSocket(`${node.restUrl.replace(/^http/, 'ws')}/v2/stream`, { perMessageDeflate: false });
      await new Promise<void>((r) => ws.once('open', () => r()));
      const progress = new Map<string, number>([['b', -1], ['e', -1], ['c', -1]]);
      let events = 0;
      await new Promise<void>((resolve) => {
        ws.on('message', (d) => {
          const m = JSON.parse(String(d)) as Record<string, unknown>;
          if (m['type'] === 'event') events++;
          if ((m['type'] === 'block' || m['type'] === 'progress' || m['type'] === 'synced') && typeof m['height'] === 'number') progress.set(m['sub'] as string, Math.max(progress.get(m['sub'] as string)!, m['height']));
          if (Math.min(...progress.values()) >= tip) resolve();
        });
        ws.send(JSON.stringify({ type: 'subscribe', id: 'b', kind: 'blocks', from_height: 0 }));
        for (const kind of ['events', 'calls']) ws.send(JSON.stringify({ type: 'subscribe', id: kind[0], kind, contract_id: emitterId, progress: true, from_height: 0 }));
      });
      const s = (performance.now() - t0) / 1000;
      ws.terminate();
      if (events !== EVENTS) throw new Error(`the feed sent ${events} events, not ${EVENTS}`);
      return EVENTS / s;
    };

    /** The rows the sink wrote, as COPY text fields and as INSERT values, for the references. */
    await catchUp('warm');
    const rows = (await pg.query(`SELECT encode(contract_id, 'hex') AS c, block_height, tx_index, log_index, name, params::text AS p, param_values::text AS v, encode(txid, 'hex') AS t, cursor FROM warm.events`)).rows;
    const copyFields = rows.map((r) => [`\\x${r.c}`, String(r.block_height), String(r.tx_index), String(r.log_index), r.name, r.p, r.v, `\\x${r.t}`, r.cursor]);
    const insertValues = rows.map((r) => [Buffer.from(r.c, 'hex'), r.block_height, r.tx_index, r.log_index, r.name, r.p, r.v, Buffer.from(r.t, 'hex'), r.cursor]);
    const COLS = ['contract_id', 'block_height', 'tx_index', 'log_index', 'name', 'params', 'param_values', 'txid', 'cursor'];
    const db = new (await import('pg')).default.Client({ connectionString: pg.url });
    await db.connect();
    /** The same rows into an empty copy of the sink's events table (same indexes), in one transaction. */
    const reference = async (how: 'copy' | 'insert', k: number): Promise<number> => {
      const table = `ref.events_${how}_${k}`;
      await db.query('CREATE SCHEMA IF NOT EXISTS ref');
      await db.query(`CREATE TABLE ${table} (LIKE warm.events INCLUDING ALL)`);
      const t0 = performance.now();
      await db.query('BEGIN');
      if (how === 'copy') await copyRows(db, table, COLS, copyFields);
      else await insertRows(db, table, COLS, insertValues);
      await db.query('COMMIT');
      return rows.length / ((performance.now() - t0) / 1000);
    };

    const sinkRate: number[] = [];
    const copyRate: number[] = [];
    const insertRate: number[] = [];
    const feedRate: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      copyRate.push(await reference('copy', r));
      feedRate.push(await feedAlone());
      sinkRate.push(await catchUp(`run${r}`));
      insertRate.push(await reference('insert', r));
    }
    await db.end();

    // ---- delay: block durable -> rows committed (sink) / event received (feed)
    const stop = new AbortController();
    const commits: { through: number; at: number }[] = [];
    let wake: (() => void) | null = null;
    const sink = new PostgresSink({
      nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'live', contracts: [{ alias: null, id: counterId }], log: () => undefined, signal: stop.signal,
      onCommit: (through) => {
        commits.push({ through, at: Date.now() });
        wake?.();
      },
    });
    const running = sink.run();
    const committed = async (h: number): Promise<number> => {
      for (;;) {
        const c = commits.find((x) => x.through >= h);
        if (c) return c.at;
        await new Promise<void>((r) => (wake = r));
      }
    };
    await committed(devnet.chain.height);
    const feed = new WebSocket(`${node.restUrl.replace(/^http/, 'ws')}/v2/stream`, { perMessageDeflate: false });
    const arrivals = new Map<number, number>();
    let feedWake: (() => void) | null = null;
    feed.on('message', (d) => {
      const m = JSON.parse(String(d)) as Record<string, unknown>;
      if (m['type'] === 'event') arrivals.set(m['block_height'] as number, Date.now());
      if (m['type'] === 'synced') arrivals.set(-1, Date.now());
      feedWake?.();
    });
    await new Promise<void>((r) => feed.once('open', () => r()));
    feed.send(JSON.stringify({ type: 'subscribe', id: 'e', kind: 'events', contract_id: counterId }));
    const arrived = async (h: number): Promise<number> => {
      while (!arrivals.has(h)) await new Promise<void>((r) => (feedWake = r));
      return arrivals.get(h)!;
    };
    await arrived(-1);
    const sinkDelay: number[] = [];
    const feedDelay: number[] = [];
    for (let r = 0; r < LATENCY_ROUNDS; r++) {
      const t = (await svc.call({ contractId: counterId, function: 'bump', args: ['u64:1'], abi: counter.abi })).anchor.txid;
      devnet.chain.mine(1, [t]);
      const h = devnet.chain.height;
      const [feedAt, sinkAt] = await Promise.all([arrived(h), committed(h)]);
      const line = await node.waitFor((l) => l.msg === 'block applied' && l['height'] === h, 30_000, 'block applied');
      const durable = Date.parse(String(line.ts));
      feedDelay.push(Math.max(1, feedAt - durable));
      sinkDelay.push(Math.max(1, sinkAt - durable));
    }
    feed.terminate();
    stop.abort();
    await running;

    figures.push(
      figure({
        name: `sink catch-up: events/s into PostgreSQL (${EVENTS} events in ${CALLS} blocks)`,
        unit: 'events/s',
        value: stat(sinkRate),
        ceiling: { name: 'the same rows by one COPY in one transaction', ...stat(copyRate) },
        minRatio: 0.5,
        target: '>= 0.5 of COPY alone',
        notes: `load ${load} at the start; from the sink's start (connect, schema, subscribe) to the database complete through the tip, in transactions of at most ${TXN_ROWS} rows; start to the first events committed: ${stat(startupMs).median.toFixed(0)} ms (${stat(startupMs).min.toFixed(0)}-${stat(startupMs).max.toFixed(0)})`,
      }),
      figure({
        name: `sink catch-up against the feed alone (${EVENTS} events in ${CALLS} blocks)`,
        unit: 'events/s',
        value: stat(sinkRate),
        ceiling: { name: "a plain reader of the same subscriptions (JSON-parsed, nothing written)", ...stat(feedRate) },
        target: 'stated (the sink cannot catch up faster than the node serves)',
        notes: `load ${load} at the start; the feed alone against COPY alone: ${(stat(feedRate).median / stat(copyRate).median).toFixed(2)}`,
      }),
      figure({
        name: `events by multi-row INSERT (${EVENTS} rows, statements of ${Math.floor(65535 / 9)})`,
        unit: 'rows/s',
        value: stat(insertRate),
        ceiling: { name: 'the same rows by one COPY in one transaction', ...stat(copyRate) },
        target: 'stated (the sink writes events with COPY)',
        notes: `load ${load} at the start; both into an empty copy of the events table with its indexes, in one transaction`,
      }),
      figure({
        name: 'sink delay: block durable on the node -> its rows committed',
        unit: 'ms',
        value: stat(sinkDelay),
        ceiling: { name: "the feed's own latency: block durable -> its event at a subscriber", ...stat(feedDelay) },
        maxRatio: 2,
        target: '<= 2x the feed',
        notes: `load ${load} at the start; lower is better; ratio = sink / feed; 1 ms timestamp resolution (each sample at least 1 ms)`,
      }),
    );
  } finally {
    await node.stop();
    await devnet.close();
    await pg.stop();
  }
  return figures;
}

/**
 * `svc sink postgres` against a real node on the devnet chain and a real PostgreSQL
 * (a throwaway cluster, test/helpers/postgres.ts): calls, events, typed views, reorgs of
 * depth 1 and 6 while following and while away; the database down at start and mid-stream;
 * a node restart; bad input (an unknown contract, a schema of another version). After each,
 * the tables equal what the node serves (GET /events, the call log and call statuses).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileExample, compileFixture, conflictingSpend, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPostgres, type PgServer } from '../helpers/postgres.js';
import { InProcessSink, TOKEN, assertEqualToNode, sinkThrough } from './kit.js';
import { SCHEMA_VERSION } from '../../src/sink/schema.js';
import { decodeCursor, endOf } from '@svc-node/protocol/cursor';
import pgLib from 'pg';
import { Transaction } from 'bitcoinjs-lib';
import { repoRoot } from '../helpers/paths.js';
import type { JsonAnswer } from '../helpers/json-answer.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let pg: PgServer;
let svc: SvcClient;
let counter: Artifact;
let kinds: Artifact;
let counterId = '';
let kindsId = '';
let nodeEnv: Record<string, string>;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-sink-node-'));
const wallet = testWallet(23);

async function bump(n: number): Promise<string> {
  return (await bumpCall(n)).txid;
}

/** A bump call: its txid, the outpoint its envelope names and its anchor's raw bytes. */
async function bumpCall(n: number): Promise<{ txid: string; outpoint: { txid: string; vout: number; value: number }; hex: string }> {
  const r = await svc.call({ contractId: counterId, function: 'bump', args: [`u64:${n}`], abi: counter.abi });
  const first = r.anchor.inputs[0]!;
  return { txid: r.anchor.txid, outpoint: { txid: first.txid, vout: first.vout, value: first.value }, hex: r.anchor.hex };
}

/** A call's row in a sink's schema (null: none). */
async function callRowOf(schema: string, txid: string): Promise<{ status: string; block_height: string | null; decided_height: string | null } | null> {
  return (await pg.query<{ status: string; block_height: string | null; decided_height: string | null }>(`SELECT status, block_height, decided_height FROM ${schema}.calls WHERE txid = decode($1, 'hex')`, [txid])).rows[0] ?? null;
}

async function nodeStatusOf(txid: string): Promise<{ status: string; block_height: number | null }> {
  return (await (await fetch(`${node.restUrl}/contract_call/${txid}/status`)).json()) as { status: string; block_height: number | null };
}

/** Waits until the sink is complete through the devnet's tip (the node synced first). */
async function caughtUp(sink: InProcessSink, schema = 'svc'): Promise<void> {
  await waitSynced(node, devnet);
  const tip = devnet.chain.height;
  await sink.until(async () => (await sinkThrough(pg, schema).catch(() => -1)) >= tip, `the sink through height ${tip}`);
}

before(async () => {
  [pg, devnet] = await Promise.all([startPostgres(), startDevnet()]);
  nodeEnv = { SVC_API_TOKEN: TOKEN, SVC_REST_ADDRESS: `127.0.0.1:${await freePort()}` };
  node = await startDevnetNode(devnet, { env: nodeEnv, dataDir });
  await fund(devnet, wallet, 40);
  svc = client(node, devnet, wallet);
  counter = compileFixture('counter.svc');
  kinds = compileFixture('kinds.svc');
  counterId = (await svc.deploy(counter)).contractId;
  kindsId = (await svc.deploy(kinds)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
  await pg?.stop();
});

test('events, calls and typed views; reorgs of depth 1 and 6 while following; tables equal the node', async () => {
  const sink = new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'svc', contracts: [{ alias: null, id: counterId }, { alias: 'k', id: kindsId }] });
  try {
    const t1 = await bump(1);
    const text = 'tab\there, newline\nhere, quote " and backslash \\ and \'';
    const t2 = (await svc.call({ contractId: kindsId, function: 'emit_all', args: ['u64:18446744073709551615', 'i64:-9223372036854775808', 'u128:340282366920938463463374607431768211455', 'bool:true', `string:${text}`, 'bytes:00ff10'], abi: kinds.abi })).anchor.txid;
    const failed = (await svc.call({ contractId: counterId, function: 'boom', args: ['u64:1'], abi: counter.abi })).anchor.txid;
    devnet.chain.mine(1, [t1, t2, failed]);
    await caughtUp(sink);
    await assertEqualToNode(pg, node.restUrl, [counterId, kindsId]);

    // Typed views, named alias_event, one exact column per parameter.
    const v = (await pg.query('SELECT * FROM svc.k_everything')).rows;
    assert.equal(v.length, 1);
    const only = v[0]!; // the length is checked just above
    assert.equal(only.a, '18446744073709551615');
    assert.equal(only.b, '-9223372036854775808');
    assert.equal(only.c, '340282366920938463463374607431768211455');
    assert.equal(only.d, true);
    assert.equal(only.e, text);
    assert.deepEqual(only.f, Buffer.from('00ff10', 'hex'));
    assert.equal(only.g.length, 32);
    assert.equal(only.txid.toString('hex'), t2);
    const types = (await pg.query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'svc' AND table_name = 'k_everything' ORDER BY ordinal_position`)).rows;
    assert.deepEqual(types.map((t) => `${t.column_name}:${t.data_type}`), ['block_height:bigint', 'tx_index:integer', 'log_index:integer', 'txid:bytea', 'a:numeric', 'b:numeric', 'c:numeric', 'd:boolean', 'e:text', 'f:bytea', 'g:bytea']);
    // A parameter named like a fixed column gets the suffix _param.
    assert.deepEqual((await pg.query('SELECT txid_param FROM svc.k_note')).rows, [{ txid_param: text }]);
    assert.equal((await pg.query('SELECT count(*)::int AS n FROM svc.counter_bumped')).rows[0]!.n, 1);
    const boom = (await pg.query(`SELECT status, error_code FROM svc.calls WHERE txid = decode($1, 'hex')`, [failed])).rows[0];
    assert.deepEqual(boom, { status: 'failed', error_code: 'revert' });

    for (const depth of [1, 6]) {
      const x = await bump(10 + depth);
      const y = await bump(20 + depth);
      devnet.chain.mine(1, [x, y]);
      if (depth > 1) devnet.chain.mine(depth - 1);
      await caughtUp(sink);
      const rollbacks = sink.lines.filter((l) => l.includes('rollback to height')).length;
      // The new branch: one more block than it replaces, the two calls in the other order.
      const fork = devnet.chain.height - depth + 1;
      devnet.chain.reorg({ depth, blocks: depth + 1, txids: [y, x] });
      await caughtUp(sink);
      await sink.until(() => sink.lines.filter((l) => l.includes('rollback to height')).length > rollbacks, 'a rollback');
      assert.ok(sink.lines.some((l) => l.includes(`rollback to height ${fork}`)), sink.lines.join('\n'));
      await assertEqualToNode(pg, node.restUrl, [counterId, kindsId]);
      const order = (await pg.query(`SELECT encode(txid, 'hex') AS t FROM svc.events WHERE block_height = $1 ORDER BY tx_index`, [fork])).rows.map((r) => r.t);
      assert.deepEqual(order, [y, x], 'the new branch in its order');
    }
  } finally {
    await sink.close();
  }
  assert.equal(await sink.done, null);
});

test('away during a reorg of depth 6: the restarted sink rolls back to the fork and ends equal', async () => {
  const run = (): InProcessSink => new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'away', contracts: [{ alias: null, id: counterId }] });
  let sink = run();
  const x = await bump(31);
  const y = await bump(32);
  devnet.chain.mine(1, [x, y]);
  devnet.chain.mine(5);
  await caughtUp(sink, 'away');
  await sink.close();
  const fork = devnet.chain.height - 5;
  devnet.chain.reorg({ depth: 6, blocks: 8, txids: [y] }); // x back to pending
  await waitSynced(node, devnet);
  sink = run();
  try {
    await caughtUp(sink, 'away');
    assert.ok(sink.lines.some((l) => l.includes(`rolling back to it`) || l.includes(`rollback to height ${fork}`)), sink.lines.join('\n'));
    await assertEqualToNode(pg, node.restUrl, [counterId], 'away');
    const xs = (await pg.query(`SELECT status, block_height FROM away.calls WHERE txid = decode($1, 'hex')`, [x])).rows[0];
    assert.deepEqual(xs, { status: 'pending', block_height: null }, 'a call the new branch left out is pending again');
  } finally {
    await sink.close();
  }
});

test('rows stored under state roots the node no longer publishes (it re-derived them: a new root version) are written again from the node\'s answers', async () => {
  const run = (): InProcessSink => new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'rederived', contracts: [{ alias: null, id: counterId }] });
  let sink = run();
  const x = await bump(41);
  devnet.chain.mine(1, [x]);
  devnet.chain.mine(2);
  await caughtUp(sink, 'rederived');
  await sink.close();
  // What a sink following an earlier release stored: the same blocks, other roots.
  await pg.query('UPDATE rederived.blocks SET state_root = sha256(state_root)');
  const stored = Number((await pg.query('SELECT min(height) AS h FROM rederived.blocks')).rows[0]!.h);
  devnet.chain.mine(1); // the restarted sink is caught up only past its check of the stored blocks
  sink = run();
  try {
    await caughtUp(sink, 'rederived');
    assert.ok(sink.lines.some((l) => l.includes(`stored blocks from ${stored} on hold state roots the node no longer publishes`)), sink.lines.join('\n'));
    await assertEqualToNode(pg, node.restUrl, [counterId], 'rederived');
    const rows = (await pg.query(`SELECT height, encode(state_root, 'hex') AS root FROM rederived.blocks ORDER BY height`)).rows as { height: string; root: string }[];
    assert.equal(Number(rows[0]!.height), stored, 'every block from the first one followed is stored again');
    for (const r of rows) assert.equal(r.root, ((await (await fetch(`${node.restUrl}/v2/state_root/${r.height}`)).json()) as JsonAnswer).state_root, `block ${r.height}`);
    assert.equal((await callRowOf('rederived', x))?.status, 'executed');
  } finally {
    await sink.close();
  }
});

test('the database down at start and mid-stream, and a node restart: retried with a clear line, nothing lost or doubled', async () => {
  await pg.stopServer();
  const sink = new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'faults', contracts: [{ alias: null, id: counterId }] });
  try {
    await sink.until(() => sink.lines.some((l) => /^svc sink: postgres unavailable \(.*\); retrying in /.test(l)), 'the unavailable line');
    await pg.start();
    await caughtUp(sink, 'faults');
    await assertEqualToNode(pg, node.restUrl, [counterId], 'faults');

    // Mid-stream: the server stops while blocks with events arrive, then comes back.
    await pg.stopServer();
    const before = sink.lines.length;
    for (let i = 0; i < 3; i++) {
      const t = await bump(40 + i);
      devnet.chain.mine(1, [t]);
    }
    await waitSynced(node, devnet);
    await sink.until(() => sink.lines.slice(before).some((l) => /retrying in/.test(l)), 'a retry line');
    await pg.start();
    await caughtUp(sink, 'faults');
    await assertEqualToNode(pg, node.restUrl, [counterId], 'faults');

    // The node restarts (same data and address): the feed closes, the sink resumes.
    await node.stop();
    node = await startDevnetNode(devnet, { env: nodeEnv, dataDir });
    const t2 = await bump(51);
    devnet.chain.mine(1, [t2]);
    await caughtUp(sink, 'faults');
    await assertEqualToNode(pg, node.restUrl, [counterId], 'faults');
    const dup = (await pg.query('SELECT count(*)::int AS n, count(DISTINCT (block_height, tx_index, log_index))::int AS d FROM faults.events')).rows[0]!; // an aggregate: one row
    assert.equal(dup.n, dup.d, 'no event twice');
  } finally {
    await sink.close();
  }
});

test('bad input: an unknown contract, a schema of another version, a foreign schema: one clear line each', async () => {
  const fail = async (opts: ConstructorParameters<typeof InProcessSink>[0]): Promise<Error> => {
    const sink = new InProcessSink(opts);
    const e = (await sink.done) as Error;
    assert.ok(e instanceof Error, 'the sink stops');
    assert.ok(!e.message.includes('\n'), 'one line');
    return e;
  };
  const ghost = 'ab'.repeat(32);
  const e1 = await fail({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'ghost', contracts: [{ alias: null, id: ghost }] });
  assert.match(e1.message, new RegExp(`the node holds no contract ${ghost}`));
  // Made, nothing committed yet: blocks_through is -1 (docs/INDEXING.md).
  assert.deepEqual((await pg.query(`SELECT value FROM ghost.sink_meta WHERE key = 'blocks_through'`)).rows, [{ value: '-1' }]);

  await pg.query('CREATE SCHEMA old');
  await pg.query('CREATE TABLE old.sink_meta (key text PRIMARY KEY, value text NOT NULL)');
  await pg.query(`INSERT INTO old.sink_meta VALUES ('schema_version', '0')`);
  const e2 = await fail({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'old', contracts: [{ alias: null, id: counterId }] });
  assert.match(e2.message, new RegExp(`schema old is at sink schema version 0, which this sink \\(version ${SCHEMA_VERSION}\\) cannot migrate: drop it \\(DROP SCHEMA old CASCADE\\)`));

  await pg.query('CREATE SCHEMA newer');
  await pg.query('CREATE TABLE newer.sink_meta (key text PRIMARY KEY, value text NOT NULL)');
  await pg.query(`INSERT INTO newer.sink_meta VALUES ('schema_version', '${SCHEMA_VERSION + 1}')`);
  const e3 = await fail({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'newer', contracts: [{ alias: null, id: counterId }] });
  assert.match(e3.message, /newer than this sink's/);

  await pg.query('CREATE SCHEMA theirs');
  await pg.query('CREATE TABLE theirs.orders (id int)');
  const e4 = await fail({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'theirs', contracts: [{ alias: null, id: counterId }] });
  assert.match(e4.message, /was not made by svc sink/);
  assert.equal((await pg.query('SELECT count(*)::int AS n FROM theirs.orders')).rows[0]!.n, 0, 'left alone');
});

test('dropped calls: executed then dropped by a reorg, never confirmed then dropped, undropped; --contract, --all and a sink built afterwards write them as the node answers', async () => {
  const opts = { nodeUrl: node.restUrl, databaseUrl: pg.url };
  const one = new InProcessSink({ ...opts, schema: 'drops', contracts: [{ alias: null, id: counterId }] });
  const all = new InProcessSink({ ...opts, schema: 'drops_all', contracts: 'all' });
  const schemas = ['drops', 'drops_all'];
  const sinks = [one, all];
  const caughtUpAll = async (): Promise<void> => {
    for (let i = 0; i < sinks.length; i++) await caughtUp(sinks[i]!, schemas[i]);
  };
  let fresh: InProcessSink | null = null;
  try {
    // Executed at h, then a reorg of depth 3 whose new branch confirms another spend of its outpoint.
    const a = await bumpCall(61);
    const h = devnet.chain.mine(1, [a.txid]).height;
    devnet.chain.mine(2);
    await caughtUpAll();
    for (const s of schemas) assert.equal((await callRowOf(s, a.txid))?.status, 'executed');
    devnet.chain.reorg({ depth: 3, blocks: 4, drop: [a.txid], txs: [conflictingSpend(wallet, a.outpoint)] });
    // Never confirmed: pending, then another transaction spending its outpoint confirms.
    const b = await bumpCall(62);
    const spendB = conflictingSpend(wallet, b.outpoint);
    const dropB = devnet.chain.reorg({ depth: 1, blocks: 2, txs: [spendB] }).height - 1;
    await waitSynced(node, devnet);
    assert.deepEqual(await nodeStatusOf(a.txid).then((s) => [s.status, s.block_height]), ['dropped', null]);
    assert.deepEqual(await nodeStatusOf(b.txid).then((s) => [s.status, s.block_height]), ['dropped', null]);
    await caughtUpAll();
    for (const s of schemas) {
      assert.deepEqual(await callRowOf(s, a.txid), { status: 'dropped', block_height: null, decided_height: String(h) }, `${s}: the executed call is dropped at the new branch's first block`);
      assert.deepEqual(await callRowOf(s, b.txid), { status: 'dropped', block_height: null, decided_height: String(dropB) }, `${s}: the pending call is dropped where its outpoint was spent`);
      await assertEqualToNode(pg, node.restUrl, [counterId], s);
    }
    // A sink built from scratch afterwards reads both from the node's call log.
    fresh = new InProcessSink({ ...opts, schema: 'drops_fresh', contracts: [{ alias: null, id: counterId }] });
    await caughtUp(fresh, 'drops_fresh');
    assert.equal((await callRowOf('drops_fresh', a.txid))?.status, 'dropped');
    assert.equal((await callRowOf('drops_fresh', b.txid))?.status, 'dropped');
    await assertEqualToNode(pg, node.restUrl, [counterId], 'drops_fresh');
    // contracts.cursor is the feed cursor at the end of block through_height (docs/INDEXING.md).
    const row = (await pg.query(`SELECT through_height, cursor FROM drops_fresh.contracts`)).rows[0];
    assert.ok(row, 'the contract is recorded');
    assert.deepEqual(decodeCursor(row.cursor).pos, endOf(Number(row.through_height)));
    schemas.push('drops_fresh');
    sinks.push(fresh);

    // A reorg that takes the spend back and confirms the call's own anchor instead: the
    // dropped row is taken back with its block and decided again on the new branch.
    const redo = devnet.chain.reorg({ depth: 2, blocks: 3, drop: [Transaction.fromHex(spendB).getId()], txs: [b.hex] });
    await waitSynced(node, devnet);
    assert.deepEqual(await nodeStatusOf(b.txid).then((s) => [s.status, s.block_height]), ['executed', redo.height - 2]);
    await caughtUpAll();
    for (const s of schemas) {
      assert.deepEqual(await callRowOf(s, b.txid), { status: 'executed', block_height: String(redo.height - 2), decided_height: String(redo.height - 2) }, s);
      await assertEqualToNode(pg, node.restUrl, [counterId], s);
    }

    // --all: a contract deployed while no block comes is followed within the documented 10 s.
    const lines = all.lines.length;
    const deployed = Date.now();
    const newId = (await svc.deploy(counter)).contractId;
    await all.until(() => all.lines.slice(lines).some((l) => l.includes(`following contract ${newId}`)), 'the new contract followed', 15_000);
    const took = Date.now() - deployed;
    assert.ok(took <= 10_000, `followed after ${took} ms`);
    devnet.chain.mine(1);
    await caughtUp(all, 'drops_all');
  } finally {
    for (const s of sinks) await s.close();
  }
  for (const s of sinks) assert.equal(await s.done, null);
});

test('after a PostgreSQL restart the retry line is the documented one', async () => {
  const sink = new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: pg.url, schema: 'restart', contracts: [{ alias: null, id: counterId }] });
  try {
    await caughtUp(sink, 'restart');
    const before = sink.lines.length;
    await pg.stopServer();
    await pg.start();
    const t = await bump(71);
    devnet.chain.mine(1, [t]);
    await caughtUp(sink, 'restart');
    const retries = sink.lines.slice(before).filter((l) => /retrying in/.test(l));
    assert.ok(retries.length > 0, 'the broken connection was retried');
    for (const l of retries) assert.match(l, /^svc sink: postgres unavailable \(.+\); retrying in /);
    await assertEqualToNode(pg, node.restUrl, [counterId], 'restart');
  } finally {
    await sink.close();
  }
});

test('every example query of docs/INDEXING.md runs as written against examples/token.svc', async () => {
  const token = compileExample('token.svc');
  const tokenId = (await svc.deploy(token)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const call = async (fn: string, args: string[], more: Partial<Parameters<SvcClient['call']>[0]> = {}): Promise<Awaited<ReturnType<SvcClient['call']>>> =>
    svc.call({ contractId: tokenId, function: fn, args, abi: token.abi, ...more });
  const mine = { address: wallet.address, value: 1_000 };
  const init = await call('init', ['u128:1000000', 'u64:1'], { pay: [mine] });
  devnet.chain.mine(1, [init.anchor.txid]);
  await waitSynced(node, devnet);
  const transfer = await call('transfer', ['u64:1', 'u128:250000', 'u64:2'], { pay: [mine, mine], outpoint: { txid: init.anchor.txid, vout: 1 } });
  const failed = await call('transfer', ['u64:1', 'u128:5', 'u64:1'], { pay: [mine] }); // no tokens on what it spends
  devnet.chain.mine(1, [transfer.anchor.txid, failed.anchor.txid]);
  const doomed = await call('transfer', ['u64:1', 'u128:5', 'u64:1'], { pay: [mine] });
  const first = doomed.anchor.inputs[0]!;
  devnet.chain.reorg({ depth: 1, blocks: 2, txs: [conflictingSpend(wallet, { txid: first.txid, vout: first.vout, value: first.value })] });
  await waitSynced(node, devnet);

  // A database of its own: the queries name schema svc, which the other tests use.
  await pg.query('CREATE DATABASE docs');
  const url = pg.url.replace(/\/svc$/, '/docs');
  const sink = new InProcessSink({ nodeUrl: node.restUrl, databaseUrl: url, schema: 'svc', contracts: [{ alias: 'token', id: tokenId }] });
  const db = new pgLib.Client({ connectionString: url });
  try {
    await sink.until(async () => sink.through >= devnet.chain.height, 'the sink at the tip');
    await db.connect();
    const doc = readFileSync(`${repoRoot}/docs/INDEXING.md`, 'utf8');
    const section = doc.slice(doc.indexOf('## Example queries'), doc.indexOf('## How it stays exact'));
    const statements = [...section.matchAll(/```sql\n([\s\S]*?)```/g)]
      .flatMap((m) => m[1]!.split(/;\s*(?:\n|$)/))
      .map((q) => q.split('\n').filter((l) => !l.trim().startsWith('--')).join('\n').trim())
      .filter((q) => q.length > 0);
    assert.equal(statements.length, 7, statements.join('\n---\n'));
    const results: Record<string, JsonAnswer>[][] = [];
    for (const q of statements) results.push((await db.query(q).catch((e: Error) => assert.fail(`${q}\n: ${e.message}`))).rows);
    const [credits, moved, balances, failures, drops, bigCredits] = results;
    const op = (txid: string, vout: number): string => txid + vout.toString(16).padStart(8, '0');
    assert.deepEqual(credits!.map((r) => [r.outpoint, r.amount]), [[op(transfer.anchor.txid, 2), '750000'], [op(transfer.anchor.txid, 1), '250000'], [op(init.anchor.txid, 1), '1000000']]);
    assert.deepEqual(moved!.map((r) => [r.moved, r.debits]), [['1000000', '1']]);
    assert.deepEqual(balances!.map((r) => [r.outpoint, r.balance]), [[op(transfer.anchor.txid, 2), '750000'], [op(transfer.anchor.txid, 1), '250000']]);
    assert.deepEqual(failures!.map((r) => [r.txid, r.error_code, r.error_message]), [[failed.anchor.txid, 'revert', 'no tokens on the spent outpoints']]);
    assert.deepEqual(drops!.map((r) => [r.txid, r.function, r.decided_height]), [[doomed.anchor.txid, 'transfer', String(devnet.chain.height - 1)]]);
    assert.equal(bigCredits!.length, 3);
  } finally {
    await db.end().catch(() => undefined);
    await sink.close();
  }
});

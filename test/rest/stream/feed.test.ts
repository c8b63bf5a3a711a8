/**
 * The live feed against a real node on the devnet chain: backlog then live in (height,
 * tx_index, log_index) order with the cursors GET /events uses; resume from a cursor with
 * no gap or duplicate; reorgs of depth 1 and 6 while subscribed (rollback first, then the
 * new branch; the applied stream equals GET /events); call statuses and blocks.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertFeedMatchesSpec } from '../../helpers/feed-check.js';
import type { DevnetChainHandle } from '../../../src/devnet/chain-server.js';
import type { NodeProcess } from '../../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../../helpers/devnet-node.js';
import { decodeCursor } from '@svc-node/protocol/cursor';
import { FeedClient, applied, type FeedMessage } from './feed-client.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
const wallet = testWallet(5);
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';
let deployHeight = 0;

async function bump(n: number): Promise<string> {
  const r = await svc.call({ contractId, function: 'bump', args: [`u64:${n}`], abi: artifact.abi });
  return r.anchor.txid;
}

/** Every event of the contract by GET /events, with the cursor of each (paged one by one at the end). */
async function restEvents(): Promise<{ cursor: string; txid: string; block_height: number; tx_index: number; log_index: number; name: string; params: unknown }[]> {
  const r = await getJson(`${node.restUrl}/events/${contractId}?limit=1000`);
  assert.equal(r.status, 200);
  return r.body.events.map((e: any) => ({ txid: e.txid, block_height: e.block_height, tx_index: e.tx_index, log_index: e.log_index, name: e.name, params: e.params }));
}

/** Waits until the subscription, applied in order, equals GET /events now. */
async function convergesToRest(c: FeedClient, sub: string): Promise<void> {
  const want = await restEvents();
  await c.waitFor(() => JSON.stringify(positions(applied(c.messages, sub))) === JSON.stringify(want), 30_000);
}

/** Applied events without their cursors (checked apart: each names its position and branch). */
function positions(xs: ReturnType<typeof applied>): Omit<ReturnType<typeof applied>[number], 'cursor'>[] {
  return xs.map(({ cursor, ...rest }) => {
    assert.deepEqual(decodeCursor(cursor).pos, [rest.block_height, rest.tx_index, rest.log_index]);
    assert.ok(decodeCursor(cursor).tags.length > 0, 'the cursor names its branch');
    return rest;
  });
}

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 12);
  svc = client(node, devnet, wallet);
  artifact = compileFixture('counter.svc');
  const dep = await svc.deploy(artifact);
  contractId = dep.contractId;
  devnet.chain.mine(1);
  deployHeight = devnet.chain.height;
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('backlog then live, in order, each with the cursor GET /events gives; resume after a disconnect', async () => {
  const t1 = await bump(1);
  devnet.chain.mine(1, [t1]);
  const t2 = await bump(2);
  devnet.chain.mine(1, [t2]);
  await waitSynced(node, devnet);

  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId, from_height: 0 });
  c.send({ type: 'subscribe', id: 'b', kind: 'blocks', from_height: deployHeight });
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'b');
  const backlog = await restEvents();
  assert.equal(backlog.length, 2);
  assert.deepEqual(positions(applied(c.messages, 'e')), backlog);
  // The last cursor is GET /events' next_cursor.
  const page = await getJson(`${node.restUrl}/events/${contractId}`);
  assert.equal(c.of('e', 'event').at(-1)!['cursor'], page.body.next_cursor);
  // Blocks from the deploy to the tip, each with its stored state root.
  const blocks = c.of('b', 'block');
  assert.deepEqual(blocks.map((b) => b['height']), Array.from({ length: devnet.chain.height - deployHeight + 1 }, (_, i) => deployHeight + i));
  // From height 0: heights below the node's anchor have no block and are skipped.
  c.send({ type: 'subscribe', id: 'b0', kind: 'blocks', from_height: 0 });
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'b0');
  const fromZero = c.of('b0', 'block').map((b) => b['height'] as number);
  assert.equal(fromZero.at(-1), devnet.chain.height);
  assert.deepEqual(fromZero, Array.from({ length: fromZero.length }, (_, i) => fromZero[0]! + i), 'consecutive');
  // The first is the journal's anchor: with default settings on a devnet, block 0
  // (packages/protocol/src/activation.ts), whose state root is the empty one.
  assert.equal(fromZero[0], 0, 'the first is the anchor');
  assert.equal((await getJson(`${node.restUrl}/v2/state_root/0`)).body.state_root, '00'.repeat(32));
  const root = await getJson(`${node.restUrl}/v2/state_root/${devnet.chain.height}`);
  assert.equal(blocks.at(-1)!['state_root'], root.body.state_root);
  assert.equal(blocks.at(-1)!['block_hash'], devnet.chain.tip.hash);

  // Live: a new block's event and the block itself arrive after "synced".
  const t3 = await bump(3);
  devnet.chain.mine(1, [t3]);
  await c.waitFor((m) => m.type === 'event' && m['txid'] === t3);
  await c.waitFor((m) => m.type === 'block' && m['height'] === devnet.chain.height);
  await convergesToRest(c, 'e');
  const events = c.of('e', 'event');
  for (let i = 1; i < events.length; i++) {
    const a = events[i - 1]!;
    const b = events[i]!;
    assert.ok(a['block_height'] < b['block_height'] || (a['block_height'] === b['block_height'] && (a['tx_index'] < b['tx_index'] || (a['tx_index'] === b['tx_index'] && a['log_index'] < b['log_index']))), 'ascending');
  }

  // Disconnect after the first event; two more blocks while away; resume from its cursor.
  const resumeFrom = events[0]!['cursor'] as string;
  c.close();
  await c.closed;
  const t4 = await bump(4);
  devnet.chain.mine(1, [t4]);
  const t5 = await bump(5);
  devnet.chain.mine(1, [t5]);
  await waitSynced(node, devnet);
  const r = await FeedClient.connect(node.restUrl);
  r.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId, cursor: resumeFrom });
  await r.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
  const all = await restEvents();
  assert.deepEqual(positions(applied(r.messages, 'e')), all.slice(1), 'everything after the cursor, once');
  assert.deepEqual(applied(r.messages, 'e').map((e) => e.txid), [t2, t3, t4, t5]);
  r.close();
});

test('events of a contract the node does not hold: a not_found error closes the subscription', async () => {
  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'ghost', kind: 'events', contract_id: 'ab'.repeat(32), from_height: 0 });
  const e = await c.waitFor((m) => m.type === 'error' && m['sub'] === 'ghost');
  assert.equal(e['code'], 'not_found');
  c.send({ type: 'unsubscribe', id: 'ghost' });
  assert.equal((await c.waitFor((m) => m.type === 'error' && m['sub'] === 'ghost' && m !== e)).code, 'not_found', 'already gone');
  c.close();
});

/** Messages of `sub` before and after its first rollback. */
function aroundRollback(c: FeedClient, sub: string): { before: FeedMessage[]; rollback: FeedMessage; after: FeedMessage[] } {
  const ms = c.messages.filter((m) => m['sub'] === sub);
  const i = ms.findIndex((m) => m.type === 'rollback');
  assert.ok(i >= 0, `a rollback on ${sub}`);
  return { before: ms.slice(0, i), rollback: ms[i]!, after: ms.slice(i + 1) };
}

for (const depth of [1, 6]) {
  test(`reorg of depth ${depth} while subscribed: rollback first, then the new branch; applied stream equals GET /events`, async () => {
    const c = await FeedClient.connect(node.restUrl);
    c.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId, from_height: 0 });
    c.send({ type: 'subscribe', id: 'b', kind: 'blocks' });
    await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
    const x = await bump(10 + depth);
    const y = await bump(20 + depth);
    c.send({ type: 'subscribe', id: 'c', kind: 'calls', txids: [x, y] });
    c.send({ type: 'subscribe', id: 'cc', kind: 'calls', contract_id: contractId });
    await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'c');
    assert.deepEqual(c.of('c', 'call').map((m) => m['status']), ['pending', 'pending']);
    devnet.chain.mine(1, [x, y]);
    const minedAt = devnet.chain.height;
    if (depth > 1) devnet.chain.mine(depth - 1);
    await waitSynced(node, devnet);
    await c.waitFor((m) => m.type === 'event' && m['txid'] === y);
    await c.waitFor((m) => m.type === 'call' && m['sub'] === 'c' && m['txid'] === y && m['status'] === 'executed');
    await c.waitFor((m) => m.type === 'block' && m['height'] === devnet.chain.height);
    const oldTip = devnet.chain.tip.hash;

    // The new branch: one more block than it replaces, the two calls in the other order.
    const fork = devnet.chain.height - depth + 1;
    devnet.chain.reorg({ depth, blocks: depth + 1, txids: [y, x] });
    await waitSynced(node, devnet);
    await convergesToRest(c, 'e');
    await c.waitFor((m) => m.type === 'block' && m['sub'] === 'b' && m['block_hash'] === devnet.chain.tip.hash);

    // Events: the rollback names the fork and retracts exactly what was delivered from it.
    const e = aroundRollback(c, 'e');
    assert.equal(e.rollback['fork_height'], fork);
    assert.equal(fork, minedAt);
    assert.deepEqual(e.rollback['retracted'], e.before.filter((m) => m.type === 'event' && m['block_height'] >= fork).map((m) => m['cursor']));
    assert.equal(e.rollback['retracted'].length, 2);
    assert.equal(e.rollback['complete'], true);
    assert.deepEqual(e.after.filter((m) => m.type === 'event').map((m) => m['txid']), [y, x], 'the new branch in its order');
    assert.ok(e.after.filter((m) => m.type === 'event').every((m) => m['block_height'] >= fork));
    // A client resuming from the rollback's cursor reads the same new branch.
    const page = await getJson(`${node.restUrl}/events/${contractId}?cursor=${e.rollback['cursor']}`);
    assert.deepEqual(page.body.events.map((x: any) => x.txid), [y, x]);

    // Blocks: rolled back to the fork, then the new branch's blocks with their roots.
    const b = aroundRollback(c, 'b');
    assert.equal(b.rollback['fork_height'], fork);
    assert.ok(b.before.some((m) => m.type === 'block' && m['block_hash'] === oldTip));
    const newBlocks = b.after.filter((m) => m.type === 'block');
    assert.deepEqual(newBlocks.map((m) => m['height']), Array.from({ length: depth + 1 }, (_, i) => fork + i));
    for (const nb of newBlocks) {
      const r = await getJson(`${node.restUrl}/v2/state_root/${nb['height']}`);
      assert.equal(nb['state_root'], r.body.state_root);
      assert.equal(nb['block_hash'], r.body.block_hash);
    }

    // Calls: executed, back to pending on the rollback, executed again on the new branch.
    for (const sub of ['c', 'cc']) {
      const cl = aroundRollback(c, sub);
      assert.deepEqual([...cl.rollback['txids']].sort(), [x, y].sort());
      for (const t of [x, y]) {
        const seq = c.messages.filter((m) => m['sub'] === sub && m.type === 'call' && m['txid'] === t).map((m) => m['status']);
        assert.deepEqual(seq.slice(-3), ['executed', 'pending', 'executed'], `${sub} ${t}`);
      }
    }
    const finalX = c.messages.filter((m) => m['sub'] === 'c' && m.type === 'call' && m['txid'] === x).at(-1)!;
    const rest = await getJson(`${node.restUrl}/contract_call/${x}/status`);
    assert.equal(finalX['result'], rest.body.result);
    assert.equal(finalX['block_height'], rest.body.block_height);
    c.close();
  });
}

test('svc events CONTRACT --follow prints the history, then new events as they are mined', async () => {
  const { run } = await import('../../../src/cli/run.js');
  const lines: string[] = [];
  const stop = new AbortController();
  let wake: (() => void) | null = null;
  const seen = (re: RegExp): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (lines.some((l) => re.test(l))) resolve();
        else wake = check;
      };
      check();
    });
  const done = run(['events', contractId, '--follow', '--node', node.restUrl], {}, {
    write: (l) => {
      lines.push(l);
      wake?.();
    },
    signal: stop.signal,
  });
  await seen(/^-- synced at height \d+; following$/);
  const history = await restEvents();
  assert.equal(lines.filter((l) => / Bumped /.test(l)).length, history.length);
  const t = await bump(7);
  devnet.chain.mine(1, [t]);
  await seen(new RegExp(`tx ${t} cursor `));
  stop.abort();
  const out = await done;
  assert.equal(out.streamed, true);
  const last = lines.filter((l) => / Bumped /.test(l)).at(-1)!;
  assert.match(last, /^\d+:\d+:0 Bumped \{.*"n":"7".*\} tx [0-9a-f]{64} cursor [A-Za-z0-9_-]+$/);
});

// Last: the tests above ran; every message they received is what the spec documents.
test('every feed message received above matches docs/stream.asyncapi.yaml, with no undocumented field', () => {
  assertFeedMatchesSpec();
});

/**
 * Cursors that name their branch (docs/STREAM.md, "Cursors"), tried from outside: a client
 * that resumes from a cursor a reorg retracted while it was away gets a rollback to the fork
 * first, then the new branch, on the feed and on GET /events; call-status subscriptions
 * of a contract have a backlog from a cursor and resume without gap; an events
 * subscription to a contract the node does not hold, from the head, is refused.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertFeedMatchesSpec } from '../../helpers/feed-check.js';
import type { DevnetChainHandle } from '../../../src/devnet/chain-server.js';
import type { NodeProcess } from '../../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../../helpers/devnet-node.js';
import { decodeCursor, encodeCursor } from '@svc-node/protocol/cursor';
import { FeedClient, applied } from './feed-client.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
const wallet = testWallet(25);
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';

async function bump(n: number): Promise<string> {
  return (await svc.call({ contractId, function: 'bump', args: [`u64:${n}`], abi: artifact.abi })).anchor.txid;
}

async function restEvents(): Promise<{ txid: string; block_height: number; tx_index: number; log_index: number }[]> {
  const r = await getJson(`${node.restUrl}/events/${contractId}?limit=1000`);
  return r.body.events.map((e: any) => ({ txid: e.txid, block_height: e.block_height, tx_index: e.tx_index, log_index: e.log_index }));
}

const strip = (xs: ReturnType<typeof applied>) => xs.map((e) => ({ txid: e.txid, block_height: e.block_height, tx_index: e.tx_index, log_index: e.log_index }));

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 30);
  svc = client(node, devnet, wallet);
  artifact = compileFixture('counter.svc');
  contractId = (await svc.deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('resuming from a cursor a reorg retracted while away: a rollback to the fork first, then the new branch (feed and GET /events)', async () => {
  // Twelve events in six blocks; the client holds them all, then goes away.
  const mined: string[][] = [];
  for (let b = 0; b < 6; b++) {
    const pair = [await bump(100 + 2 * b), await bump(101 + 2 * b)];
    devnet.chain.mine(1, pair);
    mined.push(pair);
  }
  await waitSynced(node, devnet);
  const fork = devnet.chain.height - 5;
  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId, from_height: fork });
  c.send({ type: 'subscribe', id: 'c', kind: 'calls', contract_id: contractId, from_height: fork });
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'c');
  assert.equal(c.of('e', 'event').length, 12);
  assert.equal(c.of('c', 'call').length, 12, 'the call log backlog from the height');
  const lastEvent = c.of('e', 'event').at(-1)!['cursor'] as string;
  const lastCall = c.of('c', 'call').at(-1)!['cursor'] as string;
  const restCursor = (await getJson(`${node.restUrl}/events/${contractId}?from_block=${fork}`)).body.next_cursor as string;
  c.close();
  await c.closed;

  // While away: the six blocks are replaced; the new branch holds only the first three pairs.
  devnet.chain.reorg({ depth: 6, blocks: 7, txids: mined.slice(0, 3).flat().reverse() });
  await waitSynced(node, devnet);
  const want = await restEvents();

  const r = await FeedClient.connect(node.restUrl);
  r.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: contractId, cursor: lastEvent });
  r.send({ type: 'subscribe', id: 'c', kind: 'calls', contract_id: contractId, cursor: lastCall });
  await r.waitFor((m) => m.type === 'synced' && m['sub'] === 'e');
  await r.waitFor((m) => m.type === 'synced' && m['sub'] === 'c');
  const first = r.of('e')[1]!; // after "subscribed"
  assert.equal(first.type, 'rollback');
  assert.equal(first['fork_height'], fork, 'exactly the fork: the cursor is within its dense locator');
  assert.deepEqual(decodeCursor(first['cursor']).pos.slice(0, 1), [fork - 1]);
  // What it retracts is unknown to the node (the client was away): an empty list, not complete.
  assert.deepEqual([first['retracted'], first['complete']], [[], false]);
  // Applied on top of what the client held: the stale twelve are gone, the new six are there.
  const held = c.messages.filter((m) => m['sub'] === 'e');
  const all = strip(applied([...held, ...r.of('e')], 'e'));
  assert.deepEqual(all, want.filter((e) => e.block_height >= fork));
  assert.equal(all.length, 6);
  // Calls: rollback first; every call held as decided from the fork on is pending unless re-sent.
  const cr = r.of('c')[1]!;
  assert.equal(cr.type, 'rollback');
  assert.equal(cr['fork_height'], fork);
  assert.deepEqual([cr['txids'], cr['complete'], decodeCursor(cr['cursor']).pos[0]], [[], false, fork - 1]);
  const redecided = r.of('c', 'call').filter((m) => m['block_height'] !== null);
  assert.deepEqual(redecided.map((m) => m['txid']).sort(), mined.slice(0, 3).flat().sort());
  for (const m of redecided) {
    const s = await getJson(`${node.restUrl}/contract_call/${m['txid']}/status`);
    assert.deepEqual([m['status'], m['block_height'], m['tx_index']], [s.body.status, s.body.block_height, s.body.tx_index]);
  }
  for (const t of mined.slice(3).flat()) assert.equal((await getJson(`${node.restUrl}/contract_call/${t}/status`)).body.status, 'pending');
  r.close();

  // GET /events with the retracted cursor: a rollback, then the page after the fork.
  const page = await getJson(`${node.restUrl}/events/${contractId}?cursor=${restCursor}`);
  assert.equal(page.status, 200);
  assert.equal(page.body.rollback.fork_height, fork);
  assert.deepEqual(page.body.events.map((e: any) => e.txid), want.filter((e) => e.block_height >= fork).map((e) => e.txid));
  // A cursor of the earlier form (no branch) is still accepted; it cannot see the reorg.
  const v1 = Buffer.alloc(13);
  v1[0] = 1;
  v1.writeUInt32BE(fork - 1, 1);
  v1.writeUInt32BE(0xffffffff, 5);
  v1.writeUInt32BE(0xffffffff, 9);
  const old = await getJson(`${node.restUrl}/events/${contractId}?cursor=${v1.toString('base64url')}`);
  assert.equal(old.status, 200);
  assert.equal(old.body.rollback, null);
  assert.equal(old.body.events.length, 6);
  assert.deepEqual(decodeCursor(old.body.next_cursor).tags.length > 0, true, 'answered with a branch-naming cursor');
  assert.equal(encodeCursor([1, 2, 3]).length < 30, true);
});

test('calls of a contract: backlog after a cursor, synced with a cursor, then live; resumed without gap', async () => {
  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'c', kind: 'calls', contract_id: contractId, progress: true });
  const synced = await c.waitFor((m) => m.type === 'synced' && m['sub'] === 'c');
  const t1 = await bump(1);
  devnet.chain.mine(1, [t1]);
  await c.waitFor((m) => m.type === 'call' && m['txid'] === t1 && m['status'] === 'executed');
  await c.waitFor((m) => m.type === 'progress' && m['height'] === devnet.chain.height);
  c.close();
  await c.closed;
  const t2 = await bump(2);
  const t3 = await bump(3);
  devnet.chain.mine(1, [t2]);
  devnet.chain.mine(1, [t3]);
  await waitSynced(node, devnet);
  const r = await FeedClient.connect(node.restUrl);
  r.send({ type: 'subscribe', id: 'c', kind: 'calls', contract_id: contractId, cursor: synced['cursor'] });
  await r.waitFor((m) => m.type === 'synced' && m['sub'] === 'c');
  assert.deepEqual(r.of('c', 'call').map((m) => [m['txid'], m['status']]), [[t1, 'executed'], [t2, 'executed'], [t3, 'executed']]);
  const mid = r.of('c', 'call')[0]!['cursor'];
  r.send({ type: 'subscribe', id: 'd', kind: 'calls', contract_id: contractId, cursor: mid });
  await r.waitFor((m) => m.type === 'synced' && m['sub'] === 'd');
  assert.deepEqual(r.of('d', 'call').map((m) => m['txid']), [t2, t3], 'strictly after the cursor');
  r.close();
});

test('an events subscription to a contract the node does not hold, from the head: not_found, and it holds no slot', async () => {
  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'ghost', kind: 'events', contract_id: 'cd'.repeat(32) });
  const e = await c.waitFor((m) => m.type === 'error' && m['sub'] === 'ghost');
  assert.equal(e['code'], 'not_found');
  assert.ok(!c.messages.some((m) => m.type === 'synced' && m['sub'] === 'ghost'));
  for (let i = 0; i < 16; i++) c.send({ type: 'subscribe', id: `s${i}`, kind: 'blocks' });
  await c.waitFor((m) => m.type === 'subscribed' && m['sub'] === 's15');
  assert.ok(!c.messages.some((m) => m.type === 'error' && m['code'] === 'overloaded'), 'the refused one does not count toward the limit');
  c.close();
});

// Last: the tests above ran; every message they received is what the spec documents.
test('every feed message received above matches docs/stream.asyncapi.yaml, with no undocumented field', () => {
  assertFeedMatchesSpec();
});

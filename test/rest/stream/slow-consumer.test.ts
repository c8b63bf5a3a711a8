/**
 * A consumer that stops reading while a block brings tens of thousands of messages: the
 * node closes it with 4008 once MAX_BUFFERED_BYTES are queued on it, the bytes queued stay
 * bounded throughout, and the SDK iterator, stalled the same way, reconnects by itself and
 * resumes from its cursors with no gap and no duplicate.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertFeedMatchesSpec, checkFeedMessage } from '../../helpers/feed-check.js';
import type { DevnetChainHandle } from '../../../src/devnet/chain-server.js';
import type { NodeProcess } from '../../helpers/node-process.js';
import type { SvcClient } from '@svc-node/client/sdk';
import { NodeClient } from '@svc-node/client/node';
import type { StreamMessage } from '@svc-node/client/stream';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced, waitUntil } from '../../helpers/devnet-node.js';
import { decodeCursor } from '@svc-node/protocol/cursor';

/** A cursor's position as text (cursors also carry their branch's block tags). */
const at = (cursor: string): string => decodeCursor(cursor).pos.join(':');
import { CLOSE_SLOW_CONSUMER, MAX_BUFFERED_BYTES, MAX_SUBSCRIPTIONS } from '../../../src/rest/stream/protocol.js';
import { FeedClient, applied } from './feed-client.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
const wallet = testWallet(6);
let svc: SvcClient;
let contractId = '';
const abi = compileFixture('emitter.svc').abi;

/** Four calls of 2,000 events each, mined in one block. */
async function bursts(): Promise<void> {
  const txids: string[] = [];
  for (let i = 0; i < 4; i++) txids.push((await svc.call({ contractId, function: 'burst', args: [], abi })).anchor.txid);
  devnet.chain.mine(1, txids);
}

/** A gauge of GET /metrics. */
async function gauge(name: string): Promise<number> {
  const text = await (await fetch(`${node.restUrl}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  assert.ok(m, name);
  return Number(m[1]);
}

/** Every event's position by GET /events, paged by cursor. */
async function restCursors(): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r = (await (await fetch(`${node.restUrl}/events/${contractId}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`)).json()) as { events: { block_height: number; tx_index: number; log_index: number }[]; next_cursor: string };
    out.push(...r.events.map((e) => [e.block_height, e.tx_index, e.log_index].join(':')));
    if (r.events.length < 1000) return out;
    cursor = r.next_cursor;
  }
}

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 12);
  svc = client(node, devnet, wallet);
  contractId = (await svc.deploy(compileFixture('emitter.svc'))).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('a reader that stalls is closed with 4008 and the bytes queued stay bounded', async () => {
  const c = await FeedClient.connect(node.restUrl);
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) c.send({ type: 'subscribe', id: `s${i}`, kind: 'events', contract_id: contractId });
  await c.waitFor((m) => m.type === 'synced' && m['sub'] === `s${MAX_SUBSCRIPTIONS - 1}`);
  const before = await gauge('svc_stream_slow_consumers_closed');
  c.ws.pause(); // stop reading: the node's queue for this socket grows
  await bursts();
  let maxBuffered = 0;
  await waitUntil(node, async () => {
    maxBuffered = Math.max(maxBuffered, await gauge('svc_stream_buffered_bytes'));
    return (await gauge('svc_stream_slow_consumers_closed')) > before;
  }, 'the slow consumer to be closed');
  assert.ok(maxBuffered <= 2 * MAX_BUFFERED_BYTES, `queued ${maxBuffered} bytes`);
  c.ws.resume();
  const { code } = await c.closed;
  assert.equal(code, CLOSE_SLOW_CONSUMER);
  const got = c.messages.filter((m) => m.type === 'event').length;
  assert.ok(got < 4 * 2000 * MAX_SUBSCRIPTIONS, `cut short (${got} events)`);
  // What it did get is a gapless prefix of each subscription.
  const all = await restCursors();
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) {
    const mine = applied(c.messages, `s${i}`).map((e) => at(e.cursor));
    assert.deepEqual(mine, all.slice(all.length - 8000, all.length - 8000 + mine.length));
  }
  assert.equal(await gauge('svc_stream_connections'), 0);
});

test('the SDK iterator, stalled, is cut off, reconnects and resumes with no gap or duplicate', async () => {
  const reconnects: number[] = [];
  const stop = new AbortController();
  const ids = Array.from({ length: MAX_SUBSCRIPTIONS }, (_, i) => `e${i}`);
  const feed = new NodeClient(node.restUrl).stream({
    subscriptions: ids.map((id) => ({ kind: 'events' as const, id, contractId, fromHeight: 0 })),
    signal: stop.signal,
    onReconnect: (code) => reconnects.push(code),
  });
  // Applied per subscription as an indexer would (kept incrementally: 128,000 messages).
  const lists = new Map(ids.map((id) => [id, [] as { cursor: string; height: number }[]]));
  const synced = new Set<string>();
  const next = async (): Promise<StreamMessage> => {
    const r = await feed.next();
    assert.ok(!r.done);
    const m = r.value;
    checkFeedMessage(m);
    const list = m.sub === undefined ? undefined : lists.get(m.sub);
    if (list && m.type === 'event') list.push({ cursor: m.cursor, height: m.block_height });
    if (list && m.type === 'rollback') while (list.length > 0 && list[list.length - 1]!.height >= m.fork_height) list.pop();
    return m;
  };
  // Backlog first (paced by the socket: never cut), until every subscription is live.
  while (synced.size < ids.length) {
    const m = await next();
    if (m.type === 'synced') synced.add(m.sub!);
  }
  const before = await gauge('svc_stream_slow_consumers_closed');
  await bursts();
  // Not pulling: the iterator stops reading at its high-water mark and the node cuts it off.
  await waitUntil(node, async () => (await gauge('svc_stream_slow_consumers_closed')) > before, 'the SDK connection to be cut');
  await waitSynced(node, devnet);
  const all = await restCursors();
  const done = (): boolean => ids.every((id) => lists.get(id)!.length >= all.length);
  while (!done()) await next();
  stop.abort();
  await feed.return();
  assert.ok(reconnects.includes(CLOSE_SLOW_CONSUMER), `reconnected after ${reconnects.join(',')}`);
  for (const id of ids) assert.deepEqual(lists.get(id)!.map((e) => at(e.cursor)), all, id);
});

// Last: the tests above ran; every message they received is what the spec documents.
test('every feed message received above matches docs/stream.asyncapi.yaml, with no undocumented field', () => {
  assertFeedMatchesSpec();
});

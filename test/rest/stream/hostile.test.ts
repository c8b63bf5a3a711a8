/**
 * Hostile frames on the live feed (GET /v2/stream) of a real node process: each gets an
 * error message or a documented close code, and the front keeps serving.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertFeedMatchesSpec } from '../../helpers/feed-check.js';
import { startNode, type NodeProcess } from '../../helpers/node-process.js';
import { FeedClient } from './feed-client.js';
import { MAX_FRAME_BYTES, MAX_SUBSCRIPTIONS } from '../../../src/rest/stream/protocol.js';

let node: NodeProcess;
const CONTRACT = 'ab'.repeat(32);

before(async () => {
  node = await startNode();
});

after(async () => {
  await node?.stop();
});

async function alive(): Promise<void> {
  const r = await fetch(`${node.restUrl}/health`);
  assert.equal(r.status, 200);
}

test('malformed JSON, unknown types and bad fields get an error message; the connection stays open', async () => {
  const c = await FeedClient.connect(node.restUrl);
  const cases: [string, RegExp][] = [
    ['{not json', /not valid JSON/],
    ['[1,2]', /JSON object/],
    ['"subscribe"', /JSON object/],
    [JSON.stringify({ type: 'launch' }), /unknown message type/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'everything' }), /unknown subscription kind/],
    [JSON.stringify({ type: 'subscribe', id: 'a b', kind: 'blocks' }), /id must be/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'events', contract_id: 'zz' }), /contract_id must be/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'events', contract_id: CONTRACT, cursor: 'AAAA' }), /cursor/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'events', contract_id: CONTRACT, from_height: -1 }), /from_height/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'events', contract_id: CONTRACT, extra: 1 }), /unknown field "extra"/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'calls' }), /either contract_id or txids/],
    [JSON.stringify({ type: 'subscribe', id: 'a', kind: 'calls', txids: [] }), /txids must be/],
    [JSON.stringify({ type: 'unsubscribe', id: 'nope' }), /no subscription nope/],
  ];
  for (const [frame, re] of cases) {
    const at = c.messages.length;
    c.send(frame);
    const m = await c.waitFor((x) => x.type === 'error', 10_000, at);
    assert.match(m['message'], re, frame);
    assert.ok(m['code'] === 'bad_request' || m['code'] === 'not_found', frame);
  }
  // Still serving on the same connection.
  c.send({ type: 'subscribe', id: 'b', kind: 'blocks' });
  await c.waitFor((m) => m.type === 'subscribed' && m['sub'] === 'b');
  c.send({ type: 'subscribe', id: 'b', kind: 'blocks' });
  assert.match((await c.waitFor((m) => m.type === 'error' && m['sub'] === 'b')).message, /in use/);
  c.close();
  await alive();
});

test('subscriptions per connection are limited', async () => {
  const c = await FeedClient.connect(node.restUrl);
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) c.send({ type: 'subscribe', id: `s${i}`, kind: 'events', contract_id: CONTRACT });
  await c.waitFor((m) => m.type === 'subscribed' && m['sub'] === `s${MAX_SUBSCRIPTIONS - 1}`);
  c.send({ type: 'subscribe', id: 'over', kind: 'blocks' });
  const e = await c.waitFor((m) => m.type === 'error' && m['sub'] === 'over');
  assert.equal(e['code'], 'overloaded');
  // Unsubscribing frees a slot.
  c.send({ type: 'unsubscribe', id: 's0' });
  await c.waitFor((m) => m.type === 'unsubscribed' && m['sub'] === 's0');
  c.send({ type: 'subscribe', id: 'over', kind: 'blocks' });
  await c.waitFor((m) => m.type === 'subscribed' && m['sub'] === 'over');
  c.close();
});

test('a binary frame closes with 1003', async () => {
  const c = await FeedClient.connect(node.restUrl);
  c.ws.send(Buffer.from([1, 2, 3]));
  const { code } = await c.closed;
  assert.equal(code, 1003);
  await alive();
});

test('an oversized frame closes with 1009; a huge one is cut before it is buffered', async () => {
  const c = await FeedClient.connect(node.restUrl);
  c.send(JSON.stringify({ type: 'subscribe', id: 'x', kind: 'blocks', pad: 'x'.repeat(MAX_FRAME_BYTES) }));
  assert.equal((await c.closed).code, 1009);
  const huge = await FeedClient.connect(node.restUrl);
  huge.send('x'.repeat(8 * 1024 * 1024));
  assert.equal((await huge.closed).code, 1006, 'cut by uWS without a close frame');
  await alive();
});

test('a plain GET on the feed answers 400 naming the upgrade', async () => {
  const r = await fetch(`${node.restUrl}/v2/stream`);
  assert.equal(r.status, 400);
  const body = (await r.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'bad_request');
  assert.match(body.error.message, /WebSocket/);
});

test('a connection that goes away mid-frame does not hurt the front', async () => {
  for (let i = 0; i < 20; i++) {
    const c = await FeedClient.connect(node.restUrl);
    c.send({ type: 'subscribe', id: 'e', kind: 'events', contract_id: CONTRACT, from_height: 0 });
    c.ws.terminate();
  }
  await alive();
  const c = await FeedClient.connect(node.restUrl);
  c.send({ type: 'subscribe', id: 'ok', kind: 'blocks' });
  await c.waitFor((m) => m.type === 'subscribed');
  c.close();
});

// Last: the tests above ran; every message they received is what the spec documents.
test('every feed message received above matches docs/stream.asyncapi.yaml, with no undocumented field', () => {
  assertFeedMatchesSpec();
});

/**
 * The feed's message builders (packages/protocol/src/feed.ts): the exact bytes clients have seen
 * (key order included), and each message as docs/stream.asyncapi.yaml documents it, an
 * undocumented field refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as feed from '@svc-node/protocol/feed';
import { feedProblem } from '../helpers/feed-check.js';

const H = (c: string): string => c.repeat(64);
const CURSOR = 'AAAAAQAAAAIAAAADq80';
const event: feed.FeedEvent = { name: 'Bumped', params: { by: '5' }, txid: H('a'), block_height: 7, tx_index: 1, log_index: 0 };
const call: feed.FeedCall = {
  txid: H('b'), contract_id: H('c'), envelope_hash: H('d'), function: 'bump', caller: H('e'), call_id: '42',
  status: 'failed', block_height: 7, tx_index: 2, result: null, error: { code: 'trap', message: 'boom' }, confirmations: 1,
};

const wire: [string, string][] = [
  [feed.subscribedMessage('s1', 'events'), '{"type":"subscribed","sub":"s1","kind":"events"}'],
  [feed.unsubscribedMessage('s1'), '{"type":"unsubscribed","sub":"s1"}'],
  [feed.blockMessage('b', { height: 7, block_hash: H('1'), state_root: H('2') }), `{"type":"block","sub":"b","height":7,"block_hash":"${H('1')}","state_root":"${H('2')}"}`],
  [feed.eventMessage('e', CURSOR, event), `{"type":"event","sub":"e","cursor":"${CURSOR}","name":"Bumped","params":{"by":"5"},"txid":"${H('a')}","block_height":7,"tx_index":1,"log_index":0}`],
  [feed.callMessage('c', call, CURSOR), `{"type":"call","sub":"c","cursor":"${CURSOR}","txid":"${H('b')}","contract_id":"${H('c')}","envelope_hash":"${H('d')}","function":"bump","caller":"${H('e')}","call_id":"42","status":"failed","block_height":7,"tx_index":2,"result":null,"error":{"code":"trap","message":"boom"},"confirmations":1}`],
  [feed.callMessage('t', { ...call, status: 'pending', block_height: null, tx_index: null, error: null, confirmations: null }), `{"type":"call","sub":"t","txid":"${H('b')}","contract_id":"${H('c')}","envelope_hash":"${H('d')}","function":"bump","caller":"${H('e')}","call_id":"42","status":"pending","block_height":null,"tx_index":null,"result":null,"error":null,"confirmations":null}`],
  [feed.syncedBlocksMessage('b', 7), '{"type":"synced","sub":"b","height":7}'],
  [feed.syncedLogMessage('e', 7, CURSOR), `{"type":"synced","sub":"e","height":7,"cursor":"${CURSOR}"}`],
  [feed.syncedTxidsMessage('t', null, [H('b')]), `{"type":"synced","sub":"t","height":null,"unknown":["${H('b')}"]}`],
  [feed.progressMessage('e', 7), '{"type":"progress","sub":"e","height":7}'],
  [feed.rollbackBlocksMessage('b', 5, 7), '{"type":"rollback","sub":"b","fork_height":5,"retracted_heights":[5,7]}'],
  [feed.rollbackLogMessage('e', 5, CURSOR, 'retracted', [CURSOR], true), `{"type":"rollback","sub":"e","fork_height":5,"cursor":"${CURSOR}","retracted":["${CURSOR}"],"complete":true}`],
  [feed.rollbackLogMessage('c', 5, null, 'txids', [H('b')], false), `{"type":"rollback","sub":"c","fork_height":5,"cursor":null,"txids":["${H('b')}"],"complete":false}`],
  [feed.errorMessage(undefined, 'bad_request', 'message is not valid JSON'), '{"type":"error","code":"bad_request","message":"message is not valid JSON"}'],
  [feed.errorMessage('e', 'not_found', 'no subscription e'), '{"type":"error","sub":"e","code":"not_found","message":"no subscription e"}'],
];

test('every builder writes the feed\'s bytes, key order included', () => {
  for (const [got, want] of wire) assert.equal(got, want);
});

test('a spliced message is the same text as one built whole', () => {
  const head = feed.feedHead('event', 'e');
  assert.equal(feed.splicedMessage(head, feed.eventTail(CURSOR, event)), feed.eventMessage('e', CURSOR, event));
});

test('every builder\'s message is what docs/stream.asyncapi.yaml documents; an undocumented field is refused', () => {
  for (const [text] of wire) assert.equal(feedProblem(JSON.parse(text)), null, text);
  const extra = { ...(JSON.parse(wire[2]![0]) as object), miner: 'x' };
  assert.match(feedProblem(extra) ?? '', /additional/);
  assert.match(feedProblem({ type: 'pong' }) ?? '', /not a server message/);
});

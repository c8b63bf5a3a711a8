/**
 * The REST API end to end on a real socket: devnet chain, real node (token configured),
 * the Fields test contract (a map per key type). Covers each endpoint's success shape,
 * the error codes, proofs verified by the SDK, simulation, events paging and cursors,
 * the private call log with its authentication, and metrics. Every answer the node gives
 * here is recorded and, last, checked against docs/openapi.yaml.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { NodeClient, verifyFieldAnswer, type ProvenFieldAnswer } from '@svc-node/client/node';
import type { Artifact } from '@svc-node/protocol/contract';
import { MAX_NAME_CHARS } from '@svc-node/protocol/identifiers';
import { buildCall, type SvcClient } from '@svc-node/client/sdk';
import { recordAnswers, SpecChecker } from '../helpers/openapi-check.js';
import WebSocket from 'ws';

const TOKEN = 'rest-test-token-0123456789';
let devnet: DevnetChainHandle;
let node: NodeProcess;
let svc: SvcClient;
let artifact: Artifact;
let cid = '';
let cid2 = '';
let caller = '';
let h1 = 0;
let h2 = 0;
const txids: string[] = [];
const payloads = new Map<string, string>();
const wallet = testWallet(7);
const BIG = (1n << 100n).toString();

const url = (p: string): string => `${node.restUrl}${p}`;
/** Every answer of the node to this file's requests (through fetch), for the OpenAPI check at the end. */
const recorded = recordAnswers(() => node?.restUrl ?? '');
const get = (p: string): Promise<{ status: number; body: any }> => getJson(url(p));

async function call(fn: string, args: { type: string; value: unknown }[]): Promise<string> {
  const c = await svc.call({ contractId: cid, function: fn, args: args as never, abi: artifact.abi });
  assert.equal(c.answer.status, 'pending');
  payloads.set(c.anchor.txid, c.call.payload);
  return c.anchor.txid;
}

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet, { env: { SVC_API_TOKEN: TOKEN } });
  await fund(devnet, wallet, 10);
  await waitSynced(node, devnet);
  svc = client(node, devnet, wallet);
  artifact = compileFixture('fields.svc');
  const dep = await svc.deploy(artifact);
  cid = dep.contractId;
  cid2 = (await svc.deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const hex = (s: string): { type: 'bytes'; value: Uint8Array } => ({ type: 'bytes', value: new Uint8Array(Buffer.from(s, 'hex')) });
  txids.push(await call('set_all', [{ type: 'u64', value: 5n }, { type: 'i64', value: -7n }, { type: 'u128', value: 1n << 100n }, { type: 'string', value: 'hé llo/x' }, hex('abcd')]));
  txids.push(await call('tick', [{ type: 'u64', value: 1n }]));
  txids.push(await call('fail_now', [{ type: 'u64', value: 1n }]));
  devnet.chain.mine(1, [...txids]);
  h1 = (await waitSynced(node, devnet)).height;
  txids.push(await call('tick', [{ type: 'u64', value: 2n }]));
  devnet.chain.mine(1, [txids[3]!]);
  h2 = (await waitSynced(node, devnet)).height;
  caller = (await get(`/contract_call/${txids[0]}/status`)).body.caller;
});

after(async () => {
  recorded.restore();
  await node?.stop();
  await devnet?.close();
});

test('health, contracts, node_status, state roots, call status', async () => {
  assert.deepEqual(await get('/health'), { status: 200, body: { status: 'ok' } });
  assert.deepEqual((await get('/contracts')).body, { contract_ids: [cid, cid2].sort() });
  const s = (await get('/node_status')).body;
  for (const k of ['node_id', 'version', 'tip_height', 'processed_height', 'state_root', 'halted', 'halt_reason', 'peers', 'pending_calls', 'contracts', 'gossip_public_key', 'pool', 'chain', 'last_block_processed_at', 'lag_blocks']) assert.ok(k in s, k);
  assert.equal(s.processed_height, h2);
  assert.equal(s.lag_blocks, 0);
  const root = await get(`/v2/state_root/${h1}`);
  assert.equal(root.status, 200);
  assert.deepEqual(Object.keys(root.body).sort(), ['block_hash', 'height', 'state_root']);
  const st = (await get(`/contract_call/${txids[0]}/status`)).body;
  assert.equal(st.status, 'executed');
  assert.equal(st.result, '5');
  assert.equal(st.confirmations, 2);
  const failed = (await get(`/contract_call/${txids[2]}/status`)).body;
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error.code, 'revert');
});

test('field reads for every key type, scalars, and a missing entry', async () => {
  const read = async (p: string): Promise<any> => {
    const r = await get(`/v2/${cid}/${p}`);
    assert.equal(r.status, 200, `${p}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.height, h2);
    return r.body;
  };
  assert.deepEqual(await read('total'), { contract_id: cid, field: 'total', key: null, value: '8', exists: true, height: h2, state_root: (await get('/v2/state_root')).body.state_root });
  assert.equal((await read('label')).value, 'hé llo/x');
  assert.deepEqual(await read('by_u64/5').then((b) => [b.key, b.value, b.exists]), ['5', '5', true]);
  assert.deepEqual(await read('by_i64/-7').then((b) => [b.key, b.value, b.exists]), ['-7', 'hé llo/x', true]);
  assert.deepEqual(await read(`by_u128/${BIG}`).then((b) => [b.key, b.value]), [BIG, true]);
  assert.deepEqual(await read('by_bool/true').then((b) => [b.key, b.value]), [true, '-7']);
  assert.deepEqual(await read(`by_string/${encodeURIComponent('hé llo/x')}`).then((b) => [b.key, b.value]), ['hé llo/x', 'abcd']);
  assert.deepEqual(await read('by_bytes/abcd').then((b) => [b.key, b.value]), ['abcd', caller]);
  assert.deepEqual(await read(`by_key/${caller}`).then((b) => [b.key, b.value]), [caller, BIG]);
  // Missing entries answer the value type's default with exists false.
  assert.deepEqual(await read('by_u64/6').then((b) => [b.value, b.exists]), ['0', false]);
  assert.deepEqual(await read('by_i64/7').then((b) => [b.value, b.exists]), ['', false]);
  assert.deepEqual(await read('by_bool/false').then((b) => [b.value, b.exists]), ['0', false]);
  assert.deepEqual(await read(`by_bytes/ab`).then((b) => [b.value, b.exists]), ['0'.repeat(64), false]);
  assert.deepEqual(await read(`by_u128/0`).then((b) => [b.value, b.exists]), [false, false]);
});

test('field read errors: 400 naming the field, 404 unknown contract or field', async () => {
  const bad = async (p: string, status: number, code: string, mention?: string): Promise<void> => {
    const r = await get(p);
    assert.equal(r.status, status, `${p}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, code, p);
    if (mention) assert.match(r.body.error.message, new RegExp(mention), p);
  };
  await bad(`/v2/xyz/total`, 400, 'bad_request', 'contract_id');
  await bad(`/v2/${'0'.repeat(64)}/total`, 404, 'not_found');
  await bad(`/v2/${cid}/nope`, 404, 'not_found');
  // A name no artifact can declare (longer than the verifier's bound) is malformed, as on the live feed.
  await bad(`/v2/${cid}/${'n'.repeat(MAX_NAME_CHARS)}`, 404, 'not_found');
  await bad(`/v2/${cid}/${'n'.repeat(MAX_NAME_CHARS + 1)}`, 400, 'bad_request', 'field');
  await bad(`/v2/${cid}/by_u64/-1`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_u64/18446744073709551616`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_u64/007`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_i64/9223372036854775808`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_bool/yes`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_bytes/abc`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_key/abcd`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/by_u64`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/total/1`, 400, 'bad_request', 'arg');
  await bad(`/v2/${cid}/total?proof=yes`, 400, 'bad_request', 'proof');
  await bad(`/v2/${cid}/by_string/%E0%A4%A`, 400, 'bad_request');
  await bad(`/nope`, 404, 'not_found');
  const r = await fetch(url('/contracts'), { method: 'DELETE' });
  assert.equal(r.status, 405);
  assert.equal(((await r.json()) as any).error.code, 'method_not_allowed');
  assert.ok(r.headers.get('x-request-id'));
});

test('proofs: the SDK verifies present, absent and scalar reads; tampering is rejected', async () => {
  const nc = new NodeClient(node.restUrl);
  const root = (await get(`/v2/state_root/${h2}`)).body.state_root;
  for (const [field, arg] of [['total', undefined], ['by_u64', '5'], ['by_u64', '6'], ['by_key', caller], ['by_i64', '-7'], ['by_string', encodeURIComponent('zz')]] as const) {
    const a = await nc.readFieldProven(cid, field, arg, { abi: artifact.abi, trustedRoot: root });
    assert.equal(a.height, h2);
    assert.equal(a.state_root, root);
  }
  const a = (await get(`/v2/${cid}/by_u64/5?proof=true`)).body as ProvenFieldAnswer;
  verifyFieldAnswer(a, { abi: artifact.abi });
  const tampered: ProvenFieldAnswer[] = [
    { ...a, value: '6' },
    { ...a, exists: false },
    { ...a, state_root: 'ff'.repeat(32) },
    { ...a, key: '6' },
    JSON.parse(JSON.stringify(a, (k, v) => (k === 'value' && typeof v === 'string' && v.length === 16 ? '0000000000000006' : v))),
    JSON.parse(JSON.stringify(a, (k, v) => (k === 'siblings' ? (v as string[]).map(() => '00'.repeat(32)) : v))),
    JSON.parse(JSON.stringify(a, (k, v) => (k === 'siblings' ? (v as string[]).slice(1) : v))),
    JSON.parse(JSON.stringify(a, (k, v) => (k === 'leaf' && v !== null ? null : v))),
  ];
  assert.ok(a.proof.storage.siblings.length > 0, 'the storage proof has siblings to tamper with');
  for (const t of tampered) assert.throws(() => verifyFieldAnswer(t, { abi: artifact.abi }), /bad proof|proof|differs|another|exists/);
  assert.throws(() => verifyFieldAnswer(a, { abi: artifact.abi, trustedRoot: '00'.repeat(32) }), /trusted/);
});

test('simulation: result, events, instructions; readonly functions; state root unchanged', async () => {
  const rootBefore = (await get('/v2/state_root')).body.state_root;
  const sim = await postJson(url(`/v2/${cid}/simulate`), { function: 'tick', args: [{ type: 'u64', value: '10' }], caller });
  assert.equal(sim.status, 200, JSON.stringify(sim.body));
  assert.equal(sim.body.status, 'executed');
  assert.equal(sim.body.result, '18');
  assert.equal(sim.body.height, h2 + 1);
  assert.equal(sim.body.state_root, rootBefore);
  assert.deepEqual(sim.body.events, [
    { contract_id: cid, name: 'Tick', params: { n: '18' } },
    { contract_id: cid, name: 'Tick', params: { n: '19' } },
  ]);
  assert.ok(sim.body.instructions > 0);
  const ro = await postJson(url(`/v2/${cid}/simulate`), { function: 'get_total' });
  assert.equal(ro.body.result, '8');
  // Cross-contract: the callee is fetched in a second snapshot round; an unknown callee fails.
  const x = await postJson(url(`/v2/${cid2}/simulate`), { function: 'peek', args: [{ type: 'key', value: cid }] });
  assert.deepEqual([x.status, x.body.status, x.body.result], [200, 'executed', '8']);
  const y = await postJson(url(`/v2/${cid}/simulate`), { function: 'peek', args: [{ type: 'key', value: '5'.repeat(64) }] });
  assert.deepEqual([y.status, y.body.status, y.body.error?.code], [200, 'failed', 'unknown_contract']);
  const failed = await postJson(url(`/v2/${cid}/simulate`), { function: 'fail_now', args: [{ type: 'u64', value: '3' }] });
  assert.equal(failed.status, 200);
  assert.equal(failed.body.status, 'failed');
  assert.equal(failed.body.error.code, 'revert');
  assert.equal((await get('/v2/state_root')).body.state_root, rootBefore);
  assert.equal((await get(`/v2/${cid}/total`)).body.value, '8');

  const err = async (body: unknown, status: number, code: string, path = `/v2/${cid}/simulate`): Promise<void> => {
    const r = await postJson(url(path), body);
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.error.code, code);
  };
  await err({ function: 'tick', args: [{ type: 'i64', value: '1' }] }, 422, 'bad_arguments');
  await err({ function: 'tick', args: [] }, 422, 'bad_arguments');
  await err({ function: 'tick', args: [{ type: 'u64', value: 1 }] }, 400, 'bad_request');
  await err({ function: 'tick', args: 'x' }, 400, 'bad_request');
  await err({ function: 'nope' }, 404, 'not_found');
  await err({ function: 'n'.repeat(MAX_NAME_CHARS) }, 404, 'not_found');
  await err({ function: 'n'.repeat(MAX_NAME_CHARS + 1) }, 400, 'bad_request');
  await err({ args: [] }, 400, 'bad_request');
  await err({ function: 'tick', caller: 'zz' }, 400, 'bad_request');
  await err({ function: 'get_total' }, 404, 'not_found', `/v2/${'1'.repeat(64)}/simulate`);
  const notJson = await fetch(url(`/v2/${cid}/simulate`), { method: 'POST', body: '{"function":' });
  assert.equal(notJson.status, 400);
});

test('events: filters at the range edges, pages by offset and by cursor across new blocks', async () => {
  const all = (await get(`/events/${cid}`)).body;
  assert.deepEqual(Object.keys(all).sort(), ['contract_id', 'events', 'next_cursor', 'next_offset', 'rollback']);
  assert.equal(all.events.length, 6);
  assert.deepEqual(all.events[0], { name: 'Set', params: { label: 'hé llo/x', n: '5' }, txid: txids[0], block_height: h1, tx_index: 1, log_index: 0 });
  assert.deepEqual(all.events.map((e: any) => [e.block_height, e.tx_index, e.log_index, e.params.n]), [
    [h1, 1, 0, '5'], [h1, 1, 1, '5'], [h1, 2, 0, '6'], [h1, 2, 1, '7'], [h2, 1, 0, '8'], [h2, 1, 1, '9'],
  ]);
  assert.equal(all.next_offset, null);
  const count = async (q: string): Promise<number> => (await get(`/events/${cid}?${q}`)).body.events.length;
  assert.equal(await count(`from_block=${h1}&to_block=${h1}`), 4);
  assert.equal(await count(`from_block=${h2}&to_block=${h2}`), 2);
  assert.equal(await count(`to_block=${h1 - 1}`), 0);
  assert.equal(await count(`from_block=${h2 + 1}`), 0);
  assert.equal(await count(`from_block=${h1}&to_block=${h2}`), 6);
  assert.equal(await count(`event_name=Set`), 1);
  assert.equal(await count(`event_name=Tick&from_block=${h2}`), 2);
  assert.equal(await count(`event_name=Nope`), 0);

  const p1 = (await get(`/events/${cid}?limit=4`)).body;
  assert.equal(p1.events.length, 4);
  assert.equal(p1.next_offset, 4);
  const p2 = (await get(`/events/${cid}?limit=4&offset=4`)).body;
  assert.deepEqual([...p1.events, ...p2.events], all.events);
  assert.equal(p2.next_offset, null);

  // Cursor: two events, then a new block arrives; the cursor still continues exactly.
  const c1 = (await get(`/events/${cid}?limit=2`)).body;
  assert.ok(typeof c1.next_cursor === 'string');
  // The read replica: a repeated read is answered from it (same bytes, own request id) ...
  const r1 = await fetch(url(`/v2/${cid}/total`));
  const r2 = await fetch(url(`/v2/${cid}/total`));
  assert.equal(await r2.text(), await r1.text());
  assert.notEqual(r1.headers.get('x-request-id'), r2.headers.get('x-request-id'));
  assert.equal(r2.headers.get('content-type'), 'application/json');
  const t = await call('tick', [{ type: 'u64', value: 1n }]);
  devnet.chain.mine(1, [t]);
  const h3 = (await waitSynced(node, devnet)).height;
  // ... and dropped when a block changes the state: the first read after it sees the block.
  const fresh = (await get(`/v2/${cid}/total`)).body;
  assert.deepEqual([fresh.value, fresh.height], ['9', h3]);
  const c2 = (await get(`/events/${cid}?limit=3&cursor=${c1.next_cursor}`)).body;
  const c3 = (await get(`/events/${cid}?limit=1000&cursor=${c2.next_cursor}`)).body;
  const after = (await get(`/events/${cid}`)).body.events;
  assert.equal(after.length, 8);
  assert.deepEqual([...c1.events, ...c2.events, ...c3.events], after);
  assert.equal(c3.events[c3.events.length - 1].block_height, h3);
  // At the tail the cursor stays put until new events arrive.
  const tail = (await get(`/events/${cid}?cursor=${c3.next_cursor}`)).body;
  assert.deepEqual([tail.events, tail.next_cursor], [[], c3.next_cursor]);

  for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'from_block=x', 'to_block=1.5', `from_block=${h2}&to_block=${h1}`, 'cursor=abc', 'event_name=a-b', `event_name=${'n'.repeat(MAX_NAME_CHARS + 1)}`, `offset=1&cursor=${c1.next_cursor}`]) {
    const r = await get(`/events/${cid}?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error.code, 'bad_request', q);
  }
  assert.deepEqual((await get(`/events/${cid}?event_name=${'n'.repeat(MAX_NAME_CHARS)}`)).body.events, []);
  assert.equal((await get(`/events/${'2'.repeat(64)}`)).status, 404);
});

test('private call log: authentication matrix and pagination against total', async () => {
  const path = `/calls/${cid}`;
  const none = await fetch(url(path));
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('www-authenticate'), 'Bearer');
  assert.equal(((await none.json()) as any).error.code, 'unauthorized');
  const wrong = await fetch(url(path), { headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers.get('www-authenticate'), 'Bearer');
  const basic = await fetch(url(path), { headers: { authorization: `Basic ${TOKEN}` } });
  assert.equal(basic.status, 401);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const page = async (q: string): Promise<any> => {
    const r = await fetch(url(`${path}${q}`), { headers: auth });
    assert.equal(r.status, 200);
    return r.json();
  };
  const a = await page('');
  assert.equal(a.total, 5);
  assert.equal(a.limit, 50);
  assert.equal(a.offset, 0);
  assert.equal(a.calls.length, 5);
  assert.deepEqual(a.calls.slice(0, 4).map((c: any) => c.txid), txids);
  assert.deepEqual(a.calls.map((c: any) => c.status), ['executed', 'executed', 'failed', 'executed', 'executed']);
  assert.ok('confirmations' in a.calls[0]);
  const b = await page('?limit=2&offset=2');
  assert.deepEqual(b.calls.map((c: any) => c.txid), a.calls.slice(2, 4).map((c: any) => c.txid));
  const c = await page('?limit=2&offset=4');
  assert.equal(c.calls.length, 1);
  const d = await page('?offset=5');
  assert.deepEqual([d.total, d.calls], [5, []]);
  for (const q of ['?limit=0', '?limit=501', '?offset=x']) {
    const r = await fetch(url(`${path}${q}`), { headers: auth });
    assert.equal(r.status, 400, q);
  }
  const unknown = await fetch(url(`/calls/${'3'.repeat(64)}`), { headers: auth });
  assert.equal(unknown.status, 404);
  // clear_halt: same guard.
  assert.equal((await fetch(url('/admin/clear_halt'), { method: 'POST' })).status, 401);
  const cleared = await fetch(url('/admin/clear_halt'), { method: 'POST', headers: auth });
  assert.equal(cleared.status, 200);
  assert.deepEqual(await cleared.json(), { halted: false });
});

test('intake error codes: 409 conflict, 422 anchor_not_found / unknown_contract / invalid_bytecode', async () => {
  const conflict = await postJson(url('/contract_call'), { txid: txids[0], contract_id: cid, payload: payloads.get(txids[1]!) });
  assert.deepEqual([conflict.status, conflict.body.error.code], [409, 'conflict']);
  const noAnchor = await postJson(url('/contract_call'), { txid: 'ee'.repeat(32), contract_id: cid, payload: payloads.get(txids[0]!) });
  assert.equal(noAnchor.status, 422, JSON.stringify(noAnchor.body));
  assert.match(noAnchor.body.error.code, /^(anchor_not_found|duplicate_call_id|anchor_mismatch)$/);
  const secret = new Uint8Array(32).fill(3);
  const built = buildCall({ contractId: '9'.repeat(64), function: 'tick', args: [{ type: 'u64', value: 1n }], callerSecret: secret, outpoint: { txid: 'ee'.repeat(32), vout: 0 } });
  const unknown = await postJson(url('/contract_call'), { txid: 'ee'.repeat(32), contract_id: '9'.repeat(64), payload: built.payload });
  assert.deepEqual([unknown.status, unknown.body.error.code], [422, 'unknown_contract']);
  const badCode = await postJson(url('/deploy_contract'), { ...artifact, txid: 'dd'.repeat(32), bytecode: 'ff' });
  assert.deepEqual([badCode.status, badCode.body.error.code], [422, 'invalid_bytecode']);
});

test('metrics: Prometheus text with the node counters', async () => {
  const r = await fetch(url('/metrics'));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
  const text = await r.text();
  for (const name of [
    'svc_calls{status="executed"}', 'svc_blocks_applied_total', 'svc_block_apply_duration_seconds_bucket', 'svc_reorgs_total', 'svc_undo_log_depth',
    'svc_chain_lag_blocks 0', 'svc_pool_saturated 0', 'svc_peers 0', 'svc_intake_requests_total{kind="call",outcome="accepted"}',
    'svc_http_request_duration_seconds_bucket', 'svc_processed_height', 'svc_core_up 1', 'svc_simulations_total',
  ]) assert.ok(text.includes(name), name);
  assert.match(text, /svc_calls\{status="failed"\} 1/);
});

test('every answer above matches docs/openapi.yaml, and every operation was seen succeeding and failing', async () => {
  const concrete = (template: string): string =>
    template.replace('{contract_id}', cid).replace('{txid}', txids[0]!).replace('{field}', 'by_u64').replace('{arg}', '5').replace('{height}', String(h1));
  const spec = new SpecChecker();
  // Answers the tests above do not ask for: readiness, contract reads and their errors,
  // and a wrong method on every path (405). The 503s (core stalled) are checked in
  // test/rest/operator.test.ts.
  const expect = async (path: string, status: number): Promise<void> => assert.equal((await fetch(url(path))).status, status, path);
  await expect('/ready', 200);
  await expect(`/contracts/${cid}`, 200);
  await expect(`/contracts/${cid}/abi`, 200);
  await expect('/contracts/xyz', 400);
  await expect(`/contracts/${'7'.repeat(64)}`, 404);
  await expect(`/contracts/${'7'.repeat(64)}/abi`, 404);
  await expect('/contract_call/xyz/status', 400);
  await expect(`/contract_call/${'7'.repeat(64)}/status`, 404);
  await expect('/v2/state_root/x1', 400);
  await expect(`/v2/state_root/${h2 + 1000}`, 404);
  await expect('/v2/stream', 400); // a plain GET, without the WebSocket upgrade
  for (const op of spec.operations) {
    const [method, template] = op.split(' ') as [string, string];
    // DELETE: no route has it (GET on .../simulate is a field read, POST on a field path is 405 too).
    const r = await fetch(url(concrete(template)), { method: 'DELETE' });
    assert.equal(r.status, 405, `${method} ${template}`);
  }
  const problems = recorded.answers.flatMap((a) => spec.check(a));
  assert.deepEqual(problems, []);
  // The live feed succeeds with a 101 upgrade, which fetch cannot make: a WebSocket client
  // does (its messages are checked against docs/STREAM.md by test/rest/stream).
  const upgraded = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(url('/v2/stream').replace(/^http/, 'ws'));
    ws.on('upgrade', (res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => ws.close());
    ws.on('error', reject);
  });
  assert.equal(upgraded, 101);
  spec.seen.get('GET /v2/stream')?.add(101);
  const uncovered = spec.operations.filter((op) => {
    const statuses = [...(spec.seen.get(op) ?? [])];
    return !statuses.some((s) => s < 300) || !statuses.some((s) => s >= 400);
  });
  assert.deepEqual(uncovered.map((op) => `${op}: ${[...(spec.seen.get(op) ?? [])].join(', ')}`), []);
  console.log(`# openapi: ${recorded.answers.length} live answers checked over ${spec.operations.length} operations`);
});

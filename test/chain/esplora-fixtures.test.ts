/** The client reads every recorded Esplora answer in test/fixtures/esplora correctly. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NodeError } from '@svc-node/protocol/errors';
import { EsploraClient } from '../../src/chain/esplora-client.js';
import { merkleRootOfTxids, parseTxHex } from '@svc-node/protocol/bitcoin';
import { entryBody, fixtureText, manifest, startFixtureServer, type Listening } from '../helpers/chain-servers.js';

let srv: Listening;
let client: EsploraClient;
const UNKNOWN = '0000000000000000000000000000000000000000000000000000000000000001';

before(async () => {
  srv = await startFixtureServer();
  client = new EsploraClient({ baseUrl: `${srv.url}/api/`, budget: false, retries: 0 });
});
after(async () => {
  await client.close();
  await srv.close();
});

const ok = manifest.filter((e) => e.status === 200 && e.method === 'GET');
const body = (e: (typeof manifest)[number]) => entryBody(e).toString('utf8');
const match = (re: RegExp) => ok.flatMap((e) => (re.test(e.path) && !e.path.includes(UNKNOWN) ? [{ e, m: re.exec(e.path)! }] : []));

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof NodeError && err.code === code);
}

test('tip height and hash are text/plain values', async () => {
  assert.equal(await client.tipHeight(), 730000);
  assert.equal(await client.tipHash(), '0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529');
});

test('every /block-height answer is read', async () => {
  const rows = match(/^\/block-height\/(\d+)$/);
  assert.ok(rows.length >= 19);
  for (const { e, m } of rows) assert.equal(await client.blockHashAt(Number(m[1])), body(e));
});

test('every /block/:hash JSON parses and its header fields hash back to the id', async () => {
  const rows = match(/^\/block\/([0-9a-f]{64})$/);
  assert.ok(rows.length >= 6);
  for (const { e, m } of rows) {
    const b = await client.block(m[1]!);
    const j = JSON.parse(body(e));
    assert.equal(b.id, m[1]);
    assert.equal(b.height, j.height);
    assert.equal(b.previousblockhash, j.previousblockhash);
  }
});

test('every /header hashes to its block, and headers 0..10 link', async () => {
  const rows = match(/^\/block\/([0-9a-f]{64})\/header$/);
  assert.ok(rows.length >= 15);
  for (const { m } of rows) assert.equal((await client.blockHeader(m[1]!)).hash, m[1]);
  let prev = '00'.repeat(32);
  for (let h = 0; h <= 10; h++) {
    const hash = await client.blockHashAt(h);
    const hdr = await client.blockHeader(hash);
    assert.equal(hdr.prevHash, prev);
    prev = hash;
  }
});

test('every raw block parses, hashes to its hash, and its txids fold to the merkle root', async () => {
  const rows = match(/^\/block\/([0-9a-f]{64})\/raw$/);
  assert.ok(rows.length >= 5);
  for (const { m } of rows) {
    const b = await client.rawBlock(m[1]!);
    assert.equal(b.hash, m[1]);
    assert.equal(merkleRootOfTxids(b.txids), b.header.merkleRoot);
    const listed = ok.find((x) => x.path === `/block/${m[1]}/txids`);
    if (listed) assert.deepEqual(b.txids, JSON.parse(body(listed)));
  }
});

test('every /txids list is read and checked against its header; /txid/:i agrees', async () => {
  const fresh = new EsploraClient({ baseUrl: srv.url + '/api', budget: false, retries: 0 });
  for (const { e, m } of match(/^\/block\/([0-9a-f]{64})\/txids$/)) {
    const hdr = await fresh.blockHeader(m[1]!);
    assert.deepEqual(await fresh.blockTxids(m[1]!, hdr), JSON.parse(body(e)));
  }
  for (const { e, m } of match(/^\/block\/([0-9a-f]{64})\/txid\/(\d+)$/)) {
    assert.equal(await fresh.blockTxid(m[1]!, Number(m[2])), body(e));
  }
  await fresh.close();
});

test('every /tx/:txid/hex hashes to its txid and parses', async () => {
  const rows = match(/^\/tx\/([0-9a-f]{64})\/hex$/);
  assert.ok(rows.length >= 10);
  for (const { m } of rows) {
    const tx = await client.tx(m[1]!);
    assert.equal(tx.getId(), m[1]);
  }
});

test('statuses, outspend and outspends are read as recorded', async () => {
  for (const { e, m } of match(/^\/tx\/([0-9a-f]{64})\/status$/)) assert.deepEqual(await client.txStatus(m[1]!), JSON.parse(body(e)));
  for (const { e, m } of match(/^\/tx\/([0-9a-f]{64})\/outspend\/(\d+)$/)) {
    assert.deepEqual(await client.outspend(m[1]!, Number(m[2])), JSON.parse(body(e)));
  }
  for (const { e, m } of match(/^\/tx\/([0-9a-f]{64})\/outspends$/)) assert.deepEqual(await client.outspends(m[1]!), JSON.parse(body(e)));
  for (const { e, m } of match(/^\/block\/([0-9a-f]{64})\/status$/)) assert.deepEqual(await client.blockStatus(m[1]!), JSON.parse(body(e)));
  // The stale block of the recordings reads in_best_chain:false.
  const stale = await client.blockStatus('00000000000000000005e086e9e74aae37139ba27c5ba8b50ba5c773e22c6b61');
  assert.deepEqual(stale, { in_best_chain: false, height: null, next_best: null });
});

test('unknown items: the 200 answers are not existence, the 404s are not_found', async () => {
  assert.deepEqual(await client.txStatus(UNKNOWN), { confirmed: false });
  assert.deepEqual(await client.outspend(UNKNOWN, 0), { spent: false });
  assert.deepEqual(await client.blockStatus(UNKNOWN), { in_best_chain: false, height: null, next_best: null });
  await rejectsWith(client.tx(UNKNOWN), 'not_found');
  await rejectsWith(client.txHex(UNKNOWN), 'not_found');
  await rejectsWith(client.outspends(UNKNOWN), 'not_found');
  await rejectsWith(client.block(UNKNOWN), 'not_found');
  await rejectsWith(client.blockHeader(UNKNOWN), 'not_found');
  await rejectsWith(client.rawBlock(UNKNOWN), 'not_found');
  await rejectsWith(client.blockTxids(UNKNOWN), 'not_found');
  await rejectsWith(client.blockHashAt(99999999), 'not_found');
  await rejectsWith(client.blockTxid('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', 1), 'not_found');
});

test('POST /tx sends the hex as text and returns the checked txid', async () => {
  const post = manifest.find((e) => e.method === 'POST')!;
  const hex = fixtureText(post.request_body_file!).trim();
  assert.equal(await client.broadcast(hex), parseTxHex(hex).getId());
  assert.equal(await client.broadcast(hex), body(post));
});

test('the segwit block 542213 checks its witness commitment', async () => {
  const b = await client.rawBlock('000000000000000000143a2c56c0214236dadfd30df41d4a0345492ad6d861ec');
  assert.equal(b.txs.length, 4);
  assert.ok(b.txs.some((t) => t.hasWitnesses()));
});

test('blocks(): a recorded page is read, each header rebuilt and hashing to its id; a page cut short or altered is refused', async () => {
  const page = await client.blocks(2, { priority: 'tip' });
  assert.deepEqual(
    page.map((h) => [h.height, h.hash]),
    [2, 1, 0].map((height) => [height, body(ok.find((e) => e.path === `/block-height/${height}`)!)]),
  );
  for (const h of page) {
    assert.equal(h.header.length, 80);
    assert.equal(h.header.toString('hex'), body(ok.find((e) => e.path === `/block/${h.hash}/header`)!));
  }
  assert.equal(page[0]!.prevHash, page[1]!.hash);
  assert.equal(page[2]!.prevHash, '00'.repeat(32), 'genesis: no previous block');
  // mempool.space's recorded /api/blocks/730000 example holds two of the ten blocks.
  await assert.rejects(client.blocks(730000), (e: unknown) => e instanceof NodeError && e.code === 'chain_unavailable' && /cut short/.test(String(e.detail?.message)));
});

test('blocks(): an item whose fields do not hash to its id is an invalid answer', async () => {
  const { blocksPage, listen } = await import('../helpers/chain-servers.js');
  const page = blocksPage(1) as Record<string, unknown>[];
  page[0] = { ...page[0], nonce: (page[0]!.nonce as number) + 1 };
  const bad = await listen((_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page)));
  const c = new EsploraClient({ baseUrl: bad.url, budget: false, retries: 0 });
  await assert.rejects(c.blocks(1), (e: unknown) => e instanceof NodeError && e.code === 'chain_unavailable' && /do not hash to id/.test(String(e.detail?.message)));
  await c.close();
  await bad.close();
});

test('header() answers the recorded 80 bytes, checked against the hash', async () => {
  for (const { e, m } of match(/^\/block\/([0-9a-f]{64})\/header$/)) assert.equal((await client.header(m[1]!)).toString('hex'), body(e));
  await rejectsWith(client.header(UNKNOWN), 'not_found');
});

test('merkleProof() reads the recorded proofs; they fold to their block headers; unconfirmed or unknown is not_found', async () => {
  const { foldElectrum } = await import('../helpers/merkle-check.js');
  const rows = match(/^\/tx\/([0-9a-f]{64})\/merkle-proof$/);
  assert.equal(rows.length, 2);
  for (const { e, m } of rows) {
    const p = await client.merkleProof(m[1]!, { priority: 'deferred' });
    assert.deepEqual(p, JSON.parse(body(e)));
    const hash = body(ok.find((x) => x.path === `/block-height/${p.block_height}`)!);
    const header = await client.blockHeader(hash);
    assert.equal(foldElectrum(m[1]!, p.merkle, p.pos), header.merkleRoot);
  }
  await rejectsWith(client.merkleProof(UNKNOWN), 'not_found');
});

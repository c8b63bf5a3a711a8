/**
 * The devnet chain as the node's public endpoint (issue 26 item 7): the header and proof
 * routes in electrs's shapes (checked against the recorded answers), the client's new
 * methods against them, the public mode's budget (429 + Retry-After, recovery, control
 * requests exempt), exact counters per route, and blocks on demand: mainnet-sized filled
 * blocks of real signed payments, and thousands of nearly empty ones.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { NodeError } from '@svc-node/protocol/errors';
import { EsploraClient } from '../../src/chain/esplora-client.js';
import { parseRawBlock } from '@svc-node/protocol/bitcoin';
import { startDevnetChain, type DevnetChainHandle, type DevnetCounters } from '../../src/devnet/chain-server.js';
import { DevnetChain } from '../../src/devnet/chain.js';
import { DevnetControl } from '../../src/devnet/control-client.js';
import { entryBody, manifest } from '../helpers/chain-servers.js';
import { foldElectrum, readMerkleBlock } from '../helpers/merkle-check.js';
import { opReturn, spend, wallet } from '../helpers/txbuilder.js';

let dn: DevnetChainHandle;
let client: EsploraClient;
const alice = wallet('endpoint-alice');
const bob = wallet('endpoint-bob');

const recorded = (path: string): string => entryBody(manifest.find((e) => e.path === path && e.method === 'GET')!).toString('utf8');
const F2957 = 'f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b';

async function get(url: string, init?: RequestInit): Promise<{ status: number; type: string; text: string; headers: Headers }> {
  const r = await fetch(url, init);
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text(), headers: r.headers };
}

before(async () => {
  dn = await startDevnetChain({ initialBlocks: 101 });
  client = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
  // A block of 6 transactions (odd levels in its merkle tree): coinbase, funding, and payments.
  const f = dn.chain.faucet(alice.address, 1_000_000);
  dn.chain.mine(1);
  let coin = { txid: f.txid, vout: 0, value: 1_000_000n };
  for (let i = 0; i < 4; i++) {
    const t = spend(alice, [coin], [{ script: alice.script, value: coin.value - 1_000n }]);
    dn.chain.submitTx(t.toHex());
    coin = { txid: t.getId(), vout: 0, value: coin.value - 1_000n };
  }
  dn.chain.faucet(bob.address, 50_000);
  dn.chain.mine(1);
});
after(async () => {
  await client.close();
  await dn.close();
});

test('GET /blocks and /blocks/:start_height: ten block objects newest first, in the recorded shape; electrs\'s edges', async () => {
  const c = dn.chain;
  const tip = await get(`${dn.url}/blocks`);
  assert.equal(tip.status, 200);
  assert.equal(tip.type, 'application/json');
  const page = JSON.parse(tip.text) as Record<string, unknown>[];
  assert.deepEqual(page.map((b) => b.height), Array.from({ length: 10 }, (_, i) => c.height - i));
  // Each item is the /block/:hash object, with the recorded item's keys in its order.
  const recordedItem = JSON.parse(recorded('/block/0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529'));
  for (const b of page) {
    assert.deepEqual(Object.keys(b), Object.keys(recordedItem));
    assert.deepEqual(b, JSON.parse((await get(`${dn.url}/block/${b.id as string}`)).text));
  }
  assert.deepEqual(JSON.parse((await get(`${dn.url}/blocks/50`)).text).map((b: { height: number }) => b.height), [50, 49, 48, 47, 46, 45, 44, 43, 42, 41]);
  // Near genesis the page stops there; a start that is not a number reads as the tip (electrs); above the tip: not found.
  assert.deepEqual(JSON.parse((await get(`${dn.url}/api/blocks/3`)).text).map((b: { height: number }) => b.height), [3, 2, 1, 0]);
  assert.equal(JSON.parse((await get(`${dn.url}/blocks/tip`)).text)[0].height, c.height);
  const above = await get(`${dn.url}/blocks/${c.height + 1}`);
  assert.deepEqual([above.status, above.type, above.text], [404, 'text/plain', recorded('/block-height/99999999')]);
});

test('blocks(), header(): headers rebuilt from the devnet\'s pages hash to the devnet\'s blocks', async () => {
  const c = dn.chain;
  const page = await client.blocks(undefined, { priority: 'tip' });
  assert.equal(page.length, 10);
  page.forEach((h, i) => {
    const b = c.blockAt(c.height - i)!;
    assert.deepEqual([h.height, h.hash, h.header.toString('hex'), h.prevHash], [b.height, b.hash, b.header.hex, b.header.prevHash]);
  });
  assert.deepEqual((await client.blocks(2)).map((h) => h.height), [2, 1, 0]);
  await assert.rejects(client.blocks(c.height + 1), (e: unknown) => e instanceof NodeError && e.code === 'not_found');
  assert.equal((await client.header(c.tip.hash)).toString('hex'), c.tip.header.hex);
});

/** The block of six transactions made in before(). */
const SIX = 103;

test('GET /tx/:txid/merkle-proof: the recorded shape, folding to the header; unconfirmed is the recorded 404', async () => {
  const b = dn.chain.blockAt(SIX)!;
  assert.equal(b.txids.length, 6);
  const recordedProof = JSON.parse(recorded(`/tx/${F2957}/merkle-proof`));
  for (let pos = 0; pos < b.txids.length; pos++) {
    const r = await get(`${dn.url}/tx/${b.txids[pos]}/merkle-proof`);
    assert.equal(r.type, 'application/json');
    const proof = JSON.parse(r.text);
    assert.deepEqual(Object.keys(proof), Object.keys(recordedProof));
    assert.deepEqual([proof.block_height, proof.pos, proof.merkle.length], [b.height, pos, 3]);
    assert.equal(foldElectrum(b.txids[pos]!, proof.merkle, proof.pos), b.header.merkleRoot);
    assert.deepEqual(await client.merkleProof(b.txids[pos]!), proof);
  }
  // The last leaf of an odd level pairs with itself.
  assert.equal(JSON.parse((await get(`${dn.url}/tx/${b.txids[5]}/merkle-proof`)).text).merkle[0], b.txids[4]);
  // A one-transaction block: an empty branch.
  assert.deepEqual(JSON.parse((await get(`${dn.url}/tx/${dn.chain.blockAt(5)!.txids[0]}/merkle-proof`)).text), { block_height: 5, merkle: [], pos: 0 });
  const pending = spend(bob, [{ txid: dn.chain.utxosOf(bob.script)[0]!.txid, vout: dn.chain.utxosOf(bob.script)[0]!.vout, value: 50_000n }], [{ script: alice.script, value: 49_000n }]);
  dn.chain.submitTx(pending.toHex());
  for (const sub of ['merkle-proof', 'merkleblock-proof']) {
    const r = await get(`${dn.url}/tx/${pending.getId()}/${sub}`);
    assert.deepEqual([r.status, r.type, r.text], [404, 'text/plain', recorded(`/tx/${'0'.repeat(63)}1/merkle-proof`)]);
  }
  await assert.rejects(client.merkleProof(pending.getId()), (e: unknown) => e instanceof NodeError && e.code === 'not_found');
});

test('GET /tx/:txid/merkleblock-proof: bitcoind\'s merkleblock, read by the same reader as the recorded one', async () => {
  // The recorded proof: f2957c19 at position 919 of 1,944, folding to its header's root.
  const rec = readMerkleBlock(recorded(`/tx/${F2957}/merkleblock-proof`).trim());
  assert.deepEqual([rec.total, rec.matched, rec.usedAll], [1944, [{ txid: F2957, pos: 919 }], true]);
  assert.equal(rec.root, Buffer.from(rec.header.subarray(36, 68)).reverse().toString('hex'));
  const b = dn.chain.blockAt(SIX)!;
  for (let pos = 0; pos < b.txids.length; pos++) {
    const r = await get(`${dn.url}/tx/${b.txids[pos]}/merkleblock-proof`);
    assert.equal(r.type, 'text/plain');
    const mine = readMerkleBlock(r.text);
    assert.deepEqual([mine.header.toString('hex'), mine.total, mine.matched, mine.root, mine.usedAll], [b.header.hex, 6, [{ txid: b.txids[pos], pos }], b.header.merkleRoot, true]);
  }
});

test('public mode: past the budget a request is answered 429 with Retry-After and electrs-like text, takes no token, and recovers; control requests are exempt', async () => {
  let now = 0;
  // 3,600 an hour: a token a second; burst 3.
  const pub = await startDevnetChain({ initialBlocks: 2, publicMode: { requestsPerHour: 3_600, burst: 3 }, now: () => now });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await get(`${pub.url}/blocks/tip/height`)).status, 200);
    const refused = await get(`${pub.url}/blocks/tip/hash`);
    assert.deepEqual([refused.status, refused.type, refused.text, refused.headers.get('retry-after')], [429, 'text/plain', 'Too Many Requests', '1']);
    // Control requests are neither limited nor counted.
    for (let i = 0; i < 5; i++) assert.equal((await get(`${pub.url}/devnet/info`)).status, 200);
    assert.deepEqual(JSON.parse((await get(`${pub.url}/devnet/info`)).text).public_mode, { requests_per_hour: 3_600, burst: 3 });
    now = 999;
    assert.equal((await get(`${pub.url}/blocks/tip/hash`)).headers.get('retry-after'), '1', 'a refused request took no token: still one due');
    now = 1_000;
    assert.equal((await get(`${pub.url}/blocks/tip/hash`)).status, 200);
    now = 1_500;
    assert.equal((await get(`${pub.url}/blocks/tip/hash`)).status, 429);
    now = 1_000 + 3_600_000;
    for (let i = 0; i < 3; i++) assert.equal((await get(`${pub.url}/block-height/1`)).status, 200, 'the burst is back after a quiet spell');
    assert.equal((await get(`${pub.url}/block-height/1`)).status, 429);
    const k = pub.endpoint.counters();
    assert.deepEqual([k.total.all.requests, k.total['2xx'].requests, k.total['429'].requests], [11, 7, 4]);
  } finally {
    await pub.close();
  }
});

test('public mode: the node\'s client is paused by the 429, honours Retry-After, counts it, and gets its answer', async () => {
  const pub = await startDevnetChain({ initialBlocks: 2, publicMode: { requestsPerHour: 3_600, burst: 2 } });
  const c = new EsploraClient({ baseUrl: pub.url, retries: 3, budget: { requestsPerHour: 1_000_000, burst: 100, maxConcurrent: 4 } });
  try {
    const got = await Promise.all([c.tipHeight({ priority: 'tip' }), c.tipHash({ priority: 'tip' }), c.blockHashAt(1, { priority: 'intake' })]);
    assert.deepEqual(got, [2, pub.chain.tip.hash, pub.chain.blockAt(1)!.hash]);
    const st = c.budgetStatus()!;
    assert.ok(st.throttled_total >= 1, `429s counted: ${st.throttled_total}`);
    assert.equal(pub.endpoint.counters().total['429'].requests, st.throttled_total);
  } finally {
    await c.close();
    await pub.close();
  }
});

test('counters: exact requests and bytes per route and status class for a known sequence; GET /devnet/counters and the reset', async () => {
  const ctl = new DevnetControl(dn.url);
  await ctl.resetCounters();
  const sizes: Record<string, number[]> = {};
  const hit = async (path: string, route: string): Promise<void> => {
    const r = await fetch(dn.url + path);
    const n = (await r.arrayBuffer()).byteLength;
    (sizes[`${route} ${r.status}`] ??= []).push(n);
  };
  const tip = dn.chain.blockAt(SIX)!;
  await hit('/blocks/tip/height', '/blocks/tip/height');
  await hit('/blocks/tip/height', '/blocks/tip/height');
  await hit(`/api/block/${tip.hash}/raw`, '/block/:id/raw');
  await hit(`/tx/${tip.txids[1]}/hex`, '/tx/:id/hex');
  await hit(`/tx/${'0'.repeat(63)}1/hex`, '/tx/:id/hex');
  await hit('/blocks/7', '/blocks/:n');
  await hit('/nope', '/nope');
  // one route whatever the address (a wallet's UTXOs): keyed by the route, not by each address
  const info = await ctl.info();
  await hit(`/address/${info.faucet_address}/utxo`, '/address/:addr/utxo');
  await hit('/address/bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080/utxo', '/address/:addr/utxo');
  const k: DevnetCounters = await ctl.counters();
  const sum = (key: string): number => (sizes[key] ?? []).reduce((a, b) => a + b, 0);
  assert.deepEqual(Object.keys(k.routes).sort(), ['/address/:addr/utxo', '/block/:id/raw', '/blocks/:n', '/blocks/tip/height', '/nope', '/tx/:id/hex']);
  assert.deepEqual(k.routes['/address/:addr/utxo']!['2xx'], { requests: 2, bytes: sum('/address/:addr/utxo 200') });
  assert.deepEqual(k.routes['/blocks/tip/height']!.all, { requests: 2, bytes: sum('/blocks/tip/height 200') });
  assert.deepEqual(k.routes['/block/:id/raw']!['2xx'], { requests: 1, bytes: tip.raw.length });
  assert.deepEqual(k.routes['/tx/:id/hex']!['2xx'], { requests: 1, bytes: sum('/tx/:id/hex 200') });
  assert.deepEqual(k.routes['/tx/:id/hex']!['4xx'], { requests: 1, bytes: 'Transaction not found'.length });
  assert.deepEqual(k.routes['/tx/:id/hex']!['429'], { requests: 0, bytes: 0 });
  assert.deepEqual(k.routes['/nope']!['4xx'].requests, 1);
  assert.deepEqual(k.total.all, { requests: 9, bytes: Object.keys(sizes).reduce((a, key) => a + sum(key), 0) });
  assert.deepEqual(k.total['4xx'].requests, 2);
  const was = await ctl.resetCounters();
  assert.deepEqual(was, k);
  assert.deepEqual((await ctl.counters()).total.all, { requests: 0, bytes: 0 });
});

test('mine with fill "mainnet": ~1.5 MB blocks of real signed payments under the weight limit, through the control API', async () => {
  const ctl = new DevnetControl(dn.url);
  const before = dn.chain.height;
  const r = await ctl.mine(2, 'mainnet');
  assert.equal(r.height, before + 2);
  for (const hash of r.hashes) {
    const b = dn.chain.blockByHash(hash)!;
    assert.ok(b.size >= 1_500_000 && b.size < 1_500_000 + 410, `size ${b.size}: the first payment past 1.5 MB ends it`);
    assert.ok(b.weight <= 4_000_000, `weight ${b.weight}`);
    assert.ok(b.txs.length >= 3_000 && b.txs.length <= 4_000, `${b.txs.length} transactions`);
    // The raw block passes the client's checks (merkle root, witness commitment).
    assert.equal(parseRawBlock(b.raw, hash).txids.length, b.txs.length);
    // Every input of a sample of payments carries a valid signature over its BIP-143 digest.
    for (const tx of b.txs.slice(1).filter((_, i) => i % 97 === 0)) {
      tx.ins.forEach((inp, i) => {
        const prev = dn.chain.prevout(Buffer.from(inp.hash).reverse().toString('hex'), inp.index)!;
        const [sigRaw, pub] = inp.witness as [Uint8Array, Uint8Array];
        const sig = bitcoin.script.signature.decode(sigRaw);
        const digest = tx.hashForWitnessV0(i, bitcoin.payments.p2pkh({ pubkey: pub }).output!, prev.value, sig.hashType);
        assert.ok(ecc.verify(digest, pub, sig.signature, true), `signature of ${tx.getId()}:${i}`);
        assert.deepEqual(Buffer.from(prev.script), Buffer.from(bitcoin.payments.p2wpkh({ pubkey: pub }).output!));
      });
    }
  }
  // The node's client reads them as it reads any block.
  assert.equal((await client.rawBlock(r.hashes[1]!)).txs.length, dn.chain.blockByHash(r.hashes[1]!)!.txs.length);
});

test('mine with fill by transaction count: exactly that many, mempool transactions first; bad fills are refused', async () => {
  const pay = spend(alice, [dn.chain.utxosOf(alice.script).find((u) => u.status.confirmed)!].map((u) => ({ txid: u.txid, vout: u.vout, value: u.value })), [{ script: bob.script, value: 10_000n }]);
  dn.chain.submitTx(pay.toHex());
  const r = dn.chain.mine(1, undefined, { txs: 500 });
  const b = dn.chain.blockByHash(r.hashes[0]!)!;
  assert.equal(b.txs.length, 500);
  assert.equal(b.txids[1], pay.getId());
  for (const fill of ['huge', { txs: 0 }, {}, { bytes: 5_000_000 }]) {
    const res = await get(`${dn.url}/devnet/mine`, { method: 'POST', body: JSON.stringify({ blocks: 1, fill }) });
    assert.equal(res.status, 400, JSON.stringify(fill));
    assert.match(JSON.parse(res.text).error.message, /fill/);
  }
  const many = await get(`${dn.url}/devnet/mine`, { method: 'POST', body: JSON.stringify({ blocks: 201, fill: 'mainnet' }) });
  assert.deepEqual([many.status, JSON.parse(many.text).error.message], [400, 'blocks must be an integer in 1..200 when filled']);
});

test('mine many nearly empty blocks: valid linked regtest headers, served ten a page', async () => {
  const c = new DevnetChain();
  const r = c.mine(5_000);
  assert.equal(r.height, 5_000);
  for (let h = 1; h <= c.height; h += 499) assert.equal(c.blockAt(h)!.header.prevHash, c.blockAt(h - 1)!.hash);
  assert.throws(() => c.mine(100_001), /blocks must be an integer in 1\.\.100000/);
});

test('npm run devnet:chain -- --public --requests-per-hour N --burst N: the flags reach the public mode; bad values are one line', async () => {
  const { spawn, spawnSync } = await import('node:child_process');
  const { join } = await import('node:path');
  const { repoRoot } = await import('../helpers/paths.js');
  const main = join(repoRoot, 'dist', 'src', 'devnet', 'chain-main.js');
  const proc = spawn(process.execPath, [main, '--port', '0', '--initial-blocks', '3', '--requests-per-hour', '60', '--burst', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout!.once('data', (c: Buffer) => resolve(c.toString('utf8').split('\n')[0]!));
      proc.once('exit', (code) => reject(new Error(`devnet:chain exited ${code}`)));
    });
    assert.deepEqual(JSON.parse((await get(`${url}/devnet/info`)).text).public_mode, { requests_per_hour: 60, burst: 2 });
    assert.deepEqual([(await get(`${url}/blocks/tip/height`)).status, (await get(`${url}/blocks/tip/height`)).status], [200, 200]);
    const refused = await get(`${url}/blocks/tip/height`);
    // 60 an hour: the next token within a minute.
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 59 && Number(refused.headers.get('retry-after')) <= 60);
  } finally {
    proc.kill('SIGTERM');
  }
  const bad = spawnSync(process.execPath, [main, '--port', '0', '--burst', '0'], { encoding: 'utf8' });
  assert.deepEqual([bad.status, bad.stderr.trim()], [1, '--burst must be an integer from 1 to 1000000']);
});

test('reorg through the control API (POST /devnet/reorg): a 64-byte spend mined on the new branch; a refused reorg changes nothing', async () => {
  const ctl = new DevnetControl(dn.url);
  const coin = dn.chain.utxosOf(alice.script).find((u) => u.status.confirmed)!;
  // One witness input and one output of a 4-byte script: 64 bytes without the witness
  // (non-standard: Bitcoin Core relays nothing under 65; the devnet mines what is valid).
  const tiny = spend(alice, [{ txid: coin.txid, vout: coin.vout, value: coin.value }], [{ script: opReturn(Uint8Array.of(1, 2)), value: 0n }]);
  assert.equal(tiny.byteLength(false), 64);
  const tip = dn.chain.height;
  const r = await ctl.reorg({ depth: 1, blocks: 2, txs: [tiny.toHex()] });
  assert.equal(r.height, tip + 1);
  assert.equal(r.hashes.length, 2);
  assert.deepEqual(dn.chain.txPosition(tiny.getId())?.height, tip);
  assert.equal(dn.chain.blockAt(tip)!.hash, r.hashes[0]);
  const before = dn.chain.tip.hash;
  await assert.rejects(ctl.reorg({ depth: dn.chain.height + 1 }), (e: Error & { code?: string; status?: number }) => e.code === 'bad_request' && e.status === 400 && /depth must be an integer/.test(e.message));
  await assert.rejects(ctl.reorg({ depth: 1, txs: [tiny.toHex()] }), (e: Error & { code?: string }) => e.code === 'bad_request' && /refused/.test(e.message));
  assert.equal(dn.chain.tip.hash, before, 'a refused reorg leaves the chain as it was');
});

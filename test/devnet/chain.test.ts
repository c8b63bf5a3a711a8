/** The devnet chain: Esplora shapes, content types and error texts as recorded; mempool rules; control endpoints. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { startDevnetChain, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { DevnetChain, REGTEST_GENESIS_HASH } from '../../src/devnet/chain.js';
import { hashMeetsTarget, parseHeaderBytes, parseRawBlock } from '@svc-node/protocol/bitcoin';
import { entryBody, manifest } from '../helpers/chain-servers.js';
import { opReturn, spend, spendTaproot, taprootWallet, wallet, type Utxo } from '../helpers/txbuilder.js';

let dn: DevnetChainHandle;
const alice = wallet('alice');
const bob = wallet('bob');
const MAIN_GENESIS = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const UNKNOWN = '0000000000000000000000000000000000000000000000000000000000000001';

interface Res {
  status: number;
  type: string;
  text: string;
  bytes: Buffer;
  json: () => any;
}
async function get(path: string, init?: RequestInit): Promise<Res> {
  const r = await fetch(dn.url + path, init);
  const bytes = Buffer.from(await r.arrayBuffer());
  const text = bytes.toString('utf8');
  return { status: r.status, type: r.headers.get('content-type') ?? '', text, bytes, json: () => JSON.parse(text) };
}
const post = (path: string, body: unknown) => get(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const fixtureJson = (path: string) => JSON.parse(entryBody(manifest.find((e) => e.path === path && e.method === 'GET')!).toString('utf8'));
const keys = (o: object) => Object.keys(o);

async function fund(w: typeof alice, sats: number): Promise<Utxo> {
  const r = await post('/devnet/faucet', { address: w.address, sats });
  assert.equal(r.status, 200, r.text);
  const { txid, vout } = r.json();
  return { txid, vout, value: BigInt(sats) };
}

before(async () => {
  dn = await startDevnetChain({ initialBlocks: 101 });
});
after(() => dn.close());

test('blocks: real regtest blocks, linked, PoW at 0x207fffff, BIP-34 heights', () => {
  const c = dn.chain;
  assert.equal(c.height, 101);
  assert.equal(c.blockAt(0)!.hash, REGTEST_GENESIS_HASH);
  for (let h = 1; h <= c.height; h++) {
    const b = c.blockAt(h)!;
    assert.equal(b.header.prevHash, c.blockAt(h - 1)!.hash);
    assert.equal(b.header.bits, 0x207fffff);
    assert.ok(hashMeetsTarget(b.hash, b.header.bits));
    const push = bitcoin.script.decompile(b.txs[0]!.ins[0]!.script)![0]!;
    const n = typeof push === 'number' ? push - 0x50 : bitcoin.script.number.decode(Buffer.from(push));
    assert.equal(n, h);
    parseRawBlock(b.raw, b.hash);
  }
  assert.match(c.faucetAddress, /^bcrt1q/);
});

test('every endpoint answers in the recorded shapes and content types', async () => {
  const u = await fund(alice, 1_000_000);
  const mined = (await post('/devnet/mine', { blocks: 1 })).json();
  assert.deepEqual(keys(mined), ['hashes', 'height']);
  const hash = mined.hashes[0] as string;

  const th = await get('/blocks/tip/height');
  assert.equal(th.type, 'text/plain');
  assert.equal(th.text, String(mined.height));
  const tip = await get('/blocks/tip/hash');
  assert.equal(tip.type, 'text/plain');
  assert.equal(tip.text, hash);
  assert.equal((await get(`/block-height/${mined.height}`)).text, hash);
  assert.equal((await get('/api/block-height/0')).text, REGTEST_GENESIS_HASH);

  const bj = await get(`/block/${hash}`);
  assert.equal(bj.type, 'application/json');
  assert.deepEqual(keys(bj.json()), keys(fixtureJson(`/block/${MAIN_GENESIS}`)));
  assert.equal(bj.json().previousblockhash, dn.chain.blockAt(mined.height - 1)!.hash);
  assert.equal((await get(`/block/${REGTEST_GENESIS_HASH}`)).json().previousblockhash, null);

  const st = await get(`/block/${hash}/status`);
  assert.deepEqual(keys(st.json()), keys(fixtureJson(`/block/${MAIN_GENESIS}/status`)));
  assert.deepEqual(st.json(), { in_best_chain: true, height: mined.height, next_best: null });
  assert.equal((await get(`/block/${REGTEST_GENESIS_HASH}/status`)).json().next_best, dn.chain.blockAt(1)!.hash);

  const hd = await get(`/block/${hash}/header`);
  assert.equal(hd.type, 'text/plain');
  assert.equal(parseHeaderBytes(Buffer.from(hd.text, 'hex')).hash, hash);
  const raw = await get(`/block/${hash}/raw`);
  assert.equal(raw.type, 'application/octet-stream');
  const pb = parseRawBlock(raw.bytes, hash);
  const ids = await get(`/block/${hash}/txids`);
  assert.equal(ids.type, 'application/json');
  assert.deepEqual(ids.json(), pb.txids);
  assert.equal((await get(`/block/${hash}/txid/1`)).text, u.txid);
  // The block holds a segwit tx: its coinbase carries the witness commitment.
  const cbJson = (await get(`/tx/${pb.txids[0]}`)).json();
  assert.ok(cbJson.vout.some((o: any) => o.scriptpubkey.startsWith('6a24aa21a9ed') && o.scriptpubkey_type === 'op_return' && !('scriptpubkey_address' in o)));
  const txs = await get(`/block/${hash}/txs`);
  assert.equal(txs.json().length, 2);

  const tj = await get(`/tx/${u.txid}`);
  assert.equal(tj.type, 'application/json');
  const rec = fixtureJson('/tx/f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b');
  const t = tj.json();
  assert.deepEqual(keys(t), keys(rec));
  const recVin = new Set(keys(rec.vin[0]));
  for (const k of keys(t.vin[0])) assert.ok(recVin.has(k), `vin key ${k}`);
  assert.deepEqual(keys(t.vout[0]), keys(rec.vout[0]));
  assert.deepEqual(keys(t.vin[0].prevout), keys(rec.vin[0].prevout));
  assert.equal(t.vout[0].scriptpubkey_address, alice.address);
  assert.equal(t.vout[0].scriptpubkey_type, 'v0_p2wpkh');
  assert.equal(t.vout[0].scriptpubkey_asm, `OP_0 OP_PUSHBYTES_20 ${Buffer.from(alice.script.subarray(2)).toString('hex')}`);
  assert.ok(t.fee > 0);
  // A coinbase without witness has the recorded coinbase keys exactly.
  const cb101 = (await get(`/tx/${dn.chain.blockAt(101)!.txids[0]}`)).json();
  const recCb = fixtureJson('/tx/4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b');
  assert.deepEqual(keys(cb101), keys(recCb));
  assert.deepEqual(keys(cb101.vin[0]), keys(recCb.vin[0]));
  assert.equal(cb101.vin[0].prevout, null);
  assert.equal(cb101.vin[0].vout, 4294967295);

  const hx = await get(`/tx/${u.txid}/hex`);
  assert.equal(hx.type, 'text/plain');
  const rw = await get(`/tx/${u.txid}/raw`);
  assert.equal(rw.type, 'application/octet-stream');
  assert.equal(rw.bytes.toString('hex'), hx.text);

  const ts = await get(`/tx/${u.txid}/status`);
  assert.deepEqual(keys(ts.json()), keys(fixtureJson('/tx/f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b/status')));
  assert.deepEqual(ts.json(), { confirmed: true, block_height: mined.height, block_hash: hash, block_time: pb.header.timestamp });

  // Spend alice's output (unconfirmed) and read the outspend shapes.
  const s = spend(alice, [u], [{ script: bob.script, value: 999_000n }]);
  const pr = await post('/tx', s.toHex());
  assert.equal(pr.type, 'text/plain');
  assert.equal(pr.text, s.getId());
  const os = await get(`/tx/${u.txid}/outspend/0`);
  const recOs = fixtureJson('/tx/f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16/outspend/0');
  assert.deepEqual(keys(os.json()), keys(recOs));
  assert.deepEqual(os.json(), { spent: true, txid: s.getId(), vin: 0, status: { confirmed: false } });
  const oss = (await get(`/tx/${u.txid}/outspends`)).json();
  assert.equal(oss.length, 2);
  assert.deepEqual(oss[1], { spent: false });
  assert.deepEqual((await get(`/tx/${s.getId()}/status`)).json(), { confirmed: false });

  const ut = (await get(`/address/${bob.address}/utxo`)).json();
  assert.deepEqual(ut, [{ txid: s.getId(), vout: 0, status: { confirmed: false }, value: 999000 }]);
  assert.deepEqual((await get(`/address/${alice.address}/utxo`)).json(), [], 'mempool-spent outputs are left out');
  await post('/devnet/mine', { blocks: 1 });
  assert.equal((await get(`/address/${bob.address}/utxo`)).json()[0].status.confirmed, true);
});

test('errors and unknown items answer exactly as recorded', async () => {
  const odd = manifest.filter((e) => e.method === 'GET' && (e.status !== 200 || e.path.includes(UNKNOWN)));
  assert.ok(odd.length >= 20);
  for (const e of odd) {
    const path = e.path.replaceAll(MAIN_GENESIS, REGTEST_GENESIS_HASH).replace('/block/00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee/txs/1', `/block/${REGTEST_GENESIS_HASH}/txs/1`);
    if (path.endsWith('/merkle-proof')) continue; // not served by the devnet
    const r = await get(path);
    assert.equal(r.status, e.status, path);
    assert.equal(r.type, e.content_type, path);
    assert.equal(r.text, entryBody(e).toString('utf8'), path);
  }
});

test('the mempool refuses double spends, unknown or immature inputs, overspends and bad signatures', async () => {
  const u = await fund(alice, 500_000);
  const a = spend(alice, [u], [{ script: bob.script, value: 400_000n }]);
  const b = spend(alice, [u], [{ script: bob.script, value: 300_000n }]);
  assert.equal((await post('/tx', a.toHex())).status, 200);
  const dup = await post('/tx', a.toHex());
  assert.equal(dup.status, 400);
  assert.match(dup.text, /^sendrawtransaction RPC error: \{"code":-27,"message":"txn-already-in-mempool"\}$/);
  const ds = await post('/tx', b.toHex());
  assert.equal(ds.status, 400);
  assert.equal(ds.type, 'text/plain');
  assert.match(ds.text, /txn-mempool-conflict/);
  const unknown = spend(alice, [{ txid: UNKNOWN, vout: 0, value: 1000n }], [{ script: bob.script, value: 500n }]);
  assert.match((await post('/tx', unknown.toHex())).text, /bad-txns-inputs-missingorspent/);
  const u2 = await fund(alice, 100_000);
  assert.match((await post('/tx', spend(alice, [u2], [{ script: bob.script, value: 100_001n }]).toHex())).text, /bad-txns-in-belowout/);
  const forged = spend(bob, [u2], [{ script: bob.script, value: 90_000n }]); // bob signs alice's coin
  assert.match((await post('/tx', forged.toHex())).text, /mandatory-script-verify-flag-failed/);
  const badSig = spend(alice, [u2], [{ script: bob.script, value: 90_000n }]);
  const w = badSig.ins[0]!.witness;
  const sig = Buffer.from(w[0]!);
  sig[10] ^= 1;
  badSig.setWitness(0, [sig, w[1]!]);
  assert.match((await post('/tx', badSig.toHex())).text, /mandatory-script-verify-flag-failed|RPC error/);
  assert.match((await post('/tx', 'zz')).text, /"code":-22,"message":"TX decode failed"/);
  // A coinbase with fewer than 100 confirmations cannot be spent.
  const c = dn.chain;
  const young = c.blockAt(c.height)!;
  const fk = { key: c.faucetKey, address: c.faucetAddress, script: c.faucetScript };
  const imm = spend(fk, [{ txid: young.txids[0]!, vout: 0, value: young.txs[0]!.outs[0]!.value }], [{ script: bob.script, value: 1000n }]);
  assert.match((await post('/tx', imm.toHex())).text, /premature-spend-of-coinbase/);
  await post('/devnet/mine', { blocks: 1 });
});

test('mine: with txids the first block holds exactly those, in order; without, the whole mempool', async () => {
  const x = await fund(alice, 20_000);
  const y = await fund(alice, 30_000);
  const z = await fund(alice, 40_000);
  const r = (await post('/devnet/mine', { blocks: 2, txids: [z.txid, x.txid] })).json();
  assert.equal(r.hashes.length, 2);
  assert.deepEqual(dn.chain.blockByHash(r.hashes[0])!.txids.slice(1), [z.txid, x.txid]);
  assert.deepEqual(dn.chain.blockByHash(r.hashes[1])!.txids.length, 1);
  assert.deepEqual(dn.chain.mempoolTxids(), [y.txid]);
  const bad = await post('/devnet/mine', { blocks: 1, txids: [UNKNOWN] });
  assert.equal(bad.status, 400);
  assert.equal(bad.type, 'application/json');
  assert.equal(bad.json().error.code, 'bad_request');
  const all = (await post('/devnet/mine', { blocks: 1 })).json();
  assert.deepEqual(dn.chain.blockByHash(all.hashes[0])!.txids.slice(1), [y.txid]);
  assert.deepEqual(dn.chain.mempoolTxids(), []);
  const info = (await get('/devnet/info')).json();
  assert.equal(info.faucet_address, dn.chain.faucetAddress);
  assert.equal(info.tip_height, all.height);
  assert.equal((await post('/devnet/faucet', { address: 'bc1qnotregtest', sats: 1000 })).status, 400);
});

test('reorg: replaces blocks with new hashes, re-mines, drops to the mempool, and conflicts evict', async () => {
  const u = await fund(alice, 60_000);
  const v = await fund(alice, 70_000);
  const before = (await post('/devnet/mine', { blocks: 2 })).json();
  const oldBlock = before.hashes[0] as string;
  const r = (await post('/devnet/reorg', { depth: 2, drop: [v.txid] })).json();
  assert.equal(r.height, before.height + 1);
  assert.equal(r.hashes.length, 3);
  assert.ok(!r.hashes.includes(oldBlock));
  assert.deepEqual(dn.chain.blockByHash(r.hashes[0])!.txids.slice(1), [u.txid]);
  assert.deepEqual(dn.chain.mempoolTxids(), [v.txid]);
  assert.deepEqual((await get(`/tx/${v.txid}/status`)).json(), { confirmed: false });
  // The stale block: 404 on /block, in_best_chain false on /status, /txids still answers.
  assert.equal((await get(`/block/${oldBlock}`)).text, 'Block not found');
  assert.equal((await get(`/block/${oldBlock}/raw`)).status, 404);
  assert.deepEqual((await get(`/block/${oldBlock}/status`)).json(), { in_best_chain: false, height: null, next_best: null });
  assert.deepEqual((await get(`/block/${oldBlock}/txids`)).json().slice(1), [u.txid, v.txid]);
  // Mine v, then replace it by a conflicting spend of the same coin.
  const m = (await post('/devnet/mine', { blocks: 1 })).json();
  const spendV = spend(alice, [v], [{ script: alice.script, value: 69_000n }]);
  assert.equal((await post('/tx', spendV.toHex())).status, 200);
  await post('/devnet/mine', { blocks: 1 });
  const conflict = spend(alice, [v], [{ script: bob.script, value: 65_000n }]);
  const r2 = await post('/devnet/reorg', { depth: 2, blocks: 2, drop: [spendV.getId()], txs: [conflict.toHex()] });
  assert.equal(r2.status, 200, r2.text);
  assert.equal(dn.chain.blockAt(m.height)!.hash, r2.json().hashes[0]);
  assert.deepEqual(dn.chain.blockAt(m.height)!.txids.slice(1), [v.txid, conflict.getId()]);
  assert.deepEqual(dn.chain.mempoolTxids(), [], 'the dropped spend conflicts with a mined one: evicted');
  assert.equal((await get(`/tx/${v.txid}/outspend/0`)).json().txid, conflict.getId());
  // A bad reorg changes nothing.
  const tipBefore = dn.chain.tip.hash;
  assert.equal((await post('/devnet/reorg', { depth: 1, txids: [UNKNOWN] })).status, 400);
  assert.equal(dn.chain.tip.hash, tipBefore);
});

test('deterministic: two chains driven alike have identical hashes; a data file reloads', async () => {
  const run = (c: DevnetChain) => {
    c.mine(101);
    c.faucet(alice.address, 12_345);
    c.mine(1);
    c.reorg({ depth: 1 });
    c.faucet(bob.address, 777);
    return c.tip.hash;
  };
  const dir = mkdtempSync(join(tmpdir(), 'devnet-chain-'));
  try {
    const file = join(dir, 'chain.json');
    const a = new DevnetChain(file);
    const b = new DevnetChain();
    assert.equal(run(a), run(b));
    const c = new DevnetChain(file);
    assert.equal(c.tip.hash, a.tip.hash);
    assert.equal(c.height, 103);
    assert.deepEqual(c.mempoolTxids(), a.mempoolTxids());
    assert.equal(c.mempoolTxids().length, 1);
    assert.equal(c.mine(1).hashes[0], a.mine(1).hashes[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stamps ride in OP_RETURN outputs of ordinary devnet transactions', async () => {
  const u = await fund(alice, 50_000);
  const t = spend(alice, [u], [
    { script: opReturn(Buffer.concat([Buffer.from('SVC'), Buffer.from([1]), Buffer.alloc(32, 7)])), value: 0n },
    { script: alice.script, value: 49_000n },
  ]);
  assert.equal((await post('/tx', t.toHex())).status, 200);
  const tj = (await get(`/tx/${t.getId()}`)).json();
  assert.equal(tj.vout[0].scriptpubkey_type, 'op_return');
  assert.equal(tj.vout[0].scriptpubkey_asm, `OP_RETURN OP_PUSHBYTES_36 535643${'01'}${'07'.repeat(32)}`);
  await post('/devnet/mine', { blocks: 1 });
});

test('P2TR key-path spends are signature-checked', async () => {
  const tr = taprootWallet('taproot-carol');
  assert.match(tr.address, /^bcrt1p/);
  const u = await fund(tr as unknown as typeof alice, 80_000);
  const bad = spendTaproot(tr, [u], [{ script: bob.script, value: 79_000n }]);
  const sig = Buffer.from(bad.ins[0]!.witness[0]!);
  sig[5] ^= 1;
  bad.setWitness(0, [sig]);
  assert.match((await post('/tx', bad.toHex())).text, /mandatory-script-verify-flag-failed/);
  const good = spendTaproot(tr, [u], [{ script: bob.script, value: 79_000n }]);
  const r = await post('/tx', good.toHex());
  assert.equal(r.status, 200, r.text);
  const tj = (await get(`/tx/${u.txid}`)).json();
  assert.equal(tj.vout[0].scriptpubkey_type, 'v1_p2tr');
  assert.equal(tj.vout[0].scriptpubkey_address, tr.address);
  await post('/devnet/mine', { blocks: 1 });
});

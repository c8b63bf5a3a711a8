/** The Esplora client against the devnet chain, endpoint by endpoint. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NodeError } from '@svc-node/protocol/errors';
import { EsploraClient } from '../../src/chain/esplora-client.js';
import { startDevnetChain, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { REGTEST_GENESIS_HASH } from '../../src/devnet/chain.js';
import { spend, wallet } from '../helpers/txbuilder.js';

let dn: DevnetChainHandle;
let c: EsploraClient;
const alice = wallet('client-alice');
const bob = wallet('client-bob');
const UNKNOWN = '0000000000000000000000000000000000000000000000000000000000000001';

before(async () => {
  dn = await startDevnetChain({ initialBlocks: 101 });
  c = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
});
after(async () => {
  await c.close();
  await dn.close();
});

const notFound = (p: Promise<unknown>) => assert.rejects(p, (e: unknown) => e instanceof NodeError && e.code === 'not_found');

test('tip, heights, block JSON, header, status, txids, txid, raw block', async () => {
  const ch = dn.chain;
  assert.equal(await c.tipHeight(), ch.height);
  assert.equal(await c.tipHash(), ch.tip.hash);
  assert.equal(await c.blockHashAt(0), REGTEST_GENESIS_HASH);
  assert.equal(await c.blockHashAt(50), ch.blockAt(50)!.hash);
  await notFound(c.blockHashAt(ch.height + 1));
  const b = await c.block(ch.tip.hash);
  assert.equal(b.height, ch.height);
  assert.equal(b.bits, 0x207fffff);
  assert.equal(b.previousblockhash, ch.blockAt(ch.height - 1)!.hash);
  assert.equal((await c.block(REGTEST_GENESIS_HASH)).previousblockhash, null);
  const hdr = await c.blockHeader(ch.blockAt(7)!.hash);
  assert.equal(hdr.prevHash, ch.blockAt(6)!.hash);
  assert.deepEqual(await c.blockStatus(ch.blockAt(7)!.hash), { in_best_chain: true, height: 7, next_best: ch.blockAt(8)!.hash });
  assert.deepEqual(await c.blockStatus(UNKNOWN), { in_best_chain: false, height: null, next_best: null });
  assert.deepEqual(await c.blockTxids(ch.blockAt(7)!.hash, hdr.hash === ch.blockAt(7)!.hash ? await c.blockHeader(ch.blockAt(7)!.hash) : undefined), ch.blockAt(7)!.txids);
  assert.equal(await c.blockTxid(ch.blockAt(7)!.hash, 0), ch.blockAt(7)!.txids[0]);
  await notFound(c.blockTxid(ch.blockAt(7)!.hash, 1));
  const raw = await c.rawBlock(ch.blockAt(7)!.hash);
  assert.deepEqual(raw.txids, ch.blockAt(7)!.txids);
  await notFound(c.block(UNKNOWN));
  await notFound(c.rawBlock(UNKNOWN));
});

test('transactions: hex, parsed, status, outspend(s), broadcast, refusals', async () => {
  const f = await fetch(`${dn.url}/devnet/faucet`, { method: 'POST', body: JSON.stringify({ address: alice.address, sats: 250_000 }) });
  const { txid } = (await f.json()) as { txid: string };
  assert.deepEqual(await c.txStatus(txid), { confirmed: false });
  const tx = await c.tx(txid);
  assert.equal(tx.getId(), txid);
  assert.equal(await c.txHex(txid), tx.toHex());
  const t = spend(alice, [{ txid, vout: 0, value: 250_000n }], [{ script: bob.script, value: 240_000n }]);
  assert.equal(await c.broadcast(t.toHex()), t.getId());
  const dbl = spend(alice, [{ txid, vout: 0, value: 250_000n }], [{ script: bob.script, value: 230_000n }]);
  await assert.rejects(c.broadcast(dbl.toHex()), (e: unknown) => e instanceof NodeError && e.code === 'bad_request' && /txn-mempool-conflict/.test(String(e.detail?.server_message)));
  assert.deepEqual(await c.outspend(txid, 0), { spent: true, txid: t.getId(), vin: 0, status: { confirmed: false } });
  const mined = dn.chain.mine(1);
  const st = await c.txStatus(t.getId());
  assert.deepEqual(st, { confirmed: true, block_height: mined.height, block_hash: mined.hashes[0]!, block_time: dn.chain.tip.header.timestamp });
  assert.deepEqual(await c.txPosition(t.getId()), { height: mined.height, blockHash: mined.hashes[0]!, index: 2 });
  assert.equal(await c.txPosition(UNKNOWN), null);
  const os = await c.outspends(txid);
  assert.equal(os.length, 2);
  assert.deepEqual(os[0], { spent: true, txid: t.getId(), vin: 0, status: st });
  assert.deepEqual(os[1], { spent: false });
  assert.deepEqual(await c.outspend(UNKNOWN, 0), { spent: false });
  assert.deepEqual(await c.txStatus(UNKNOWN), { confirmed: false });
  await notFound(c.tx(UNKNOWN));
  await notFound(c.outspends(UNKNOWN));
  // A segwit block with its witness commitment passes the raw-block checks.
  const raw = await c.rawBlock(mined.hashes[0]!);
  assert.deepEqual(raw.txids.slice(1), [txid, t.getId()]);
  assert.ok(raw.txs[1]!.hasWitnesses());
});

test('a block that left the best chain: 404 on /block and /raw, status false, /txids still answers', async () => {
  const old = dn.chain.tip.hash;
  const oldTxids = dn.chain.tip.txids;
  dn.chain.reorg({ depth: 1 });
  const fresh = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
  await notFound(fresh.block(old));
  await notFound(fresh.rawBlock(old));
  await notFound(fresh.blockHeader(old));
  assert.deepEqual(await fresh.blockStatus(old), { in_best_chain: false, height: null, next_best: null });
  assert.deepEqual(await fresh.blockTxids(old), oldTxids);
  await fresh.close();
});

test('a stopped endpoint is chain_unavailable', async () => {
  const other = await startDevnetChain();
  const url = other.url;
  await other.close();
  const dead = new EsploraClient({ baseUrl: url, budget: false, retries: 1, backoffBaseMs: 1 });
  await assert.rejects(dead.tipHeight(), (e: unknown) => e instanceof NodeError && e.code === 'chain_unavailable');
});

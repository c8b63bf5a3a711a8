/** Block watcher on the devnet: extension, catch-up, reorgs at depths 1, 6, 144, 145, stamps. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NodeError } from '@svc-node/protocol/errors';
import { EsploraClient, type ChainSource } from '../../src/chain/esplora-client.js';
import { BlockWatcher, ReorgTooDeepError, type BlockRef, type ChainEvent } from '../../src/chain/watcher.js';
import { startDevnetChain, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { callStampScript, deployStampScript } from '@svc-node/protocol/stamp';
import { opReturn, spend, wallet, type Utxo } from '../helpers/txbuilder.js';

let dn: DevnetChainHandle;
let client: EsploraClient;

before(async () => {
  dn = await startDevnetChain({ initialBlocks: 200 });
  client = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
});
after(async () => {
  await client.close();
  await dn.close();
});

/** A consumer that holds the chain (height → hash) and checks each event applies to it. */
class Consumer {
  chain = new Map<number, string>();
  events: ChainEvent[] = [];
  tip: BlockRef;
  constructor(anchor: BlockRef, history: number) {
    for (let h = Math.max(0, anchor.height - history); h <= anchor.height; h++) this.chain.set(h, dn.chain.blockAt(h)!.hash);
    this.tip = anchor;
  }
  onEvent = async (e: ChainEvent) => {
    const exp = [];
    for (let h = this.tip.height; h > e.fork_height; h--) exp.push({ height: h, hash: this.chain.get(h) });
    assert.deepEqual(e.disconnected, exp, 'disconnects exactly our blocks above the fork, tip first');
    let prev = this.chain.get(e.fork_height);
    for (const d of e.disconnected) this.chain.delete(d.height);
    e.connected.forEach((b, i) => {
      assert.equal(b.height, e.fork_height + 1 + i);
      assert.equal(b.prevHash, prev);
      prev = b.hash;
      this.chain.set(b.height, b.hash);
    });
    const last = e.connected[e.connected.length - 1];
    this.tip = last ? { height: last.height, hash: last.hash } : { height: e.fork_height, hash: this.chain.get(e.fork_height)! };
    this.events.push(e);
  };
  knownHash = (h: number) => this.chain.get(h);
}

function tipRef(): BlockRef {
  return { height: dn.chain.height, hash: dn.chain.tip.hash };
}

function newWatcher(cons: Consumer, extra: Partial<ConstructorParameters<typeof BlockWatcher>[0]> = {}): BlockWatcher {
  return new BlockWatcher({ source: client, anchor: cons.tip, onEvent: cons.onEvent, knownHash: cons.knownHash, ...extra });
}

for (const depth of [1, 6, 144, 145]) {
  test(`reorg of depth ${depth}: exact disconnected and connected lists`, async () => {
    const cons = new Consumer(tipRef(), 300);
    // Anchored at the tip, as after a restart: below it the watcher relies on knownHash.
    const w = newWatcher(cons);
    const H = dn.chain.height;
    const old = [];
    for (let h = H; h > H - depth; h--) old.push({ height: h, hash: dn.chain.blockAt(h)!.hash });
    const r = dn.chain.reorg({ depth });
    await w.pollNow();
    assert.equal(cons.events.length, 1);
    const e = cons.events[0]!;
    assert.equal(e.fork_height, H - depth);
    assert.deepEqual(e.disconnected, old);
    assert.deepEqual(
      e.connected.map((b) => ({ height: b.height, hash: b.hash })),
      r.hashes.map((hash, i) => ({ height: H - depth + 1 + i, hash })),
    );
    assert.deepEqual(w.tip, tipRef());
    await w.pollNow();
    assert.equal(cons.events.length, 1, 'no event when nothing changed');
  });
}

test('a reorg below what the consumer knows is ReorgTooDeepError', async () => {
  const cons = new Consumer(tipRef(), 143); // knows its last 144 blocks only
  const w = newWatcher(cons);
  dn.chain.reorg({ depth: 145 });
  await assert.rejects(w.pollNow(), ReorgTooDeepError);
  assert.equal(cons.events.length, 0);
});

test('extension and catch-up: in order, bounded events, one raw block request per block', async () => {
  const anchorH = dn.chain.height - 40;
  const cons = new Consumer({ height: anchorH, hash: dn.chain.blockAt(anchorH)!.hash }, 10);
  let rawCalls = 0;
  const fresh = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
  const counting: ChainSource = {
    tipHeight: () => fresh.tipHeight(),
    tipHash: () => fresh.tipHash(),
    blockHashAt: (h) => fresh.blockHashAt(h),
    rawBlock: (h) => {
      rawCalls++;
      return fresh.rawBlock(h);
    },
  };
  const w = newWatcher(cons, { source: counting, maxBlocksPerEvent: 16 });
  await w.pollNow();
  assert.deepEqual(cons.events.map((e) => e.connected.length), [16, 16, 8]);
  assert.ok(cons.events.every((e) => e.disconnected.length === 0));
  assert.equal(rawCalls, 40);
  assert.deepEqual(cons.tip, tipRef());
  // The chain gets shorter: a new branch of 1 block replaces 3.
  const H = dn.chain.height;
  const r = dn.chain.reorg({ depth: 3, blocks: 1 });
  await w.pollNow();
  const e = cons.events[cons.events.length - 1]!;
  assert.equal(e.fork_height, H - 3);
  assert.deepEqual(e.disconnected.map((d) => d.height), [H, H - 1, H - 2]);
  assert.deepEqual(e.connected.map((b) => b.hash), r.hashes);
  assert.deepEqual(cons.tip, tipRef());
  await fresh.close();
});

/** A source counting raw block requests, with a wait for the count to reach n. */
function countingSource(): { source: ChainSource; raw: () => number; reached: (n: number) => Promise<void>; close: () => Promise<void> } {
  const fresh = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
  let rawCalls = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    source: {
      tipHeight: () => fresh.tipHeight(),
      tipHash: () => fresh.tipHash(),
      blockHashAt: (h) => fresh.blockHashAt(h),
      rawBlock: async (h) => {
        rawCalls++;
        const b = await fresh.rawBlock(h);
        for (const w of waiters.filter((x) => rawCalls >= x.n)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
        return b;
      },
    },
    raw: () => rawCalls,
    reached: (n) =>
      new Promise<void>((resolve, reject) => {
        if (rawCalls >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${rawCalls} of ${n} raw blocks were fetched`)), 10_000);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    close: () => fresh.close(),
  };
}

/**
 * A consumer `below` blocks under the tip and its watcher (8-block events) on a counting
 * source; `duringFirst` runs while the first event is being applied.
 */
function catchUpFrom(below: number, duringFirst: (src: ReturnType<typeof countingSource>) => Promise<void>) {
  const anchorH = dn.chain.height - below;
  const cons = new Consumer({ height: anchorH, hash: dn.chain.blockAt(anchorH)!.hash }, 10);
  const src = countingSource();
  const w = newWatcher(cons, {
    source: src.source,
    maxBlocksPerEvent: 8,
    onEvent: async (e) => {
      if (cons.events.length === 0) await duringFirst(src);
      await cons.onEvent(e);
    },
  });
  return { anchorH, cons, src, w };
}

test('catch-up fetches the next event\'s blocks while the consumer applies the current one', async () => {
  // Blocks 9-16 arrive while the first event is still being applied: without fetching
  // ahead they would only be asked for after it returns, and this wait would time out.
  const { cons, src, w } = catchUpFrom(24, (s) => s.reached(16));
  await w.pollNow();
  assert.deepEqual(cons.events.map((e) => e.connected.length), [8, 8, 8]);
  assert.equal(src.raw(), 24, 'each block fetched once');
  assert.deepEqual(cons.tip, tipRef());
  await src.close();
});

test('a reorg while blocks are fetched ahead: the stale ones are dropped and the events follow the new branch', async () => {
  const { anchorH, cons, src, w } = catchUpFrom(20, async (s) => {
    await s.reached(16); // the next 8 blocks are fetched ahead...
    dn.chain.reorg({ depth: 17 }); // ...and all of them, and 5 of the first event's, leave the best chain
  });
  await w.pollNow();
  const back = cons.events.find((e) => e.disconnected.length > 0);
  assert.deepEqual(back?.disconnected.map((d) => d.height), [anchorH + 8, anchorH + 7, anchorH + 6, anchorH + 5, anchorH + 4]);
  assert.equal(back?.fork_height, anchorH + 3);
  assert.deepEqual(cons.tip, tipRef());
  await src.close();
});

test('a block whose fetch ahead failed is fetched again by the step that needs it', async () => {
  const anchorH = dn.chain.height - 16;
  const cons = new Consumer({ height: anchorH, hash: dn.chain.blockAt(anchorH)!.hash }, 10);
  const flaky = dn.chain.blockAt(anchorH + 16)!.hash; // the first block fetched ahead
  let failed = 0;
  const source: ChainSource = {
    tipHeight: () => client.tipHeight(),
    tipHash: () => client.tipHash(),
    blockHashAt: (h) => client.blockHashAt(h),
    rawBlock: async (h) => {
      if (h === flaky && failed++ === 0) throw new Error('connection reset');
      return client.rawBlock(h);
    },
  };
  const w = newWatcher(cons, { source, maxBlocksPerEvent: 8 });
  await w.pollNow();
  assert.equal(failed, 2, 'failed once ahead, then fetched by the step');
  assert.deepEqual(cons.events.map((e) => e.connected.length), [8, 8]);
  assert.deepEqual(cons.tip, tipRef());
});

test('a failing consumer gets the same event again; timer polling delivers without pollNow', async () => {
  const cons = new Consumer(tipRef(), 5);
  let fail = true;
  const w = newWatcher(cons, {
    onEvent: async (e) => {
      if (fail) {
        fail = false;
        throw new Error('disk full');
      }
      await cons.onEvent(e);
    },
  });
  const m = dn.chain.mine(2);
  await assert.rejects(w.pollNow(), /disk full/);
  await w.pollNow();
  assert.deepEqual(cons.events[0]!.connected.map((b) => b.hash), m.hashes);

  // Timer-driven: resolve when the consumer has seen the next block.
  let seen!: (e: ChainEvent) => void;
  const got = new Promise<ChainEvent>((r) => (seen = r));
  const errors: unknown[] = [];
  const timed = new BlockWatcher({
    source: client,
    anchor: cons.tip,
    knownHash: cons.knownHash,
    pollIntervalSeconds: 0.02,
    onError: (e) => errors.push(e),
    onEvent: async (e) => {
      await cons.onEvent(e);
      seen(e);
    },
  });
  timed.start();
  const m2 = dn.chain.mine(1);
  const e = await got;
  await timed.stop();
  assert.equal(e.connected[0]!.hash, m2.hashes[0]);
  assert.deepEqual(errors, []);
});

test('an unreachable endpoint rejects pollNow with chain_unavailable', async () => {
  const other = await startDevnetChain();
  const url = other.url;
  await other.close();
  const dead = new EsploraClient({ baseUrl: url, budget: false, retries: 0 });
  const w = new BlockWatcher({ source: dead, anchor: { height: 0, hash: '00'.repeat(32) }, onEvent: async () => undefined });
  await assert.rejects(w.pollNow(), (e: unknown) => e instanceof NodeError && e.code === 'chain_unavailable');
});

test('stamps: deploys, calls, malformed and multi-stamp transactions, with their indexes', async () => {
  const alice = wallet('watcher-alice');
  const coins: Utxo[] = [];
  for (let i = 0; i < 5; i++) {
    const f = dn.chain.faucet(alice.address, 30_000 + i);
    coins.push({ txid: f.txid, vout: 0, value: BigInt(30_000 + i) });
  }
  dn.chain.mine(1);
  const codeHash = new Uint8Array(32).fill(0xc0);
  const contractId = new Uint8Array(32).fill(0x1d);
  const envHash = new Uint8Array(32).fill(0xe7);
  const change = (u: Utxo) => ({ script: alice.script, value: u.value - 1000n });
  const plain = spend(alice, [coins[0]!], [change(coins[0]!)]);
  const deploy = spend(alice, [coins[1]!], [change(coins[1]!), { script: deployStampScript(codeHash), value: 0n }]);
  const call = spend(alice, [coins[2]!], [{ script: callStampScript(contractId, envHash), value: 0n }, change(coins[2]!)]);
  const malformed = spend(alice, [coins[3]!], [{ script: opReturn(Buffer.from('SVC\x03garbage', 'latin1')), value: 0n }, change(coins[3]!)]);
  const multi = spend(alice, [coins[4]!], [
    { script: deployStampScript(codeHash), value: 0n },
    { script: callStampScript(contractId, envHash), value: 0n },
    change(coins[4]!),
  ]);
  for (const t of [plain, deploy, call, malformed, multi]) dn.chain.submitTx(t.toHex());
  const cons = new Consumer(tipRef(), 2);
  const w = newWatcher(cons);
  const m = dn.chain.mine(1, [multi, call, plain, malformed, deploy].map((t) => t.getId()));
  await w.pollNow();
  const b = cons.events[0]!.connected[0]!;
  assert.equal(b.hash, m.hashes[0]);
  assert.deepEqual(b.txs.map((t) => t.txid), dn.chain.tip.txids);
  assert.deepEqual(b.txs.map((t) => t.index), [0, 1, 2, 3, 4, 5]);
  assert.equal(b.header.merkleRoot, dn.chain.tip.header.merkleRoot);
  assert.deepEqual(b.stamps, [
    { txIndex: 2, txid: call.getId(), stamp: { kind: 'call', contractId, envelopeHash: envHash, vout: 0 } },
    { txIndex: 5, txid: deploy.getId(), stamp: { kind: 'deploy', codeHash, vout: 1 } },
  ]);
  assert.deepEqual(b.rejectedStamps, [
    { txIndex: 1, txid: multi.getId(), reason: 'multiple_stamps' },
    { txIndex: 4, txid: malformed.getId(), reason: 'malformed_stamp' },
  ]);
});

test('the chain moving during a step (the block being fetched goes stale) restarts the step', async () => {
  const cons = new Consumer(tipRef(), 5);
  const fresh = new EsploraClient({ baseUrl: dn.url, budget: false, retries: 0 });
  let first = true;
  const racing: ChainSource = {
    tipHeight: () => fresh.tipHeight(),
    tipHash: () => fresh.tipHash(),
    blockHashAt: (h) => fresh.blockHashAt(h),
    rawBlock: (h) => {
      if (first) {
        first = false;
        dn.chain.reorg({ depth: 1 }); // the block just named by /block-height leaves the best chain
      }
      return fresh.rawBlock(h);
    },
  };
  const w = newWatcher(cons, { source: racing });
  dn.chain.mine(1);
  await w.pollNow();
  assert.deepEqual(cons.tip, tipRef());
  assert.equal(cons.events.length, 1);
  await fresh.close();
});

test('knownBlocks (the consumer journal as a list) is enough to follow a reorg after a restart', async () => {
  const cons = new Consumer(tipRef(), 150);
  const list = [...cons.chain].map(([height, hash]) => ({ height, hash }));
  const w = new BlockWatcher({ source: client, anchor: cons.tip, onEvent: cons.onEvent, knownBlocks: list });
  const H = dn.chain.height;
  const r = dn.chain.reorg({ depth: 6 });
  await w.pollNow();
  assert.equal(cons.events[0]!.fork_height, H - 6);
  assert.deepEqual(cons.events[0]!.connected.map((b) => b.hash), r.hashes);
});

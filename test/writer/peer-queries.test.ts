/**
 * The writer's peer queries on a real RocksDB ledger (no network): contract summaries,
 * txid order, payloads in wire form, state-root ranges, and the replay check that halts
 * when the stored state disagrees with a re-derivation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { writerPeerHandlers } from '../../src/writer/peer-handlers.js';
import { summaryTree } from '../../src/writer/peer-queries.js';
import { itemHash, sumFingerprint } from '@svc-node/protocol/fingerprint';
import { PAGE_MAX } from '../../src/gossip/limits.js';
import { Bucket, payloads, stateRoots } from '../../src/writer/store/index.js';
import { logger } from '../../src/log.js';
import { merkleBranch } from '@svc-node/protocol/merkle-branch';
import type { Transaction } from 'bitcoinjs-lib';
import { PeerSet, sourceOf } from '../../src/gossip/peers.js';
import { Signer } from '../../src/gossip/auth.js';
import { unpackPayload } from '../../src/packed-payload.js';

test('peer queries over a ledger with a deploy, confirmed and pending calls; a corrupted root halts the replay check', async () => {
  const b = await LedgerBench.open();
  const art = compileContract('test/fixtures/contracts/counter.svc').artifact as never;
  const cid = await b.deploy(art);
  const caller = id32('caller', 1);
  const t1 = await b.call(cid, 'bump', [{ type: 'u64', value: 1n }] as never, caller, 1n);
  const t2 = await b.call(cid, 'bump', [{ type: 'u64', value: 2n }] as never, caller, 2n);
  await b.block([t2, t1]); // t2 first in the block
  await b.block([]);
  const t3 = await b.call(cid, 'bump', [{ type: 'u64', value: 3n }] as never, caller, 3n); // stays pending
  const dbPath = join(b.dir, 'db');
  await b.ledger.db.close();

  const writer = await Writer.open(dbPath, 'peer-test', logger('test'));
  try {
    const h = writerPeerHandlers(writer);
    const sets = await h.peerFingerprints({});
    assert.deepEqual(Object.keys(sets), [cid]);
    assert.equal(sets[cid]!.count, 4, 'deploy + 3 calls');
    const s = (await h.peerSummary({ contract_id: cid, after_txid: '', limit: PAGE_MAX }))!;
    assert.equal(s.root, (await h.peerRoot({ contract_id: cid }))!.root);
    assert.deepEqual([s.count, s.more], [4, false]);
    assert.deepEqual(s.payloads.map((p) => p.txid), [...s.payloads.map((p) => p.txid)].sort(), 'ascending by txid');
    const deployTxid = writer.ledger.contract(cid)!.txid;
    const recomputed = summaryTree(s.payloads.map((p) => ({ ...p, kind: p.txid === deployTxid ? ('deploy' as const) : ('call' as const) })));
    assert.equal(Buffer.from(recomputed.root()).toString('hex'), s.root, 'anyone can recompute the root from the pairs');
    assert.equal(await h.peerSummary({ contract_id: 'ee'.repeat(32), after_txid: '', limit: 1 }), null);
    // Pages of one pair, each after the last: the same pairs, `more` until the last.
    const paged: string[] = [];
    for (let after = '', more = true; more; ) {
      const page = (await h.peerSummary({ contract_id: cid, after_txid: after, limit: 1 }))!;
      assert.equal(page.root, s.root);
      paged.push(...page.payloads.map((p) => p.txid));
      after = page.payloads[0]!.txid;
      more = page.more;
    }
    assert.deepEqual(paged, s.payloads.map((p) => p.txid));

    // The whole set's fingerprint: the sum of the item hashes (proto/svc.proto, header section 3), recomputable from the pairs.
    const items = s.payloads.map((p) => Buffer.concat([Buffer.from(p.txid, 'hex'), Buffer.of(p.txid === deployTxid ? 1 : 2), Buffer.from(p.payload_hash, 'hex')]));
    assert.equal(sets[cid]!.fingerprint, sumFingerprint(items.map(itemHash)).toString('hex'));
    const sorted = s.payloads.map((p) => p.txid);
    const [whole, listed, middle, none] = (await h.peerRanges({
      contract_id: cid,
      ranges: [
        { lower: '', upper: '', list_up_to: 0 },
        { lower: '', upper: '', list_up_to: 4 },
        { lower: sorted[1]!, upper: sorted[3]!, list_up_to: 0 },
        { lower: sorted[3]!.slice(0, 2), upper: sorted[3]!.slice(0, 2), list_up_to: 0 },
      ],
    }))!;
    assert.deepEqual(whole, { count: 4, fingerprint: sets[cid]!.fingerprint, txids: null });
    assert.deepEqual(listed, { count: 4, fingerprint: '', txids: sorted });
    assert.deepEqual(middle, { count: 2, fingerprint: sumFingerprint(items.slice(1, 3).map(itemHash)).toString('hex'), txids: null });
    assert.deepEqual(none, { count: 0, fingerprint: '', txids: [] }, 'an empty range is listed');
    assert.equal(await h.peerRanges({ contract_id: 'ee'.repeat(32), ranges: [{ lower: '', upper: '', list_up_to: 0 }] }), null);

    const page = (await h.peerTxids({ contract_id: cid, offset: 0, limit: PAGE_MAX }))!;
    assert.equal(page.total, 4);
    const refs = page.refs;
    assert.deepEqual(
      refs.map((r) => [r.kind, r.txid]),
      [['deploy', deployTxid], ['call', t2.getId()], ['call', t1.getId()], ['call', t3.getId()]],
      'deploy first, then calls in chain order, then pending',
    );
    assert.equal(refs[3]!.height, null);
    assert.deepEqual((await h.peerTxids({ contract_id: cid, offset: 1, limit: 2 }))!, { refs: refs.slice(1, 3), total: 4 });

    const p1 = (await h.peerPayload({ txid: t1.getId() }))!;
    const c1 = unpackPayload(p1.payload);
    assert.equal(c1.kind, 'call');
    assert.equal(c1.contract_id, cid);
    assert.deepEqual([p1.height, p1.tx_index], [refs[2]!.height, refs[2]!.tx_index], 'with its position');
    assert.deepEqual(Buffer.from(c1.body), Buffer.from((await writer.ledger.callPayload(t1.getId()))!), 'exactly the payload stored at intake');
    assert.equal((await h.peerPayload({ txid: t3.getId() }))!.height, null, 'pending: no position');
    const pd = unpackPayload((await h.peerPayload({ txid: deployTxid }))!.payload);
    assert.equal(pd.kind, 'deploy');
    assert.equal(JSON.parse(Buffer.from(pd.body).toString('utf8')).txid, deployTxid);
    assert.equal(await h.peerPayload({ txid: 'ab'.repeat(32) }), null);

    const range = await h.peerStateRoots({ from: 0, to: 10 });
    assert.deepEqual(range.roots.map((r) => r.height), [0, 1, 2, 3]);
    assert.equal(range.anchor_height, 0);
    assert.equal(range.tip_height, 3);
    assert.equal(range.roots[3]!.state_root, writer.ledger.stateRoot);
    assert.deepEqual((await h.peerStateRoots({ from: 2, to: 2 })).roots.map((r) => r.height), [2]);

    // The replay check agrees with a consistent store...
    let st = await h.peerVerifyReplay({});
    assert.equal(st.halted, false);
    assert.equal(st.stateRoot, range.roots[3]!.state_root, 'replay reproduces the same state');
    // ...and halts when what the node stored disagrees with its own replay.
    const at2 = range.roots[2]!;
    await writer.db.put(stateRoots.key(2), stateRoots.encode({ ...at2, state_root: 'ff'.repeat(32) }));
    st = await h.peerVerifyReplay({});
    assert.equal(st.halted, true);
    assert.match(st.haltReason ?? '', /re-derivation disagrees with stored state at height 2/);
  } finally {
    await writer.close();
  }
});

test('a call is served to peers with the position its decision holds: a confirmed one its block and index, a dropped or pending one none', async () => {
  const b = await LedgerBench.open();
  const art = compileContract('test/fixtures/contracts/counter.svc').artifact as never;
  const cid = await b.deploy(art);
  const caller = id32('caller', 7);
  const confirmed = await b.call(cid, 'bump', [{ type: 'u64', value: 1n }] as never, caller, 1n);
  const doomed = b.callRecord(cid, 'bump', [{ type: 'u64', value: 2n }] as never, caller, 2n);
  await b.ledger.acceptCall(doomed.rec);
  const pending = await b.call(cid, 'bump', [{ type: 'u64', value: 3n }] as never, caller, 3n);
  // One block confirms the first call and spends the second's outpoint in another transaction.
  await b.block([confirmed], [[doomed.rec.outpoint, 'ab'.repeat(32)]]);
  const height = b.height;
  const dbPath = join(b.dir, 'db');
  await b.ledger.db.close();
  const writer = await Writer.open(dbPath, 'peer-positions', logger('test'));
  try {
    const h = writerPeerHandlers(writer);
    const served = async (txid: string) => {
      const p = (await h.peerPayload({ txid }))!;
      assert.equal(unpackPayload(p.payload).txid, txid);
      return { height: p.height, tx_index: p.tx_index };
    };
    assert.equal((await writer.ledger.call(doomed.rec.txid))!.status, 'dropped');
    assert.deepEqual(await served(confirmed.getId()), { height, tx_index: 1 }, 'confirmed: its block and index');
    assert.deepEqual(await served(doomed.rec.txid), { height: null, tx_index: null }, 'dropped: no place in the chain\'s order');
    assert.deepEqual(await served(pending.getId()), { height: null, tx_index: null }, 'pending: no position');
  } finally {
    await writer.close();
  }
});

/** The summary pairs, root and txid order computed straight from the store, uncached. */
async function reference(writer: Writer, cid: string): Promise<{ root: string; pairs: string[] }> {
  const entries: { txid: string; kind: 'deploy' | 'call'; payload_hash: string }[] = [];
  for (const r of await writer.db.rangeOf(payloads.all())) {
    const v = payloads.decode(r.value);
    if (v.contract_id === cid) entries.push({ txid: payloads.txidOf(r.key).toString('hex'), kind: v.kind, payload_hash: v.body_hash });
  }
  entries.sort((a, b) => (a.txid < b.txid ? -1 : 1));
  return { root: Buffer.from(summaryTree(entries).root()).toString('hex'), pairs: entries.map((e) => `${e.txid}:${e.payload_hash}`) };
}

test('peer summary and txid questions: the payload bucket is read once, a txid list once per ledger change; answers stay exact', async () => {
  const b = await LedgerBench.open();
  const art = compileContract('test/fixtures/contracts/counter.svc').artifact as never;
  const cid = await b.deploy(art);
  const other = await b.deploy(art);
  const caller = id32('caller', 2);
  const t1 = await b.call(cid, 'bump', [{ type: 'u64', value: 1n }] as never, caller, 1n);
  await b.call(cid, 'bump', [{ type: 'u64', value: 2n }] as never, caller, 2n);
  await b.call(other, 'bump', [{ type: 'u64', value: 9n }] as never, caller, 9n);
  await b.block([t1]);
  await b.call(cid, 'bump', [{ type: 'u64', value: 3n }] as never, caller, 3n); // pending
  await b.ledger.db.close();

  const writer = await Writer.open(join(b.dir, 'db'), 'peer-cost', logger('test'));
  // Count what the questions cost the writer: full reads of the payload bucket, and call
  // records read for positions.
  let scans = 0;
  let callReads = 0;
  /** Multi-gets of call positions: a list's calls are read together, not one get each. */
  let positionBatches = 0;
  const range = writer.db.range.bind(writer.db);
  writer.db.range = (gte, lt, opts) => {
    if (gte[0] === Bucket.payload) scans++;
    return range(gte, lt, opts);
  };
  const readCalls = writer.ledger.callsByTxid.bind(writer.ledger);
  writer.ledger.callsByTxid = (txids) => {
    callReads += txids.length;
    positionBatches++;
    return readCalls(txids);
  };
  const h = writerPeerHandlers(writer);
  const ask = async (): Promise<{ root: string; pairs: string[]; txids: string[]; heights: (number | null)[]; count: number }> => {
    const s = (await h.peerSummary({ contract_id: cid, after_txid: '', limit: PAGE_MAX }))!;
    const r = (await h.peerRoot({ contract_id: cid }))!;
    const all = await h.peerFingerprints({});
    const t = (await h.peerTxids({ contract_id: cid, offset: 0, limit: PAGE_MAX }))!.refs;
    assert.equal(r.root, s.root);
    assert.equal(all[cid]!.count, s.count);
    assert.equal(r.count, s.payloads.length);
    return { root: s.root, pairs: s.payloads.map((p) => `${p.txid}:${p.payload_hash}`), txids: t.map((x) => x.txid), heights: t.map((x) => x.height), count: r.count };
  };
  try {
    const QUESTIONS = 50;
    let first = await ask();
    for (let i = 1; i < QUESTIONS; i++) assert.deepEqual(await ask(), first);
    const rescan = scans;
    let ref = await reference(writer, cid);
    assert.equal(first.root, ref.root, 'the cached root is the root of the stored pairs');
    assert.deepEqual(first.pairs, ref.pairs);
    assert.equal(first.count, 4, 'deploy + 3 calls');
    assert.deepEqual(first.heights, [1, 3, null, null], 'deploy, the confirmed call, two pending');
    assert.equal(rescan, 1, `${QUESTIONS} x 4 questions read the payload bucket once (${rescan})`);
    assert.equal(callReads, 3, `${QUESTIONS} txid lists read each call's position once (${callReads})`);
    assert.equal(positionBatches, 1, 'the three positions in one multi-get');
    assert.equal(await h.peerRoot({ contract_id: 'ee'.repeat(32) }), null);

    // A new call: in the next answers at once, with one read (its position) and no rescan.
    const { rec, tx } = b.callRecord(cid, 'bump', [{ type: 'u64', value: 4n }] as never, caller, 4n);
    assert.equal((await writer.acceptCall(rec)).created, true);
    const second = await ask();
    ref = await reference(writer, cid);
    assert.equal(second.root, ref.root);
    assert.deepEqual(second.pairs, ref.pairs);
    assert.equal(second.count, 5);
    assert.ok(second.txids.includes(rec.txid));
    assert.equal(second.heights.filter((x) => x === null).length, 3, 'three pending calls');
    assert.equal(callReads, 4, 'only the new call was read');
    // A block confirming it: positions are read again, once, for the next question.
    const height = b.height + 1;
    const hash = Buffer.from(id32('block', height)).toString('hex');
    await writer.applyChainUpdate({
      fork_height: b.height,
      disconnected: [],
      connected: [
        {
          height,
          hash,
          prevHash: b.hash,
          txs: [tx].map((t, i) => ({ txIndex: i + 1, txid: t.getId(), hex: t.toHex(), parts: { ins: t.ins.map((x) => ({ hash: x.hash, index: x.index })), outs: t.outs.map((o) => ({ script: o.script, value: o.value })) } })),
          txids: ['00'.repeat(32), tx.getId()],
          spends: [],
        } as never,
      ],
    });
    const before = callReads;
    const third = await ask();
    for (let i = 1; i < QUESTIONS; i++) assert.deepEqual(await ask(), third);
    assert.equal(callReads - before, 4, 'one read per call after the block, then none');
    const refs = (await h.peerTxids({ contract_id: cid, offset: 0, limit: PAGE_MAX }))!.refs;
    assert.deepEqual(refs.find((r) => r.txid === rec.txid)?.height, height, 'the new call shows its confirmation');
    assert.equal(third.root, second.root, 'confirming adds no payload');
    assert.equal(scans, 1 + 2, 'still one scan of our own, plus the two reference reads of this test');
  } finally {
    await writer.close();
  }
});

test('the peer set: bounded, expires learned peers, never itself, forwards to at most the limit and never back', () => {
  let now = 1_000_000;
  const signer = new Signer(new Uint8Array(32).fill(8));
  const self = signer.publicKey.toString('hex');
  const set = new PeerSet(
    { configured: ['http://127.0.0.1:1', 'http://127.0.0.1:1/', 'http://127.0.0.1:9'], selfUrl: 'http://127.0.0.1:9', selfKey: self, maxPeers: 4, expiryMs: 1000, timeoutMs: 1000 },
    signer,
    () => now,
  );
  try {
    assert.deepEqual(set.all().map((p) => p.url), ['http://127.0.0.1:1'], 'duplicates and self dropped');
    const k = (n: number): string => String(n).padStart(64, '0');
    // Each proven by a successful outbound call before the next (at most half of the
    // learned slots may hold unproven peers).
    const learnAndReach = (n: number, name: string): boolean => {
      const ok = set.learn(`http://127.0.0.1:${n}`, k(n), name);
      const p = set.all().find((x) => x.url === `http://127.0.0.1:${n}`);
      if (p) set.ok(p);
      return ok;
    };
    assert.equal(learnAndReach(2, 'b'), true);
    assert.equal(learnAndReach(3, 'c'), true);
    assert.equal(learnAndReach(4, 'd'), true);
    assert.equal(set.learn('http://127.0.0.1:5', k(5), 'e'), false, 'full of active peers');
    assert.equal(set.learn('http://127.0.0.1:9', k(9), 'self-url'), false);
    assert.equal(set.learn('http://127.0.0.1:6', self, 'self-key'), false);
    assert.equal(set.learn('ftp://x', k(7), 'bad'), false);
    assert.equal(set.active().length, 3, 'the configured peer was never heard from');
    // Forwarding: at most the limit, never back to the sender, active peers first.
    assert.deepEqual(set.targets(2, k(2)).map((p) => p.url), ['http://127.0.0.1:3', 'http://127.0.0.1:4']);
    assert.equal(set.targets(10, null).length, 4);
    assert.equal(set.targets(0, null).length, 0);
    // Silence: learned peers expire, the configured one stays.
    now += 1500;
    set.heard(k(3));
    assert.deepEqual(set.expire().sort(), ['http://127.0.0.1:2', 'http://127.0.0.1:4']);
    assert.deepEqual(set.all().map((p) => p.url).sort(), ['http://127.0.0.1:1', 'http://127.0.0.1:3']);
    assert.equal(set.learn('http://127.0.0.1:5', k(5), 'e'), true, 'room again');
  } finally {
    set.close();
  }
});

test('learned peers cannot eclipse: one URL per key, two unproven per source, half the learned slots for unproven; proven peers stay', () => {
  let now = 1_000_000;
  const signer = new Signer(new Uint8Array(32).fill(9));
  const set = new PeerSet({ configured: ['http://10.0.0.1:1'], selfUrl: 'http://10.0.0.99:1', selfKey: signer.publicKey.toString('hex'), maxPeers: 9, expiryMs: 60_000, timeoutMs: 1000 }, signer, () => now);
  const k = (n: number): string => String(n).padStart(64, '0');
  const at = (url: string) => set.all().find((p) => p.url === url);
  try {
    assert.equal(set.unprovenCapacity, 4, 'half of the 8 learned slots');
    // An honest peer, introduced and then reached by our heartbeat: proven.
    assert.equal(set.learn('http://10.0.0.2:1', k(2), 'honest', '10.0.0.2'), true);
    set.ok(at('http://10.0.0.2:1')!);
    // One key, many URLs: it holds one entry, the last it claimed.
    for (let i = 0; i < 50; i++) set.learn(`http://203.0.113.1:${1000 + i}`, k(100), 'mover', '203.0.113.1');
    assert.deepEqual(set.unproven().map((p) => p.url), ['http://203.0.113.1:1049']);
    // Fresh keys from one source: two entries.
    for (let i = 0; i < 50; i++) set.learn(`http://198.51.100.7:${i + 1}`, k(200 + i), 'fresh', '198.51.100.7');
    assert.equal(set.unproven('198.51.100.7').length, 2);
    // Fresh keys from many sources: the unproven half fills, nothing more.
    let accepted = 0;
    for (let i = 0; i < 200; i++) if (set.learn(`http://192.0.2.${i}:1`, k(1000 + i), 'botnet', `192.0.2.${i}`)) accepted++;
    assert.equal(set.unproven().length, 4, 'unproven peers within half of the learned slots');
    assert.equal(accepted, 1, 'only the one free unproven slot');
    assert.equal(set.all().length, 1 + 1 + 4, 'configured + proven + unproven');
    assert.ok(at('http://10.0.0.2:1'), 'the proven peer stays');
    // An honest newcomer once the unproven URLs have failed our outbound calls: it gets a slot.
    for (const p of set.unproven()) set.failed(p);
    assert.equal(set.learn('http://10.0.0.3:1', k(3), 'newcomer', '10.0.0.3'), true);
    // Proven peers fill the rest of the set; a proven peer is never displaced by a newcomer.
    set.ok(at('http://10.0.0.3:1')!);
    for (let i = 4; i <= 9; i++) {
      for (const p of set.unproven()) set.failed(p);
      if (set.learn(`http://10.0.0.${i}:1`, k(i), 'honest', `10.0.0.${i}`)) set.ok(at(`http://10.0.0.${i}:1`)!);
    }
    assert.equal(set.all().length, 9);
    const proven = set.all().filter((p) => p.proven).map((p) => p.url);
    for (let i = 0; i < 100; i++) set.learn(`http://192.0.2.${i}:2`, k(5000 + i), 'botnet', `192.0.2.${i}`);
    assert.deepEqual(set.all().filter((p) => p.proven).map((p) => p.url), proven, 'no proven peer displaced');
    assert.ok(set.all().length <= 9);
    // Inbound heartbeats do not clear the failures of an unproven URL (only a success does).
    const u = set.unproven()[0]!;
    set.failed(u);
    now += 1000;
    assert.equal(set.learn(u.url, u.publicKey!, 'again', u.source), true);
    assert.ok(u.failures > 0 && !u.proven);
    // grpc-js getPeer(): address and port, IPv6 without brackets.
    assert.equal(sourceOf('198.51.100.7:5555'), '198.51.100.7');
    assert.equal(sourceOf('198.51.100.7:6666'), '198.51.100.7', 'another connection, the same source');
    assert.equal(sourceOf('2001:db8:1:2:3:4:5:6:5555'), '2001:db8:1:2::/64');
    assert.equal(sourceOf('2001:db8:1:2:ffff::9:5555'), '2001:db8:1:2::/64', 'the same /64');
    assert.equal(sourceOf('2001:db8::1:5555'), '2001:db8:0:0::/64');
    assert.equal(sourceOf('::ffff:192.0.2.1:5555'), '192.0.2.1');
    assert.equal(sourceOf('ipv4:198.51.100.7:5555'), '198.51.100.7');
    assert.equal(sourceOf('ipv6:[2001:db8::1]:5555'), '2001:db8:0:0::/64');
    assert.equal(sourceOf('unknown'), 'unknown');
  } finally {
    set.close();
  }
});

test('payloads for peers: a block\'s journal entry is read once across GetPayloads pages, and read afresh after the chain changed under it', async () => {
  const b = await LedgerBench.open();
  const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
  const caller = id32('journal-cache', 1);
  const txs: Transaction[] = [];
  for (let i = 1n; i <= 3n; i++) txs.push(await b.call(cid, 'bump', [{ type: 'u64', value: i }] as never, caller, i));
  const below = { height: b.height, hash: b.hash };
  await b.ledger.db.close();

  const height = below.height + 1;
  /** The block at `height` holding `order` after a coinbase, each with its merkle branch (as the block reader gives them). */
  const blockOf = (name: string, order: Transaction[]): { height: number; hash: string } & Record<string, unknown> => {
    const txids = ['00'.repeat(32), ...order.map((t) => t.getId())];
    const internal = txids.map((t) => Buffer.from(t, 'hex').reverse());
    return {
      height,
      hash: Buffer.from(id32(name, height)).toString('hex'),
      prevHash: below.hash,
      txs: order.map((t, i) => ({ txIndex: i + 1, txid: t.getId(), hex: t.toHex(), branch: merkleBranch(internal, i + 1), parts: { ins: t.ins.map((x) => ({ hash: x.hash, index: x.index })), outs: t.outs.map((o) => ({ script: o.script, value: o.value })) } })),
      txids,
      spends: [],
    };
  };
  const writer = await Writer.open(join(b.dir, 'db'), 'journal-cache', logger('test'));
  let entryReads = 0;
  const get = writer.db.get.bind(writer.db);
  writer.db.get = (k) => {
    if (k[0] === Bucket.block) entryReads++;
    return get(k);
  };
  try {
    const h = writerPeerHandlers(writer);
    const txids = txs.map((t) => t.getId());
    /** Each call's placement as a peer is told it, one GetPayloads page each (three core calls). */
    const placements = async (): Promise<unknown[]> =>
      (await Promise.all(txids.map((t) => h.peerPayloads({ txids: [t] })))).flat().map((p) => {
        const c = p ? unpackPayload(p.payload).evidence?.confirmed : undefined;
        return c ? [c.height, c.blockHash, c.txIndex] : null;
      });
    const a = blockOf('journal-cache a', txs);
    await writer.applyChainUpdate({ fork_height: below.height, disconnected: [], connected: [a as never] });
    entryReads = 0;
    assert.deepEqual(await placements(), [[height, a.hash, 1], [height, a.hash, 2], [height, a.hash, 3]]);
    assert.equal(entryReads, 1, 'the block\'s entry read once for the three pages');

    // Another block at that height, the same calls in another order: every page answers
    // from its entry, not the one read before.
    const other = blockOf('journal-cache b', [txs[2]!, txs[0]!, txs[1]!]);
    await writer.applyChainUpdate({ fork_height: below.height, disconnected: [{ height, hash: a.hash }], connected: [other as never] });
    entryReads = 0;
    assert.deepEqual(await placements(), [[height, other.hash, 2], [height, other.hash, 3], [height, other.hash, 1]]);
    assert.equal(entryReads, 1);
  } finally {
    await writer.close();
  }
});

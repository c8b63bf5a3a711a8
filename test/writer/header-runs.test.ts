/**
 * A chain update of header-only blocks (a light node catching up) is applied as one run:
 * the evidence filed under all its blocks read at once, one synced write batch, one state
 * notice (Writer.applyChainUpdate, Ledger.addToRun). Each block must still leave exactly
 * what applying it alone leaves: the same store, key for key and byte for byte (journal
 * entry, state root, undo log, decisions, events), the same state root per height as a
 * node that reads every block in full, and the payloads decided where their evidence
 * places them, never under another block of the run. A block of the run that fails
 * leaves the blocks before it on disk, as when each block was written alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSource } from '../../src/compiler/index.js';
import { blockInputOf, connectedBlockOf } from '../../src/chain/connected-block.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../src/log.js';
import type { BlockInput } from '../../src/records.js';
import { Writer } from '../../src/writer/writer.js';
import { meta } from '../../src/writer/store/index.js';
import { REPLAY_WINDOW } from '../../src/writer/ledger/stored.js';
import { fixturesDir } from '../helpers/paths.js';
import { REGTEST_GENESIS, Rng, World, type Artifact, type Payload, type SimBlock } from '../helpers/sim-world.js';

/** Blocks of the chain; the second run is longer than the undo logs kept, so its batch also deletes undo logs it wrote. */
const HEIGHT = 1_100;
/** The batched node's updates: [1, SPLIT] and [SPLIT + 1, HEIGHT]. */
const SPLIT = 50;

test('a run of header-only blocks leaves the store a block-by-block application leaves, and the roots a full-block node computes', async () => {
  assert.ok(HEIGHT - SPLIT > REPLAY_WINDOW);
  const file = join(fixturesDir, 'contracts', 'counter.svc');
  const compiled = compileSource(readFileSync(file, 'utf8'), file);
  assert.ok(compiled.ok);
  const world = new World(new Rng(26), 26);
  const d = world.deploy(compiled.artifact as unknown as Artifact);
  const cid = d.record.contract_id;
  const alice = Buffer.alloc(32, 0xa1);
  const bob = Buffer.alloc(32, 0xb0);
  const call = (fn: string, n: bigint, caller: Buffer, callId: bigint, doomed = false) => world.call(cid, fn, [{ type: 'u64', value: n }], caller, callId, doomed);
  const c1 = call('bump', 1n, alice, 1n);
  const c3 = call('bump', 3n, bob, 1n);
  const c2 = call('bump', 2n, alice, 2n);
  const dupe = call('bump', 50n, alice, 1n); // alice's call id 1 again: taken by c1 at block 20
  const doomed = call('bump', 70n, bob, 2n, true); // its outpoint spent by another transaction at 160
  const c4 = call('bump', 4n, bob, 3n);
  const foreign = call('bump', 90n, bob, 4n); // confirmed at 200, but its evidence names another block there
  const c5 = call('bump', 5n, alice, 3n);
  const boom = call('boom', 6n, alice, 4n);
  // What goes into which block (everything else: coinbase only).
  const at = new Map<number, Payload[]>([
    [3, [d]],
    [20, [c1, c3]],
    [21, [c2]],
    [150, [dupe]],
    [200, [c4, foreign]],
    [260, [c5]],
    [300, [boom]],
  ]);
  for (let h = 1; h <= HEIGHT; h++) {
    const ps = at.get(h) ?? [];
    for (const p of ps) world.broadcast(p.tx);
    if (h === 160) world.broadcast(doomed.conflict!);
    world.mine(ps.length + 1);
  }
  assert.equal(world.tip.height, HEIGHT);
  for (const [h, ps] of at) for (const p of ps) assert.equal(world.confirmedAt(p.txid)?.height, h);
  assert.equal(world.inclusionOf(doomed.txid), null);
  const evidenceOf = (p: Payload) => {
    const ev = world.evidenceOf(p);
    if (p !== foreign) return ev;
    // A claim filed under another hash at height 200 (a branch the chain left): it belongs
    // to no block of this chain, although its branch folds to block 200's merkle root.
    const h = world.chain[200]!.hash;
    return { ...ev, confirmed: { ...ev.confirmed!, blockHash: `${h.slice(0, 62)}${h.slice(62) === '00' ? '01' : '00'}` } };
  };
  const headerOnly = (b: SimBlock): BlockInput => ({ height: b.height, hash: b.hash, prevHash: b.prevHash, header: b.header, txs: [], headerOnly: true });

  const dir = mkdtempSync(join(tmpdir(), 'svc-header-runs-'));
  const writers: Writer[] = [];
  /** A light node holding the headers and every payload with its evidence, opened again so that nothing decided at acceptance is remembered. */
  const lightNode = async (name: string): Promise<Writer> => {
    const path = join(dir, name);
    let w = await Writer.open(path, 'light', logger('test'));
    await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    await w.putHeaders(1, world.chain.slice(1).map((b) => b.header), false);
    // The ledger's acceptance, below the node's admission policy (writer.ts, admit): what is proven here is placement by evidence.
    await w.ledger.acceptDeploy(d.record, evidenceOf(d));
    for (const p of world.payloads) if (p.kind === 'call') await w.ledger.acceptCall(p.record, undefined, evidenceOf(p));
    await w.close();
    w = await Writer.open(path, 'light', logger('test'));
    writers.push(w);
    return w;
  };
  try {
    // A: the follower's way, a few long updates.
    const a = await lightNode('a');
    const notices: (number | null)[] = [];
    a.ledger.observe({ blockApplied: () => undefined, rewound: () => undefined, stateChanged: (tip) => notices.push(tip?.height ?? null) });
    await a.applyChainUpdate({ fork_height: 0, disconnected: [], connected: world.chain.slice(1, SPLIT + 1).map(headerOnly) });
    assert.deepEqual(notices, [SPLIT], 'one state notice for the update, with its last block');
    await a.applyChainUpdate({ fork_height: SPLIT, disconnected: [], connected: world.chain.slice(SPLIT + 1).map(headerOnly) });
    assert.deepEqual(notices, [SPLIT, HEIGHT]);

    // B: the same blocks, an update each (each block its own batch, its own evidence read).
    const b = await lightNode('b');
    for (const blk of world.chain.slice(1)) await b.applyChainUpdate({ fork_height: blk.height - 1, disconnected: [], connected: [headerOnly(blk)] });

    // C: a node that reads every block in full (no evidence needed), the foreign call not held.
    const c = await Writer.open(join(dir, 'c'), 'c', logger('test'));
    writers.push(c);
    await c.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    await c.acceptDeploy(d.record);
    for (const p of world.payloads) if (p.kind === 'call' && p !== foreign) await c.acceptCall(p.record);
    const full: BlockInput[] = [];
    for (const blk of world.chain.slice(1)) full.push(blockInputOf(connectedBlockOf(await world.source().rawBlock(blk.hash), blk.height)));
    await c.applyChainUpdate({ fork_height: 0, disconnected: [], connected: full });

    // The payloads are decided where their blocks place them.
    const decided = async (w: Writer, p: Payload) => {
      const r = await w.ledger.call(p.txid);
      return r && { status: r.status, height: r.block_height, index: r.tx_index, result: r.result, error: r.error?.code ?? null };
    };
    const placed = (p: Payload, h: number) => ({ height: h, index: world.chain[h]!.txids.indexOf(p.txid) });
    assert.deepEqual(await decided(a, c1), { status: 'executed', ...placed(c1, 20), result: '1', error: null });
    assert.deepEqual(await decided(a, c3), { status: 'executed', ...placed(c3, 20), result: '4', error: null });
    assert.deepEqual(await decided(a, c2), { status: 'executed', ...placed(c2, 21), result: '6', error: null });
    assert.deepEqual(await decided(a, dupe), { status: 'invalid', ...placed(dupe, 150), result: null, error: 'duplicate_call_id' });
    assert.deepEqual(await decided(a, doomed), { status: 'dropped', height: null, index: null, result: null, error: null });
    assert.deepEqual(await decided(a, c4), { status: 'executed', ...placed(c4, 200), result: '10', error: null });
    assert.equal((await decided(a, foreign))?.status, 'pending', 'a claim filed under another block at its height is not this block\'s');
    assert.deepEqual(await decided(a, c5), { status: 'executed', ...placed(c5, 260), result: '15', error: null });
    assert.deepEqual(await decided(a, boom), { status: 'failed', ...placed(boom, 300), result: null, error: 'revert' });
    for (const p of world.payloads) {
      if (p.kind !== 'call') continue;
      assert.deepEqual(await decided(b, p), await decided(a, p), `call ${p.txid} as block-by-block application decides it`);
      if (p !== foreign) assert.deepEqual(await decided(c, p), await decided(a, p), `call ${p.txid} as a full-block node decides it`);
    }

    // Every height's state root: the full-block node's, and the block-by-block one's.
    for (let h = 1; h <= HEIGHT; h++) {
      const root = await a.ledger.stateRootAt(h);
      assert.equal(root?.block_hash, world.chain[h]!.hash);
      assert.deepEqual(await b.ledger.stateRootAt(h), root, `state root at ${h} (block by block)`);
      assert.deepEqual(await c.ledger.stateRootAt(h), root, `state root at ${h} (full blocks)`);
    }
    assert.deepEqual(a.ledger.memorySummary(), b.ledger.memorySummary());

    // The whole store, byte for byte (the open marker holds a time).
    const dump = async (w: Writer) => (await w.db.range(Buffer.of(0x00), Buffer.alloc(8, 0xff))).filter((r) => !r.key.equals(meta.openSince.key)).map((r) => `${r.key.toString('hex')}=${r.value.toString('hex')}`);
    const da = await dump(a);
    const db = await dump(b);
    assert.ok(da.length > HEIGHT * 3, 'a journal entry, a state root and a header per block at least');
    assert.equal(da.length, db.length, 'as many records');
    da.forEach((row, i) => assert.equal(row, db[i], `record ${i}`));
  } finally {
    for (const w of writers) await w.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a header-only block that fails midway leaves the blocks before it written, and nothing of its own', async () => {
  const world = new World(new Rng(27), 27);
  for (let h = 1; h <= 10; h++) world.mine(0);
  const headerOnly = (b: SimBlock): BlockInput => ({ height: b.height, hash: b.hash, prevHash: b.prevHash, header: b.header, txs: [], headerOnly: true });
  const dir = mkdtempSync(join(tmpdir(), 'svc-header-runs-fail-'));
  const path = join(dir, 'db');
  let w = await Writer.open(path, 'light', logger('test'));
  try {
    await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    // Block 6 comes with block 7's header: refused where a block-by-block reading refuses it.
    const connected = world.chain.slice(1).map(headerOnly);
    connected[5] = { ...connected[5]!, header: world.chain[7]!.header };
    await assert.rejects(
      w.applyChainUpdate({ fork_height: 0, disconnected: [], connected }),
      (e: unknown) => e instanceof NodeError && e.code === 'internal' && /header of block 6/.test(e.message),
    );
    assert.equal(w.ledger.tip?.height, 5);
    assert.equal(w.ledger.halted, false);
    await w.close();
    w = await Writer.open(path, 'light', logger('test'));
    assert.deepEqual(w.ledger.tip, { height: 5, hash: world.chain[5]!.hash }, 'the five blocks before it are on disk');
    assert.equal((await w.ledger.stateRootAt(5))?.block_hash, world.chain[5]!.hash);
    assert.equal(await w.ledger.stateRootAt(6), null);
    await w.applyChainUpdate({ fork_height: 5, disconnected: [], connected: world.chain.slice(6).map(headerOnly) });
    assert.equal(w.ledger.tip?.height, 10);
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

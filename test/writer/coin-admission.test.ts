/**
 * The writer's admission of pending payloads (src/writer/writer.ts, admit and placeFor;
 * src/writer/pending-coins.ts): a payload whose anchor is not confirmed waits only on a
 * coin shown real (confirmed in a header the node holds, or the anchor of a payload it
 * holds) whose fee is read from proven coins; one coin backs one waiting call, a higher
 * fee replaces; a full set takes a call only in place of the lowest fee rate waiting,
 * never by arrival; and the places survive a restart. Anchors are real P2WPKH spends
 * signed by the simulated world's wallet, checked as intake checks them (checkCoin).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSource } from '../../src/compiler/index.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../src/log.js';
import { Writer } from '../../src/writer/writer.js';
import { checkCoin } from '@svc-node/protocol/coin';
import { toHex } from '@svc-node/protocol/hash';
import type { Evidence } from '@svc-node/protocol/evidence';
import { fixturesDir } from '../helpers/paths.js';
import { REGTEST_GENESIS, Rng, World, type Artifact, type Payload } from '../helpers/sim-world.js';

test('pending calls wait only on real coins: one coin one call, a higher fee replaces, a full set is decided by fee rate, never by arrival', async () => {
  const file = join(fixturesDir, 'contracts', 'counter.svc');
  const compiled = compileSource(readFileSync(file, 'utf8'), file);
  assert.ok(compiled.ok);
  const world = new World(new Rng(44), 44);
  const d = world.deploy(compiled.artifact as unknown as Artifact);
  const cid = d.record.contract_id;
  const caller = Buffer.alloc(32, 0x44);
  let id = 0n;
  const call = (fee: bigint, coin?: { tx: Payload['tx']; vout: number }) => world.call(cid, 'bump', [{ type: 'u64', value: 1n }], caller, ++id, false, { fee, ...(coin ? { coin } : {}) });
  const a1 = call(1_000n);
  const a2 = call(2_000n);
  const a3 = call(3_000n);
  const a4 = call(500n);
  const sameCoin = { tx: a1.fund, vout: 0 };
  const r1 = call(1_000n, sameCoin); // the same fee on a1's coin
  const r2 = call(1_500n, sameCoin); // a fee bump of a1
  const c1 = call(2_500n, { tx: a2.tx, vout: 1 }); // spends a2's change: an unconfirmed coin
  // Block 1 confirms the deploy and the coins of a1..a4 (not the anchors).
  for (const p of [d, a1, a2, a3, a4]) world.broadcast(p.fund);
  world.broadcast(d.tx);
  const b1 = world.mine(16);
  assert.equal(b1.txs.length, 7);
  const unfunded = call(9_000n); // its coin is never confirmed

  const dir = mkdtempSync(join(tmpdir(), 'svc-coin-admission-'));
  let w = await Writer.open(join(dir, 'db'), 'n', logger('test'), { maxPendingCalls: 3 });
  /** What intake does: the coin checked in the pool when no confirmation pays, then the writer. */
  const accept = async (p: Payload & { kind: 'call' }, ev: Evidence = world.evidenceOf(p)) => {
    const c = ev.coin && !ev.confirmed ? checkCoin(ev.anchorTx, { txid: toHex(p.envelope.outpointTxid), vout: p.envelope.outpointVout }, ev.coin) : null;
    if (c && !c.ok) throw new Error(c.reason);
    return w.acceptCall(p.record, undefined, ev, undefined, c?.coin ?? null);
  };
  const refused = async (p: Payload & { kind: 'call' }, code: string, re: RegExp, ev?: Evidence) => {
    await assert.rejects(accept(p, ev), (e: unknown) => e instanceof NodeError && e.code === code && re.test(e.message), `${code} ${String(re)}`);
  };
  const held = async (p: Payload) => (await w.ledger.call(p.txid))?.status ?? null;
  try {
    await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    await w.putHeaders(1, [b1.header], false);
    await w.acceptDeploy(d.record, world.evidenceOf(d)); // confirmed in block 1: its confirmation pays

    // Nothing shows a coin: refused, nothing stored.
    await refused(a1, 'coin_missing', /came without the evidence of the coin/, { anchorTx: a1.tx.toBuffer(), confirmed: null, spentBy: null });
    await refused(unfunded, 'coin_unproven', /neither confirmed in a block whose header this node holds nor the anchor of a payload it holds/);
    const ev = world.evidenceOf(a1);
    // What an unproven coin waits for (core/unproven-pool.ts keeps a peer's payload for it):
    // its parent payload when no inclusion came, the header its inclusion names when above the tip.
    const awaits = async (p: Payload & { kind: 'call' }, e?: Evidence) => accept(p, e).then(() => null, (x: NodeError) => ({ code: x.code, detail: x.detail }));
    assert.deepEqual(await awaits(unfunded), { code: 'coin_unproven', detail: { awaits_parent: unfunded.fund.getId() } });
    const above = { ...ev, coin: { prevTxs: [{ tx: ev.coin!.prevTxs[0]!.tx, at: { ...ev.coin!.prevTxs[0]!.at!, height: 2 } }] } };
    assert.deepEqual(await awaits(a1, above), { code: 'coin_unproven', detail: { awaits_header: 2 } });
    const forged = { ...ev, coin: { prevTxs: [{ tx: ev.coin!.prevTxs[0]!.tx, at: { ...ev.coin!.prevTxs[0]!.at!, txIndex: 2 } }] } };
    await refused(a1, 'bad_coin', /does not hold against this node's header/, forged);
    assert.equal(await held(a1), null);

    // One coin, one waiting call: the same fee is refused, a higher fee and rate replaces.
    assert.equal((await accept(a1)).created, true);
    await refused(r1, 'coin_in_use', /already backs pending call/);
    assert.equal((await accept(r2)).created, true);
    assert.equal(await held(a1), null, 'the replaced call is evicted');
    assert.equal(w.coinEvictions.replaced, 1);

    // A coin created by a pending call's anchor (unconfirmed): proven by the call the node holds.
    assert.equal((await accept(a2)).created, true);
    assert.equal((await accept(c1)).created, true);
    assert.equal(w.coins.placeOf(c1.txid)?.depth, 1);
    assert.equal(w.ledger.pendingCount, 3);

    // Full: a higher fee rate takes the place of the lowest (r2, 1,500 sats; a2 carries c1 and stays).
    assert.equal((await accept(a3)).created, true);
    assert.equal(await held(r2), null);
    assert.equal(await held(a2), 'pending');
    assert.equal(w.coinEvictions.outbid, 1);
    // A lower one is refused, naming the rates; the set is unchanged.
    await refused(a4, 'overloaded', /the lowest fee rate waiting is .* sat\/vB, this anchor pays .* sat\/vB/);
    assert.equal(w.ledger.pendingCount, 3);

    // The places are the node's own record: rebuilt from stored evidence at open.
    await w.close();
    w = await Writer.open(join(dir, 'db'), 'n', logger('test'), { maxPendingCalls: 3 });
    assert.equal(w.coins.placeOf(c1.txid)?.depth, 1);
    assert.equal(w.coins.placeOf(a3.txid)?.fee, 3_000n);
    assert.equal(w.coins.hasChildren(a2.txid), true);
    await refused(a4, 'overloaded', /max_pending_calls/);
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Writer.takeEvidence (deferred checks' and peers' evidence for a payload already held):
 * a spend only drops a call when the evidence's spender really spends the call's
 * outpoint. The writer places each claimed transaction in its block against its
 * headers; the spender's inputs are read by checkEvidence, which this entry must run.
 * And what the node serves of it (payloadEvidence) is only what its chain still holds.
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
import { Writer } from '../../src/writer/writer.js';
import { fixturesDir } from '../helpers/paths.js';
import { REGTEST_GENESIS, Rng, World, type Artifact } from '../helpers/sim-world.js';

test('takeEvidence refuses a spender that does not spend the call\'s outpoint (bad_evidence) and drops the call on the one that does', async () => {
  const file = join(fixturesDir, 'contracts', 'counter.svc');
  const compiled = compileSource(readFileSync(file, 'utf8'), file);
  assert.ok(compiled.ok);
  const world = new World(new Rng(7), 7);
  const d = world.deploy(compiled.artifact as unknown as Artifact);
  const caller = Buffer.alloc(32, 0xab);
  const doomed = world.call(d.record.contract_id, 'bump', [{ type: 'u64', value: 1n }], caller, 1n, true);
  const other = world.call(d.record.contract_id, 'bump', [{ type: 'u64', value: 2n }], caller, 2n, false);
  const dir = mkdtempSync(join(tmpdir(), 'svc-take-evidence-'));
  const w = await Writer.open(join(dir, 'db'), 'n', logger('test'));
  try {
    await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    // The ledger's acceptance, below the node's admission policy (writer.ts, admit): what is proven here is what evidence decides.
    await w.ledger.acceptDeploy(d.record, world.evidenceOf(d));
    await w.ledger.acceptCall(doomed.record, undefined, world.evidenceOf(doomed));
    // Block 1 confirms the deploy, the other call and the doomed call's conflicting spend.
    for (const tx of [d.tx, other.tx, doomed.conflict!]) world.broadcast(tx);
    const b1 = world.mine(8);
    assert.equal(b1.txs.length, 4);
    const raw = await world.source().rawBlock(b1.hash);
    // Applied as a light node does far from the tip: its header alone, so the writer learns the spend only from evidence.
    const full = blockInputOf(connectedBlockOf(raw, 1));
    await w.applyChainUpdate({ fork_height: 0, disconnected: [], connected: [{ height: 1, hash: b1.hash, prevHash: b1.prevHash, header: full.header, txs: [], headerOnly: true }] });
    assert.equal((await w.ledger.call(doomed.txid))?.status, 'pending');

    // The other call's anchor: confirmed in block 1 at a true position, but it spends another outpoint.
    const lie = { ...world.evidenceOf(doomed), spentBy: { tx: other.tx.toBuffer(), vin: 0, at: world.inclusionOf(other.txid)! } };
    await assert.rejects(w.takeEvidence(doomed.txid, lie), (e: unknown) => e instanceof NodeError && e.code === 'bad_evidence' && /does not spend/.test(e.message));
    assert.equal((await w.ledger.call(doomed.txid))?.status, 'pending');
    assert.equal((await w.payloadEvidence(doomed.txid))?.spentBy, null);

    // The conflicting spend itself drops it.
    const honest = world.evidenceOf(doomed);
    assert.ok(honest.spentBy);
    assert.equal(await w.takeEvidence(doomed.txid, honest), true);
    assert.equal((await w.ledger.call(doomed.txid))?.status, 'dropped');
    assert.equal((await w.payloadEvidence(doomed.txid))?.spentBy?.at.blockHash, b1.hash);

    // A reorganisation replaces block 1: the call is pending again, and the spend kept for
    // the gone block is no longer served (a peer would refuse the payload for it).
    world.reorg(1, 1);
    const nb1 = world.chain[1]!;
    await w.applyChainUpdate({ fork_height: 0, disconnected: [{ height: 1, hash: b1.hash }], connected: [{ height: 1, hash: nb1.hash, prevHash: nb1.prevHash, header: nb1.header, txs: [], headerOnly: true }] });
    assert.equal((await w.ledger.call(doomed.txid))?.status, 'pending');
    const served = await w.payloadEvidence(doomed.txid);
    assert.ok(served);
    assert.equal(served.spentBy, null);
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

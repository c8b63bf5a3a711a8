/**
 * A chain update built on a tip that has since moved (the follower read the writer's
 * status while a late payload's replay was queued ahead of its event) is refused as
 * retryable, `chain_unavailable` with reason `chain_moved`, and changes nothing: the
 * header follower builds it again from the tip the writer has (seed 100333 of the
 * simulation failed on it as an internal error, and a node waited a poll interval).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../src/log.js';
import { Writer } from '../../src/writer/writer.js';
import { REGTEST_GENESIS, Rng, World } from '../helpers/sim-world.js';

test('an update built on a tip that moved is refused chain_moved (retryable) and changes nothing', async () => {
  const world = new World(new Rng(11), 11);
  const dir = mkdtempSync(join(tmpdir(), 'svc-chain-moved-'));
  const w = await Writer.open(join(dir, 'db'), 'n', logger('test'));
  try {
    await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
    const b1 = world.mine(1);
    const b2 = world.mine(1);
    const asHeader = (b: typeof b1, height: number) => ({ height, hash: b.hash, prevHash: b.prevHash, header: b.header, txs: [], headerOnly: true });
    await w.applyChainUpdate({ fork_height: 0, disconnected: [], connected: [asHeader(b1, 1), asHeader(b2, 2)] });
    assert.equal(w.ledger.tip?.height, 2);
    // Built when the tip was 1: block 2 again.
    await assert.rejects(
      w.applyChainUpdate({ fork_height: 1, disconnected: [], connected: [asHeader(b2, 2)] }),
      (e: unknown) => e instanceof NodeError && e.code === 'chain_unavailable' && e.detail?.['reason'] === 'chain_moved',
    );
    // A reorganisation built when the tip was 1.
    await assert.rejects(
      w.applyChainUpdate({ fork_height: 0, disconnected: [{ height: 1, hash: b1.hash }], connected: [asHeader(b1, 1)] }),
      (e: unknown) => e instanceof NodeError && e.detail?.['reason'] === 'chain_moved',
    );
    assert.deepEqual([w.ledger.tip?.height, w.ledger.tip?.hash], [2, b2.hash], 'nothing changed');
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A node anchored (start_height) at the block that funds a user's coin holds no header
 * there, so the coin can never be proven on it (docs/STATE.md, "Coin evidence"): the
 * deploy is refused with a code that says so and is final, `coin_before_anchor`, not a
 * retryable `coin_unproven` that retrying never cures; nothing is broadcast; and a coin
 * confirmed one block above the anchor is taken.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startDevnetChain } from '../../src/devnet/chain-server.js';
import { ClientError } from '@svc-node/client/errors';
import { client, compileFixture, fund, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';

test('a coin confirmed in the journal anchor block is refused coin_before_anchor before anything is paid; a coin above the anchor is taken', async () => {
  const devnet = await startDevnetChain({ initialBlocks: 101 });
  const wallet = testWallet(46);
  await fund(devnet, wallet, 1);
  const anchorHeight = devnet.chain.height;
  const node = await startDevnetNode(devnet, { env: { SVC_START_HEIGHT: String(anchorHeight) } });
  try {
    await waitSynced(node, devnet);
    const svc = client(node, devnet, wallet);
    const artifact = compileFixture('counter.svc');
    await assert.rejects(svc.deploy(artifact), (e: unknown) => {
      assert.ok(e instanceof ClientError, String(e));
      assert.equal(e.code, 'coin_before_anchor', e.message);
      assert.match(e.message, new RegExp(`confirmed in block ${anchorHeight}, at or below this node's journal anchor ${anchorHeight}`));
      assert.match(e.message, /nothing was broadcast/);
      return true;
    });
    assert.deepEqual(devnet.chain.mempoolTxids(), [], 'nothing was broadcast');

    // A coin confirmed in the block above the anchor, whose header the node holds.
    const above = testWallet(47);
    await fund(devnet, above, 1);
    await waitSynced(node, devnet);
    const d = await client(node, devnet, above).deploy(artifact);
    assert.equal(devnet.chain.mempoolTxids().length, 1, 'the deploy anchor broadcast');
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    const info = (await (await fetch(`${node.restUrl}/contracts/${d.contractId}`)).json()) as { status?: string };
    assert.equal(info.status, 'active');
  } finally {
    await node.stop();
    await devnet.close();
  }
});

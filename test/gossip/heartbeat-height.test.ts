/**
 * The height a node advertises in heartbeats is its processed height at that moment:
 * after a catch-up, and after blocks applied while it runs, a peer asking
 * by Heartbeat gets node_status.processed_height, not the height of the last heartbeat
 * round (which, read from node_status once a round, lagged ~20 s behind a catch-up).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PeerClient } from '../../src/gossip/client.js';
import { Signer } from '../../src/gossip/auth.js';
import { startDevnet, waitSynced } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, status, urlOf } from '../helpers/gossip.js';

/** Long enough that no heartbeat round runs between the blocks and the questions below. */
const HEARTBEAT_INTERVAL_S = '600';

test('a Heartbeat answer carries the processed height after a catch-up and after each new block', async () => {
  const devnet = await startDevnet();
  const anchor = devnet.chain.height;
  // Blocks the node must catch up on at its start.
  devnet.chain.mine(20);
  const port = await freePort();
  const node = await startPeerNode(devnet, { name: 'hb-height', port, peers: [], startHeight: anchor, env: { SVC_GOSSIP_HEARTBEAT_INTERVAL_S: HEARTBEAT_INTERVAL_S } });
  const peer = new PeerClient(urlOf(port), new Signer(new Uint8Array(32).fill(9)), 10_000);
  try {
    const heightSeen = async (): Promise<number> => Number((await peer.call('Heartbeat', { node_id: 'peer', url: '', height: '0' })).height);

    const caughtUp = await waitSynced(node, devnet);
    assert.equal(caughtUp.height, anchor + 20);
    assert.equal(await heightSeen(), (await status(node)).processed_height, 'after the catch-up');

    // Blocks applied while it runs, with no heartbeat round in between.
    devnet.chain.mine(5);
    const followed = await waitSynced(node, devnet);
    assert.equal(followed.height, anchor + 25);
    assert.equal(await heightSeen(), followed.height, 'after blocks applied since the last round');
  } finally {
    peer.close();
    await node.stop();
    await devnet.close();
  }
});

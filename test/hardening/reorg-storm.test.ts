/**
 * A reorg storm: repeated reorganisations of depth 1 to 10 on the devnet while
 * calls keep arriving, without waiting for the node between most of them. The node must
 * end at the state root of a fresh node that only ever saw the final chain (given every
 * payload late).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, fund, getJson, postJson, startDevnet, startDevnetNode, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';

const ROUNDS = Number(process.env['SVC_HARDENING_REORG_ROUNDS'] ?? 20);

test(`reorg storm, ${ROUNDS} reorgs of depth 1..10 while calls arrive: same state root as a fresh node`, { timeout: 240_000 }, async () => {
  const devnet = await startDevnet();
  const nodeA = await startDevnetNode(devnet);
  let nodeB: Awaited<ReturnType<typeof startDevnetNode>> | undefined;
  const wallet = testWallet(51);
  const svc = client(nodeA, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const bodies: { txid: string; contract_id: string; payload: string; coin?: unknown }[] = [];
  const depths: number[] = [];
  try {
    await fund(devnet, wallet, ROUNDS * 2 + 4, 200_000);
    const dep = await svc.deploy(counter);
    // Deep enough that no reorg of the storm removes the deploy.
    devnet.chain.mine(11);
    await waitSynced(nodeA, devnet);
    let x = 0x2545f491;
    const rnd = (n: number): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Calls arrive (intake on the node) while it is still following the last reorg.
      // One wallet: its calls go one after the other (parallel ones would spend the same coin).
      for (let i = 0; i < 2; i++) {
        const c = await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${round * 10 + i + 1}`], abi: counter.abi });
        bodies.push({ txid: c.anchor.txid, contract_id: dep.contractId, payload: c.call.payload, coin: c.body.coin });
      }
      devnet.chain.mine(1 + rnd(3));
      // Every depth 1..10 (twice with 20 rounds), in a shuffled order.
      const depth = 1 + ((round * 7) % 10);
      depths.push(depth);
      devnet.chain.reorg({ depth, blocks: depth + 1 + rnd(2) });
      // Most rounds do not wait for the node: the next reorg lands while it is still catching up.
      if (round % 2 === 1) await waitSynced(nodeA, devnet, 60_000);
    }
    devnet.chain.mine(1);
    await waitSynced(nodeA, devnet, 90_000);
    // A call whose new block lies more than six below the tip was read as a header alone:
    // its deferred check places it (and replays) just after the node reaches the tip.
    await waitUntil(nodeA, async () => {
      for (const b of bodies) if ((await getJson(`${nodeA.restUrl}/contract_call/${b.txid}/status`)).body.status !== 'executed') return false;
      return true;
    }, 'every call of the storm executed', 90_000);
    const a = await waitSynced(nodeA, devnet);
    const reorgLines = nodeA.lines.filter((l) => l.msg === 'reorganisation').length;
    assert.ok(reorgLines > 0, 'the node saw reorganisations');

    const anchor = await nodeA.waitFor((l) => l.msg === 'anchored block journal');
    nodeB = await startDevnetNode(devnet, { env: { SVC_START_HEIGHT: String(anchor['height']) } });
    await waitSynced(nodeB, devnet, 60_000);
    assert.equal((await postJson(`${nodeB.restUrl}/deploy_contract`, dep.body)).status, 202);
    for (const b of bodies) {
      const r = await postJson(`${nodeB.restUrl}/contract_call`, b);
      assert.equal(r.status, 202, JSON.stringify(r.body));
    }
    // Each late payload replays from its block; wait (event-driven) until the roots agree.
    const deadline = Date.now() + 60_000;
    let b = await waitSynced(nodeB, devnet);
    while (b.stateRoot !== a.stateRoot && Date.now() < deadline) {
      await nodeB.waitForNext((l) => l.msg === 'replayed after a late payload', 2_000).catch(() => undefined);
      b = await waitSynced(nodeB, devnet);
    }
    assert.equal(b.height, a.height);
    assert.equal(b.stateRoot, a.stateRoot, 'the storm-tossed node and the fresh node agree');
    console.log(`# hardening/reorg-storm: ${JSON.stringify({ rounds: ROUNDS, depths, reorgs_seen_by_node: reorgLines, calls: bodies.length, height: a.height })}`);
  } finally {
    await nodeB?.stop();
    await nodeA.stop();
    await devnet.close();
  }
});

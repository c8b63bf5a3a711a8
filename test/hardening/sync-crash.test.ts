/**
 * SIGKILL during peer sync (issue 10): a fresh node pulls a contract's deploy and 45
 * calls (30 confirmed in two blocks, 15 pending) from a peer by Merkle-diff sync, and is
 * killed (the whole process group) at seeded random moments once the sync is under way,
 * CYCLES times, each time restarted on its data directory. Every call it held before a kill must be there
 * after the restart; at the end it holds every call, with the height, state root and
 * outcomes of the peer that never crashed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCall, buildCallAnchor } from '@svc-node/client/sdk';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced, waitUntil, withCoin } from '../helpers/devnet-node.js';
import { killDelays } from '../helpers/crash-pair.js';
import { freePort, startPeerNode, status, waitStatus } from '../helpers/gossip.js';
import type { NodeProcess } from '../helpers/node-process.js';

const CYCLES = Number(process.env['SVC_HARDENING_SYNC_CRASH_CYCLES'] ?? 4);
const CALLS = 45;

test(`SIGKILL during peer sync, ${CYCLES} cycles: no stored call lost, same state root as the peer`, { timeout: 120_000 }, async () => {
  const devnet = await startDevnet();
  const [pA, pC] = [await freePort(), await freePort()];
  const anchor = devnet.chain.height;
  const A = await startPeerNode(devnet, { name: 'sync-source', port: pA, peers: [], startHeight: anchor });
  let C: NodeProcess | null = null;
  try {
    // The source: a deploy and CALLS calls, each on its own output, submitted by REST.
    const wallet = testWallet(36);
    await fund(devnet, wallet, CALLS + 2, 100_000);
    const svc = client(A, devnet, wallet);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(A, devnet);
    const utxos = (await svc.esplora.utxos(wallet.address)).filter((u) => u.status?.confirmed !== false && u.value === 100_000);
    assert.ok(utxos.length >= CALLS, `outputs: ${utxos.length}`);
    const txids: string[] = [];
    for (let i = 0; i < CALLS; i += 15) {
      await Promise.all(
        utxos.slice(i, i + 15).map(async (u, j) => {
          const call = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + j + 1}`], abi: counter.abi, callerSecret: wallet.secret, outpoint: u });
          const a = buildCallAnchor(wallet, [u], call, 1);
          await svc.esplora.broadcast(a.hex);
          const r = await postJson(`${A.restUrl}/contract_call`, await withCoin(devnet, { txid: a.txid, anchor_tx: a.hex, contract_id: dep.contractId, payload: call.payload }));
          assert.equal(r.status, 202);
          txids.push(a.txid);
        }),
      );
      // Two thirds confirmed over two blocks, the last third left pending.
      if (i < 30) devnet.chain.mine(1);
    }
    const a0 = await waitSynced(A, devnet);
    assert.equal((await waitStatus(A, (s) => s.pending_calls === 15, 'A holds 15 pending')).pending_calls, 15);

    // The fresh node, anchored where A was, learns everything by sync from A.
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sync-crash-'));
    const start = (): Promise<NodeProcess> => startPeerNode(devnet, { name: 'sync-crashy', port: pC, peers: [pA], startHeight: anchor, dataDir });
    const known = async (node: NodeProcess): Promise<Set<string>> => {
      const s = await Promise.all(txids.map(async (t) => ((await fetch(`${node.restUrl}/contract_call/${t}/status`).then(async (r) => (await r.arrayBuffer(), r.status))) === 200 ? t : null)));
      return new Set(s.filter((t): t is string => t !== null));
    };
    // Sync of 46 payloads takes about a second here. Kill anywhere in the first 0.5 s
    // after this start's sync has fetched its first payload (or found nothing to fetch),
    // so the kills land in the sync even when a loaded machine starts the node slowly.
    const delay = killDelays(0x5ca1ab1e, 500);
    const syncUnderway = (node: NodeProcess): Promise<void> =>
      waitUntil(node, async () => node.lines.some((l) => l.msg === 'startup sync done') || (await status(node)).gossip.sync_payloads_fetched > 0, 'the startup sync under way', 30_000);
    const held: number[] = [];
    let mustHave = new Set<string>();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      C = await start();
      for (const t of mustHave) assert.equal((await getJson(`${C.restUrl}/contract_call/${t}/status`)).status, 200, `cycle ${cycle}: call ${t} stored before a kill is gone`);
      await syncUnderway(C);
      await new Promise((r) => setTimeout(r, delay()));
      mustHave = await known(C); // what it holds now, just before the kill
      held.push(mustHave.size);
      await C.killHard();
      C = null;
    }
    // Last start: let the sync finish.
    C = await start();
    for (const t of mustHave) assert.equal((await getJson(`${C.restUrl}/contract_call/${t}/status`)).status, 200, `call ${t} stored before the last kill is gone`);
    const c = C;
    await waitStatus(c, (s) => s.contracts === 1 && s.pending_calls === 15, 'C holds the deploy and the 15 pending calls', 60_000);
    const c0 = await waitSynced(c, devnet, 60_000);
    const deadline = Date.now() + 60_000;
    let root = c0.stateRoot;
    while (root !== a0.stateRoot && Date.now() < deadline) {
      // Late payloads replay from their blocks; wait for those replays.
      await c.waitForNext((l) => l.msg === 'replayed after a late payload' || l.msg === 're-derivation done', 2_000).catch(() => undefined);
      root = (await waitSynced(c, devnet)).stateRoot;
    }
    assert.equal(root, a0.stateRoot, 'same state root as the peer that never crashed');
    assert.equal((await known(c)).size, CALLS, 'every call held');
    // The pending ones confirm on both.
    devnet.chain.mine(1);
    const [a1, c1] = [await waitSynced(A, devnet), await waitSynced(c, devnet)];
    assert.deepEqual(c1, a1, 'same height and state root after the pending calls confirm');
    for (const t of txids) {
      const [sa, sc] = [await getJson(`${A.restUrl}/contract_call/${t}/status`), await getJson(`${c.restUrl}/contract_call/${t}/status`)];
      assert.deepEqual({ status: sc.body.status, result: sc.body.result, block_height: sc.body.block_height }, { status: sa.body.status, result: sa.body.result, block_height: sa.body.block_height }, t);
    }
    console.log(`# hardening/sync-crash: ${CYCLES} kills during sync; calls held at each kill: ${held.join(', ')} of ${CALLS}`);
  } finally {
    await C?.stop();
    await A.stop();
    await devnet.close();
  }
});

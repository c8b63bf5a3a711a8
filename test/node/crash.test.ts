/**
 * Crash consistency: a node killed with SIGKILL (supervisor, core, writer, everything) at
 * random moments while it applies blocks, restarted each time, ends with the state roots
 * of a node that never crashed, and loses no call it acknowledged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, getJson, postJson, startDevnet, testWallet, waitSynced, withCoin } from '../helpers/devnet-node.js';
import { deployOnBoth, killDelays, startCrashPair } from '../helpers/crash-pair.js';

/** The issue asks for at least 20. */
const CYCLES = 20;
const CALLS_PER_CYCLE = 4;
const BLOCKS_PER_CYCLE = 3;

test(`SIGKILL during block application, ${CYCLES} times: same state roots, no acknowledged call lost`, { timeout: 300_000 }, async () => {
  const devnet = await startDevnet();
  const pair = await startCrashPair(devnet, 'svc-crash-');
  const { steady } = pair;
  let crashy = pair.crashy;
  const wallet = testWallet(4);
  const svc = client(steady, devnet, wallet);
  const counter = compileFixture('counter.svc');
  const nextDelay = killDelays(0x5eed, 40);
  const acknowledged: string[] = [];
  try {
    const dep = { contractId: await deployOnBoth(pair, devnet, svc, wallet, counter, CYCLES * CALLS_PER_CYCLE + 4) };

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (let i = 0; i < CALLS_PER_CYCLE; i++) {
        const c = await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${cycle * 10 + i + 1}`], abi: counter.abi });
        const r = await postJson(`${crashy.restUrl}/contract_call`, await withCoin(devnet, { txid: c.anchor.txid, contract_id: dep.contractId, payload: c.call.payload }));
        assert.equal(r.status, 202);
        acknowledged.push(c.anchor.txid);
      }
      // Mine, then kill the whole node a few milliseconds into applying the blocks.
      for (let b = 0; b < BLOCKS_PER_CYCLE; b++) devnet.chain.mine(1);
      await new Promise((r) => setTimeout(r, nextDelay()));
      await crashy.killHard();
      crashy = await pair.restart();
    }
    const a = await waitSynced(steady, devnet);
    const k = await waitSynced(crashy, devnet);
    assert.equal(k.height, a.height);
    assert.equal(k.stateRoot, a.stateRoot, 'same state root as the node that never crashed');
    for (let h = pair.anchorHeight + 1; h <= a.height; h += 7) {
      const ra = (await getJson(`${steady.restUrl}/v2/state_root/${h}`)).body;
      const rk = (await getJson(`${crashy.restUrl}/v2/state_root/${h}`)).body;
      assert.deepEqual(rk, ra, `state root at ${h}`);
    }
    for (const txid of acknowledged) {
      const sk = await getJson(`${crashy.restUrl}/contract_call/${txid}/status`);
      assert.equal(sk.status, 200, `acknowledged call ${txid} survived`);
      const sa = (await getJson(`${steady.restUrl}/contract_call/${txid}/status`)).body;
      assert.equal(sk.body.status, sa.status);
      assert.equal(sk.body.result, sa.result);
    }
  } finally {
    await crashy.stop();
    await steady.stop();
    await devnet.close();
  }
});

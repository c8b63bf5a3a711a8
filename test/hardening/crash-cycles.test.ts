/**
 * SIGKILL (the whole process group) at random moments during intake and during the
 * re-derivation a late payload starts. test/node/crash.test.ts covers block
 * application with 20 cycles; these 30 bring the total to 50. After every restart each call
 * the node answered 202/200 must still be there; at the end the node must have the state
 * roots and call outcomes of a node that never crashed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, getJson, postJson, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { deployOnBoth, killDelays, startCrashPair } from '../helpers/crash-pair.js';

/** Cycles, alternating intake and re-derivation; 30 by default (50 with crash.test.ts). */
const CYCLES = Number(process.env['SVC_HARDENING_CRASH_CYCLES'] ?? 30);
const CALLS_PER_CYCLE = 3;

/** Deterministic kill delays (xorshift), so a failure can be replayed from the seed. */
type Body = { txid: string; contract_id: string; payload: string; coin?: unknown };

test(`SIGKILL during intake and re-derivation, ${CYCLES} cycles: no acknowledged call lost, same state root`, { timeout: 400_000 }, async () => {
  const devnet = await startDevnet();
  const pair = await startCrashPair(devnet, 'svc-hard-crash-');
  const { steady } = pair;
  let crashy = pair.crashy;
  const wallet = testWallet(41);
  const svc = client(steady, devnet, wallet);
  const counter = compileFixture('counter.svc');
  // Intake takes tens of milliseconds per call: kill anywhere in 0..250 ms to land before,
  // during and after the answers; replays are quicker: 0..40 ms.
  const intakeDelay = killDelays(0xc0ffee, 250);
  const nextDelay = killDelays(0x5eed5, 40);
  const acknowledged = new Set<string>();
  const all: Body[] = [];
  const counts = { intake: 0, rederive: 0, ackBeforeKill: 0, lostInFlight: 0, replaysDoneBeforeKill: 0, lateSent: 0 };
  const post = async (b: Body): Promise<number> => {
    try {
      return (await postJson(`${crashy.restUrl}/contract_call`, b)).status;
    } catch {
      return 0; // the connection died with the node
    }
  };
  const restartAndCheck = async (): Promise<void> => {
    crashy = await pair.restart();
    for (const txid of acknowledged) {
      const s = await getJson(`${crashy.restUrl}/contract_call/${txid}/status`);
      assert.equal(s.status, 200, `acknowledged call ${txid} lost after a crash`);
    }
  };
  try {
    const dep = { contractId: await deployOnBoth(pair, devnet, svc, wallet, counter, CYCLES * CALLS_PER_CYCLE + 4) };

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const bodies: Body[] = [];
      for (let i = 0; i < CALLS_PER_CYCLE; i++) {
        const c = await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${cycle * 10 + i + 1}`], abi: counter.abi });
        bodies.push({ txid: c.anchor.txid, contract_id: dep.contractId, payload: c.call.payload, coin: c.body.coin });
      }
      all.push(...bodies);
      if (cycle % 2 === 0) {
        // Intake: the calls arrive at once and the node dies a few milliseconds in.
        counts.intake++;
        const delay = intakeDelay();
        const answers = bodies.map(async (b) => ({ b, status: await post(b) }));
        await new Promise((r) => setTimeout(r, delay));
        await crashy.killHard();
        for (const { b, status } of await Promise.all(answers)) {
          if (status === 202 || status === 200) {
            acknowledged.add(b.txid);
            counts.ackBeforeKill++;
          } else counts.lostInFlight++;
        }
        await restartAndCheck();
        // A client retries what was not acknowledged.
        for (const b of bodies) {
          if (acknowledged.has(b.txid)) continue;
          const s = await post(b);
          assert.ok(s === 202 || s === 200, `retry answered ${s}`);
          acknowledged.add(b.txid);
        }
        devnet.chain.mine(1);
        await waitSynced(crashy, devnet);
      } else {
        // Re-derivation: the block is processed without the payloads, which then arrive late;
        // each starts a replay from that block, and the node dies during it.
        counts.rederive++;
        devnet.chain.mine(1);
        await waitSynced(crashy, devnet);
        for (const b of bodies) {
          const s = await post(b);
          assert.ok(s === 202 || s === 200, `late payload answered ${s}`);
          acknowledged.add(b.txid);
        }
        counts.lateSent += bodies.length;
        await new Promise((r) => setTimeout(r, nextDelay()));
        await crashy.killHard();
        counts.replaysDoneBeforeKill += crashy.lines.filter((l) => l.msg === 'replayed after a late payload').length;
        await restartAndCheck();
      }
    }
    devnet.chain.mine(1);
    const a = await waitSynced(steady, devnet);
    // Replays left unfinished by a kill resume at start; wait for the same root.
    const deadline = Date.now() + 60_000;
    let k = await waitSynced(crashy, devnet);
    while (k.stateRoot !== a.stateRoot && Date.now() < deadline) {
      await crashy.waitForNext((l) => l.msg === 'replayed after a late payload' || l.msg === 're-derivation done', 2_000).catch(() => undefined);
      k = await waitSynced(crashy, devnet);
    }
    assert.equal(k.height, a.height);
    assert.equal(k.stateRoot, a.stateRoot, 'same state root as the node that never crashed');
    for (let h = pair.anchorHeight + 1; h <= a.height; h += 3) {
      assert.deepEqual((await getJson(`${crashy.restUrl}/v2/state_root/${h}`)).body, (await getJson(`${steady.restUrl}/v2/state_root/${h}`)).body, `state root at ${h}`);
    }
    for (const b of all) {
      const sk = await getJson(`${crashy.restUrl}/contract_call/${b.txid}/status`);
      const sa = await getJson(`${steady.restUrl}/contract_call/${b.txid}/status`);
      assert.equal(sk.status, 200, `call ${b.txid}`);
      assert.deepEqual({ status: sk.body.status, result: sk.body.result, block_height: sk.body.block_height }, { status: sa.body.status, result: sa.body.result, block_height: sa.body.block_height }, b.txid);
    }
    console.log(`# hardening/crash-cycles: ${JSON.stringify({ cycles: CYCLES, ...counts, calls: all.length })}`);
  } finally {
    await crashy.stop();
    await steady.stop();
    await devnet.close();
  }
});

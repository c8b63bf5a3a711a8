/**
 * A storage write failure (a full disk) halts the node with a clear reason instead of
 * corrupting state; clear_halt before space is freed is refused with the reopen's reason
 * and the node stays up; once space is freed, clear_halt reopens the database,
 * re-derives and resumes, ending at the state root of a node that never failed.
 *
 * The database lives on a small tmpfs mounted for the test (this machine kind runs tests as
 * root). Where mounting is not permitted the test is skipped with that reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client, compileFixture, fund, getJson, nodeStatus, postJson, startDevnet, startDevnetNode, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';

function tryMount(dir: string): string | null {
  try {
    // Room for the store with its write-ahead log (preallocated at 1.1 x the 16 MiB write
    // buffer) and, once the filler is gone, for the reopen that flushes the replayed log
    // into a table (~16 MiB more): on 24 MiB that reopen ran out of space again.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (e) {
    return `cannot mount a tmpfs here (${(e as Error).message.split('\n')[0]})`;
  }
}

/**
 * Blocks of event-heavy calls after the disk is full, at most, before a halt must have
 * come: the write-ahead log's preallocated space (1.1 x the 16 MiB write buffer) or the
 * first memtable flush is reached in well under this many.
 */
const FILL_ROUNDS = 36;
/** Event-heavy calls per block: 6 x ~2,000 events a block. */
const BURSTS_PER_BLOCK = 6;
/** One funded output per call: the fill's calls, the two deploys and the counter calls around them. */
const FUNDED_OUTPUTS = FILL_ROUNDS * BURSTS_PER_BLOCK + 8;

const mountDir = mkdtempSync(join(tmpdir(), 'svc-fulldisk-'));
const skip = tryMount(mountDir);

test('a full disk halts the node; freeing space and clear_halt recovers', { skip: skip ?? false, timeout: 180_000 }, async () => {
  const TOKEN = 'disk-full-operator-token';
  const devnet = await startDevnet();
  const steady = await startDevnetNode(devnet);
  const anchor = await steady.waitFor((l) => l.msg === 'anchored block journal');
  const env = { SVC_API_TOKEN: TOKEN, SVC_START_HEIGHT: String(anchor['height']) };
  const node = await startDevnetNode(devnet, { env, dataDir: mountDir });
  const filler = join(mountDir, 'filler');
  try {
    const wallet = testWallet(11);
    await fund(devnet, wallet, FUNDED_OUTPUTS, 100_000);
    const svc = client(steady, devnet, wallet);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    assert.equal((await postJson(`${node.restUrl}/deploy_contract`, dep.body)).status, 202);
    const emitter = compileFixture('emitter.svc');
    const em = await svc.deploy(emitter);
    assert.equal((await postJson(`${node.restUrl}/deploy_contract`, em.body)).status, 202);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);

    const refusedBodies: { txid: string; contract_id: string; payload: string; coin?: unknown }[] = [];
    const submit = async (n: number, mustAccept = true, burst = false): Promise<string> => {
      const c = burst
        ? await svc.call({ contractId: em.contractId, function: 'burst', args: [], abi: emitter.abi })
        : await svc.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${n}`], abi: counter.abi });
      const contractId = burst ? em.contractId : dep.contractId;
      const r = await postJson(`${node.restUrl}/contract_call`, { txid: c.anchor.txid, contract_id: contractId, payload: c.call.payload, coin: c.body.coin });
      if (mustAccept) assert.equal(r.status, 202);
      // On a full disk the payload cannot be made durable: never 202, only 503 halted.
      else assert.ok(r.status === 202 || (r.status === 503 && r.body.error.code === 'halted'), JSON.stringify(r.body));
      if (r.status === 503) refusedBodies.push({ txid: c.anchor.txid, contract_id: contractId, payload: c.call.payload, coin: c.body.coin });
      return c.anchor.txid;
    };
    const before = await submit(1);

    // Fill the disk completely (random bytes: nothing compresses them). RocksDB has
    // already allocated its write-ahead log ahead of use (1.1 x the 16 MiB write buffer),
    // so the node goes on writing there and halts when it needs new space: event-heavy
    // calls (2,000 events each) get there in a few blocks.
    const free = statfsSync(mountDir);
    writeFileSync(filler, randomBytes(Number(free.bavail) * Number(free.bsize)));
    let halted = false;
    for (let round = 1; !halted; round++) {
      assert.ok(round <= FILL_ROUNDS, `no halt after ${FILL_ROUNDS} blocks of event-heavy calls on a full disk`);
      for (let i = 0; i < BURSTS_PER_BLOCK; i++) await submit(0, false, true);
      devnet.chain.mine(1);
      const height = devnet.chain.height;
      await waitUntil(node, async () => {
        const st = await nodeStatus(node);
        halted = st['halted'] === true;
        return halted || st['processed_height'] === height;
      }, `block ${height} applied or a halt`);
    }
    const halt = await node.waitFor((l) => l.msg === 'consensus halt', 60_000, 'halt on a full disk');
    assert.match(String(halt['reason']), /^storage write failed/);
    const s = await nodeStatus(node);
    assert.equal(s['halted'], true);
    assert.match(String(s['halt_reason']), /storage write failed/);
    assert.equal((await getJson(`${node.restUrl}/contract_call/${before}/status`)).status, 200, 'reads keep working');
    const refused = await postJson(`${node.restUrl}/deploy_contract`, dep.body);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'halted');

    // Clearing the halt before freeing space: the reopen cannot flush the replayed log, and
    // the node says so and stays up, halted, its reads refused with that reason (a read of
    // the closed store once killed the core: SIGSEGV in the binding).
    const early = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const earlyBody = (await early.json()) as { error: { code: string; message: string } };
    assert.equal(early.status, 503);
    assert.equal(earlyBody.error.code, 'halted');
    assert.match(earlyBody.error.message, /^cannot clear the halt: the database could not be reopened \(.*No space left on device.*\); free space on its disk and clear the halt again$/);
    const closedRead = await getJson(`${node.restUrl}/contract_call/${before}/status`);
    assert.equal(closedRead.status, 503, JSON.stringify(closedRead.body));
    assert.equal(closedRead.body.error.code, 'halted');
    assert.match(closedRead.body.error.message, /could not be reopened/);
    assert.equal((await nodeStatus(node))['halted'], true);
    assert.deepEqual(node.lines.filter((l) => l.msg === 'child exited'), [], 'the core did not die');

    // The operator frees space and clears the halt.
    rmSync(filler);
    const cleared = await fetch(`${node.restUrl}/admin/clear_halt`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(cleared.status, 200, await cleared.clone().text());
    // Clients retry what was refused with 503; their stamps are already mined (late payloads).
    for (const b of refusedBodies) assert.equal((await postJson(`${node.restUrl}/contract_call`, b)).status, 202);
    for (const b of refusedBodies) {
      await waitUntil(node, async () => (await getJson(`${node.restUrl}/contract_call/${b.txid}/status`)).body.status === 'executed', `call ${b.txid} executed`);
    }
    const after = await submit(2);
    devnet.chain.mine(1);
    const a = await waitSynced(steady, devnet);
    const k = await waitSynced(node, devnet);
    assert.equal(k.stateRoot, a.stateRoot, 'no corruption: same state root as a node that never failed');
    assert.equal((await getJson(`${node.restUrl}/contract_call/${before}/status`)).body.status, 'executed');
    assert.equal((await getJson(`${node.restUrl}/contract_call/${after}/status`)).body.status, 'executed');
  } finally {
    rmSync(filler, { force: true });
    await node.stop();
    await steady.stop();
    await devnet.close();
    try {
      execFileSync('umount', [mountDir], { stdio: 'pipe' });
    } catch {
      /* best effort */
    }
  }
});

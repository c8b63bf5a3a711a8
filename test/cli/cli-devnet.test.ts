/** The compiler and svc CLIs end to end against the devnet chain and a real node. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { compileFixture, fund, postJson, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { EsploraClient, buildCall, buildCallAnchor, callSubmission, gatherCoin } from '@svc-node/client';
import { repoRoot } from '../helpers/paths.js';
import { withClosedStdout } from '../helpers/closed-stdout.js';
import { toHex } from '@svc-node/protocol/hash';

const run = promisify(execFile);
let devnet: DevnetChainHandle;
let node: NodeProcess;
const wallet = testWallet(9);
let env: NodeJS.ProcessEnv;

async function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), ...args], { env, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
  env = { ...process.env, SVC_NODE_URL: node.restUrl, SVC_ESPLORA_URL: devnet.url, SVC_WALLET_KEY: toHex(wallet.secret), SVC_FEE_RATE: '1' };
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('compile -o, svc deploy, svc call, svc status --wait: a call executed through the CLIs', async () => {
  const artifact = join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'counter.json');
  await run(process.execPath, [join(repoRoot, 'dist/src/compiler/cli.js'), join(repoRoot, 'test/fixtures/contracts/counter.svc'), '--json', '-o', artifact]);

  const dep = await svc(['deploy', artifact, '--json']);
  assert.equal(dep.code, 0, dep.stderr);
  const d = JSON.parse(dep.stdout) as { contract_id: string; status: string };
  assert.equal(d.status, 'pending');
  devnet.chain.mine(1);
  await waitSynced(node, devnet);

  const call = await svc(['call', d.contract_id, 'bump', 'u64:4', '--abi', artifact, '--json']);
  assert.equal(call.code, 0, call.stderr);
  const c = JSON.parse(call.stdout) as { txid: string; status: string };
  assert.equal(c.status, 'pending');
  devnet.chain.mine(1);
  const st = await svc(['status', c.txid, '--wait', '--json']);
  assert.equal(st.code, 0, st.stderr);
  const s = JSON.parse(st.stdout) as { status: string; result: string };
  assert.equal(s.status, 'executed');
  assert.equal(s.result, '4');
  // --proof: the record verified against its proof, with the root its outcome is committed by.
  const proven = await svc(['status', c.txid, '--proof', '--json']);
  assert.equal(proven.code, 0, proven.stderr);
  const p = JSON.parse(proven.stdout) as { status: string; proof?: unknown; proven: { outcome: { stateRoot: string; height: number; events: { name: string }[] } } };
  assert.equal(p.status, 'executed');
  assert.equal(p.proof, undefined, 'the verified facts are printed, not the raw proof');
  assert.equal(p.proven.outcome.stateRoot, (await (await fetch(`${node.restUrl}/v2/state_root/${p.proven.outcome.height}`)).json() as { state_root: string }).state_root);
  assert.deepEqual(p.proven.outcome.events.map((e) => e.name), ['Bumped']);
  const text = await svc(['status', c.txid, '--proof']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^proof: verified$/m);
  assert.match(text.stdout, /^outcome committed by: state root [0-9a-f]{64} of block \d+$/m);
  assert.match(text.stdout, /^event: Bumped\("[0-9a-f]{64}", "4", "4"\)$/m);

  // Without --abi the CLI takes the ABI from the node (GET /contracts/{id}/abi).
  const noAbi = await svc(['call', d.contract_id, 'bump', 'u64:3', '--json']);
  assert.equal(noAbi.code, 0, noAbi.stderr);
  devnet.chain.mine(1);
  const st2 = await svc(['status', (JSON.parse(noAbi.stdout) as { txid: string }).txid, '--wait', '--json']);
  assert.equal((JSON.parse(st2.stdout) as { result: string }).result, '7');

  const read = await svc(['read', d.contract_id, 'count', '--json']);
  assert.equal(read.code, 0, read.stderr);
  assert.equal((JSON.parse(read.stdout) as { value: string }).value, '7');
  const events = await svc(['events', d.contract_id, '--name', 'Bumped', '--json']);
  assert.equal(events.code, 0, events.stderr);
  const ev = JSON.parse(events.stdout) as { events: { name: string; params: { n: string; total: string } }[] };
  assert.deepEqual(ev.events.map((e) => [e.params.n, e.params.total]), [['4', '4'], ['3', '7']]);

  const bad = await svc(['call', d.contract_id, 'nosuch', '--abi', artifact]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr.trim(), /^svc: .*nosuch/);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});

test('a call the node refuses for a reason only it knows (coin_in_use) is refused before its anchor is paid: nothing in the mempool, the balance unchanged', async () => {
  const counter = compileFixture('counter.svc');
  const artifact = join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'counter.json');
  writeFileSync(artifact, JSON.stringify(counter));
  const dep = await svc(['deploy', artifact, '--json']);
  assert.equal(dep.code, 0, dep.stderr);
  const contractId = (JSON.parse(dep.stdout) as { contract_id: string }).contract_id;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);

  // Another client's call on coin X waits at the node, its anchor (5 sat/vB) not broadcast yet.
  const esplora = new EsploraClient(devnet.url);
  const utxos = await esplora.utxos(wallet.address);
  const x = utxos[0]!;
  const first = buildCall({ contractId, function: 'bump', args: ['u64:1'], abi: counter.abi as unknown[], callerSecret: wallet.secret, outpoint: x });
  const firstAnchor = buildCallAnchor(wallet, utxos, first, 5);
  const firstBody = callSubmission(first, firstAnchor, (await gatherCoin(esplora, firstAnchor.hex, x, utxos)).json);
  const held = await postJson(`${node.restUrl}/contract_call`, firstBody);
  assert.equal(held.status, 202, JSON.stringify(held.body));

  // svc names the same coin at 1 sat/vB: only the node knows X backs a waiting call.
  const balance = async () => (await esplora.utxos(wallet.address)).reduce((sum, u) => sum + u.value, 0);
  const before = { mempool: devnet.chain.mempoolTxids().length, balance: await balance() };
  const r = await svc(['call', contractId, 'bump', 'u64:2', '--outpoint', `${x.txid}:${x.vout}`]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^svc: coin_in_use: .* \(nothing was broadcast\)\n$/);
  assert.deepEqual({ mempool: devnet.chain.mempoolTxids().length, balance: await balance() }, before);

  // The waiting call's anchor broadcast and mined: it executes (and frees X for the tests after).
  await esplora.broadcast(firstAnchor.hex);
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const st = await svc(['status', firstAnchor.txid, '--wait', '--json']);
  assert.equal((JSON.parse(st.stdout) as { status: string }).status, 'executed', st.stderr);
});

/** Waits (polling the in-process chain, no fixed sleep) until the mempool holds a transaction, then mines it. */
async function mineWhenBroadcast(): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (devnet.chain.mempoolTxids().length === 0) {
    if (Date.now() > deadline) throw new Error('nothing was broadcast');
    await new Promise((r) => setImmediate(r));
  }
  devnet.chain.mine(1);
}

test('a token reaches another owner from the CLI: deploy --wait, call --outpoint --pay, simulate; a refused artifact costs nothing', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const artifact = join(tmp, 'token.json');
  await run(process.execPath, [join(repoRoot, 'dist/src/compiler/cli.js'), join(repoRoot, 'examples/token.svc'), '-o', artifact]);

  // refused before anything is built: no transaction reaches the chain
  const broken = join(tmp, 'broken.json');
  const a = JSON.parse(readFileSync(artifact, 'utf8')) as { bytecode: string };
  writeFileSync(broken, JSON.stringify({ ...a, bytecode: a.bytecode.slice(0, -2) }));
  const mempool = devnet.chain.mempoolTxids().length;
  const refused = await svc(['deploy', broken]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^svc: invalid_bytecode: the node would refuse this artifact \(nothing was broadcast\): bytecode rejected at offset \d+/);
  assert.equal(devnet.chain.mempoolTxids().length, mempool);

  const [dep] = await Promise.all([svc(['deploy', artifact, '--wait', '--interval', '0.05', '--json']), mineWhenBroadcast()]);
  assert.equal(dep.code, 0, dep.stderr);
  const d = JSON.parse(dep.stdout) as { contract_id: string; status: string; block_height: number };
  assert.equal(d.status, 'active');
  assert.equal(d.block_height, devnet.chain.height);

  // mint to vout 1 of the init transaction (the wallet's change output)
  const [init] = await Promise.all([svc(['call', d.contract_id, 'init', 'u128:1000000', 'u64:1', '--wait', '--interval', '0.05', '--json']), mineWhenBroadcast()]);
  assert.equal(init.code, 0, init.stderr);
  const minted = JSON.parse(init.stdout) as { txid: string; status: string };
  assert.equal(minted.status, 'executed');

  // transfer 250000 to another owner's output (vout 1, from --pay), the rest to change (vout 2)
  const other = testWallet(11);
  const [tr] = await Promise.all([
    svc(['call', d.contract_id, 'transfer', 'u64:1', 'u128:250000', 'u64:2', '--outpoint', `${minted.txid}:1`, '--pay', `${other.address}:1000`, '--wait', '--interval', '0.05', '--json']),
    mineWhenBroadcast(),
  ]);
  assert.equal(tr.code, 0, tr.stderr);
  const t = JSON.parse(tr.stdout) as { txid: string; status: string; outpoint: string; payments: { vout: number; address: string; sats: number }[]; change_vout: number };
  assert.equal(t.status, 'executed');
  assert.equal(t.outpoint, `${minted.txid}:1`);
  assert.deepEqual(t.payments, [{ vout: 1, address: other.address, sats: 1000 }]);
  assert.equal(t.change_vout, 2);
  const theirs = (await (await fetch(`${devnet.url}/address/${other.address}/utxo`)).json()) as { txid: string; vout: number; value: number }[];
  assert.deepEqual(theirs.map((u) => [u.txid, u.vout, u.value]), [[t.txid, 1, 1000]]);

  // readonly calls from the CLI: nothing anchored, the same argument syntax as call
  const before = devnet.chain.mempoolTxids().length;
  const bal = async (vout: number): Promise<unknown> => {
    const r = await svc(['simulate', d.contract_id, 'balance_at', `key:${t.txid}`, `u64:${vout}`, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { result: unknown }).result;
  };
  assert.equal(await bal(1), '250000');
  assert.equal(await bal(2), '750000');
  const text = await svc(['simulate', d.contract_id, 'supply']);
  assert.equal(text.code, 0, text.stderr);
  // the root printed is the root of the height printed beside it; the run sees the next height
  const sim = /^status: executed\nresult: "1000000"\ninstructions: \d+\nstate: height (\d+), root ([0-9a-f]{64}); run as if confirmed at height (\d+)\n$/.exec(text.stdout);
  assert.ok(sim, text.stdout);
  const root = (await (await fetch(`${node.restUrl}/v2/state_root/${sim[1]}`)).json()) as { state_root: string };
  assert.equal(root.state_root, sim[2]);
  assert.equal(Number(sim[3]), Number(sim[1]) + 1);
  // a dry run of a write: executed, events listed, nothing stored
  const dry = await svc(['simulate', d.contract_id, 'transfer', 'u64:1', 'u128:5', 'u64:2', '--input', `${t.txid}:1`, '--pay', `${other.address}:1000`, '--pay', `${wallet.address}:1000`]);
  assert.equal(dry.code, 0, dry.stdout + dry.stderr);
  assert.match(dry.stdout, /^status: executed\nresult: "250000"\nevent: Debit .*\nevent: Credit .*\nevent: Credit /);
  assert.equal(await bal(1), '250000');
  const failing = await svc(['simulate', d.contract_id, 'transfer', 'u64:1', 'u128:5', 'u64:2']);
  assert.equal(failing.code, 3);
  assert.match(failing.stdout, /status: failed\nerror: revert: no tokens on the spent outpoints/);
  assert.equal(devnet.chain.mempoolTxids().length, before);

  // svc status of a deploy txid says where to look; svc contract shows the deploy
  const st = await svc(['status', (JSON.parse(dep.stdout) as { txid: string }).txid]);
  assert.equal(st.code, 1);
  assert.equal(st.stderr.trim().split('\n').length, 1);
  assert.match(st.stderr, /^svc: not_found: (?!not_found)/);
  assert.match(st.stderr, /svc contract CONTRACT_ID/);
  const info = await svc(['contract', d.contract_id]);
  assert.equal(info.code, 0, info.stderr);
  assert.match(info.stdout, new RegExp(`^contract: ${d.contract_id}\nstatus: active\n`));
});

test('svc devnet fund and mine; insufficient_funds on a devnet says how to fund, and that nothing was broadcast', async () => {
  const poor = testWallet(12);
  const poorEnv = { ...env, SVC_WALLET_KEY: toHex(poor.secret) };
  const artifact = join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'counter.json');
  await run(process.execPath, [join(repoRoot, 'dist/src/compiler/cli.js'), join(repoRoot, 'test/fixtures/contracts/counter.svc'), '-o', artifact]);
  const broke = await run(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'deploy', artifact], { env: poorEnv }).catch((e: { code: number; stderr: string }) => e);
  assert.equal((broke as { code: number }).code, 1);
  assert.match((broke as { stderr: string }).stderr, /^svc: insufficient_funds: .* \(this is a devnet: fund the wallet with `svc devnet fund`\) \(nothing was broadcast\)\n$/);

  const height = devnet.chain.height;
  const funded = await run(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'devnet', 'fund', '--json'], { env: poorEnv });
  const f = JSON.parse(funded.stdout) as { address: string; sats: number; txid: string; height: number };
  assert.equal(f.address, poor.address);
  assert.equal(f.sats, 5_000_000);
  assert.equal(f.height, height + 1);
  const other = testWallet(13);
  const paid = await svc(['devnet', 'fund', other.address, '12345']);
  assert.equal(paid.code, 0, paid.stderr);
  assert.match(paid.stdout, new RegExp(`^paid 12345 sats to ${other.address} in [0-9a-f]{64}:\\d+\nmined 1 block, height ${height + 2}\n$`));
  const utxos = (await (await fetch(`${devnet.url}/address/${poor.address}/utxo`)).json()) as { value: number; status: { confirmed: boolean } }[];
  assert.deepEqual(utxos.map((u) => [u.value, u.status.confirmed]), [[5_000_000, true]]);
  const mined = await svc(['devnet', 'mine', '3']);
  assert.equal(mined.stdout, `mined 3 block(s), height ${height + 5}\n`);
  const bad = await svc(['devnet', 'mine', 'x']);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'svc: bad_argument: devnet mine N: N must be a whole number >= 1, got "x"\n');
});

test('fees are checked against the devnet\'s /fee-estimates before anything is broadcast; --allow-high-fee pays', async () => {
  const artifact = join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'counter.json');
  await run(process.execPath, [join(repoRoot, 'dist/src/compiler/cli.js'), join(repoRoot, 'test/fixtures/contracts/counter.svc'), '-o', artifact]);
  const mempool = devnet.chain.mempoolTxids().length;
  const refused = await run(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'deploy', artifact], { env: { ...env, SVC_FEE_RATE: '20000' } }).catch((e: { code: number; stderr: string }) => e);
  assert.equal((refused as { code: number }).code, 2);
  assert.match(
    (refused as { stderr: string }).stderr,
    /^svc: fee_too_high: fee rate 20000 sat\/vB is above 25 sat\/vB \(3x the endpoint's next-block estimate of 1 sat\/vB, at least 25\); nothing was broadcast; to pay it anyway, allow high fees \(svc: --allow-high-fee\)\n$/,
  );
  assert.equal(devnet.chain.mempoolTxids().length, mempool);
  const paid = await svc(['deploy', artifact, '--fee-rate', '30', '--allow-high-fee', '--json']);
  assert.equal(paid.code, 0, paid.stderr);
  assert.equal(devnet.chain.mempoolTxids().length, mempool + 1);
  devnet.chain.mine(1);
});

test('svc events --follow with its output closed, or whose reader leaves with no new event (| head -1), ends quietly with 141; a faucet asked too much says what it can pay', async () => {
  const contracts = (await (await fetch(`${node.restUrl}/contracts`)).json()) as { contract_ids: string[] };
  const followed = await withClosedStdout([join(repoRoot, 'dist/src/cli/svc.js'), 'events', contracts.contract_ids[0]!, '--follow'], env as Record<string, string>);
  assert.deepEqual([followed.code, followed.stderr], [141, '']);

  // docs/CLI.md's own example: `head` takes the first line and leaves while the backlog
  // fits in what it read and no new event comes; svc ends anyway, promptly, quietly, 141.
  const pipeline = spawn('bash', ['-c', `"$0" "$1" events "$2" --follow | head -1; echo "svc exit \${PIPESTATUS[0]}" >&2`, process.execPath, join(repoRoot, 'dist/src/cli/svc.js'), contracts.contract_ids[0]!], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  pipeline.stdout!.on('data', (c: Buffer) => void (out += c.toString('utf8')));
  pipeline.stderr!.on('data', (c: Buffer) => void (err += c.toString('utf8')));
  const t0 = performance.now();
  // no block is mined meanwhile: without a new event only the closed output can end it
  // (a hang fails the test: svc, whose stderr is ours, is killed with its pipeline's group)
  const killer = setTimeout(() => process.kill(-pipeline.pid!, 'SIGKILL'), 20_000);
  const ended = await new Promise<number | null>((r) => pipeline.once('close', (code) => r(code)));
  clearTimeout(killer);
  assert.equal(ended, 0, `${err} (after ${Math.round(performance.now() - t0)} ms)`);
  assert.match(out, /^(\d+:\d+:\d+ \w+ \{.*\} tx [0-9a-f]{64} cursor \S+|-- synced at height \d+; following)\n$/);
  assert.equal(err, 'svc exit 141\n');
  assert.ok(performance.now() - t0 < 10_000, `ended after ${Math.round(performance.now() - t0)} ms`);

  const huge = await svc(['devnet', 'fund', testWallet(14).address, '999999999999999']);
  assert.equal(huge.code, 1);
  assert.match(huge.stderr, /^svc: bad_request: devnet chain: the faucet can pay at most \d+ sats now, not 999999999999999\n$/);
});

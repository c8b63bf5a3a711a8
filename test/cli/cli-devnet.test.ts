/** The compiler and svc CLIs end to end against the devnet chain and a real node. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';
import { toHex } from '../../src/protocol/hash.js';

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

  const bad = await svc(['call', d.contract_id, 'nosuch', '--abi', artifact]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr.trim(), /^svc: .*nosuch/);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});

/**
 * `svc call --wait` when the chain-data endpoint dies after the broadcast: the node cannot
 * confirm anything, says so in node_status, and the CLI gives up in one line naming the
 * call and how to follow it, instead of polling `pending` for the 30-minute default.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { compileFixture, client, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';
import { toHex } from '@svc-node/protocol/hash';
import { CHAIN_DOWN_POLLS } from '@svc-node/client/node';

test('call --wait gives up, bounded, once the devnet chain is gone', async () => {
  const devnet = await startDevnet();
  const node = await startDevnetNode(devnet);
  try {
    const wallet = testWallet(21);
    await fund(devnet, wallet, 2);
    const d = await client(node, devnet, wallet).deploy(compileFixture('counter.svc'));
    devnet.chain.mine(1);
    await waitSynced(node, devnet);

    const env = { ...process.env, SVC_NODE_URL: node.restUrl, SVC_ESPLORA_URL: devnet.url, SVC_WALLET_KEY: toHex(wallet.secret), SVC_FEE_RATE: '1' };
    const p = spawn(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), 'call', d.contractId, 'bump', 'u64:1', '--wait', '--interval', '0.05'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
    p.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      // the call is submitted (the node answered): the chain goes away under the wait
      if (stderr.includes('... pending') && devnet.chain.mempoolTxids().length === 1) void devnet.close();
    });
    const code = await new Promise<number | null>((r) => p.once('close', (c) => r(c)));
    const txid = devnet.chain.mempoolTxids()[0]!;
    assert.equal(code, 1, stderr);
    assert.equal(stdout, '');
    const last = stderr.trim().split('\n').at(-1)!;
    assert.equal(
      last.replace(/\(http:\/\/127\.0\.0\.1:\d+: [^)]*\)/, '(ENDPOINT: ERROR)'),
      `svc: chain_unavailable: call ${txid} not final: gave up waiting, the node's chain-data endpoint failed ${CHAIN_DOWN_POLLS} polls in a row (ENDPOINT: ERROR) and nothing confirms without it (anchoring transaction ${txid} is broadcast; the node accepted the call; follow it with: svc status ${txid} --wait)`,
    );
  } finally {
    await node.stop();
    await devnet.close();
  }
});

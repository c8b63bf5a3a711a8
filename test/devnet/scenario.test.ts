/** The `npm run devnet` scenario against the devnet chain and a real node, step by step. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runScenario } from '../../src/devnet/scenario.js';
import { startDevnet, startDevnetNode, testWallet, getJson } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';

test('the devnet scenario deploys the examples, mints, transfers and lists, each call executed', async () => {
  const devnet = await startDevnet();
  const node = await startDevnetNode(devnet);
  try {
    const lines: string[] = [];
    const r = await runScenario({ nodeUrl: node.restUrl, esploraUrl: devnet.url, chain: devnet.chain, wallet: testWallet(10), examplesDir: join(repoRoot, 'examples'), say: (l) => lines.push(l) });
    const executed = lines.filter((l) => / executed at height /.test(l));
    assert.equal(executed.length, 7, lines.join('\n'));
    const last = (await getJson(`${node.restUrl}/contract_call/${r.lastTxid}/status`)).body;
    assert.equal(last.status, 'executed');
    assert.equal(last.result, '1', 'listing id 1');
    assert.ok(lines.some((l) => /state root [0-9a-f]{64}/.test(l) && !/state root 0{64}/.test(l)));
    // the transfer reaches another owner's output; the rest is the sender's change
    assert.ok(lines.some((l) => /^  recipient [0-9a-f]{64}:1 holds "250000" units$/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^  sender change [0-9a-f]{64}:2 holds "750000" units$/.test(l)), lines.join('\n'));
  } finally {
    await node.stop();
    await devnet.close();
  }
});

/**
 * svc on a chain-data endpoint that limits each address (the devnet's public mode), shared
 * with a node on the same address: a 429 is waited out as its Retry-After says, with a
 * line; a wait longer than svc accepts fails before anything is paid and says so; and
 * Ctrl-C after the broadcast names the txid and the saved submission instead of hiding
 * what was paid.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnetChain, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { client, compileFixture, fund, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';
import { toHex } from '@svc-node/protocol/hash';

const wallet = testWallet(31);
let devnet: DevnetChainHandle;
let node: NodeProcess;
let env: NodeJS.ProcessEnv;
let contractId: string;
const dir = mkdtempSync(join(tmpdir(), 'svc-public-'));
/**
 * The public mode's clock: frozen, no token comes back until the test moves it (so the
 * address's allowance stays spent until then, whatever else runs); else real time.
 */
let frozenAt: number | null = null;
let offsetMs = 0;
const clock = (): number => (frozenAt ?? performance.now()) + offsetMs;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts svc in `dir`; `onStderr` sees stderr as it grows. */
function start(args: string[], onStderr: (text: string) => void = () => undefined, extraEnv: NodeJS.ProcessEnv = {}): { done: Promise<Run>; kill: (s: NodeJS.Signals) => void } {
  const p = spawn(process.execPath, [join(repoRoot, 'dist/src/cli/svc.js'), ...args], { env: { ...env, ...extraEnv }, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout!.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
  p.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    onStderr(stderr);
  });
  return { done: new Promise((resolve) => p.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))), kill: (s) => void p.kill(s) };
}

const svc = (args: string[], onStderr?: (text: string) => void, extraEnv?: NodeJS.ProcessEnv): Promise<Run> => start(args, onStderr, extraEnv).done;

/** Spends the address's allowance: requests until the endpoint answers 429. */
async function spendAllowance(url: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    const r = await fetch(`${url}/blocks/tip/height`);
    await r.arrayBuffer();
    if (r.status === 429) return;
  }
  throw new Error('the endpoint never answered 429');
}

before(async () => {
  // 100 requests a second per address, 10 at once; the node polls once a second, so the
  // allowance given back while svc waits (an hour of it at each wait line) is svc's.
  devnet = await startDevnetChain({ initialBlocks: 101, publicMode: { requestsPerHour: 360_000, burst: 10 }, now: clock });
  node = await startDevnetNode(devnet, { env: { SVC_START_HEIGHT: String(devnet.chain.height), SVC_BLOCK_CHECK_INTERVAL_S: '1' } });
  // Funded after the node's start height: a coin in a block the node processed is proven
  // (one from its start block or before is coin_unproven: docs/STATE.md, "Coin evidence").
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
  const d = await client(node, devnet, wallet).deploy(compileFixture('counter.svc'));
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  contractId = d.contractId;
  writeFileSync(join(dir, 'counter.json'), JSON.stringify(compileFixture('counter.svc')));
  env = { ...process.env, SVC_NODE_URL: node.restUrl, SVC_ESPLORA_URL: devnet.url, SVC_WALLET_KEY: toHex(wallet.secret), SVC_FEE_RATE: '1' };
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('a 429 is waited out as its Retry-After says, each wait said on stderr; the deploy then goes through', async () => {
  frozenAt = performance.now();
  try {
    await spendAllowance(devnet.url);
    const mempool = devnet.chain.mempoolTxids().length;
    const r = await svc(['deploy', 'counter.json'], (text) => {
      // svc says it waits: the allowance comes back (an hour of it), as it would with time
      if ((text.match(/waiting \d+ s/g) ?? []).length > offsetMs / 3_600_000) offsetMs += 3_600_000;
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^svc: chain-data endpoint GET \/(address\/\w+\/utxo|fee-estimates) answered 429 Too Many Requests: waiting 1 s \(Retry-After 1 s; at most 120 s in all\)$/m);
    assert.match(r.stdout, /^txid: [0-9a-f]{64}$/m);
    assert.equal(devnet.chain.mempoolTxids().length, mempool + 1);
  } finally {
    frozenAt = null;
  }
  devnet.chain.mine(1);
});

test('a Retry-After longer than svc waits fails at once, before the broadcast, and says nothing was broadcast', async () => {
  // An endpoint whose next token is 100 s away (36 an hour).
  const slow = await startDevnetChain({ initialBlocks: 1, publicMode: { requestsPerHour: 36, burst: 1 } });
  try {
    await spendAllowance(slow.url);
    for (const args of [['deploy', 'counter.json'], ['call', contractId, 'bump', 'u64:1']]) {
      const t0 = performance.now();
      const r = await svc(args, undefined, { SVC_ESPLORA_URL: slow.url });
      assert.equal(r.code, 1, r.stderr);
      assert.ok(performance.now() - t0 < 30_000);
      assert.match(
        r.stderr,
        /^svc: chain_error: chain-data endpoint GET \/(address\/\w+\/utxo|fee-estimates) answered 429 Too Many Requests \(Retry-After \d+ s\): svc waits at most 60 s at a time; try again later \(nothing was broadcast\)\n$/,
      );
      assert.equal(r.stdout, '');
    }
    assert.equal(slow.chain.mempoolTxids().length, 0);
  } finally {
    await slow.close();
  }
});

/** GET /contract_call/:txid/status requests the node answered (its /metrics). */
async function statusPolls(): Promise<number> {
  const text = await (await fetch(`${node.restUrl}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^svc_http_requests_total\{[^}]*route="\/contract_call\/:txid\/status"[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

test('Ctrl-C during call --wait after the broadcast prints the txid and the saved submission (text and --json), exit 130', async () => {
  for (const json of [false, true]) {
    const before = new Set(devnet.chain.mempoolTxids());
    const anchored = (): string | undefined => devnet.chain.mempoolTxids().find((t) => !before.has(t));
    const args = ['call', contractId, 'bump', 'u64:2', '--wait', '--interval', '0.05', ...(json ? ['--json'] : [])];
    const polled = await statusPolls();
    let sent = false;
    // text: the wait's first `... pending` line says the node took the call
    const p = start(args, (text) => {
      if (!json && text.includes('... pending') && !sent) {
        sent = true;
        p.kill('SIGINT');
      }
    });
    if (json) {
      // --json prints no progress: svc's first status poll (it polls once the endpoint took
      // the anchor; the node holds the call from before the broadcast) says it instead
      for (;;) {
        if (anchored() && (await statusPolls()) > polled) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      p.kill('SIGINT');
    }
    const r = await p.done;
    const txid = anchored();
    assert.ok(txid, r.stderr);
    assert.equal(r.code, 130, `${r.signal} ${r.stderr}`);
    const file = `svc-call-${txid}.json`;
    if (json) {
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.deepEqual(out, { interrupted: true, broadcast: true, txid, next: `svc status ${txid} --wait`, submission: file });
    } else {
      const lines = r.stdout.trim().split('\n');
      assert.match(lines[0]!, new RegExp(`^interrupted after the broadcast: anchoring transaction ${txid} is broadcast \\(its fee is spent\\)`));
      assert.ok(lines.includes(`txid: ${txid}`), r.stdout);
      assert.ok(lines.includes(`next: svc status ${txid} --wait`), r.stdout);
      assert.ok(lines.includes(`submission: ${file} (if the node does not know the call, svc submit ${file} sends it again, paying nothing)`), r.stdout);
    }
    assert.ok(existsSync(join(dir, file)));
    const saved = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { txid: string; contract_id: string; anchor_tx: string };
    assert.equal(saved.txid, txid);
    assert.equal(saved.contract_id, contractId);
  }
});

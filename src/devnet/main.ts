/**
 * `npm run devnet`: the devnet chain (an Esplora-compatible regtest chain it mines itself,
 * held in memory: every run starts a fresh chain), a node configured against it, a short
 * scripted scenario through the node's real REST API, then it keeps running (mining a
 * block every few seconds while the mempool has transactions) and prints the `svc`
 * commands to try next. Ctrl-C stops all.
 *
 * Environment: SVC_DEVNET_PORT (chain, default 3002), SVC_REST_ADDRESS (default
 * 127.0.0.1:8080), SVC_BIND_ADDRESS (default 127.0.0.1:50051), RUST_LOG (node logs,
 * default "warn"); any other SVC_* setting goes to the node. Each devnet keeps its node's
 * data in data/devnet/<its pid> (instances.ts), so devnets on other ports run side by side.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevnetChain, type DevnetChainHandle } from './chain-server.js';
import { runScenario } from './scenario.js';
import { devnetSettings, type DevnetSettings } from './settings.js';
import { DevnetInstances } from './instances.js';
import { walletFromSecret, networkOf } from '@svc-node/client/wallet';
import { sha256, toHex } from '@svc-node/protocol/hash';
import { BindError, checkAddresses } from '../supervisor/address.js';
import { ConfigError, formatHostPort } from '../config/options.js';
import { endQuietlyOnClosedOutput } from '../closed-output.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** A fixed, public demo key: devnet coins only. */
const DEMO_SECRET = sha256(Buffer.from('svc devnet demo wallet'));
/** Mine a block this often while transactions wait, so `svc call` settles by itself. */
const AUTOMINE_MS = 3_000;
/** How long the node may take to answer after it was started (a loaded 2-core machine needs ~20 s). */
const NODE_START_MS = 60_000;
/** After a scenario step fails: how long to wait for the node's exit, which says why better than the step. */
const NODE_EXIT_GRACE_MS = 10_000;

const say = (line: string): void => void process.stdout.write(line + '\n');
const fail = (line: string): void => void process.stderr.write(line + '\n');

let devnet: DevnetChainHandle | null = null;
let node: ReturnType<typeof spawn> | null = null;
const instances = new DevnetInstances(join(repoRoot, 'data', 'devnet'));
let claimed = false;
let stopping: Promise<void> | null = null;

/** Stops the node (it drains on SIGTERM), then the chain; removes this devnet's data. */
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    const n = node;
    if (n && n.exitCode === null && n.signalCode === null) {
      const exited = new Promise((r) => n.once('exit', r));
      n.kill('SIGTERM');
      await exited;
    }
    await devnet?.close();
    if (claimed) instances.release();
  })();
  return stopping;
}
async function stop(code: number): Promise<never> {
  await shutdown().catch(() => undefined);
  process.exit(code);
}
endQuietlyOnClosedOutput(shutdown);

let settings: DevnetSettings;
try {
  settings = devnetSettings(process.env, repoRoot);
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  fail(e.message);
  process.exit(2);
}
const restAddress = formatHostPort(settings.restAddress);
const bindAddress = formatHostPort(settings.bindAddress);

// Before anything else: a busy port (a devnet already running, a node it left) is named
// with its holder, and nothing is started or changed.
try {
  await checkAddresses([
    { key: 'SVC_DEVNET_PORT', host: '127.0.0.1', port: settings.chainPort },
    { key: 'SVC_REST_ADDRESS', ...settings.restAddress },
    { key: 'SVC_BIND_ADDRESS', ...settings.bindAddress },
  ]);
} catch (e) {
  if (!(e instanceof BindError)) throw e;
  const port = Number(e.address.split(':').pop());
  const holder = e.errno === 'EADDRINUSE' ? instances.holderOf(port) : null;
  fail(`devnet not started: ${e.message}${holder ? `; it is held by ${holder}` : ''}. Or choose other ports (SVC_DEVNET_PORT, SVC_REST_ADDRESS, SVC_BIND_ADDRESS). Nothing was changed.`);
  process.exit(1);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  devnet = await startDevnetChain({ port: settings.chainPort, initialBlocks: 101 });
} catch (e) {
  // one line, never a stack trace: taken between the check above and now
  const err = e as NodeJS.ErrnoException;
  const holder = err.code === 'EADDRINUSE' ? instances.holderOf(settings.chainPort) : null;
  fail(`devnet not started: cannot listen on SVC_DEVNET_PORT 127.0.0.1:${settings.chainPort}: ${err.code ?? err.message}${holder ? `; it is held by ${holder}` : ''}`);
  process.exit(1);
}
say(`devnet chain: ${devnet.url} (height ${devnet.chain.height}; in memory: every npm run devnet starts a fresh chain and node)`);

const dataDir = instances.claim({ chain: devnet.url, rest: restAddress, grpc: bindAddress });
claimed = true;
// The IPC channel is the node's lifeline: if this process dies, even by SIGKILL, the
// channel closes and the node stops (src/main.ts), its children with it.
const child = spawn(process.execPath, [join(repoRoot, 'dist/src/main.js')], {
  env: settings.nodeEnv(devnet.url, join(dataDir, 'db')),
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
node = child;
const nodeExited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
const nodeUrl = `http://${restAddress.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:')}`;

child.once('exit', (code, signal) => {
  if (stopping) return;
  fail(signal ? `the node was killed (${signal}); stopping the devnet` : `the node exited with code ${code} (its error is above); stopping the devnet`);
  void stop(1);
});

// Wait until the node answers and has anchored its journal on the devnet.
const deadline = Date.now() + NODE_START_MS;
for (;;) {
  try {
    const s = (await (await fetch(`${nodeUrl}/node_status`)).json()) as { processed_height: number | null };
    if (s.processed_height !== null) break;
  } catch {
    /* not listening yet */
  }
  if (Date.now() > deadline) {
    fail(`the node did not come up on ${nodeUrl} within ${NODE_START_MS / 1000} s; stopping the devnet`);
    await stop(1);
  }
  await new Promise((r) => setTimeout(r, 100));
}
say(`node: ${nodeUrl} (REST), ${bindAddress} (gRPC), data in ${dataDir}\n`);

const wallet = walletFromSecret(DEMO_SECRET, 'p2wpkh', networkOf('regtest'));
try {
  const r = await runScenario({ nodeUrl, esploraUrl: devnet.url, chain: devnet.chain, wallet, examplesDir: join(repoRoot, 'examples'), say });
  const chain = devnet.chain;
  const timer = setInterval(() => {
    if (chain.mempoolTxids().length > 0) chain.mine(1);
  }, AUTOMINE_MS);
  timer.unref();
  say(`
Scenario done. The devnet keeps running (a block is mined every ${AUTOMINE_MS / 1000} s while transactions wait).
Try, in another terminal:

  export SVC_NODE_URL=${nodeUrl} SVC_ESPLORA_URL=${devnet.url} SVC_WALLET_KEY=${toHex(DEMO_SECRET)}
  svc status ${r.lastTxid}
  svc call ${r.nft} mint key:${toHex(wallet.xOnly)} string:ipfs://devnet/2 --wait
  svc simulate ${r.token} supply
  svc read ${r.market} price 1
  svc events ${r.token}
  svc devnet fund          # 0.05 BTC to the wallet, then a block
  svc devnet mine 1
  curl -s ${nodeUrl}/v2/state_root

(svc is on your PATH after \`npm link\` in the checkout; else use \`npx svc\` inside it.)

Ctrl-C stops the node and the chain; their data goes with them.`);
} catch (e) {
  // A node that stopped (it said why) fails the step it was serving: its exit is the news.
  const gone = await Promise.race([nodeExited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), NODE_EXIT_GRACE_MS).unref())]);
  if (!gone && !stopping) {
    fail(`scenario failed: ${(e as Error).message}`);
    await stop(1);
  }
}

/**
 * `npm run devnet`: the devnet chain (an Esplora-compatible regtest chain it mines
 * itself), a node configured against it, a short scripted scenario through the node's
 * real REST API, then it keeps running (mining a block every few seconds while the
 * mempool has transactions) and prints the `svc` commands to try next. Ctrl-C stops all.
 *
 * Environment: SVC_DEVNET_PORT (chain, default 3002), SVC_REST_ADDRESS (default
 * 127.0.0.1:8080), SVC_BIND_ADDRESS (default 127.0.0.1:50051), RUST_LOG (node logs,
 * default "warn").
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevnetChain } from './chain-server.js';
import { runScenario } from './scenario.js';
import { walletFromSecret, networkOf } from '../client/wallet.js';
import { sha256, toHex } from '../protocol/hash.js';
import { BindError, checkAddresses } from '../supervisor/address.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** A fixed, public demo key: devnet coins only. */
const DEMO_SECRET = sha256(Buffer.from('svc devnet demo wallet'));
/** Mine a block this often while transactions wait, so `svc call` settles by itself. */
const AUTOMINE_MS = 3_000;

const say = (line: string): void => void process.stdout.write(line + '\n');

const chainPort = Number(process.env['SVC_DEVNET_PORT'] ?? 3002);
const restAddress = process.env['SVC_REST_ADDRESS'] ?? '127.0.0.1:8080';
const bindAddress = process.env['SVC_BIND_ADDRESS'] ?? '127.0.0.1:50051';

/** HOST:PORT or [v6]:PORT of the two node addresses (the node validates them again). */
function hostPort(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(s);
  return m ? { host: (m[1] ?? m[2])!, port: Number(m[3]) } : { host: s, port: -1 };
}
// Before anything else (the data directory below is wiped): a devnet already running
// holds these ports, and starting a second one must not destroy the first one's data.
try {
  await checkAddresses([
    { key: 'SVC_DEVNET_PORT', host: '127.0.0.1', port: chainPort },
    { key: 'SVC_REST_ADDRESS', ...hostPort(restAddress) },
    { key: 'SVC_BIND_ADDRESS', ...hostPort(bindAddress) },
  ]);
} catch (e) {
  if (!(e instanceof BindError)) throw e;
  say(`devnet not started: ${e.message}. Is a devnet already running? Stop it, or choose other ports (SVC_DEVNET_PORT, SVC_REST_ADDRESS, SVC_BIND_ADDRESS). Nothing was changed.`);
  process.exit(1);
}
const devnet = await startDevnetChain({ port: chainPort, initialBlocks: 101 }).catch((e: NodeJS.ErrnoException) => {
  // one line, never a stack trace: the usual cause is a devnet already running
  const why = e.code === 'EADDRINUSE' ? `port ${chainPort} is in use (another devnet running? set SVC_DEVNET_PORT)` : e.message;
  say(`devnet: cannot start the chain: ${why}`);
  process.exit(1);
});
say(`devnet chain: ${devnet.url} (height ${devnet.chain.height})`);

// The devnet chain lives in memory, so the node starts from empty storage every run.
const dataDir = join(repoRoot, 'data', 'devnet');
rmSync(dataDir, { recursive: true, force: true });
const node = spawn(process.execPath, [join(repoRoot, 'dist/src/main.js')], {
  env: {
    ...process.env,
    SVC_CONFIG: join(repoRoot, 'config.toml'),
    SVC_ESPLORA_URL: devnet.url,
    SVC_DB_PATH: join(dataDir, 'db'),
    SVC_REST_ADDRESS: restAddress,
    SVC_BIND_ADDRESS: bindAddress,
    SVC_BLOCK_CHECK_INTERVAL_S: '0.2',
    SVC_ESPLORA_RATE_PER_S: '1000',
    SVC_ESPLORA_MAX_CONCURRENT: '32',
    RUST_LOG: process.env['RUST_LOG'] ?? 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const nodeUrl = `http://${restAddress.replace(/^0\.0\.0\.0:/, '127.0.0.1:')}`;

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (node.exitCode === null) {
      node.kill('SIGTERM');
      await new Promise((r) => node.once('exit', r));
    }
    await devnet.close();
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
node.once('exit', (code) => {
  if (!stopping) {
    say(`the node exited (code ${code}); stopping the devnet`);
    void stop(1);
  }
});

// Wait until the node answers and has anchored its journal on the devnet.
for (let i = 0; ; i++) {
  try {
    const s = (await (await fetch(`${nodeUrl}/node_status`)).json()) as { processed_height: number | null };
    if (s.processed_height !== null) break;
  } catch {
    /* not listening yet */
  }
  if (i > 300) {
    say(`the node did not come up on ${nodeUrl}`);
    await stop(1);
  }
  await new Promise((r) => setTimeout(r, 100));
}
say(`node: ${nodeUrl} (REST), ${bindAddress} (gRPC)\n`);

const wallet = walletFromSecret(DEMO_SECRET, 'p2wpkh', networkOf('regtest'));
try {
  const r = await runScenario({ nodeUrl, esploraUrl: devnet.url, chain: devnet.chain, wallet, examplesDir: join(repoRoot, 'examples'), say });
  const timer = setInterval(() => {
    if (devnet.chain.mempoolTxids().length > 0) devnet.chain.mine(1);
  }, AUTOMINE_MS);
  timer.unref();
  say(`
Scenario done. The devnet keeps running (a block is mined every ${AUTOMINE_MS / 1000} s while transactions wait).
Try, in another terminal:

  export SVC_NODE_URL=${nodeUrl} SVC_ESPLORA_URL=${devnet.url} SVC_WALLET_KEY=${toHex(DEMO_SECRET)}
  svc status ${r.lastTxid}
  svc call ${r.nft} mint key:${toHex(wallet.xOnly)} string:ipfs://devnet/2 --wait
  svc simulate ${r.token} supply
  svc read ${r.market} listings
  svc events ${r.token}
  svc devnet fund          # 0.05 BTC to the wallet, then a block
  svc devnet mine 1
  curl -s ${nodeUrl}/v2/state_root

(svc is on your PATH after \`npm link\` in the checkout; else use \`npx svc\` inside it.)

Ctrl-C stops the node and the chain.`);
} catch (e) {
  say(`scenario failed: ${(e as Error).message}`);
  await stop(1);
}

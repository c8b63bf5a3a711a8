/**
 * Catch-up speed: blocks/s for a node process that reads every block (chain_mode
 * "blocks"; a light node's catch-up is bench/endpoint.bench.ts's part 2) started with no
 * data and the default journal anchor (start_height empty: the devnet's activation, block 0), catching
 * up over mainnet-sized devnet blocks (3,000 transactions, 200 of them stamped calls whose
 * payloads the node holds), against the same run's ceiling: fetching and parsing the same
 * blocks alone through the node's own EsploraClient (GET /block/:hash/raw, as many at once
 * as the node's client lets through). Target: at least half of the ceiling.
 *
 * How the node comes to hold the payloads: the devnet's tip is held back (a gate in front
 * of its HTTP server answers /blocks/tip/*, /blocks[/:h] and /block-height/:h as if the
 * measured blocks were not mined yet; a block applied behind it fails the run). The node catches up the short prefix (faucet, funding, deploy),
 * then every call is sent to its REST intake while its anchor waits in the devnet's
 * mempool, exactly as a client sends it; the block is mined behind the gate. Opening the
 * gate starts the clock; it stops when the node logs the tip applied. So the figure is
 * block fetching and block application (execution, state root, RocksDB), not intake.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as ecc from 'tiny-secp256k1';
import { DevnetChain, devnetChainHandler } from '../src/devnet/chain-server.js';
import { buildCallAnchor, buildDeploy } from '@svc-node/client/sdk';
import { walletFromSecret, networkOf } from '@svc-node/client/wallet';
import { encodeEnvelope, envelopeHash, signingMessage, type CallEnvelope } from '@svc-node/protocol/envelope';
import { sha256 } from '@svc-node/protocol/hash';
import { figure, stat, type Figure } from './harness.js';
import { compileContract, repoRoot } from '../test/helpers/ledger-fixture.js';
import type { FetchBlocksJob } from './lib/fetch-blocks-worker.js';
import { chainCoinJson, fanOut, spentTxids, type Coin } from './lib/bank-calls.js';
import type { CoinJson } from '@svc-node/protocol/coin';

/** Coins per funding fan-out: ~3.2 KB transactions, so a call's coin evidence fits a body. */
const FAN_OUT_COINS = 100;

/** Measured blocks: enough for two full catch-up events and some, under ~2 minutes in all. */
const BLOCKS = 24;
/** Transactions per block, coinbase included: a full mainnet block holds 2,500-4,000. */
const TXS_PER_BLOCK = 3000;
/**
 * Stamped calls per block; the rest are the devnet's ordinary signed payments (its block
 * filler, src/devnet/block-fill.ts, as `POST /devnet/mine {"fill": ...}` makes them).
 */
const CALLS_PER_BLOCK = 200;
/** Ceiling runs (fresh client each): two before the node's catch-up, one after. */
const CEILING_RUNS = 3;
/** Concurrent intake submissions while the calls are sent (not measured). */
const SUBMIT_CONCURRENCY = 16;
/**
 * The node's chain-client budget in this run. The request budget is lifted (a local
 * endpoint; the default 600 an hour is for public Esplora, and would make both sides of
 * the ratio that limit); the number of connections stays the default, 4.
 */
const BUDGET = { requestsPerHour: 1_000_000_000, burst: 100_000, maxConcurrent: 4 };

/** The devnet's HTTP API with its tip held at `visible` (null: the real tip). */
function gatedServer(chain: DevnetChain): { url: Promise<string>; setVisible(h: number | null): void; close(): Promise<void> } {
  const inner = devnetChainHandler(chain);
  let visible: number | null = null;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').replace(/^\/api(?=\/)/, '');
    if (visible !== null && req.method === 'GET') {
      const plain = (status: number, body: string): void => {
        res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (path === '/blocks/tip/height') return plain(200, String(visible));
      if (path === '/blocks/tip/hash') return plain(200, chain.blockAt(visible)!.hash);
      const m = /^\/block-height\/(\d+)$/.exec(path);
      if (m && Number(m[1]) > visible) return plain(404, 'Block not found');
      // The newest headers (a header follower's poll) end at the visible tip.
      const list = /^\/blocks(?:\/(\d+))?$/.exec(path);
      if (list && (list[1] === undefined || Number(list[1]) > visible)) req.url = `/blocks/${visible}`;
    }
    inner(req, res);
  });
  server.keepAliveTimeout = 30_000;
  const url = new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  return {
    url,
    setVisible: (h) => void (visible = h),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Runs the ceiling once in a worker thread: blocks/s fetched and parsed. */
function ceilingRun(url: string, hashes: string[]): Promise<number> {
  const job: FetchBlocksJob = { url, hashes, budget: BUDGET };
  const w = new Worker(new URL('./lib/fetch-blocks-worker.js', import.meta.url), { workerData: job });
  return new Promise((resolve, reject) => {
    w.once('message', (m: { ms: number; txs: number }) => {
      if (m.txs !== hashes.length * TXS_PER_BLOCK) reject(new Error(`ceiling parsed ${m.txs} transactions`));
      else resolve((hashes.length * 1000) / m.ms);
    });
    w.once('error', reject);
  });
}

/** A node process and its JSON log lines, with a wait for a line. */
function startNodeProcess(url: string, dir: string): { proc: ChildProcess; waitLog(pred: (l: Record<string, unknown>) => boolean, what: string, ms?: number): Promise<Record<string, unknown>>; restUrl: Promise<string>; highestApplied(): number } {
  // SVC_BENCH_NODE_ARGS (space-separated) goes to the node's processes, e.g. '--cpu-prof
  // --cpu-prof-dir=/tmp/prof' (NODE_OPTIONS refuses --cpu-prof; forks inherit execArgv).
  const nodeArgs = (process.env['SVC_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a.length > 0);
  const proc = spawn(process.execPath, [...nodeArgs, join(repoRoot, 'dist/src/main.js')], {
    env: {
      ...process.env,
      SVC_CONFIG: join(repoRoot, 'test/fixtures/empty-config.toml'),
      SVC_REST_ADDRESS: '127.0.0.1:0',
      SVC_BIND_ADDRESS: '127.0.0.1:0',
      SVC_DB_PATH: join(dir, 'db'),
      SVC_ESPLORA_URL: url,
      SVC_ESPLORA_REQUESTS_PER_HOUR: String(BUDGET.requestsPerHour),
      SVC_ESPLORA_BURST: String(BUDGET.burst),
      SVC_CHAIN_MODE: 'blocks',
      // The gate opens between two polls: a short interval makes the node see it at once
      // (catch-up itself never waits for the timer: it polls again until it reaches the tip).
      SVC_BLOCK_CHECK_INTERVAL_S: '0.05',
      RUST_LOG: 'warn,chain=info,rest=info,rest::access=warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buf = '';
  proc.stdout!.on('data', (c: Buffer) => {
    buf += c.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(o);
      for (const w of [...waiters]) if (w.pred(o)) waiters.splice(waiters.indexOf(w), 1), w.resolve(o);
    }
  });
  const exited = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`node exited (${code})`))));
  exited.catch(() => undefined);
  const waitLog = (pred: (l: Record<string, unknown>) => boolean, what: string, ms = 120_000): Promise<Record<string, unknown>> => {
    const seen = lines.find(pred);
    if (seen) return Promise.resolve(seen);
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      exited,
      new Promise<Record<string, unknown>>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
        waiters.push({ pred, resolve });
      }),
    ]).finally(() => clearTimeout(timer));
  };
  const restUrl = waitLog((l) => l['msg'] === 'listening' && l['role'] === 'rest', 'REST listening', 60_000).then((l) => `http://${String(l['address'])}`);
  const highestApplied = (): number => Math.max(-1, ...lines.filter((l) => l['msg'] === 'block applied').map((l) => Number(l['height'])));
  return { proc, waitLog, restUrl, highestApplied };
}

async function postJson(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

export default async function run(): Promise<Figure[]> {
  const net = networkOf('regtest');
  const chain = new DevnetChain();
  chain.mine(101); // a mature faucet coinbase
  const gate = gatedServer(chain);
  const url = await gate.url;
  const dir = mkdtempSync(join(tmpdir(), 'svc-catchup-bench-'));

  const secret = sha256(Buffer.from('catch-up bench wallet'));
  const wallet = walletFromSecret(secret, 'p2wpkh', net);
  const callerSecrets = Array.from({ length: CALLS_PER_BLOCK }, (_, i) => sha256(Buffer.from(`catch-up bench caller ${i}`)));
  const callers = callerSecrets.map((s) => ecc.xOnlyPointFromScalar(s));
  // Funding (one block): one P2WPKH coin per call, in fan-outs of FAN_OUT_COINS (a call's
  // coin evidence carries its fan-out transaction, which must fit a 64 KiB body).
  const callCoinSats = 20_000;
  const callCoins: Coin[] = [];
  for (let left = BLOCKS * CALLS_PER_BLOCK + 2; left > 0; left -= FAN_OUT_COINS) {
    const k = Math.min(FAN_OUT_COINS, left);
    const value = k * callCoinSats + 10_000;
    const big = chain.faucet(wallet.address, value);
    const fund = fanOut(wallet, { ...big, value }, Array.from({ length: k }, () => ({ script: wallet.outputScript, value: callCoinSats })));
    chain.submitTx(fund.toHex());
    for (let i = 0; i < k; i++) callCoins.push({ txid: fund.getId(), vout: i, value: callCoinSats });
  }
  chain.mine(1);
  /** Each call's coin evidence (docs/STATE.md, "Coin evidence"), per fan-out. */
  const coinJsons = new Map<string, CoinJson>();
  const coinOf = (txids: string[]): CoinJson => {
    const key = txids.join();
    let c = coinJsons.get(key);
    if (!c) coinJsons.set(key, (c = chainCoinJson(chain, txids)));
    return c;
  };

  const node = startNodeProcess(url, dir);
  try {
    const restUrl = await node.restUrl;
    // The coins' block applied first: the deploy's coin is proven against its header.
    const fundedHeight = chain.height;
    await node.waitLog((l) => l['msg'] === 'block applied' && l['height'] === fundedHeight, 'the funding block applied');
    const bank = compileContract('test/fixtures/contracts/bank.svc').artifact;
    const depCoins = [callCoins.pop()!, callCoins.pop()!];
    const dep = buildDeploy(wallet, depCoins, bank, 1);
    dep.body.coin = coinOf(spentTxids(dep.anchor.hex));
    chain.submitTx(dep.anchor.hex);
    const reg = await postJson(`${restUrl}/deploy_contract`, dep.body);
    if (reg.status !== 202) throw new Error(`deploy refused: ${reg.text}`);
    chain.mine(1);
    const prefixHeight = chain.height;
    await node.waitLog((l) => l['msg'] === 'block applied' && l['height'] === prefixHeight, 'the prefix applied');
    gate.setVisible(prefixHeight);

    // The measured blocks, mined behind the gate; each block's calls sent while their
    // anchors wait in the mempool.
    const contractId = Buffer.from(dep.contractId, 'hex');
    const hashes: string[] = [];
    const anchors: string[] = [];
    let callId = 1n;
    const buildStart = performance.now();
    for (let b = 0; b < BLOCKS; b++) {
      const bodies: { txid: string; contract_id: string; payload: string; coin: CoinJson }[] = [];
      for (let i = 0; i < CALLS_PER_BLOCK; i++) {
        const u = callCoins[b * CALLS_PER_BLOCK + i]!;
        const unsigned = {
          version: 1,
          contractId,
          function: 'mint',
          args: [
            { type: 'key' as const, value: callers[(i + b) % CALLS_PER_BLOCK]! },
            { type: 'u64' as const, value: BigInt(1 + i) },
          ],
          caller: callers[i]!,
          callId: callId++,
          outpointTxid: Buffer.from(u.txid, 'hex'),
          outpointVout: u.vout,
        };
        const envelope: CallEnvelope = { ...unsigned, signature: ecc.signSchnorr(signingMessage(unsigned), callerSecrets[i]!, new Uint8Array(32)) };
        const bytes = encodeEnvelope(envelope);
        const payload = Buffer.from(bytes).toString('base64');
        const anchor = buildCallAnchor(wallet, [u], { envelope, bytes, payload, envelopeHash: envelopeHash(bytes) }, 1);
        chain.submitTx(anchor.hex);
        bodies.push({ txid: anchor.txid, contract_id: dep.contractId, payload, coin: coinOf([u.txid]) });
        anchors.push(anchor.txid);
      }
      let at = 0;
      await Promise.all(
        Array.from({ length: SUBMIT_CONCURRENCY }, async () => {
          while (at < bodies.length) {
            const r = await postJson(`${restUrl}/contract_call`, bodies[at++]);
            if (r.status !== 202) throw new Error(`call refused: ${r.status} ${r.text}`);
          }
        }),
      );
      // The calls' anchors first (the mempool), then signed payments up to TXS_PER_BLOCK.
      const mined = chain.mine(1, undefined, { txs: TXS_PER_BLOCK });
      hashes.push(mined.hashes[0]!);
      if (chain.tip.txids.length !== TXS_PER_BLOCK) throw new Error(`block holds ${chain.tip.txids.length} transactions`);
    }
    const buildS = (performance.now() - buildStart) / 1000;
    const blockBytes = stat(hashes.map((h) => chain.blockByHash(h)!.size));

    const ceilings: number[] = [];
    for (let r = 0; r < CEILING_RUNS - 1; r++) ceilings.push(await ceilingRun(url, hashes));

    const tip = chain.height;
    // A block applied behind the gate would make the clock below measure nothing.
    if (node.highestApplied() > prefixHeight) throw new Error(`the node applied block ${node.highestApplied()} behind the gate (visible up to ${prefixHeight})`);
    const t0 = performance.now();
    gate.setVisible(null);
    await node.waitLog((l) => l['msg'] === 'block applied' && l['height'] === tip, 'the tip applied');
    const catchUp = (BLOCKS * 1000) / (performance.now() - t0);

    ceilings.push(await ceilingRun(url, hashes));

    // Every call executed: the blocks were applied, not skipped.
    for (const txid of [anchors[0]!, anchors[anchors.length - 1]!]) {
      const s = (await (await fetch(`${restUrl}/contract_call/${txid}/status`)).json()) as { status?: string };
      if (s.status !== 'executed') throw new Error(`call ${txid} is ${JSON.stringify(s)}`);
    }
    const calls = (await (await fetch(`${restUrl}/node_status`)).json()) as Record<string, unknown>;
    const ceiling = stat(ceilings);
    return [
      figure({
        name: `catch-up of a fresh node (chain_mode "blocks", default journal anchor, RocksDB): ${BLOCKS} blocks of ${TXS_PER_BLOCK} txs, ${CALLS_PER_BLOCK} stamped calls each`,
        unit: 'blocks/s',
        value: stat([catchUp]),
        ceiling: { name: `fetch + parse the same blocks alone (EsploraClient.rawBlock, ${BUDGET.maxConcurrent} connections, fresh client per run)`, ...ceiling },
        minRatio: 0.5,
        target: '>= 50% of fetching and parsing alone',
        notes: `one catch-up per run (the node needs its payloads first); ceiling: ${CEILING_RUNS} runs around it; block size median ${(blockBytes.median / 1e6).toFixed(2)} MB; building the chain and sending ${BLOCKS * CALLS_PER_BLOCK} calls took ${buildS.toFixed(0)} s (not measured); node ended at height ${String(calls['processed_height'])}`,
      }),
    ];
  } finally {
    node.proc.kill('SIGTERM');
    await new Promise((r) => (node.proc.exitCode !== null ? r(null) : node.proc.once('exit', r)));
    await gate.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

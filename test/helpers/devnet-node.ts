/**
 * A devnet chain (real HTTP Esplora API over a regtest chain) plus real node processes
 * pointed at it, and a funded wallet driving them through the client SDK.
 */
import { readFileSync } from 'node:fs';
import * as bitcoin from 'bitcoinjs-lib';
import { join } from 'node:path';
import { startDevnetChain, type DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { startNode, type NodeProcess, type StartOptions } from './node-process.js';
import { SvcClient } from '@svc-node/client/sdk';
import { EsploraClient } from '@svc-node/client/esplora';
import { gatherCoin, outpointOfPayload } from '@svc-node/client/coin';
import type { CoinJson } from '@svc-node/protocol/coin';
import { walletFromSecret, networkOf, type Wallet } from '@svc-node/client/wallet';
import { compileSource } from '../../src/compiler/index.js';
import type { Artifact } from '@svc-node/protocol/contract';
import { repoRoot } from './paths.js';

export const REGTEST = networkOf('regtest');

/** Deterministic wallet secrets for tests (never real keys). */
export function testWallet(n: number, kind: 'p2wpkh' | 'p2tr' = 'p2wpkh'): Wallet {
  const secret = new Uint8Array(32).fill(0);
  secret[31] = n;
  secret[0] = 0x11;
  return walletFromSecret(secret, kind, REGTEST);
}

export function compileFixture(name: string): Artifact {
  const file = join(repoRoot, 'test', 'fixtures', 'contracts', name);
  const r = compileSource(readFileSync(file, 'utf8'), file);
  if (!r.ok) throw new Error(`fixture ${name} does not compile: ${JSON.stringify(r.errors)}`);
  return r.artifact as unknown as Artifact;
}

export function compileExample(name: string): Artifact {
  const file = join(repoRoot, 'examples', name);
  const r = compileSource(readFileSync(file, 'utf8'), file);
  if (!r.ok) throw new Error(`example ${name} does not compile: ${JSON.stringify(r.errors)}`);
  return r.artifact as unknown as Artifact;
}

export async function startDevnet(): Promise<DevnetChainHandle> {
  return startDevnetChain({ initialBlocks: 101 });
}

/** Node env for a devnet: fast polling, no request budget worth the name. */
export function devnetEnv(devnet: DevnetChainHandle, extra: Record<string, string> = {}): Record<string, string> {
  return { SVC_ESPLORA_URL: devnet.url, SVC_BLOCK_CHECK_INTERVAL_S: '0.05', SVC_ESPLORA_REQUESTS_PER_HOUR: '1000000000', SVC_ESPLORA_BURST: '100000', SVC_ESPLORA_MAX_CONCURRENT: '32', SVC_WORKERS_POOL_SIZE: '1', ...extra };
}

export async function startDevnetNode(devnet: DevnetChainHandle, opts: StartOptions = {}): Promise<NodeProcess> {
  const node = await startNode({ ...opts, env: devnetEnv(devnet, opts.env) });
  try {
    await node.waitFor((l) => l.msg === 'anchored block journal' || (l.msg === 'database open' && l['processed_height'] !== null), 20_000, 'journal anchored');
  } catch (e) {
    await node.killHard(); // see startNode
    throw e;
  }
  return node;
}

/** Funds `wallet` with `count` outputs and mines them. */
export async function fund(devnet: DevnetChainHandle, wallet: Wallet, count = 4, sats = 1_000_000): Promise<void> {
  for (let i = 0; i < count; i++) devnet.chain.faucet(wallet.address, sats);
  devnet.chain.mine(1);
}

export function client(node: NodeProcess, devnet: DevnetChainHandle, wallet: Wallet): SvcClient {
  return new SvcClient({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet, feeRate: 1 });
}

export async function nodeStatus(node: NodeProcess): Promise<Record<string, unknown>> {
  const r = await fetch(`${node.restUrl}/node_status`);
  return (await r.json()) as Record<string, unknown>;
}

/** Waits until the node has processed the devnet's current tip (by its log of applied blocks). */
export async function waitSynced(node: NodeProcess, devnet: DevnetChainHandle, timeoutMs = 30_000): Promise<{ height: number; stateRoot: string }> {
  const height = devnet.chain.height;
  const hash = devnet.chain.tip.hash;
  const deadline = Date.now() + timeoutMs;
  // Event-driven: each applied block is logged; re-check node_status when a line arrives.
  for (;;) {
    const s = await nodeStatus(node);
    if (s['processed_height'] === height && (await fetch(`${node.restUrl}/v2/state_root`).then((r) => r.json()) as { block_hash: string }).block_hash === hash) {
      return { height, stateRoot: String(s['state_root']) };
    }
    if (s['halted']) throw new Error(`node halted: ${String(s['halt_reason'])}`);
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`node did not reach height ${height} (at ${String(s['processed_height'])})`);
    await node.waitForNext((l) => l.msg === 'block applied' || l.msg === 'reorganisation' || l.msg === 're-derivation done' || l.msg === 'replayed after a late payload', Math.min(left, 2_000), 'next block').catch(() => undefined);
  }
}

export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json() };
}

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

/** A transaction spending `utxo` back to the wallet: a double spend of an anchor's outpoint. */
export function conflictingSpend(wallet: Wallet, utxo: { txid: string; vout: number; value: number }): string {
  const psbt = new bitcoin.Psbt({ network: wallet.network });
  psbt.addInput({
    hash: utxo.txid,
    index: utxo.vout,
    witnessUtxo: { script: wallet.outputScript, value: BigInt(utxo.value) },
    ...(wallet.kind === 'p2tr' ? { tapInternalKey: wallet.xOnly } : {}),
  });
  psbt.addOutput({ script: wallet.outputScript, value: BigInt(utxo.value - 1_000) });
  psbt.signAllInputs(wallet.signer);
  psbt.finalizeAllInputs();
  return psbt.extractTransaction().toHex();
}

/** Waits until `count` late-payload replays have finished on `node`. */
export async function waitReplays(node: NodeProcess, count: number, timeoutMs = 60_000): Promise<void> {
  const done = (): number => node.lines.filter((l) => l.msg === 'replayed after a late payload').length;
  const deadline = Date.now() + timeoutMs;
  while (done() < count) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`only ${done()} of ${count} replays finished`);
    await node.waitForNext((l) => l.msg === 'replayed after a late payload', left, 'replay').catch(() => undefined);
  }
}

/**
 * Re-checks `cond` each time the node logs a line (and at least every 500 ms) until it
 * holds; throws with `what` after `timeoutMs`.
 */
export async function waitUntil(node: NodeProcess, cond: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out waiting for ${what}`);
    await node.waitForNext(() => true, Math.min(left, 500), what).catch(() => undefined);
  }
}

/**
 * `body` (a POST /contract_call or /deploy_contract body) with the coin evidence its
 * anchor's inputs need (docs/STATE.md, "Coin evidence"), gathered from the devnet as
 * svc gathers it (packages/client/src/coin.ts): what a client built offline adds before posting.
 */
export async function withCoin<B extends { txid: string; anchor_tx?: string; payload?: string }>(devnet: DevnetChainHandle, body: B): Promise<B & { coin: CoinJson }> {
  const esplora = new EsploraClient(devnet.url);
  const anchor = body.anchor_tx ?? (await esplora.txHex(body.txid));
  const { json } = await gatherCoin(esplora, anchor, body.payload !== undefined ? outpointOfPayload(body.payload) : null);
  return { ...body, coin: json };
}

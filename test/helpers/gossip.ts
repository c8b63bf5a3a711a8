/** Helpers for the peer-service tests: nodes on fixed loopback ports that know each other. */
import { EsploraClient } from '@svc-node/client/esplora';
import { gatherCoin } from '@svc-node/client/coin';
import type { CoinEvidence } from '@svc-node/protocol/coin';
import { createServer } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from './node-process.js';
import { startDevnetNode, nodeStatus } from './devnet-node.js';
import type { GossipCounters, DivergenceReport } from '../../src/messages.js';

/**
 * A free loopback port below the kernel's ephemeral range (32768+), so no outbound
 * connection or port-0 listener takes it between this check and the node binding it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export interface PeerNodeSpec {
  name: string;
  port: number;
  peers: number[];
  dataDir?: string;
  startHeight?: number;
  env?: Record<string, string>;
}

export const urlOf = (port: number): string => `http://127.0.0.1:${port}`;

/** Fast gossip timings for tests: heartbeats every 0.3 s, peers expire after 3 s. */
export function gossipEnv(spec: PeerNodeSpec): Record<string, string> {
  return {
    SVC_NODE_ID: spec.name,
    SVC_BIND_ADDRESS: `127.0.0.1:${spec.port}`,
    SVC_PUBLIC_URL: urlOf(spec.port),
    SVC_PEERS: spec.peers.map(urlOf).join(','),
    SVC_GOSSIP_HEARTBEAT_INTERVAL_S: '0.3',
    SVC_GOSSIP_PEER_EXPIRY_S: '3',
    // Periodic sync is off the critical path of these tests (startup sync is immediate);
    // a test that needs rounds sets its own interval.
    SVC_PEER_SYNC_INTERVAL_S: '30',
    ...(process.env['GOSSIP_TEST_DEBUG'] ? { RUST_LOG: 'info,gossip=debug' } : {}),
    ...(spec.startHeight !== undefined ? { SVC_START_HEIGHT: String(spec.startHeight) } : {}),
    ...spec.env,
  };
}

export async function startPeerNode(devnet: DevnetChainHandle, spec: PeerNodeSpec): Promise<NodeProcess> {
  const dataDir = spec.dataDir ?? mkdtempSync(join(tmpdir(), `svc-${spec.name}-`));
  return startDevnetNode(devnet, { dataDir, env: gossipEnv(spec) });
}

export interface StatusView {
  processed_height: number | null;
  state_root: string | null;
  peers: number;
  contracts: number;
  pending_calls: number;
  gossip_public_key: string;
  halted: boolean;
  gossip: GossipCounters;
  divergence: DivergenceReport | null;
}

export async function status(node: NodeProcess): Promise<StatusView> {
  return (await nodeStatus(node)) as unknown as StatusView;
}

/** Polls node_status until `pred` holds. */
export async function waitStatus(node: NodeProcess, pred: (s: StatusView) => boolean, what: string, timeoutMs = 20_000): Promise<StatusView> {
  const deadline = Date.now() + timeoutMs;
  let last: StatusView | null = null;
  for (;;) {
    try {
      last = await status(node);
      if (pred(last)) return last;
    } catch {
      /* restarting */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last status: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls a call's status on `node` until it is known there (any status). */
export async function waitCallKnown(node: NodeProcess, txid: string, timeoutMs = 15_000): Promise<{ status: string; at: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${node.restUrl}/contract_call/${txid}/status`);
    if (r.status === 200) return { status: ((await r.json()) as { status: string }).status, at: performance.now() };
    await r.arrayBuffer();
    if (Date.now() > deadline) throw new Error(`call ${txid} never reached ${node.restUrl}`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** The coin evidence of an anchor whose inputs are on the devnet, gathered as svc gathers it (packages/client/src/coin.ts). */
export async function coinEvidenceOf(devnet: DevnetChainHandle, anchorHex: string, outpoint: { txid: string; vout: number } | null): Promise<CoinEvidence> {
  return (await gatherCoin(new EsploraClient(devnet.url), anchorHex, outpoint)).coin;
}

/** A payload's proto Evidence with its anchor and coin (docs/STATE.md, "Coin evidence"), as a peer sends it. */
export function protoCoinEvidence(anchorHex: string, coin: CoinEvidence): Record<string, unknown> {
  return {
    anchor_tx: Buffer.from(anchorHex, 'hex'),
    coin: coin.prevTxs.map((p) => ({ tx: Buffer.from(p.tx), at: p.at ? { block_hash: Buffer.from(p.at.blockHash, 'hex'), height: p.at.height, tx_index: p.at.txIndex, branch: p.at.branch.map((h) => Buffer.from(h)) } : null })),
  };
}

/**
 * Crash tests compare a node that is killed and restarted ("crashy") with one that never
 * crashes ("steady"), both anchored at the same height on one devnet.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from './node-process.js';
import { fund, postJson, startDevnetNode, waitSynced } from './devnet-node.js';
import type { SvcClient } from '@svc-node/client/sdk';
import type { Wallet } from '@svc-node/client/wallet';
import type { Artifact } from '@svc-node/protocol/contract';

export interface CrashPair {
  steady: NodeProcess;
  crashy: NodeProcess;
  anchorHeight: number;
  /** Starts the crashy node again on its data directory (after killHard). */
  restart(): Promise<NodeProcess>;
}

export async function startCrashPair(devnet: DevnetChainHandle, dirPrefix: string): Promise<CrashPair> {
  const steady = await startDevnetNode(devnet);
  const anchor = await steady.waitFor((l) => l.msg === 'anchored block journal');
  const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
  const env = { SVC_START_HEIGHT: String(anchor['height']) };
  const pair: CrashPair = {
    steady,
    crashy: await startDevnetNode(devnet, { dataDir, env }),
    anchorHeight: Number(anchor['height']),
    restart: async () => {
      pair.crashy = await startDevnetNode(devnet, { dataDir, env });
      return pair.crashy;
    },
  };
  return pair;
}

/** Deterministic "random" delays in [0, max) ms (xorshift32), so a failure can be replayed. */
export function killDelays(seed: number, max: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % max;
  };
}

/**
 * Funds `wallet` with `outputs` coins, deploys `artifact` through the steady node, registers
 * it with the crashy node too, mines it and waits until both processed it.
 */
export async function deployOnBoth(pair: CrashPair, devnet: DevnetChainHandle, svc: SvcClient, wallet: Wallet, artifact: Artifact, outputs: number): Promise<string> {
  await fund(devnet, wallet, outputs, 200_000);
  const dep = await svc.deploy(artifact);
  const r = await postJson(`${pair.crashy.restUrl}/deploy_contract`, dep.body);
  if (r.status !== 202) throw new Error(`crashy node refused the deploy: ${JSON.stringify(r.body)}`);
  devnet.chain.mine(1);
  await waitSynced(pair.steady, devnet);
  await waitSynced(pair.crashy, devnet);
  return dep.contractId;
}

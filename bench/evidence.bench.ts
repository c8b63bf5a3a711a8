/**
 * Bitcoin evidence costs (packages/protocol/src/merkle-branch.ts, evidence.ts, packages/protocol/src/headers.ts),
 * each against the work it cannot avoid, measured in the same run (samples alternate):
 *
 * - branches of a 4,000-transaction block (the top of today's mainnet blocks) for 64
 *   stamped transactions, in one tree computation, against the tree's 3,999 bare double
 *   SHA-256 of 64 bytes;
 * - checkEvidence of one call payload (strict parse of a real mainnet transaction, its
 *   txid, an 11-level branch), against one BIP-340 verify (tiny-secp256k1), which intake
 *   already pays per payload;
 * - a header run (parse and verifyHeaderRun of real mainnet headers), against the bare
 *   double SHA-256 of 80 bytes that hashing a header costs.
 */
import { randomBytes, hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tiny from 'tiny-secp256k1';
import { figure, measureRate, stat, type Figure, type Stat } from './harness.js';
import { merkleBranches } from '@svc-node/protocol/merkle-branch';
import { checkEvidence, type Evidence } from '@svc-node/protocol/evidence';
import { internalBytes } from '@svc-node/protocol/bitcoin';
import { parseHeader80, verifyHeaderRun } from '@svc-node/protocol/headers';
import { networkParams } from '@svc-node/protocol/activation';
import { signingMessage, signEnvelope, xOnlyPublicKey } from '@svc-node/protocol';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const esplora = join(repoRoot, 'test', 'fixtures', 'esplora');
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RUN_MS = Number(process.env.BENCH_RUN_MS ?? 1000);

/** Alternating runs of two steps (each returns its op count): drift on the box falls on both. */
function alternate(a: () => number, b: () => number): [Stat, Stat] {
  const sa: number[] = [];
  const sb: number[] = [];
  measureRate(a, { runs: 1, runMs: 200, warmupMs: 200 });
  measureRate(b, { runs: 1, runMs: 200, warmupMs: 200 });
  for (let r = 0; r < RUNS; r++) {
    sa.push(measureRate(a, { runs: 1, runMs: RUN_MS, warmupMs: 0 }).median);
    sb.push(measureRate(b, { runs: 1, runMs: RUN_MS, warmupMs: 0 }).median);
  }
  return [stat(sa), stat(sb)];
}

export default async function run(): Promise<Figure[]> {
  // 1. Branches of a 4,000-transaction block.
  const N = 4000;
  const txids = Array.from({ length: N }, () => new Uint8Array(randomBytes(32)));
  const picks = Array.from({ length: 64 }, (_, i) => Math.floor((i * N) / 64));
  const pair = Buffer.allocUnsafe(64);
  const branches = () => {
    if (merkleBranches(txids, picks).length !== 64) throw new Error('branches');
    return 1;
  };
  const bareTree = () => {
    for (let i = 0; i < N - 1; i++) {
      pair.set(txids[i]!, 0);
      pair.set(txids[i + 1]!, 32);
      hash('sha256', hash('sha256', pair, 'buffer'), 'buffer');
    }
    return 1;
  };
  const [branchRate, treeRate] = alternate(branches, bareTree);

  // 2. checkEvidence of a payload: mainnet f2957c19 at 919 of 1,944 (728,418).
  const txid = 'f2957c19e673406c6388b0e8f1c9f1e51e81cb56e83730415c1cd7b154666c1b';
  const proof = JSON.parse(readFileSync(join(esplora, 'bodies', 'tx', `${txid}.merkle-proof.json`), 'utf8')) as { merkle: string[]; pos: number };
  const ev: Evidence = {
    anchorTx: new Uint8Array(Buffer.from(readFileSync(join(esplora, 'bodies', 'tx', `${txid}.hex.txt`), 'utf8').trim(), 'hex')),
    confirmed: { blockHash: '00000000000000000006aa48d85e9229454621c0addbd2bbda4e3d280eade466', height: 728418, txIndex: proof.pos, branch: proof.merkle.map(internalBytes) },
    spentBy: null,
  };
  const check = () => {
    for (let k = 0; k < 16; k++) if (!checkEvidence(txid, null, ev).ok) throw new Error('evidence refused');
    return 16;
  };
  const secret = new Uint8Array(32).fill(7);
  const env = signEnvelope(
    { version: 1, contractId: new Uint8Array(32), function: 'f', args: [], caller: xOnlyPublicKey(secret), callId: 1n, outpointTxid: new Uint8Array(32), outpointVout: 0 },
    secret,
    new Uint8Array(32),
  );
  const msg = signingMessage(env);
  const verify = () => {
    for (let k = 0; k < 16; k++) if (!tiny.verifySchnorr(msg, env.caller, env.signature)) throw new Error('verify');
    return 16;
  };
  const [checkRate, verifyRate] = alternate(check, verify);

  // 3. Header runs: parse + verify mainnet headers 0..10 (PoW of each, linkage).
  const raw = (JSON.parse(readFileSync(join(esplora, 'headers', 'mainnet-0-10.json'), 'utf8')) as { header: string }[]).map((h) => Buffer.from(h.header, 'hex'));
  const mainnet = networkParams('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f').pow;
  const headers = () => {
    if (!verifyHeaderRun({ height: 0, prev: null }, raw.map(parseHeader80), mainnet).ok) throw new Error('headers');
    return raw.length;
  };
  const bareHeaders = () => {
    for (const h of raw) hash('sha256', hash('sha256', h, 'buffer'), 'buffer');
    return raw.length;
  };
  const [headerRate, bareHeaderRate] = alternate(headers, bareHeaders);

  return [
    figure({
      name: `merkleBranches: 64 branches of a ${N}-transaction block, one tree`,
      unit: 'blocks/s',
      value: branchRate,
      ceiling: { name: `${N - 1} bare double SHA-256 of 64 B (the tree's hashes)`, ...treeRate },
      notes: `${(1000 / branchRate.median).toFixed(2)} ms per block`,
    }),
    figure({
      name: 'checkEvidence: one payload (real mainnet tx, 247 B, 11-level branch)',
      unit: 'payloads/s',
      value: checkRate,
      ceiling: { name: 'one BIP-340 verify (tiny-secp256k1), paid per payload already', ...verifyRate },
      notes: `${(1e6 / checkRate.median).toFixed(1)} us per payload; ratio > 1: cheaper than the verify`,
    }),
    figure({
      name: 'parseHeader80 + verifyHeaderRun, mainnet headers 0..10',
      unit: 'headers/s',
      value: headerRate,
      ceiling: { name: 'bare double SHA-256 of 80 B', ...bareHeaderRate },
      notes: `52,560 headers (a year): ${(52_560 / headerRate.median).toFixed(2)} s`,
    }),
  ];
}

/**
 * Peer service figures (issue 8), real node processes on loopback over a devnet chain:
 *
 * 1. Sync throughput between two nodes: node A holds a deploy and N pending calls; a
 *    fresh node B with A as its only peer syncs them at startup (contract fingerprints,
 *    the txid list paged with GetContractTxids, GetPayloads, intake with the anchor
 *    fetched from the chain-data endpoint, RocksDB write). Payloads per second over B's payload phase (its "peer sync done"
 *    log line). Ceiling, same run: openEnvelope (strict decode + BIP-340 verify) of the
 *    same payloads on one thread: the CPU cost every synced call must pay.
 * 2. Gossip end-to-end latency over two hops, A -> B -> C (A knows only B, B only C):
 *    from the POST /contract_call on A to the call being pending on C. Ceiling, same
 *    run: the POST on A alone (one local intake), which each hop repeats.
 */
import { mkdtempSync } from 'node:fs';
import PQueue from 'p-queue';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figure, measureRate, stat, type Figure } from './harness.js';
import { openEnvelope } from '@svc-node/protocol/envelope';
import { buildCall, buildCallAnchor, chooseOutpoint } from '@svc-node/client/sdk';
import { gatherCoin } from '@svc-node/client/coin';
import type { CoinJson } from '@svc-node/protocol/coin';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../test/helpers/devnet-node.js';
import { freePort, startPeerNode, waitCallKnown, waitStatus } from '../test/helpers/gossip.js';
import type { NodeProcess } from '../test/helpers/node-process.js';

const N = Number(process.env['GOSSIP_BENCH_PAYLOADS'] ?? 400);
/** Calls for the REST intake reference (what sync can at best reach on these cores). */
const M = 200;
const SYNC_RUNS = 3;
const LATENCY_RUNS = 9;

export default async function run(): Promise<Figure[]> {
  const devnet = await startDevnet();
  const nodes: NodeProcess[] = [];
  try {
    const anchor = devnet.chain.height;
    const [pA, pB, pC] = await Promise.all([freePort(), freePort(), freePort()]);
    const A = await startPeerNode(devnet, { name: 'bench-a', port: pA, peers: [], startHeight: anchor });
    nodes.push(A);
    const wallet = testWallet(21);
    await fund(devnet, wallet, N + M + LATENCY_RUNS + 4, 200_000);
    const svc = client(A, devnet, wallet);
    const artifact = compileFixture('counter.svc');
    const dep = await svc.deploy(artifact);
    devnet.chain.mine(1);
    await waitSynced(A, devnet);

    // N pending calls on A, each anchored in the devnet mempool.
    const payloads: Uint8Array[] = [];
    let utxos = await svc.esplora.utxos(wallet.address);
    for (let i = 0; i < N; i++) {
      const outpoint = chooseOutpoint(utxos.filter((u) => u.status?.confirmed !== false));
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: artifact.abi, callerSecret: wallet.secret, outpoint });
      const tx = buildCallAnchor(wallet, [outpoint], call, 1);
      await svc.esplora.broadcast(tx.hex);
      // With its coin's evidence (docs/STATE.md, "Coin evidence"); the anchor is fetched by the node, as before.
      await svc.node.submitCall({ txid: tx.txid, contract_id: dep.contractId, payload: call.payload, coin: (await gatherCoin(svc.esplora, tx.hex, outpoint, utxos)).json });
      payloads.push(call.bytes);
      utxos = utxos.filter((u) => !(u.txid === outpoint.txid && u.vout === outpoint.vout));
    }

    // 0. Reference: REST intake throughput on A alone (16 in flight), the same checks
    // every synced payload must pass; sync adds the fetch from the peer on the same cores.
    const later: { txid: string; contract_id: string; payload: string; coin: CoinJson }[] = [];
    for (let i = 0; i < M; i++) {
      const outpoint = chooseOutpoint(utxos.filter((u) => u.status?.confirmed !== false));
      utxos = utxos.filter((u) => !(u.txid === outpoint.txid && u.vout === outpoint.vout));
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: artifact.abi, callerSecret: wallet.secret, outpoint });
      const tx = buildCallAnchor(wallet, [outpoint], call, 1);
      await svc.esplora.broadcast(tx.hex);
      later.push({ txid: tx.txid, contract_id: dep.contractId, payload: call.payload, coin: (await gatherCoin(svc.esplora, tx.hex, outpoint, utxos)).json });
    }
    const q = new PQueue({ concurrency: 16 });
    const ti = performance.now();
    await Promise.all(later.map((c) => q.add(() => svc.node.submitCall(c))));
    const restRate = (M * 1000) / (performance.now() - ti);
    const total = N + M + 1;

    // 1. Sync throughput: fresh nodes pull everything from A at startup.
    const rates: number[] = [];
    for (let r = 0; r < SYNC_RUNS; r++) {
      const port = await freePort();
      const B = await startPeerNode(devnet, { name: `bench-sync-${r}`, port, peers: [pA], startHeight: anchor, dataDir: mkdtempSync(join(tmpdir(), 'svc-bench-sync-')) });
      nodes.push(B);
      const line = await B.waitFor((l) => l.msg === 'peer sync done' && Number(l['payloads_applied']) > 0, 120_000, 'sync done');
      const applied = Number(line['payloads_applied']);
      if (applied !== total) throw new Error(`sync applied ${applied}, expected ${total}`);
      rates.push((applied * 1000) / Number(line['payload_ms']));
      await B.stop();
    }
    const decode = measureRate(() => {
      for (const p of payloads.slice(0, 64)) openEnvelope(p);
      return 64;
    });

    // 2. Latency A -> B -> C. A learns only B (by B's heartbeat); B knows A and C and
    // never forwards back to the sender; C syncs the contract from B first.
    const B = await startPeerNode(devnet, { name: 'bench-b', port: pB, peers: [pA, pC], startHeight: anchor });
    nodes.push(B);
    await waitStatus(B, (s) => s.contracts === 1 && s.pending_calls === N + M, 'B synced from A', 120_000);
    const C = await startPeerNode(devnet, { name: 'bench-c', port: pC, peers: [pB], startHeight: anchor });
    nodes.push(C);
    await waitStatus(C, (s) => s.contracts === 1 && s.pending_calls === N + M, 'C synced from B', 120_000);
    await waitStatus(A, (s) => s.peers >= 1, 'A sees B');
    const A2 = A;
    const svc2 = client(A2, devnet, wallet);
    const local: number[] = [];
    const e2e: number[] = [];
    utxos = (await svc2.esplora.utxos(wallet.address)).filter((u) => u.status?.confirmed !== false);
    for (let i = 0; i < LATENCY_RUNS; i++) {
      const outpoint = chooseOutpoint(utxos);
      utxos = utxos.filter((u) => !(u.txid === outpoint.txid && u.vout === outpoint.vout));
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: ['u64:2'], abi: artifact.abi, callerSecret: wallet.secret, outpoint });
      const tx = buildCallAnchor(wallet, [outpoint], call, 1);
      await svc2.esplora.broadcast(tx.hex);
      const coin = (await gatherCoin(svc2.esplora, tx.hex, outpoint, utxos)).json;
      const t0 = performance.now();
      const seen = waitCallKnown(C, tx.txid, 20_000);
      await svc2.node.submitCall({ txid: tx.txid, contract_id: dep.contractId, payload: call.payload, coin });
      local.push(performance.now() - t0);
      e2e.push((await seen).at - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
    const sc = await waitStatus(C, (x) => x.gossip.payloads_accepted >= LATENCY_RUNS, 'C counts the gossiped calls');
    if (sc.gossip.payloads_accepted < LATENCY_RUNS) throw new Error(`C accepted ${sc.gossip.payloads_accepted} by gossip, expected ${LATENCY_RUNS}`);

    return [
      figure({
        name: 'sync throughput, 2 nodes (deploy + pending calls, startup sync)',
        unit: 'payloads/s',
        value: stat(rates),
        ceiling: { name: 'openEnvelope decode+verify, 1 thread', ...decode },
        notes: `${total} payloads per run, ${SYNC_RUNS} runs; every payload: GetPayloads (256 a request), intake (pool decode+verify, anchor fetched over HTTP, binding), synced RocksDB write. Same run, REST intake alone on one node (16 in flight): ${restRate.toFixed(0)}/s`,
      }),
      figure({
        name: 'gossip latency A -> B -> C (submission on A to pending on C)',
        unit: 'ms',
        value: stat(e2e),
        ceiling: { name: 'REST intake on A alone (one hop)', ...stat(local) },
        target: 'lower is better; ratio = hops x (intake + batch delay) / intake',
        notes: `${LATENCY_RUNS} calls; batch_delay_ms 5 per hop; polling every 5 ms`,
      }),
    ];
  } finally {
    await Promise.all(nodes.map((n) => n.stop().catch(() => null)));
    await devnet.close();
  }
}

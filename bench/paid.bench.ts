/**
 * Only paid calls wait (docs/STATE.md, "Coin evidence"), beside `npm run bench --
 * endpoint`: `npm run bench -- paid`.
 *
 * 1. Intake CPU per call with the coin check: what the worker pool does for a call whose
 *    anchor is unconfirmed (the envelope opened and its BIP-340 signature verified, then
 *    checkCoin: the prev tx parsed and matched, the P2WPKH sighash and one ECDSA verify),
 *    against one raw verify of each kind measured in the same run (target: the coin check
 *    adds about one ECDSA verify, nothing else of note).
 * 2. Two peered real nodes (A takes REST, B is its peer) on a devnet, A with
 *    max_pending_calls = BOUND, each behind a recording proxy to the chain endpoint:
 *    - a flood of 10 x BOUND calls whose coins do not exist (made-up transactions) or are
 *      another wallet's (signed with the attacker's key), half over REST to A and half
 *      over gossip to B: accepted at A and B (target 0), endpoint requests about them
 *      (target 0);
 *    - an honest svc call made during the flood: taken (target 1), and reaches B;
 *    - K real coins the attacker controls, each backing 3 calls at the same fee: places
 *      held (target <= K);
 *    - endpoint requests about the honest call at A and B before any block (target 0).
 */
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { figure, stat, type Figure } from './harness.js';
import { buildCall, buildCallAnchor, callSubmission } from '@svc-node/client/sdk';
import { gatherCoin } from '@svc-node/client/coin';
import { callStampScript } from '@svc-node/protocol/stamp';
import { checkCoin, coinJson, type CoinEvidence } from '@svc-node/protocol/coin';
import { openEnvelope } from '@svc-node/protocol/envelope';
import { sha256 } from '@svc-node/protocol/hash';
import { Signer } from '../src/gossip/auth.js';
import { PeerClient } from '../src/gossip/client.js';
import { client, compileFixture, fund, getJson, postJson, startDevnet, testWallet, waitSynced } from '../test/helpers/devnet-node.js';
import { freePort, startPeerNode, status, urlOf, waitStatus } from '../test/helpers/gossip.js';
import { spend, wallet as txWallet, type Wallet as TxWallet } from '../test/helpers/txbuilder.js';

/** max_pending_calls of node A: small, so the flood is ten times it. */
const BOUND = 20;
/** Real coins the attacker controls in part 2. */
const K = 5;
/** Calls timed per run in part 1, and runs. */
const CPU_CALLS = 400;
const CPU_RUNS = 5;

async function recordingProxy(target: string): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    const up = request(target + (req.url ?? '/'), { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A made-up coin of `w`: a transaction never broadcast (its txid names nothing on the chain). */
function madeUpCoin(w: TxWallet, i: number): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(sha256(Buffer.from(`paid-bench ${i}`))), 0);
  tx.addOutput(w.script, 1_000_000n);
  return tx;
}

/** Part 1: pool CPU per call (open + coin check) against raw verifies, same run. */
function cpuFigures(): Figure[] {
  const w = txWallet('paid-bench cpu');
  const secret = new Uint8Array(sha256(Buffer.from('paid-bench caller')));
  const calls = Array.from({ length: CPU_CALLS }, (_, i) => {
    const prev = madeUpCoin(w, i);
    const outpoint = { txid: prev.getId(), vout: 0 };
    const call = buildCall({ contractId: 'ab'.repeat(32), function: 'f', args: [], callerSecret: secret, outpoint, callId: BigInt(i + 1) });
    const anchor = spend(w, [{ ...outpoint, value: 1_000_000n }], [{ script: callStampScript(call.envelope.contractId, call.envelopeHash), value: 0n }, { script: w.script, value: 999_000n }]);
    return { bytes: call.bytes, anchor: anchor.toBuffer(), outpoint, coin: { prevTxs: [{ tx: prev.toBuffer(), at: null }] } as CoinEvidence };
  });
  const msg = new Uint8Array(sha256(Buffer.from('m')));
  const xonly = ecc.xOnlyPointFromScalar(secret);
  const schnorrSig = ecc.signSchnorr(msg, secret, new Uint8Array(32));
  const pub = ecc.pointFromScalar(secret)!;
  const ecdsaSig = ecc.sign(msg, secret);
  const time = (n: number, f: (i: number) => void): number => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) f(i);
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / n;
  };
  // Warm-up (JIT), then alternating runs.
  time(CPU_CALLS, (i) => checkCoin(calls[i]!.anchor, calls[i]!.outpoint, calls[i]!.coin));
  const open: number[] = [];
  const coin: number[] = [];
  const schnorr: number[] = [];
  const ecdsa: number[] = [];
  for (let r = 0; r < CPU_RUNS; r++) {
    open.push(time(CPU_CALLS, (i) => openEnvelope(calls[i]!.bytes)));
    coin.push(
      time(CPU_CALLS, (i) => {
        const c = checkCoin(calls[i]!.anchor, calls[i]!.outpoint, calls[i]!.coin);
        if (!c.ok) throw new Error(c.reason);
      }),
    );
    schnorr.push(time(CPU_CALLS, () => ecc.verifySchnorr(msg, xonly, schnorrSig)));
    ecdsa.push(time(CPU_CALLS, () => ecc.verify(msg, pub, ecdsaSig, true)));
  }
  const both = open.map((o, i) => o + coin[i]!);
  return [
    figure({
      name: 'coin check CPU per call (checkCoin: parse, match, P2WPKH sighash, one ECDSA verify)',
      unit: 'µs',
      value: stat(coin),
      ceiling: { name: 'CPU of one raw ECDSA verify (tiny-secp256k1, low-S)', ...stat(ecdsa) },
      target: 'about one verify: ratio <= 1.5',
      maxRatio: 1.5,
    }),
    figure({
      name: 'pool CPU per unconfirmed call at intake (open the envelope + coin check)',
      unit: 'µs',
      value: stat(both),
      ceiling: { name: 'CPU of one raw BIP-340 verify + one raw ECDSA verify, same run', ...stat(schnorr.map((s, i) => s + ecdsa[i]!)) },
      target: 'ratio <= 1.5',
      maxRatio: 1.5,
    }),
  ];
}

/** Part 2: the flood, K real coins, and the honest call, on two real peered nodes. */
async function nodeFigures(): Promise<Figure[]> {
  const devnet = await startDevnet();
  const proxyA = await recordingProxy(devnet.url);
  const proxyB = await recordingProxy(devnet.url);
  const [portA, portB] = [await freePort(), await freePort()];
  const A = await startPeerNode(devnet, { name: 'paid-a', port: portA, peers: [portB], env: { SVC_MAX_PENDING_CALLS: String(BOUND), SVC_ESPLORA_URL: proxyA.url } });
  const B = await startPeerNode(devnet, { name: 'paid-b', port: portB, peers: [portA], env: { SVC_ESPLORA_URL: proxyB.url } });
  const peer = new PeerClient(urlOf(portB), new Signer(new Uint8Array(randomBytes(32))), 30_000);
  try {
    const honest = testWallet(61);
    const victim = testWallet(62);
    const attackerWallet = testWallet(63);
    await fund(devnet, honest, 4);
    await fund(devnet, victim, 2);
    await fund(devnet, attackerWallet, K);
    await waitSynced(A, devnet);
    await waitSynced(B, devnet);
    const svc = client(A, devnet, honest);
    const counter = compileFixture('counter.svc');
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(A, devnet);
    await waitSynced(B, devnet);

    const attacker = txWallet('paid-bench attacker');
    const victimUtxo = devnet.chain.utxosOf(victim.outputScript)[0]!;
    const victimFund = devnet.chain.getTx(victimUtxo.txid)!;
    const floodCall = (i: number) => {
      const theirs = i % 2 === 1;
      const prev = theirs ? victimFund : madeUpCoin(attacker, i);
      const vout = theirs ? victimUtxo.vout : 0;
      const outpoint = { txid: prev.getId(), vout };
      const call = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 1}`], abi: counter.abi, callerSecret: new Uint8Array(randomBytes(32)), outpoint });
      const anchor = spend(attacker, [{ ...outpoint, value: prev.outs[vout]!.value }], [{ script: callStampScript(call.envelope.contractId, call.envelopeHash), value: 0n }]);
      const coin: CoinEvidence = { prevTxs: [{ tx: prev.toBuffer(), at: null }] };
      return { call, anchor, coin, prevTxid: prev.getId() };
    };
    const flood = Array.from({ length: 10 * BOUND }, (_, i) => floodCall(i));
    const askedA = proxyA.paths.length;
    const askedB = proxyB.paths.length;
    const half = flood.length / 2;
    const wire = (f: (typeof flood)[number]) => ({
      kind: 'PAYLOAD_KIND_CALL',
      txid: Buffer.from(f.anchor.getId(), 'hex'),
      contract_id: Buffer.from(dep.contractId, 'hex'),
      body: Buffer.from(f.call.bytes),
      evidence: { anchor_tx: f.anchor.toBuffer(), coin: f.coin.prevTxs.map((p) => ({ tx: Buffer.from(p.tx), at: null })) },
    });
    const [rest, gossip, honestCall] = await Promise.all([
      Promise.all(flood.slice(0, half).map((f) => postJson(`${A.restUrl}/contract_call`, { txid: f.anchor.getId(), contract_id: dep.contractId, payload: f.call.payload, anchor_tx: f.anchor.toHex(), coin: coinJson(f.coin) }))),
      (async () => {
        const out: boolean[] = [];
        for (let i = half; i < flood.length; i += 50) {
          const r = await peer.call('SubmitPayload', { payloads: flood.slice(i, i + 50).map(wire) }).catch(() => ({ results: [] }));
          out.push(...r.results.map((x) => x.accepted));
        }
        return out;
      })(),
      svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:999'], abi: counter.abi }),
    ]);
    const acceptedRest = rest.filter((r) => r.status === 200 || r.status === 202).length;
    const acceptedGossip = gossip.filter((a) => a).length;
    const honestTxid = honestCall.anchor.txid;
    await waitStatus(B, (s) => s.pending_calls >= 1, 'the honest call reaches B', 20_000);
    const heldA = (await status(A)).pending_calls;
    const heldB = (await status(B)).pending_calls;
    const floodIds = flood.flatMap((f) => [f.anchor.getId(), f.prevTxid]);
    const floodAsks = [...proxyA.paths.slice(askedA), ...proxyB.paths.slice(askedB)].filter((p) => floodIds.some((t) => p.includes(t))).length;
    const honestIds = [honestTxid, honestCall.call.envelope.outpointTxid ? Buffer.from(honestCall.call.envelope.outpointTxid).toString('hex') : ''];
    const honestPaths = [...proxyA.paths.slice(askedA).map((p) => `A ${p}`), ...proxyB.paths.slice(askedB).map((p) => `B ${p}`)].filter((p) => honestIds.some((t) => t && p.includes(t)));
    const honestAsks = honestPaths.length;
    const honestTaken = (await getJson(`${A.restUrl}/contract_call/${honestTxid}/status`)).body.status === 'pending' && (await getJson(`${B.restUrl}/contract_call/${honestTxid}/status`)).body.status === 'pending' ? 1 : 0;

    // K real coins of the attacker, three calls on each at the same fee: at most K places.
    const before = (await status(A)).pending_calls;
    const coins = (await svc.esplora.utxos(attackerWallet.address)).filter((u) => u.status?.confirmed);
    const attackerSvc = client(A, devnet, attackerWallet);
    let placed = 0;
    for (const u of coins.slice(0, K)) {
      for (let j = 0; j < 3; j++) {
        try {
          const c = buildCall({ contractId: dep.contractId, function: 'bump', args: [`u64:${j + 1}`], abi: counter.abi, callerSecret: attackerWallet.secret, outpoint: u });
          const anchor = buildCallAnchor(attackerWallet, [u], c, 1);
          const { json } = await gatherCoin(attackerSvc.esplora, anchor.hex, u, coins);
          const r = await postJson(`${A.restUrl}/contract_call`, callSubmission(c, anchor, json));
          if (r.status === 202) placed++;
        } catch {
          /* refused: counted by what is held */
        }
      }
    }
    const held = (await status(A)).pending_calls - before;

    const count = (v: number) => ({ median: v, min: v, max: v });
    return [
      figure({ name: `flood calls accepted at A and B (${flood.length} = 10 x max_pending_calls; made-up or others' coins; half REST, half gossip)`, unit: 'calls', value: count(acceptedRest + acceptedGossip + Math.max(0, heldA - 1) + Math.max(0, heldB - 1)), ceiling: { name: 'calls sent', ...count(flood.length) }, target: '0', maxRatio: 0 }),
      figure({ name: 'endpoint requests about the flood (A and B)', unit: 'requests', value: count(floodAsks), ceiling: { name: 'calls sent', ...count(flood.length) }, target: '0', maxRatio: 0 }),
      figure({ name: 'honest svc call during the flood: held by A and its peer B', unit: 'calls', value: count(honestTaken), ceiling: { name: 'honest calls made', ...count(1) }, target: '1', minRatio: 1 }),
      figure({ name: 'endpoint requests about the honest call at A and B (before a block)', unit: 'requests', value: count(honestAsks), ceiling: { name: 'honest calls made', ...count(1) }, target: '0', maxRatio: 0, notes: honestPaths.join(', ') || 'none' }),
      figure({ name: `places held by ${K} real attacker coins, 3 calls each (${placed} answered 202)`, unit: 'places', value: count(held), ceiling: { name: 'coins', ...count(K) }, target: `<= ${K}`, maxRatio: 1 }),
    ];
  } finally {
    peer.close();
    await A.stop();
    await B.stop();
    await proxyA.close();
    await proxyB.close();
    await devnet.close();
  }
}

export default async function run(): Promise<Figure[]> {
  return [...cpuFigures(), ...(await nodeFigures())];
}

/**
 * Codec benchmarks (CEILINGS.md rows 01 and 04, rebuilt here so each figure is compared
 * with its ceiling in the same run). Samples of the two sides alternate run by run, so
 * drift from the other processes on the box falls on both.
 *
 * - decode + verify: openEnvelope (strict decode, two tagged hashes over the received
 *   bytes, tiny-secp256k1 verify) against raw tiny-secp256k1 verifySchnorr of the same
 *   signatures. Target >= 85%: the codec may cost at most 15% of the verify.
 * - noble schnorr.verify against the same raw verify (the pure-JS reference; ratio ~0.16).
 * - strict decoder against borsh@2 deserialize of the same bytes.
 * Inputs: 256 distinct keys, envelopes and signatures, used in turn; every result is checked.
 */
import * as tiny from 'tiny-secp256k1';
import { deserialize as borshDeserialize } from 'borsh';
import { stat, figure, type Figure, type Stat } from './harness.js';
import {
  encodeEnvelope,
  decodeEnvelope,
  openEnvelope,
  signEnvelope,
  signingMessage,
  verifySchnorrNoble,
  xOnlyPublicKey,
  ENVELOPE_SCHEMA,
  type CallEnvelope,
} from '@svc-node/protocol';

const N = 256;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const RUN_MS = Number(process.env.BENCH_RUN_MS ?? 1000);

interface Input {
  bytes: Uint8Array;
  envelope: CallEnvelope;
  message: Uint8Array;
}

function inputs(): Input[] {
  const out: Input[] = [];
  for (let i = 0; i < N; i++) {
    const secret = new Uint8Array(32);
    secret[0] = 1;
    secret[30] = i >> 8;
    secret[31] = i & 0xff;
    const to = new Uint8Array(32).fill(i);
    const e = signEnvelope(
      {
        version: 1,
        contractId: new Uint8Array(32).fill(0x0d),
        function: 'transfer',
        args: [{ type: 'key', value: to }, { type: 'u64', value: BigInt(1000 + i) }],
        caller: xOnlyPublicKey(secret),
        callId: BigInt(i),
        outpointTxid: new Uint8Array(32).fill(0x32),
        outpointVout: i,
      },
      secret,
      new Uint8Array(32),
    );
    out.push({ bytes: encodeEnvelope(e), envelope: e, message: signingMessage(e) });
  }
  return out;
}

/** Alternating timed runs of two steps; each step does some work and returns its op count. */
function pair(a: () => number, b: () => number): [Stat, Stat] {
  const timed = (step: () => number, ms: number): number => {
    const t0 = performance.now();
    const end = t0 + ms;
    let ops = 0;
    while (performance.now() < end) ops += step();
    return (ops * 1000) / (performance.now() - t0);
  };
  timed(a, 300);
  timed(b, 300);
  const sa: number[] = [];
  const sb: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    sa.push(timed(a, RUN_MS));
    sb.push(timed(b, RUN_MS));
  }
  return [stat(sa), stat(sb)];
}

export default async function run(): Promise<Figure[]> {
  const ins = inputs();
  let i = 0;
  const BATCH = 16; // amortizes the clock read; 16 verifies ~3 ms

  const rawVerify = () => {
    for (let k = 0; k < BATCH; k++) {
      const x = ins[i++ & (N - 1)]!;
      if (!tiny.verifySchnorr(x.message, x.envelope.caller, x.envelope.signature)) throw new Error('raw verify failed');
    }
    return BATCH;
  };
  const open = () => {
    for (let k = 0; k < BATCH; k++) {
      const x = ins[i++ & (N - 1)]!;
      const o = openEnvelope(x.bytes); // throws on a bad signature
      if (o.envelope.callId !== x.envelope.callId) throw new Error('decoded wrong envelope');
    }
    return BATCH;
  };
  const nobleVerify = () => {
    const x = ins[i++ & (N - 1)]!;
    if (!verifySchnorrNoble(x.envelope.signature, x.message, x.envelope.caller)) throw new Error('noble verify failed');
    return 1;
  };
  const decode = () => {
    for (let k = 0; k < 64; k++) {
      const x = ins[i++ & (N - 1)]!;
      if (decodeEnvelope(x.bytes).outpointVout !== x.envelope.outpointVout) throw new Error('decode mismatch');
    }
    return 64;
  };
  const borshDecode = () => {
    for (let k = 0; k < 64; k++) {
      const x = ins[i++ & (N - 1)]!;
      const o = borshDeserialize(ENVELOPE_SCHEMA, x.bytes) as { outpoint_vout: number };
      if (o.outpoint_vout !== x.envelope.outpointVout) throw new Error('borsh decode mismatch');
    }
    return 64;
  };

  const [openRate, raw1] = pair(open, rawVerify);
  const [nobleRate, raw2] = pair(nobleVerify, rawVerify);
  const [decodeRate, borshRate] = pair(decode, borshDecode);
  return [
    figure({
      name: 'decode+verify envelopes (openEnvelope: strict decode, 2 tagged hashes, tiny-secp256k1 verify), 1 thread',
      unit: 'envelopes/s',
      value: openRate,
      ceiling: { name: 'raw tiny-secp256k1 verifySchnorr', ...raw1 },
      target: '>= 0.85 of raw verify',
      minRatio: 0.85,
    }),
    figure({
      name: '@noble/curves schnorr.verify (reference, not on the hot path), 1 thread',
      unit: 'verifies/s',
      value: nobleRate,
      ceiling: { name: 'raw tiny-secp256k1 verifySchnorr', ...raw2 },
    }),
    figure({
      name: `strict envelope decoder (decodeEnvelope), ${ins[0]!.bytes.length} B transfer envelope`,
      unit: 'decodes/s',
      value: decodeRate,
      ceiling: { name: 'borsh@2 deserialize (lax) of the same bytes', ...borshRate },
      notes: 'ratio > 1: faster than borsh@2 while checking more',
    }),
  ];
}

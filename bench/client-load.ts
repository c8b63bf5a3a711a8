/**
 * One client process for bench/client.bench.ts:
 *   node dist/bench/client-load.js NODE_URL ESPLORA_URL WALLET_SECRET_HEX CONTRACT_ID WARMUP CALLS MAX_IN_FLIGHT
 * A Submitter (src/client/submitter.ts) with the wallet's coins submits WARMUP Bank
 * `mint` calls (not measured), then CALLS measured: each envelope built and signed, its
 * anchor built and signed, its coin evidence gathered and checked, posted, and broadcast
 * once accepted, as an indexer's process would. Prints one JSON line.
 */
import { Submitter, walletFromSecret, networkOf, type CallFate, type CallRequest } from '@svc-node/client';
import { sha256 } from '@svc-node/protocol/hash';
import { xOnlyPublicKey } from '@svc-node/protocol/schnorr';

const [nodeUrl, esploraUrl, secretHex, contractId, warmupText, callsText, inFlightText] = process.argv.slice(2);
const wallet = walletFromSecret(new Uint8Array(Buffer.from(secretHex!, 'hex')), 'p2wpkh', networkOf('regtest'));
const to = xOnlyPublicKey(sha256(Buffer.from('client bench recipient')));
const s = new Submitter({ nodeUrl: nodeUrl!, esploraUrl: esploraUrl!, wallet, feeRate: 1, maxInFlight: Number(inFlightText) });
let n = 0;
const requests = function* (count: number): Generator<CallRequest> {
  for (let i = 0; i < count; i++) yield { contractId: contractId!, function: 'mint', args: [{ type: 'key', value: to }, { type: 'u64', value: BigInt(1 + (n++ % 1000)) }] };
};
const tally = async (count: number): Promise<Record<string, number>> => {
  const fates: Record<string, number> = {};
  for await (const f of s.submitMany(requests(count))) {
    const k = f.fate === 'refused' ? `refused:${(f as Extract<CallFate, { fate: 'refused' }>).code}` : f.fate;
    fates[k] = (fates[k] ?? 0) + 1;
  }
  return fates;
};
await tally(Number(warmupText));
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const fates = await tally(Number(callsText));
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ fates, seconds, accepted_per_s: (fates['accepted'] ?? 0) / seconds, cpu_us_per_call: (cpu.user + cpu.system) / Number(callsText), sys_us_per_call: cpu.system / Number(callsText), peak_in_flight: s.peakInFlight }));

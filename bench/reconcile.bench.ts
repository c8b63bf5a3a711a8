/**
 * Range-based set reconciliation (issue 19): bytes and time for two nodes to reconcile
 * one contract of RECONCILE_BENCH_PAYLOADS (default 1,000,000) payloads, identical, and
 * differing by 10 and by 10,000 payloads (half held only by each side): one node's sync
 * with the other, which finds both sides' differences in one descent, fetches what it
 * lacks (GetPayloads) and pushes what the other lacks (SubmitPayload).
 *
 * In process, on the writer's per-contract index (src/writer/peer-queries.ts) and the
 * asking side's algorithm (src/gossip/reconcile.ts), every remote question and answer
 * through the real wire format (test/helpers/reconcile-wire.ts: SignedRequest encoded,
 * signed, verified, decoded; the answer encoded and decoded); the payload transfers
 * counted the same way. Payload bodies are the size of a real call
 * envelope of the counter fixture.
 *
 * Figures: total bytes both ways against the ideal (the differing payloads' own bytes)
 * for 10,000 differences (target: at most 4x); against the 64 KiB budget for identical
 * sets and 10 differences (the ideal is 0 and ~2 KiB there). Time: the reconciliation
 * (both directions, without the payload fetches) against, in the same run, the v1
 * approach's local work alone: building and comparing the two whole txid lists.
 */
import { randomBytes } from 'node:crypto';
import { figure, stat, type Figure } from './harness.js';
import { ContractIndex } from '../src/writer/peer-queries.js';
import { reconcile } from '../src/gossip/reconcile.js';
import { buildCall } from '@svc-node/client/sdk';
import { compileFixture, testWallet } from '../test/helpers/devnet-node.js';
import { fetchOverWire, localAsker, newTally, pushOverWire, remoteAsker, type WireTally } from '../test/helpers/reconcile-wire.js';
import type { WirePayload } from '../src/messages.js';

const N = Number(process.env['RECONCILE_BENCH_PAYLOADS'] ?? 1_000_000);
const RUNS = 3;
const CONTRACT = 'cc'.repeat(32);
/** v1 answered every (txid, payload hash) pair of a contract: ~70 encoded bytes each. */
const V1_BYTES_PER_PAYLOAD = 70;
const BUDGET = 64 * 1024;

/** A real call envelope's size (borsh CallEnvelope of the counter fixture's `bump`). */
function envelopeBytes(): number {
  const wallet = testWallet(31);
  const call = buildCall({ contractId: CONTRACT, function: 'bump', args: ['u64:1'], abi: compileFixture('counter.svc').abi, callerSecret: wallet.secret, outpoint: { txid: 'ab'.repeat(32), vout: 0, } });
  return call.bytes.length;
}

interface Item {
  txid: Buffer;
  hash: Buffer;
}

function index(parts: Item[][]): ContractIndex {
  const c = new ContractIndex();
  for (const part of parts) for (const it of part) c.add(it.txid, 'call', it.hash);
  c.fingerprint(); // sorted once, as a node that answered any question before
  return c;
}

/** Random txids and payload hashes, drawn in one call (a million randomBytes calls cost seconds). */
function items(n: number): Item[] {
  const pool = randomBytes(64 * n);
  return Array.from({ length: n }, (_, i) => ({ txid: pool.subarray(64 * i, 64 * i + 32), hash: pool.subarray(64 * i + 32, 64 * i + 64) }));
}

/** A's sync with B: one descent finds both sides' differences; A fetches what it lacks and pushes what B lacks. */
async function reconcileBoth(a: ContractIndex, b: ContractIndex, bodies: Map<string, number>): Promise<{ ranges: WireTally; fetches: WireTally; ms: number; found: number; levels: number }> {
  const ranges = newTally();
  const fetches = newTally();
  const t0 = performance.now();
  const r = await reconcile(localAsker(a), remoteAsker(b, CONTRACT, ranges));
  const ms = performance.now() - t0;
  const payload = (txid: string): WirePayload => ({ kind: 'call', txid, contract_id: CONTRACT, body: new Uint8Array(bodies.get(txid) ?? 0), evidence: null });
  fetchOverWire(r.missing.map(payload), fetches);
  pushOverWire(r.theyLack.map(payload), fetches);
  return { ranges, fetches, ms, found: r.missing.length + r.theyLack.length, levels: r.stats.levels };
}

/** The v1 approach's local work: both whole lists built and compared (no transfer). */
function wholeListCompare(a: ContractIndex, b: ContractIndex): number {
  const t0 = performance.now();
  const la = a.range(Buffer.alloc(0), Buffer.alloc(0), Number.MAX_SAFE_INTEGER).txids!;
  const lb = b.range(Buffer.alloc(0), Buffer.alloc(0), Number.MAX_SAFE_INTEGER).txids!;
  const sa = new Set(la);
  let missing = 0;
  for (const t of lb) if (!sa.has(t)) missing++;
  if (missing < 0) throw new Error('unreachable');
  return performance.now() - t0;
}

export default async function run(): Promise<Figure[]> {
  const bodySize = envelopeBytes();
  const base = items(N - 10_000);
  const figures: Figure[] = [];
  for (const diff of [0, 10, 10_000]) {
    // N payloads on each side: N - diff / 2 shared, diff / 2 held only by each side.
    const filler = items(10_000 - diff / 2);
    const onlyA = items(diff / 2);
    const onlyB = items(diff / 2);
    const bodies = new Map<string, number>([...onlyA, ...onlyB].map((i) => [i.txid.toString('hex'), bodySize]));
    const a = index([base, filler, onlyA]);
    const b = index([base, filler, onlyB]);
    const ideal = diff * bodySize;
    const totals: number[] = [];
    const times: number[] = [];
    const listTimes: number[] = [];
    let last: Awaited<ReturnType<typeof reconcileBoth>> | null = null;
    for (let r = 0; r < RUNS; r++) {
      last = await reconcileBoth(a, b, bodies);
      if (last.found !== diff) throw new Error(`found ${last.found} of ${diff} differences`);
      totals.push(last.ranges.requestBytes + last.ranges.responseBytes + last.fetches.requestBytes + last.fetches.responseBytes);
      times.push(last.ms);
      listTimes.push(wholeListCompare(a, b));
    }
    const l = last!;
    const detail = `ranges: ${l.ranges.requests} requests, ${l.ranges.requestBytes + l.ranges.responseBytes} B, ${l.levels} levels; payloads: ${l.fetches.requests} GetPayloads and SubmitPayload requests, ${l.fetches.requestBytes + l.fetches.responseBytes} B; largest message ${l.ranges.largest} B; payload body ${bodySize} B; v1 whole lists: ~${((2 * N * V1_BYTES_PER_PAYLOAD) / 2 ** 20).toFixed(0)} MiB`;
    const label = diff === 0 ? 'identical' : `${diff.toLocaleString('en-US')} differences`;
    // The target of 10,000 differences is relative to the ideal; of the others, the 64 KiB budget.
    const relative = diff === 10_000;
    figures.push(
      figure({
        name: `reconcile ${N.toLocaleString('en-US')} payloads, ${label}: bytes both ways`,
        unit: 'B',
        value: stat(totals),
        ceiling: relative ? { name: 'ideal: the differing payloads own bytes', ...stat([ideal]) } : { name: '64 KiB budget', ...stat([BUDGET]) },
        target: relative ? 'at most 4x the ideal' : 'under the 64 KiB budget',
        maxRatio: relative ? 4 : 1,
        notes: `ideal ${ideal} B; ${detail}`,
      }),
      figure({
        name: `reconcile ${N.toLocaleString('en-US')} payloads, ${label}: time to find the differences`,
        unit: 'ms',
        value: stat(times),
        ceiling: { name: 'v1 local work: both whole txid lists built and compared', ...stat(listTimes) },
        // Lower is better; no target: the in-process time has no network latency in it.
        target: 'lower is better',
        notes: 'in process: codec, Ed25519 sign and verify per request, writer index answers; no network latency',
      }),
    );
  }
  return figures;
}

/**
 * Sustained load: calls anchored and submitted at a steady rate, reads at a steady
 * rate, a block every two seconds, for SVC_SOAK_S seconds (60 by default). No answer other
 * than the documented ones (503 overloaded is the only back-pressure allowed), memory of
 * every node process flat between the end of the warm-up and the end, and latency
 * percentiles printed for docs/RELIABILITY.md.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { rssKiB } from '../helpers/raw-http.js';

const SECONDS = Number(process.env['SVC_SOAK_S'] ?? 60);
/** Calls per second, spread over WALLETS wallets. */
const CALL_RATE = 4;
/**
 * A wallet's calls go one after another (each anchor spends the previous one's change), so
 * the calls are spread over several wallets: each issues one call every WALLETS / CALL_RATE
 * seconds (2 s), far more than a call's latency, and a loaded test machine slows the client
 * without starving the schedule.
 */
const WALLETS = 8;
/** Reads per second, spread over the read endpoints. */
const READ_RATE = 100;
/**
 * RSS growth allowed per process between the warm-up mark and the end (KiB). A guard against
 * gross leaks (1 KiB kept per read would be 6 MiB, 100 KiB per call 24 MiB at 60 s); the core
 * is measured at +15 to +36 MiB over 50 s and is not flat yet: see docs/RELIABILITY.md.
 */
const RSS_SLACK_KIB = 64 * 1024;

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
}

test(`soak: ${SECONDS} s of calls (${CALL_RATE}/s) and reads (${READ_RATE}/s) with a block every 2 s`, { timeout: (SECONDS + 120) * 1000 }, async () => {
  const devnet = await startDevnet();
  const node = await startDevnetNode(devnet);
  const wallets = Array.from({ length: WALLETS }, (_, i) => testWallet(61 + i));
  const svcs = wallets.map((w) => client(node, devnet, w));
  const svc = svcs[0]!;
  const counter = compileFixture('counter.svc');
  const pids: Record<string, number> = { supervisor: node.proc.pid! };
  for (const l of node.lines.filter((x) => x.msg === 'child started')) pids[String(l['role'])] = Number(l['child_pid']);
  const statuses = new Map<string, number>();
  const bad: string[] = [];
  const readMs: number[] = [];
  const callMs: number[] = [];
  const txids: string[] = [];
  let miner: NodeJS.Timeout | undefined;
  try {
    for (const w of wallets) await fund(devnet, w, Math.ceil((SECONDS * CALL_RATE * 1.1) / WALLETS) + 4, 100_000);
    const dep = await svc.deploy(counter);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    const first = await svc.call({ contractId: dep.contractId, function: 'bump', args: ['u64:1'], abi: counter.abi });
    txids.push(first.anchor.txid);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    const caller = ((await (await fetch(`${node.restUrl}/contract_call/${first.anchor.txid}/status`)).json()) as { caller: string }).caller;
    const readPaths = (): string => {
      const r = Math.random();
      if (r < 0.35) return `/v2/${dep.contractId}/count`;
      if (r < 0.6) return `/v2/${dep.contractId}/by_caller/${caller}`;
      if (r < 0.8) return `/contract_call/${txids[Math.floor(Math.random() * txids.length)]}/status`;
      if (r < 0.9) return `/events/${dep.contractId}?limit=10`;
      return '/node_status';
    };
    const note = (what: string, status: number, body: string): void => {
      const k = `${what} ${status}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
      const overloaded = status === 503 && body.includes('"overloaded"');
      if (status !== 200 && status !== 202 && !overloaded) bad.push(`${k} ${body.slice(0, 200)}`);
    };

    miner = setInterval(() => devnet.chain.mine(1), 2_000);
    const t0 = performance.now();
    const end = t0 + SECONDS * 1000;
    const warm = t0 + Math.min(10, SECONDS / 4) * 1000;
    let rssWarm: Record<string, number> | null = null;
    /** RSS of the core and REST processes every 10 s (MiB), to tell warm-up from growth. */
    const trend: string[] = [];
    const sampler = setInterval(() => trend.push(`${Math.round((performance.now() - t0) / 1000)}s core ${Math.round(rssKiB(pids['core']!) / 1024)} rest ${Math.round(rssKiB(pids['rest']!) / 1024)}`), 10_000);

    /**
     * Every wallet issues its share of SECONDS * CALL_RATE calls on schedule; a call due while
     * the wallet's previous one is still in flight starts as soon as that one is answered, so
     * every scheduled call is made and the assertions measure the node, not the client's pace.
     */
    const scheduled = SECONDS * CALL_RATE;
    const callLoop = async (w: number): Promise<void> => {
      for (let i = w; i < scheduled; i += WALLETS) {
        const due = t0 + (i * 1000) / CALL_RATE;
        if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        const s = performance.now();
        try {
          const c = await svcs[w]!.call({ contractId: dep.contractId, function: 'bump', args: [`u64:${i + 2}`], abi: counter.abi });
          callMs.push(performance.now() - s);
          txids.push(c.anchor.txid);
          note('call', 202, '');
        } catch (e) {
          const err = e as { status?: number; code?: string; message?: string };
          note('call', err.status ?? 0, JSON.stringify({ code: err.code, message: err.message }));
        }
      }
    };
    const readLoop = async (): Promise<void> => {
      const inflight = new Set<Promise<void>>();
      for (let i = 0; performance.now() < end; i++) {
        const due = t0 + (i * 1000) / READ_RATE;
        if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        if (rssWarm === null && performance.now() >= warm) rssWarm = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, rssKiB(p)]));
        const path = readPaths();
        const s = performance.now();
        const p = fetch(`${node.restUrl}${path}`)
          .then(async (r) => {
            const body = await r.text();
            readMs.push(performance.now() - s);
            note(`GET ${path.split('/')[1]}`, r.status, body);
          })
          .catch((e: unknown) => void bad.push(`GET ${path}: ${String(e)}`))
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      await Promise.all(inflight);
    };
    await Promise.all([...svcs.map((_, w) => callLoop(w)), readLoop()]);
    clearInterval(sampler);
    clearInterval(miner);
    miner = undefined;
    const rssEnd = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, rssKiB(p)]));
    devnet.chain.mine(1);
    await waitSynced(node, devnet, 60_000);
    const intakeServerMs = node.lines.filter((l) => l.msg === 'request' && l['path'] === '/contract_call' && l['status'] === 202).map((l) => Number(l['ms']));
    const s = (await (await fetch(`${node.restUrl}/node_status`)).json()) as { halted: boolean; pending_calls: number };
    const report = {
      seconds: SECONDS,
      calls: callMs.length,
      reads: readMs.length,
      read_ms: { p50: pct(readMs, 50), p90: pct(readMs, 90), p99: pct(readMs, 99), max: pct(readMs, 100) },
      call_client_ms: { p50: pct(callMs, 50), p90: pct(callMs, 90), p99: pct(callMs, 99), max: pct(callMs, 100) },
      intake_server_ms: { p50: pct(intakeServerMs, 50), p90: pct(intakeServerMs, 90), p99: pct(intakeServerMs, 99), max: pct(intakeServerMs, 100) },
      rss_kib_warm: rssWarm,
      rss_kib_end: rssEnd,
      rss_mib_trend: trend,
      statuses: Object.fromEntries(statuses),
      pending_after: s.pending_calls,
    };
    console.log(`# hardening/soak: ${JSON.stringify(report)}`);
    assert.deepEqual(bad, [], 'only documented answers');
    assert.equal(s.halted, false);
    // Every scheduled call was answered (bad holds any other answer); back-pressure (503
    // overloaded) may refuse some, but at 4 calls/s it must stay the exception.
    assert.ok(callMs.length >= scheduled * 0.8, `only ${callMs.length} of ${scheduled} calls accepted`);
    for (const [k, v] of Object.entries(rssEnd)) {
      const w = (rssWarm as Record<string, number> | null)?.[k] ?? v;
      assert.ok(v - w < RSS_SLACK_KIB, `${k} RSS grew by ${v - w} KiB`);
    }
  } finally {
    if (miner) clearInterval(miner);
    await node.stop();
    await devnet.close();
  }
});

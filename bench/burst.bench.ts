/**
 * A burst of blocks reaching a light node that holds pending calls (docs/ARCHITECTURE.md,
 * "Following the chain"): 300 blocks at once, the 1,000 calls both nodes hold confirmed
 * inside it in four blocks (at 1, 75, 150 and 225 of the burst, 250 each). Two real node
 * processes over one in-process devnet chain, each on its own HTTP endpoint so each
 * node's requests are counted apart: L (chain_mode "light", the default) and B (chain_mode
 * "blocks", every block read raw), the ceiling of the same run. Both get the same calls
 * (with their anchors, as the SDK sends them) before the burst and apply it at once.
 *
 * Figures (medians of RUNS whole runs): L's wall time from the burst's mining to its tip
 * applied with every call decided, against B's; L's endpoint requests over the same span
 * following the chain (headers, statuses, blocks), against B's, and in all. Both runs
 * share the machine's two cores (they apply the burst at the same time), so the ratio is
 * what each costs beside the other. Checked every run: L's state root at the tip is B's,
 * every call executed on both, and L logged no replay or re-derivation.
 */
import type { NodeStatusAnswer } from '@svc-node/client/answers';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevnetChain, DevnetEndpoint, type DevnetCounters } from '../src/devnet/chain-server.js';
import { figure, stat, type Figure } from './harness.js';
import { BankCalls, type CallBody } from './lib/bank-calls.js';
import { startNode, type NodeProcess } from '../test/helpers/node-process.js';

/** Blocks of the burst, and where in it the calls confirm (offsets from its first block). */
const BURST = 300;
const CONFIRMED_AT = [0, 74, 149, 224];
const CALLS = 1_000;
/**
 * Poll interval of both nodes: 1 s puts a payload's first deferred check 10 s after its
 * arrival, as the default 60 s does ten minutes after: the burst is applied before
 * checks by time could place the held calls (what made a light node replay before).
 */
const POLL_S = 1;
/** A local endpoint: no request budget worth the name on either side of the ratio. */
const UNLIMITED = { SVC_ESPLORA_REQUESTS_PER_HOUR: '1000000000', SVC_ESPLORA_BURST: '100000', SVC_ESPLORA_MAX_CONCURRENT: '4' };
const SUBMIT_CONCURRENCY = 16;

async function serve(chain: DevnetChain): Promise<{ url: string; ep: DevnetEndpoint; close(): Promise<void> }> {
  const ep = new DevnetEndpoint(chain);
  const server = createServer(ep.handle);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ep,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const requests = (c: DevnetCounters): number => c.total.all.requests;
/**
 * Deferred checks (outspends, merkle proofs) are not following the chain: both nodes ask
 * them, at a varying count, for held calls whose block they have not applied yet when a
 * check falls due (counted apart).
 */
const isDeferredRoute = (route: string): boolean => route.endsWith('/outspend/:n') || route.endsWith('/merkle-proof');
const following = (c: DevnetCounters): number => Object.entries(c.routes).reduce((n, [r, t]) => n + (isDeferredRoute(r) ? 0 : t.all.requests), 0);
const byRoute = (c: DevnetCounters): string =>
  Object.entries(c.routes)
    .map(([r, t]) => `${r} ${t.all.requests}`)
    .join(', ');

async function status(n: NodeProcess): Promise<NodeStatusAnswer> {
  try {
    return (await (await fetch(`${n.restUrl}/node_status`)).json()) as NodeStatusAnswer;
  } catch (e) {
    // A pooled keep-alive connection the node closed as idle (uWS: after 10 s) while the
    // burst was mined: asked again, once, on a new one.
    if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
    return (await (await fetch(`${n.restUrl}/node_status`)).json()) as NodeStatusAnswer;
  }
}

/** Re-checks `cond` on every log line of `n` (at least every 200 ms) until it holds. */
async function until(n: NodeProcess, cond: () => Promise<boolean>, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last lines:\n${n.raw.slice(-10).join('\n')}`);
    await n.waitForNext(() => true, 200, what).catch(() => undefined);
  }
}

async function submitAll(n: NodeProcess, path: string, bodies: unknown[]): Promise<void> {
  let at = 0;
  await Promise.all(
    Array.from({ length: SUBMIT_CONCURRENCY }, async () => {
      while (at < bodies.length) {
        const body = bodies[at++];
        const r = await fetch(`${n.restUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (r.status !== 202) throw new Error(`${path} refused: ${r.status} ${await r.text()}`);
      }
    }),
  );
}

/** Runs of the whole burst (fresh chain and nodes each): the figures are their medians. */
const RUNS = 3;

interface Run {
  lightS: number;
  blocksS: number;
  lightRequests: number;
  blocksRequests: number;
  lightFollowing: number;
  blocksFollowing: number;
  notes: string;
}

export default async function run(): Promise<Figure[]> {
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once());
  const notes = runs.map((r, i) => `run ${i + 1}: ${r.notes}`).join('; ');
  const of = (k: keyof Omit<Run, 'notes'>) => stat(runs.map((r) => r[k]));
  return [
    figure({
      name: `burst: light node wall time, ${BURST} blocks with ${CALLS} held calls confirmed in ${CONFIRMED_AT.length} of them`,
      unit: 's',
      value: of('lightS'),
      ceiling: { name: 'chain_mode "blocks" applying the same burst (same run)', ...of('blocksS') },
      maxRatio: 1,
      target: '<= 1x',
      notes,
    }),
    figure({
      name: `burst: light node endpoint requests following the chain, ${BURST} blocks with ${CALLS} held calls confirmed in ${CONFIRMED_AT.length} of them`,
      unit: 'requests',
      value: of('lightFollowing'),
      ceiling: { name: 'chain_mode "blocks" following the same burst (same run)', ...of('blocksFollowing') },
      maxRatio: 0.25,
      target: '<= 0.25x',
      notes,
    }),
    figure({
      name: `burst: light node endpoint requests in all (deferred checks of calls whose block was not applied yet included), ${BURST} blocks with ${CALLS} held calls`,
      unit: 'requests',
      value: of('lightRequests'),
      ceiling: { name: 'chain_mode "blocks", the same (same run)', ...of('blocksRequests') },
      notes,
    }),
  ];
}

async function once(): Promise<Run> {
  const chain = new DevnetChain();
  chain.mine(101);
  const [le, be] = [await serve(chain), await serve(chain)];
  const dirs: string[] = [];
  const nodes: NodeProcess[] = [];
  try {
    const start = async (name: string, url: string, mode: 'light' | 'blocks'): Promise<NodeProcess> => {
      const dataDir = mkdtempSync(join(tmpdir(), `svc-burst-${name}-`));
      dirs.push(dataDir);
      const n = await startNode({ dataDir, env: { ...UNLIMITED, SVC_ESPLORA_URL: url, SVC_CHAIN_MODE: mode, SVC_BLOCK_CHECK_INTERVAL_S: String(POLL_S), RUST_LOG: 'info,rest::access=warn' } });
      nodes.push(n);
      return n;
    };
    const [L, B] = [await start('light', le.url, 'light'), await start('blocks', be.url, 'blocks')];
    const bank = new BankCalls(chain, 'burst bench');
    bank.fund(CALLS);
    const dep = bank.deploy();
    await Promise.all([submitAll(L, '/deploy_contract', [dep.body]), submitAll(B, '/deploy_contract', [dep.body])]);
    chain.mine(1);
    const synced = (n: NodeProcess) => until(n, async () => (await status(n))['processed_height'] === chain.height, `height ${chain.height}`);
    await Promise.all([synced(L), synced(B)]);

    const bodies: CallBody[] = Array.from({ length: CALLS }, () => bank.next(true));
    await Promise.all([submitAll(L, '/contract_call', bodies), submitAll(B, '/contract_call', bodies)]);
    const pendingAll = (n: NodeProcess) => until(n, async () => Number((await status(n))['pending_calls']) >= CALLS, `${CALLS} pending`);
    await Promise.all([pendingAll(L), pendingAll(B)]);

    le.ep.resetCounters();
    be.ep.resetCounters();
    const linesBefore = L.lines.length;
    // The burst: mined in one synchronous run, so both nodes find 300 new blocks at once.
    const per = CALLS / CONFIRMED_AT.length;
    const t0 = performance.now();
    for (let h = 0, k = 0; h < BURST; ) {
      if (k < CONFIRMED_AT.length && h === CONFIRMED_AT[k]) {
        chain.mine(1, bodies.slice(k * per, (k + 1) * per).map((b) => b.txid));
        k++;
        h++;
      } else {
        const n = (k < CONFIRMED_AT.length ? CONFIRMED_AT[k]! : BURST) - h;
        chain.mine(n, []);
        h += n;
      }
    }
    const tip = chain.height;
    const done = async (n: NodeProcess): Promise<number> => {
      await until(n, async () => {
        const s = await status(n);
        if (s['halted']) throw new Error(`node halted: ${String(s['halt_reason'])}`);
        return s['processed_height'] === tip && Number(s['pending_calls']) === 0;
      }, `tip ${tip} with every call decided`);
      return (performance.now() - t0) / 1000;
    };
    const [lightS, blocksS] = await Promise.all([done(L), done(B)]);
    const [lc, bc] = [le.ep.counters(), be.ep.counters()];

    // The same outcome as the node reading every block, and no replay on the light one.
    const root = async (n: NodeProcess) => (await (await fetch(`${n.restUrl}/v2/state_root/${tip}`)).json()) as { state_root: string };
    const [lr, br] = await Promise.all([root(L), root(B)]);
    if (lr.state_root !== br.state_root) throw new Error(`state roots differ at ${tip}: light ${lr.state_root}, blocks ${br.state_root}`);
    const replays = L.lines.slice(linesBefore).filter((l) => l.msg === 're-deriving state from the block journal' || l.msg === 'replayed after a late payload');
    if (replays.length > 0) throw new Error(`the light node replayed: ${JSON.stringify(replays)}`);
    for (const b of [bodies[0]!, bodies[CALLS - 1]!]) {
      for (const n of [L, B]) {
        const s = (await (await fetch(`${n.restUrl}/contract_call/${b.txid}/status`)).json()) as { status: string };
        if (s.status !== 'executed') throw new Error(`call ${b.txid} is ${s.status}`);
      }
    }

    return { lightS, blocksS, lightRequests: requests(lc), blocksRequests: requests(bc), lightFollowing: following(lc), blocksFollowing: following(bc), notes: `light: ${byRoute(lc)}; blocks: ${byRoute(bc)}` };
  } finally {
    await Promise.all(nodes.map((n) => n.stop().catch(() => null)));
    await Promise.all([le.close(), be.close()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

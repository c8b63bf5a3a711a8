/**
 * Header sync with a peer (src/gossip/sync.ts, syncHeaders): a light node takes a peer's
 * headers in runs the core verifies, each run read from several GetHeaders pages. The
 * pages are asked ahead, a few at once, so a long chain is not one round trip per page
 * in turn; what reaches the core is still every header once, in order, in whole runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeCore, fakeSyncEngine } from '../helpers/sync-fakes.js';
import { GET_HEADERS_MAX, LIST_CONCURRENCY } from '../../src/gossip/limits.js';
import { HEADER_BYTES } from '@svc-node/protocol/headers';
import { NodeError } from '@svc-node/protocol/errors';

/** 80 bytes naming height `h` (the fake core checks nothing else). */
function headerOf(h: number): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.writeUInt32BE(h, 0);
  return b;
}

/**
 * A peer whose header chain ends at `tip`: each GetHeaders answer waits for the next turn
 * of the event loop, so pages asked together are in flight together (`inFlight.max`).
 */
function headerPeer(tip: number, fail?: (from: number) => boolean) {
  const asked: number[] = [];
  const inFlight = { now: 0, max: 0 };
  const client = {
    call: async (method: string, params: Record<string, unknown>) => {
      if (method !== 'GetHeaders') throw new Error(`unexpected ${method}`);
      const from = Number(params['from_height']);
      const count = Number(params['count']);
      asked.push(from);
      inFlight.now++;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight.now--;
      if (fail?.(from)) throw new NodeError('bad_request', `no page at ${from}`);
      const n = Math.max(0, Math.min(count, tip - from + 1));
      return { from_height: from, headers: Buffer.concat(Array.from({ length: n }, (_, i) => headerOf(from + i))), tip_height: tip };
    },
  };
  return { peer: { url: 'http://peer', client }, asked, inFlight };
}

/** A core holding headers up to `have`, taking every run that links; the runs it was given. */
function headerCore(have: number, refuseFrom?: number) {
  const runs: { from: number; heights: number[] }[] = [];
  let tip = have;
  const core = fakeCore((method, params) => {
    if (method === 'peerHeaderState') return { anchor: 0, tip, takesHeaders: true };
    if (method !== 'peerSubmitHeaders') return undefined;
    const from = Number(params['from']);
    const headers = params['headers'] as Uint8Array[];
    runs.push({ from, heights: headers.map((h) => Buffer.from(h).readUInt32BE(0)) });
    if (from !== tip + 1) return { accepted: 0, linked: false };
    if (refuseFrom !== undefined && from >= refuseFrom) throw new NodeError('bad_evidence', 'the endpoint has another block there');
    tip += headers.length;
    return { accepted: headers.length, linked: true };
  });
  return { core, runs, tip: () => tip };
}

test('a peer\'s long header chain comes in order, in whole runs, its pages asked a few at once and none twice', async () => {
  const peerTip = 5 * GET_HEADERS_MAX * 10 + 1_234; // five full runs and part of a sixth
  const { peer, asked, inFlight } = headerPeer(peerTip);
  const { core, runs, tip } = headerCore(0);
  const engine = fakeSyncEngine(core, [peer], 8);
  const taken = await engine.syncHeaders(peer as never);
  // Everything but the peer's last six blocks (HEADER_RUN_TIP_MARGIN), each once, in order.
  assert.equal(taken, peerTip - 6);
  assert.equal(tip(), peerTip - 6);
  const heights = runs.flatMap((r) => r.heights);
  assert.deepEqual(heights, Array.from({ length: peerTip - 6 }, (_, i) => i + 1));
  assert.deepEqual(runs.map((r) => r.heights.length), [20_000, 20_000, 20_000, 20_000, 20_000, 1_228]);
  // Each page once; past the short last page, none more than the pages already asked ahead.
  assert.equal(new Set(asked).size, asked.length, 'no page asked twice');
  const pages = Math.ceil(peerTip / GET_HEADERS_MAX);
  assert.ok(asked.length >= pages && asked.length < pages + LIST_CONCURRENCY, `${asked.length} pages asked for ${pages}`);
  assert.equal(inFlight.max, LIST_CONCURRENCY, 'pages asked ahead, as many at once as the peer answers at once');
});

test('header sync stops at a run the core refuses; pages asked ahead of it that fail are not reported', async () => {
  const peerTip = 3 * GET_HEADERS_MAX * 10;
  // Pages of the third run fail: asked ahead while the second run is refused.
  const { peer } = headerPeer(peerTip, (from) => from > 2 * GET_HEADERS_MAX * 10);
  const { core, runs } = headerCore(0, 20_001);
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => void unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const engine = fakeSyncEngine(core, [peer], 8);
    await assert.rejects(engine.syncHeaders(peer as never), (e: unknown) => e instanceof NodeError && e.code === 'bad_evidence');
    // Let the pages asked ahead settle (each answers on the next turn of the event loop).
    for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  assert.deepEqual(runs.map((r) => [r.from, r.heights.length]), [[1, 20_000], [20_001, 20_000]], 'the first run taken, the second refused, no third');
  assert.deepEqual(unhandled, []);
});

/**
 * Memory: resident set of a writer Ledger over RocksDB with 100,000 pending
 * calls and 1,000,000 stored events, its growth per pending call and per stored event,
 * and whether it stays flat under sustained accept -> confirm load. Measured in a child
 * process after a full GC (bench/lib/growth.ts explains the run; this file only turns
 * its samples into figures).
 *
 * "Per item" figures: the median, min and max are over the slopes of consecutive sample
 * segments (10 segments of 10,000 calls or 100,000 events); `fit` is the least-squares
 * line through all samples. Sustained load: the least-squares slope over the second half
 * of the cycles (a sawtooth from RocksDB's write buffers rules out the median of
 * per-cycle deltas), compared with what one cycle's calls hold while pending.
 */
import { figure, linearFit, stat, type Figure, type FigureFit, type Stat } from './harness.js';
import { growth, type Mem } from './lib/growth.js';

const MiB = 1024 * 1024;
/** Memory the node's JavaScript holds: its heap plus buffers outside it. */
const jsBytes = (m: Mem): number => m.heapUsed + m.external;
const one = (v: number): Stat => ({ median: v, min: v, max: v });
const mib = (b: number): string => (b / MiB).toFixed(1);
const fixed = (n: number, d = 0): string => n.toFixed(d);

/** Slopes of consecutive segments of (x, y) points. */
function segmentSlopes(points: [number, number][]): number[] {
  const out: number[] = [];
  for (let i = 1; i < points.length; i++) out.push((points[i]![1] - points[i - 1]![1]) / (points[i]![0] - points[i - 1]![0]));
  return out;
}

function fitOf(x: string, y: string, points: [number, number][]): FigureFit {
  const f = linearFit(
    points.map((p) => p[0]),
    points.map((p) => p[1]),
  );
  return { ...f, x, y, points };
}

/** Share of a cycle's pending memory a flat series may still gain per cycle. */
const FLAT_SHARE = 0.05;

export default async function run(): Promise<Figure[]> {
  const r = await growth();
  const base = r.baseline;
  const atPending = r.pendingSamples[r.pendingSamples.length - 1]!.mem;
  const abs = r.absolute;
  const last = <T>(a: T[]): T => a[a.length - 1]!;

  // Per pending call.
  const pRss: [number, number][] = r.pendingSamples.map((s) => [s.pending, s.mem.rss]);
  const pJs: [number, number][] = r.pendingSamples.map((s) => [s.pending, jsBytes(s.mem)]);
  const pendingFit = fitOf('pending calls', 'RSS bytes after GC', pRss);
  const pendingJs = linearFit(
    pJs.map((p) => p[0]),
    pJs.map((p) => p[1]),
  );
  const pendingHeap = linearFit(
    r.pendingSamples.map((s) => s.pending),
    r.pendingSamples.map((s) => s.mem.heapUsed),
  );

  // Per stored event.
  const eRss: [number, number][] = r.eventSamples.map((s) => [s.events, s.mem.rss]);
  const eventFit = fitOf('stored events', 'RSS bytes after GC', eRss);
  const steady = eRss.filter((p) => p[0] >= r.config.events / 2);
  const eventSteady = linearFit(
    steady.map((p) => p[0]),
    steady.map((p) => p[1]),
  );
  const eventJs = linearFit(
    r.eventSamples.map((s) => s.events),
    r.eventSamples.map((s) => jsBytes(s.mem)),
  );
  const steadyJs = r.eventSamples.filter((s) => s.events >= r.config.events / 2);
  const eventJsSteady = linearFit(
    steadyJs.map((s) => s.events),
    steadyJs.map((s) => jsBytes(s.mem)),
  );
  const first = r.eventSamples[0]!;
  const final = last(r.eventSamples);
  const diskPerEvent = (final.dbBytes - first.dbBytes) / (final.events - first.events);

  // Sustained load: the slope over the second half of the cycles. The first half is
  // RocksDB warming up on a young database (write buffers, block cache, allocator arenas
  // of its flush and compaction threads reach their working size); stated in the notes.
  const half = Math.floor(r.config.cycles / 2);
  const cycles = r.cycleSamples.filter((s) => s.cycle > half);
  const cRss: [number, number][] = cycles.map((s) => [s.cycle, s.mem.rss]);
  const cJs: [number, number][] = cycles.map((s) => [s.cycle, jsBytes(s.mem)]);
  const cycleRss = fitOf('accept -> confirm cycles (second half)', 'RSS bytes after GC', cRss);
  const cycleJs = fitOf('accept -> confirm cycles (second half)', 'JS heap + external bytes after GC', cJs);
  const cycle0 = r.cycleSamples[0]!.mem;
  const mid = r.cycleSamples.find((s) => s.cycle === half)!.mem;
  const all = (f: (m: Mem) => number) =>
    linearFit(
      r.cycleSamples.map((s) => s.cycle),
      r.cycleSamples.map((s) => f(s.mem)),
    );
  const allRss = all((m) => m.rss);
  const n = r.config.cycleCalls;
  const pendingRssPerCall = pendingFit.b;
  const pendingJsPerCall = pendingJs.b;
  const cyclePendingRss = n * pendingRssPerCall;
  const cyclePendingJs = n * pendingJsPerCall;
  const cycleSeconds = r.phases['cycles'] ?? 0;
  const rssBound = Math.max(FLAT_SHARE * cyclePendingRss, 2 * cycleRss.bErr);

  return [
    figure({
      name: `memory: resident set with ${r.absoluteCounts.pending.toLocaleString('en')} pending calls and ${r.config.events.toLocaleString('en')} stored events (after GC)`,
      unit: 'MiB',
      value: stat(abs.map((m) => m.rss / MiB)),
      ceiling: { name: 'the same process before the fill (contracts deployed, warmed up, after the cycles; MiB)', ...one(base.rss / MiB) },
      target: 'stated (absolute)',
      notes:
        `heap ${mib(abs[0]!.heapUsed)} MiB + external ${mib(abs[0]!.external)} MiB (baseline ${mib(base.heapUsed)} + ${mib(base.external)}); ` +
        `RSS with the pending calls alone ${mib(atPending.rss)} MiB; RocksDB directory ${mib(r.absoluteCounts.dbBytes)} MiB; ` +
        `${r.absoluteCounts.events.toLocaleString('en')} events stored in all (warm-up included); RocksDB in ${r.config.dbDir}`,
    }),
    {
      ...figure({
      name: `memory: growth per pending call (RSS after GC, 0 -> ${r.config.pending.toLocaleString('en')} pending)`,
      unit: 'bytes/call',
      value: stat(segmentSlopes(pRss)),
      ceiling: { name: 'borsh envelope of the call as received (bytes)', ...one(r.envelopeBytes) },
      target: 'stated; linear in pending calls (R² >= 0.99)',
      fit: pendingFit,
      notes:
        `fit ${fixed(pendingFit.b)} ± ${fixed(pendingFit.bErr)} B/call (R² ${pendingFit.r2.toFixed(4)}); of it JS heap ${fixed(pendingHeap.b)} B and heap + external ${fixed(pendingJs.b)} B/call; ` +
        `RocksDB directory +${fixed((last(r.pendingSamples).dbBytes - r.pendingSamples[0]!.dbBytes) / r.config.pending)} B/call`,
      }),
      met: pendingFit.r2 >= 0.99,
    },
    {
      ...figure({
        name: `memory: growth per stored event (RSS after GC, 0 -> ${r.config.events.toLocaleString('en')} events, ${r.absoluteCounts.pending.toLocaleString('en')} calls pending)`,
        unit: 'bytes/event',
        value: stat(segmentSlopes(eRss)),
        ceiling: { name: 'RocksDB directory growth per event (bytes on disk)', ...one(diskPerEvent) },
        target: 'stated; flat: JS heap + external < 1 B/event over the second half',
        fit: eventFit,
        notes:
          `RSS +${mib(final.mem.rss - first.mem.rss)} MiB over ${r.config.events.toLocaleString('en')} events (fit ${eventFit.b.toFixed(1)} ± ${eventFit.bErr.toFixed(1)} B/event), ` +
          `most of it in the first ${(r.eventSamples[1]!.events / 1000).toFixed(0)}k (+${mib(r.eventSamples[1]!.mem.rss - first.mem.rss)} MiB: RocksDB write buffers, block cache, allocator); ` +
          `RSS slope over the second half ${eventSteady.b.toFixed(1)} ± ${eventSteady.bErr.toFixed(1)} B/event; JS heap + external ${eventJsSteady.b.toFixed(2)} B/event over the second half, ` +
          `${eventJs.b.toFixed(2)} over all (+${mib(jsBytes(final.mem) - jsBytes(first.mem))} MiB in all); ${r.config.eventsPerCall} events per call, ${r.config.eventCallsPerBlock} calls per block`,
      }),
      met: Math.abs(eventJsSteady.b) < 1,
    },
    {
      ...figure({
        name: `memory under sustained load: JS heap + external slope over cycles ${half + 1}-${r.config.cycles} of ${n} transfers accepted then confirmed`,
        unit: 'KiB/cycle',
        value: one(cycleJs.b / 1024),
        ceiling: { name: `JS memory ${n} pending calls hold (KiB)`, ...one(cyclePendingJs / 1024) },
        target: `flat: slope <= ${FLAT_SHARE * 100}% of what a cycle holds while pending`,
        fit: cycleJs,
        notes:
          `slope ± standard error ${(cycleJs.b / 1024).toFixed(1)} ± ${(cycleJs.bErr / 1024).toFixed(1)} KiB/cycle = ${(cycleJs.b / n).toFixed(1)} B per processed call; ` +
          `range ${mib(Math.min(...cJs.map((p) => p[1])))}-${mib(Math.max(...cJs.map((p) => p[1])))} MiB; cycles 1-${half} moved it ${mib(jsBytes(mid) - jsBytes(cycle0))} MiB; ` +
          `${r.config.cycles} cycles took ${cycleSeconds.toFixed(0)} s`,
      }),
      met: cycleJs.b <= FLAT_SHARE * cyclePendingJs,
    },
    {
      ...figure({
        name: `memory under sustained load: RSS slope over cycles ${half + 1}-${r.config.cycles} of ${n} transfers accepted then confirmed`,
        unit: 'KiB/cycle',
        value: one(cycleRss.b / 1024),
        ceiling: { name: `RSS ${n} pending calls hold (KiB)`, ...one(cyclePendingRss / 1024) },
        target: `flat: slope <= max(${FLAT_SHARE * 100}% of a cycle's pending RSS, 2 standard errors)`,
        fit: cycleRss,
        notes:
          `slope ± standard error ${(cycleRss.b / 1024).toFixed(0)} ± ${(cycleRss.bErr / 1024).toFixed(0)} KiB/cycle = ${(cycleRss.b / n).toFixed(0)} B per processed call (bound ${(rssBound / 1024).toFixed(0)} KiB/cycle); ` +
          `range ${mib(Math.min(...cRss.map((p) => p[1])))}-${mib(Math.max(...cRss.map((p) => p[1])))} MiB; ` +
          `cycles 1-${half} (RocksDB warming up on a young database) +${mib(mid.rss - cycle0.rss)} MiB; over all ${r.config.cycles} cycles ${(allRss.b / n).toFixed(0)} B per processed call`,
      }),
      met: cycleRss.b <= rssBound,
    },
  ];
}

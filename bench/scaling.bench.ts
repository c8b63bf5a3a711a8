/**
 * Scaling: how intake, block application and reads grow from 1k to 100k
 * items, with a least-squares line (cost per operation = a + b·items) for each. Timed in
 * the growth run (bench/lib/growth.ts, shared with memory.bench.ts) on three writer
 * Ledgers over RocksDB, driven through the ledger fixture, holding 1k, 10k and 100k
 * pending calls (2k, 10k and 1M stored events). Rounds alternate between the three, so
 * load from other processes falls on every size alike:
 *
 * - intake: time inside Ledger.acceptCall (payload look-up, synced write, pending
 *   tracking), 100 calls one at a time like the writer's queue; items = pending calls.
 * - block application: a 1,000-transfer block (VM, state, synced RocksDB batch with undo
 *   log); items = pending calls held besides the block's own.
 * - reads: a page of 100 events from a random position (Ledger.events, as GET
 *   /events/{id} reads it, one at a time as the writer serves them); items = stored
 *   events (there are up to 1M of them, so this line goes to 1M).
 *
 * Each figure: the cost at the largest size (median/min/max of its rounds) against the
 * smallest in the same rounds (the ceiling; ratio 1 = flat; rates, so below 1 is slower).
 * The fit over every round of the three sizes is in `fit`; the fill of the big ledger
 * gives a second intake line over 200 chunks from 0 to 100k (in the notes).
 */
import { figure, linearFit, stat, type Figure, type FigureFit } from './harness.js';
import { growth } from './lib/growth.js';

function fitOf(x: string, y: string, points: [number, number][]): FigureFit {
  const f = linearFit(
    points.map((p) => p[0]),
    points.map((p) => p[1]),
  );
  return { ...f, x, y, points: points.map(([px, py]) => [px, Math.round(py * 100) / 100]) };
}

/** "a + b per `per` items" in words, with the slope's standard error and R². */
function line(f: { a: number; b: number; bErr: number; r2: number; n: number }, unit: string, per: number, items: string): string {
  const growth = f.b * per;
  const pct = (growth / f.a) * 100;
  return `${f.a.toFixed(1)} ${unit} + ${growth.toFixed(1)} ± ${(f.bErr * per).toFixed(1)} ${unit} per ${per.toLocaleString('en')} ${items} (${pct >= 0 ? '+' : ''}${pct.toFixed(0)}%; R² ${f.r2.toFixed(2)}, ${f.n} points)`;
}

const k = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)}M` : `${(n / 1000).toFixed(n % 1000 ? 1 : 0)}k`);

interface Round {
  size: number;
  usPerOp: number;
  canaryMs: number;
}

/** Rates (ops/s) of one size's rounds. */
const rates = (rs: Round[], size: number): number[] => rs.filter((x) => x.size === size).map((x) => 1e6 / x.usPerOp);

/** How much slower the machine-load canary ran next to the largest size than next to the smallest. */
function canary(rs: Round[], lo: number, hi: number): string {
  const at = (s: number): number => stat(rs.filter((x) => x.size === s).map((x) => x.canaryMs)).median;
  return `load canary (fixed CPU task) ${(at(hi) / at(lo)).toFixed(2)}x as slow next to the largest size`;
}

export default async function run(): Promise<Figure[]> {
  const r = await growth();
  const R = r.rounds;
  const lo = 0;
  const mid = 1;
  const hi = R.sizes.length - 1;
  const med = (xs: number[]): number => stat(xs).median;

  const intakeFit = fitOf('pending calls', 'µs per acceptCall', R.intake.map((x) => [x.pending, x.usPerOp]));
  const fill = linearFit(
    r.intake.map((x) => x.pending),
    r.intake.map((x) => x.usPerCall),
  );
  const applyFit = fitOf('pending calls', 'µs per transfer', R.apply.map((x) => [x.pending, x.usPerOp]));
  const readFit = fitOf('stored events', `µs per page of ${r.config.page} events`, R.reads.map((x) => [x.events, x.usPerOp]));

  return [
    figure({
      name: `scaling: intake, Ledger.acceptCall (synced, one at a time) with ${k(R.sizes[hi]!)} calls pending`,
      unit: 'calls/s',
      value: stat(rates(R.intake, hi)),
      ceiling: { name: `the same with ${k(R.sizes[lo]!)} pending, alternating rounds (calls/s)`, ...stat(rates(R.intake, lo)) },
      target: 'linear fit stated (ratio 1 = flat)',
      fit: intakeFit,
      notes:
        `fit ${line(intakeFit, 'µs', 100_000, 'pending')}; with ${k(R.sizes[mid]!)} pending ${med(rates(R.intake, mid)).toFixed(0)}/s; ` +
        `the fill itself (${fill.n} chunks of ${r.config.fillChunk} from 0 to ${k(r.config.pending)}, not alternated, so exposed to load): ${line(fill, 'µs', 100_000, 'pending')}; ${canary(R.intake, lo, hi)}`,
    }),
    figure({
      name: `scaling: block application (1000-transfer blocks) with ${k(R.sizes[hi]!)} other calls pending`,
      unit: 'transfers/s',
      value: stat(rates(R.apply, hi)),
      ceiling: { name: `the same with ${k(R.sizes[lo]!)} pending, alternating rounds (transfers/s)`, ...stat(rates(R.apply, lo)) },
      target: 'linear fit stated (ratio 1 = flat)',
      fit: applyFit,
      notes: `fit ${line(applyFit, 'µs', 100_000, 'pending')}; with ${k(R.sizes[mid]!)} pending ${med(rates(R.apply, mid)).toFixed(0)}/s; ${canary(R.apply, lo, hi)}`,
    }),
    figure({
      name: `scaling: event page reads (Ledger.events, ${r.config.page} events from a random position) with ${k(R.events[hi]!)} events stored`,
      unit: 'pages/s',
      value: stat(rates(R.reads, hi)),
      ceiling: { name: `the same with ${k(R.events[lo]!)} events, alternating rounds (pages/s)`, ...stat(rates(R.reads, lo)) },
      target: 'linear fit stated (ratio 1 = flat)',
      fit: readFit,
      notes: `fit ${line(readFit, 'µs', 100_000, 'events')}; with ${k(R.events[mid]!)} events ${med(rates(R.reads, mid)).toFixed(0)}/s; ${r.config.readsPerRun} pages per round; ${canary(R.reads, lo, hi)}`,
    }),
  ];
}

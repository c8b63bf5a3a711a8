import { readFileSync } from 'node:fs';
/**
 * Benchmark helpers. Every figure is a median of several runs with min and max, and a
 * ratio against a ceiling measured in the same run, because these machines are noisy.
 */

export interface Stat {
  median: number;
  min: number;
  max: number;
}

export interface Figure {
  name: string;
  unit: string;
  value: Stat;
  ceiling: { name: string } & Stat;
  /** value.median / ceiling.median (or the inverse for "lower is better" figures, stated in `target`). */
  ratio: number;
  target?: string;
  /** Whether the target is met; undefined when the figure has no target. */
  met?: boolean;
  notes?: string;
  /** A least-squares line through measured points (scaling and memory figures); optional. */
  fit?: FigureFit;
}

/** `y = a + b·x` fitted to `points` ([x, y] pairs), with the names and units of x and y. */
export interface FigureFit extends LinearFit {
  x: string;
  y: string;
  points: [number, number][];
}

export interface LinearFit {
  /** Intercept: y at x = 0. */
  a: number;
  /** Slope: change of y per unit of x. */
  b: number;
  /** Coefficient of determination, 1 - SSres/SStot (1 when y has no spread and the line is exact). */
  r2: number;
  /** Standard error of the slope (0 with two points). */
  bErr: number;
  n: number;
}

/**
 * Ordinary least squares of y on x. Needs at least two distinct x. R² says how much of
 * y's spread the line explains: near 0 for a flat but noisy series, so read it next to
 * `b` and `bErr`, never alone.
 */
export function linearFit(xs: readonly number[], ys: readonly number[]): LinearFit {
  const n = xs.length;
  if (n !== ys.length) throw new Error(`linearFit: ${n} x values but ${ys.length} y values`);
  if (n < 2) throw new Error('linearFit: needs at least two points');
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx === 0) throw new Error('linearFit: needs at least two distinct x values');
  const b = sxy / sxx;
  const a = my - b * mx;
  let ssRes = 0;
  for (let i = 0; i < n; i++) {
    const r = ys[i]! - (a + b * xs[i]!);
    ssRes += r * r;
  }
  const r2 = syy === 0 ? (ssRes === 0 ? 1 : 0) : 1 - ssRes / syy;
  const bErr = n > 2 ? Math.sqrt(ssRes / (n - 2) / sxx) : 0;
  return { a, b, r2, bErr, n };
}

export function stat(samples: number[]): Stat {
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
}

export interface RateOptions {
  runs?: number;
  runMs?: number;
  warmupMs?: number;
}

/**
 * Measures a synchronous operation's rate: `step()` does some work and returns how many
 * operations it did; it is called repeatedly for `runMs`, `runs` times after a warm-up.
 */
export function measureRate(step: () => number, opts: RateOptions = {}): Stat {
  const runs = opts.runs ?? 5;
  const runMs = opts.runMs ?? 1000;
  const warmupMs = opts.warmupMs ?? 300;
  const timed = (ms: number): number => {
    const end = performance.now() + ms;
    let ops = 0;
    const t0 = performance.now();
    while (performance.now() < end) ops += step();
    return (ops * 1000) / (performance.now() - t0);
  };
  timed(warmupMs);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(timed(runMs));
  return stat(samples);
}

/**
 * Nanoseconds the calling thread has spent on a CPU (Linux /proc/thread-self/schedstat).
 * Rates per CPU-second of one thread hold up better than wall-clock rates when other
 * work shares the cores (they still include time lost to a busy hyperthread sibling).
 */
export function threadCpuNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
}

/** Like measureRate, but operations per CPU-second of the calling thread. */
export function measureCpuRate(step: () => number, opts: RateOptions = {}): Stat {
  const runs = opts.runs ?? 5;
  const runMs = opts.runMs ?? 1000;
  const timed = (ms: number): number => {
    const end = performance.now() + ms;
    let ops = 0;
    const c0 = threadCpuNs();
    while (performance.now() < end) ops += step();
    return (ops * 1e9) / (threadCpuNs() - c0);
  };
  timed(opts.warmupMs ?? 300);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(timed(runMs));
  return stat(samples);
}

/**
 * Builds a figure with ratio = value / ceiling. `minRatio` (throughput: at least this
 * share of the ceiling) or `maxRatio` (durations: at most this multiple) set `met`.
 */
export function figure(f: Omit<Figure, 'ratio' | 'met'> & { minRatio?: number; maxRatio?: number }): Figure {
  const ratio = f.value.median / f.ceiling.median;
  let met: boolean | undefined;
  if (f.minRatio !== undefined) met = ratio >= f.minRatio;
  if (f.maxRatio !== undefined) met = ratio <= f.maxRatio;
  const { minRatio: _a, maxRatio: _b, ...rest } = f;
  return { ...rest, ratio, ...(met === undefined ? {} : { met }) };
}

export function fmt(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  if (n >= 10) return n.toFixed(0);
  return n.toFixed(2);
}

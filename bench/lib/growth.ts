/**
 * The growth run shared by bench/memory.bench.ts and bench/scaling.bench.ts: one child
 * process (bench/lib/growth-child.ts, `--expose-gc`) grows a real writer Ledger over
 * RocksDB through accept -> confirm cycles, then to 100,000 pending calls and 1,000,000
 * stored events, sampling memory after GC; then it times intake, block
 * application and event reads in rounds alternating between that ledger and two small
 * ones (1,000 and 10,000 pending calls). The child holds nothing else that grows, so the
 * bench process's own heap and the driver's bookkeeping do not show in the figures.
 *
 * Where RocksDB lives: SVC_BENCH_GROWTH_DIR, else /dev/shm (tmpfs) where there is one.
 * On tmpfs the ledger and RocksDB run exactly as on disk (same options, synced writes)
 * but fsync costs nothing, so the run takes CPU time only and other processes' disk I/O
 * on a shared machine does not show in it. Memory figures do not depend on it (RocksDB
 * reads files with pread into its own cache; tmpfs pages are not the process's RSS).
 * The timings then leave out the disk's fsync latency, a constant per accept and per
 * block that the intake and core benches measure on disk.
 *
 * Both benches need the same 100k-call fill (most of the run's time), so the run is
 * done once per bench process: in `npm run bench` the second bench reuses the first's
 * result. `npm run bench -- scaling` alone runs it too.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Mem {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface GrowthResult {
  /** Sizes the run used (constants of growth-child.ts) and where RocksDB lived. */
  config: {
    dbDir: string;
    pending: number;
    events: number;
    eventsPerCall: number;
    eventCallsPerBlock: number;
    blockCalls: number;
    fillChunk: number;
    cycles: number;
    cycleCalls: number;
    intakeCalls: number;
    page: number;
    readsPerRun: number;
  };
  /** Before the fill: two contracts deployed, 1,000 senders minted, warm-up and cycles done. */
  baseline: Mem;
  /** While pending calls are accepted (none confirmed): every 10,000. */
  pendingSamples: { pending: number; mem: Mem; dbBytes: number; seconds: number; gcMs: number }[];
  /** While events are stored, the pending calls still held: every 100,000 events. */
  eventSamples: { events: number; mem: Mem; dbBytes: number }[];
  /** Three samples with 100,000 pending calls and 1,000,000 stored events. */
  absolute: Mem[];
  /** What the ledger held at those samples (events: every stored event, warm-up included). */
  absoluteCounts: { pending: number; events: number; dbBytes: number };
  /** After each accept -> confirm cycle of `cycleCalls` transfers (before the fill). */
  cycleSamples: { cycle: number; mem: Mem; acceptS: number; applyMs: number }[];
  /** Every chunk of the fill, accepted one call at a time (the writer's serial queue): time inside acceptCall. */
  intake: { pending: number; calls: number; usPerCall: number; gcMs: number; canaryMs: number }[];
  /**
   * Alternating rounds over three ledgers (index `size` into `sizes`: pending calls held
   * when the rounds began; `events`: events each had stored). Intake: µs per serial
   * acceptCall; apply: µs per transfer of a 1,000-transfer block (pending counted before
   * the block's own calls were accepted); reads: µs per page of `page` events.
   */
  rounds: {
    sizes: number[];
    events: number[];
    intake: { size: number; pending: number; usPerOp: number; canaryMs: number }[];
    apply: { size: number; pending: number; usPerOp: number; canaryMs: number }[];
    reads: { size: number; events: number; usPerOp: number; canaryMs: number }[];
  };
  /** borsh(envelope) of one benchmark transfer, as received. */
  envelopeBytes: number;
  /**
   * Wall time per phase, seconds. gcMs fields: GC pauses in that window (forced GCs
   * excluded); canaryMs: a fixed ~3 ms CPU task timed just before it (machine load).
   */
  phases: Record<string, number>;
  /** CPU time per phase, seconds, every thread of the child (RocksDB's included). */
  phaseCpu: Record<string, number>;
}

let cached: Promise<GrowthResult> | null = null;

/** The growth run's result; the child runs at most once per process. */
export function growth(): Promise<GrowthResult> {
  cached ??= runChild();
  return cached;
}

function runChild(): Promise<GrowthResult> {
  const script = fileURLToPath(new URL('./growth-child.js', import.meta.url));
  const dbDir = process.env['SVC_BENCH_GROWTH_DIR'] ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  // The ledger fixture makes its directory under os.tmpdir(), which follows TMPDIR.
  const child = fork(script, [], { execArgv: ['--expose-gc'], env: { ...process.env, TMPDIR: dbDir }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result: GrowthResult | null = null;
    child.on('message', (m: { result?: GrowthResult }) => {
      if (m.result) result = m.result;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (result && code === 0) resolve(result);
      else reject(new Error(`growth child exited with ${signal ?? code} before reporting`));
    });
  });
}

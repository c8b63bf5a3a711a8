/**
 * Child process of the growth run (see growth.ts; started with --expose-gc). Writer
 * Ledgers over RocksDB, driven through the ledger fixture only (acceptCall, applyBlock,
 * call and event look-ups). One "big" ledger carries the memory figures:
 *
 * 1. cycles: sustained load: accept 500 transfers, confirm them in one block, sample
 *    memory after GC; repeated. (First, while the heap is small and a full GC cheap.)
 * 2. fill: 100,000 bank transfers accepted and left pending (their anchors do not
 *    confirm), one at a time as the writer does, in timed chunks of 500. Memory every
 *    10,000.
 * 3. events: with the 100,000 calls still pending, calls to the Emitter fixture (2,000
 *    events each, 10 calls per block) store 1,000,000 events. Memory every 100,000.
 * 4. absolute: three samples with 100,000 pending calls and 1,000,000 stored events.
 *
 * Then the scaling figures (after every memory sample, so they add nothing to those):
 * two small ledgers are filled to 1,000 and 10,000 pending calls (and 2,000 and 10,000
 * events), and intake, block application and event-page reads run in rounds that
 * alternate between the three ledgers (1k, 10k, 100k pending): load from other processes
 * then falls on every size alike, and the ratios hold on a busy machine.
 *
 * Calls are built by the fixture apart from accepting them (see `Node`). Results go to
 * the parent over IPC; logs go to stderr.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';
import type { Transaction } from 'bitcoinjs-lib';
import { configureLogging } from '../../src/log.js';
import { encodeEnvelope } from '@svc-node/protocol/envelope';
import type { Value } from '@svc-node/protocol/value';
import type { Ledger } from '../../src/writer/ledger/index.js';
import { LedgerBench, compileContract, id32 } from '../../test/helpers/ledger-fixture.js';
import type { GrowthResult, Mem } from './growth.js';

configureLogging({ filter: 'warn', sink: (l) => process.stderr.write(l + '\n') });

/** The sizes: 100,000 pending calls, 1,000,000 stored events. */
const PENDING = 100_000;
const EVENTS = 1_000_000;
/** Emitter.burst() emits this many events (test/fixtures/contracts/emitter.svc). */
const EVENTS_PER_CALL = 2000;
/** 20,000 events per block: keeps each block's batch (and its transient memory) moderate. */
const EVENT_CALLS_PER_BLOCK = 10;
/** Accounts that send transfers, as in core.bench.ts. */
const SENDERS = 1000;
/** Transfers per block for block application, as in core.bench.ts. */
const BLOCK_CALLS = 1000;
/** Fill chunks: built, then accepted one at a time and timed (200 points from 0 to 100k). */
const FILL_CHUNK = 500;
/** Memory samples: every 10,000 pending calls, every 100,000 events. */
const PENDING_SAMPLE_EVERY = 10_000;
const EVENT_SAMPLE_EVERY = 100_000;
/**
 * Sustained load: cycles of accept -> confirm. Many small cycles rather than a few big
 * ones: the slope's standard error falls with the number of samples, and RSS carries a
 * sawtooth of a few MiB from RocksDB's write buffers whatever the cycle size. The first
 * half (8,000 calls) lets RocksDB's memory on a young database reach its working size;
 * the memory bench fits the second half. SVC_BENCH_GROWTH_CYCLES runs more, for a longer
 * window after the warm-up.
 */
const CYCLES = Number(process.env['SVC_BENCH_GROWTH_CYCLES'] ?? 32);
const CYCLE_CALLS = 500;
/** Transfers accepted and confirmed before the baseline, so JIT code is already there. */
const WARMUP_CALLS = 300;
/** The small ledgers of the scaling rounds: pending calls and emitter calls (2,000 events each). */
const SMALL = [
  { pending: 1_000, emitterCalls: 1 },
  { pending: 10_000, emitterCalls: 5 },
];
/**
 * Alternating rounds over the three ledgers. Intake: serial accepts per ledger per round
 * (many short rounds: bursts of load from other processes then hit few of them; the
 * small ledgers grow by 960 pending calls over the rounds).
 */
const INTAKE_ROUNDS = 16;
const INTAKE_CALLS = 60;
/** Block application: one 1,000-transfer block per ledger per round. */
const APPLY_ROUNDS = 3;
/** Event pages (100 events from a random position, one at a time as the writer serves them). */
const READ_ROUNDS = 5;
const READS_PER_RUN = 40;
const PAGE = 100;

const gcNow = (globalThis as { gc?: () => void }).gc;
if (!gcNow) throw new Error('growth-child needs --expose-gc');

const canaryInput = Buffer.alloc(64 * 1024, 7);
/**
 * A fixed CPU task (64 SHA-256 hashes of 64 KiB, ~3 ms on a quiet core), timed next to
 * every measured window: when it slows down too, the machine is busy, not the ledger.
 */
function canary(): number {
  const t0 = performance.now();
  for (let i = 0; i < 64; i++) createHash('sha256').update(canaryInput).digest();
  return performance.now() - t0;
}

/** Garbage-collection pause time since start, ms (forced collections of sample() left out). */
const gcTotals = { all: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const d = (e as unknown as { detail: { kind: number; flags: number } }).detail;
    if (d.flags & perf.NODE_PERFORMANCE_GC_FLAGS_FORCED) continue;
    gcTotals.all += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

/**
 * Memory after a full GC. Twice, with a turn of the event loop between: RocksDB's
 * batch objects release the JS buffers they reference from native finalizers that run
 * after the collection that found them dead, so one GC leaves up to a block's worth of
 * buffers (several MiB) alive at random.
 */
async function sample(): Promise<Mem> {
  gcNow!();
  await new Promise((r) => setImmediate(r));
  gcNow!();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

const key = (b: Uint8Array): Value => ({ type: 'key', value: b });
const u64 = (n: number): Value => ({ type: 'u64', value: BigInt(n) });
const senders = Array.from({ length: SENDERS }, (_, i) => id32('sender', i));
const emitterCaller = id32('emitter-caller', 0);

type Rec = Parameters<Ledger['acceptCall']>[0];

/**
 * One ledger with the Bank and Emitter fixtures deployed and every sender minted.
 *
 * Records are built apart from accepting them: while `captured` is set, the fixture's
 * call to acceptCall lands here and only keeps the record. Accepting them afterwards, one
 * at a time, leaves the ledger's allocations unmixed with the fixture's (bitcoinjs,
 * borsh, hex), as in the writer thread, which receives records the core built. That
 * matters: a pending call keeps views into 8 KiB Buffer-pool slabs alive, so whatever
 * else allocates between two accepts changes what a pending call holds (about 2.5x here).
 */
class Node {
  private captured: Rec[] | null = null;
  private readonly accept: Ledger['acceptCall'];
  private callId = 1n;
  private transfers = 0;
  /** Where the emitter's events are: [height, calls in that block]. */
  readonly eventBlocks: [number, number][] = [];
  events = 0;

  private constructor(
    readonly lb: LedgerBench,
    readonly bank: string,
    readonly emitter: string,
  ) {
    const ledger = lb.ledger;
    this.accept = ledger.acceptCall.bind(ledger);
    ledger.acceptCall = async (rec) => {
      if (!this.captured) return this.accept(rec);
      this.captured.push(rec);
      return { created: true, record: rec, replayFrom: null } as unknown as Awaited<ReturnType<Ledger['acceptCall']>>;
    };
  }

  static async open(): Promise<Node> {
    const lb = await LedgerBench.open();
    const bank = await lb.deploy(compileContract('test/fixtures/contracts/bank.svc').artifact as never);
    const emitter = await lb.deploy(compileContract('test/fixtures/contracts/emitter.svc').artifact as never);
    const node = new Node(lb, bank, emitter);
    const mints: Transaction[] = [];
    for (const s of senders) mints.push(await lb.call(bank, 'mint', [key(s), u64(1_000_000_000)], s, node.callId++));
    await lb.block(mints);
    return node;
  }

  get pending(): number {
    return this.lb.ledger.pendingCount;
  }

  /** Builds n transfers: their records (not yet accepted) and anchoring transactions. */
  async build(n: number): Promise<{ recs: Rec[]; txs: Transaction[] }> {
    const recs: Rec[] = [];
    const txs: Transaction[] = [];
    this.captured = recs;
    try {
      for (let j = 0; j < n; j++) {
        const i = this.transfers++;
        txs.push(await this.lb.call(this.bank, 'transfer', [key(senders[(i * 7 + 3) % SENDERS]!), u64(1)], senders[i % SENDERS]!, this.callId++));
      }
    } finally {
      this.captured = null;
    }
    return { recs, txs };
  }

  /** Accepts records one at a time; µs inside acceptCall per call (awaits included: the writer is busy for all of it). */
  async acceptSerial(recs: Rec[]): Promise<number> {
    const t0 = performance.now();
    for (const rec of recs) await this.accept(rec);
    return ((performance.now() - t0) * 1000) / recs.length;
  }

  /** Builds and accepts n transfers; returns their anchors. */
  async transfer(n: number): Promise<Transaction[]> {
    const { recs, txs } = await this.build(n);
    await this.acceptSerial(recs);
    return txs;
  }

  /** Fills to `target` pending calls in chunks; `each` sees every chunk's µs per call. */
  async fill(target: number, each?: (pendingBefore: number, usPerCall: number, canaryMs: number, gcMs: number) => Promise<void>): Promise<void> {
    while (this.pending < target) {
      const before = this.pending;
      const { recs } = await this.build(Math.min(FILL_CHUNK, target - before));
      const canaryMs = canary();
      const gc0 = gcTotals.all;
      const us = await this.acceptSerial(recs);
      await each?.(before, us, canaryMs, gcTotals.all - gc0);
    }
  }

  /** One block of `calls` Emitter.burst() calls. */
  async emit(calls: number): Promise<void> {
    const txs: Transaction[] = [];
    for (let i = 0; i < calls; i++) txs.push(await this.lb.call(this.emitter, 'burst', [], emitterCaller, this.callId++));
    await this.lb.block(txs);
    this.eventBlocks.push([this.lb.height, calls]);
    this.events += calls * EVENTS_PER_CALL;
  }

  /** `n` pages of PAGE events from random positions, one at a time; pages per second. */
  async readPages(n: number, rand: () => number): Promise<number> {
    const ledger = this.lb.ledger;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const [height, calls] = this.eventBlocks[rand() % this.eventBlocks.length]!;
      const after: [number, number, number] = [height, 1 + (rand() % calls), rand() % (EVENTS_PER_CALL - PAGE)];
      const page = await ledger.events(this.emitter, 0, 0xffffffff, after, PAGE, null);
      if (page.length !== PAGE) throw new Error(`event page of ${page.length} events, expected ${PAGE}`);
    }
    return (n * 1000) / (performance.now() - t0);
  }

  close(): Promise<void> {
    return this.lb.close();
  }
}

async function main(): Promise<GrowthResult> {
  const phases: Record<string, number> = {};
  const phaseCpu: Record<string, number> = {};
  let phaseStart = performance.now();
  let cpuStart = process.cpuUsage();
  const phase = (name: string): void => {
    const now = performance.now();
    const cpu = process.cpuUsage(cpuStart);
    phases[name] = (now - phaseStart) / 1000;
    phaseCpu[name] = (cpu.user + cpu.system) / 1e6;
    phaseStart = now;
    cpuStart = process.cpuUsage();
    process.stderr.write(`  growth: ${name} done in ${phases[name]!.toFixed(1)} s (${phaseCpu[name]!.toFixed(1)} s CPU, all threads)\n`);
  };

  const big = await Node.open();
  const others: Node[] = [];
  try {
    // Warm-up: one confirmed block of transfers and one of events.
    await big.lb.block(await big.transfer(WARMUP_CALLS));
    await big.emit(1);
    phase('setup');

    // ------------------------------------------------------------ 1. cycles
    const cycleSamples: GrowthResult['cycleSamples'] = [{ cycle: 0, mem: await sample(), acceptS: 0, applyMs: 0 }];
    let lastTx: Transaction | null = null;
    for (let c = 1; c <= CYCLES; c++) {
      const t0 = performance.now();
      const txs = await big.transfer(CYCLE_CALLS);
      const acceptS = (performance.now() - t0) / 1000;
      const { ms } = await big.lb.block(txs);
      lastTx = txs[txs.length - 1]!;
      cycleSamples.push({ cycle: c, mem: await sample(), acceptS, applyMs: ms });
    }
    if (big.pending !== 0) throw new Error(`${big.pending} cycle calls still pending`);
    const last = await big.lb.ledger.call(lastTx!.getId());
    if (last?.status !== 'executed') throw new Error(`the last cycle's last transfer is ${last?.status ?? 'missing'}, not executed`);
    phase('cycles');

    // ------------------------------------------------------------ 2. fill
    const baseline = await sample();
    const dir = big.lb.dir;
    const pendingSamples: GrowthResult['pendingSamples'] = [{ pending: 0, mem: baseline, dbBytes: dirBytes(dir), seconds: 0, gcMs: 0 }];
    const intake: GrowthResult['intake'] = [];
    if (PENDING % PENDING_SAMPLE_EVERY !== 0 || PENDING_SAMPLE_EVERY % FILL_CHUNK !== 0) throw new Error('sample points must fall on chunk ends');
    let segStart = performance.now();
    let segGc = gcTotals.all;
    await big.fill(PENDING, async (before, usPerCall, canaryMs, gcMs) => {
      intake.push({ pending: before + FILL_CHUNK / 2, calls: FILL_CHUNK, usPerCall, gcMs, canaryMs });
      const now = big.pending;
      if (now % PENDING_SAMPLE_EVERY === 0) {
        pendingSamples.push({ pending: now, mem: await sample(), dbBytes: dirBytes(dir), seconds: (performance.now() - segStart) / 1000, gcMs: gcTotals.all - segGc });
        segStart = performance.now();
        segGc = gcTotals.all;
      }
    });
    phase('fill');

    // ------------------------------------------------------------ 3. events
    const eventSamples: GrowthResult['eventSamples'] = [{ events: 0, mem: pendingSamples[pendingSamples.length - 1]!.mem, dbBytes: dirBytes(dir) }];
    for (let done = 0; done < EVENTS; ) {
      await big.emit(EVENT_CALLS_PER_BLOCK);
      done += EVENT_CALLS_PER_BLOCK * EVENTS_PER_CALL;
      if (done % EVENT_SAMPLE_EVERY === 0) eventSamples.push({ events: done, mem: await sample(), dbBytes: dirBytes(dir) });
    }
    phase('events');

    // ------------------------------------------------------------ 4. absolute
    const absolute = [await sample(), await sample(), await sample()];
    // Every stored event: the emitter's, plus one Transfer per confirmed transfer (warm-up and cycles).
    const absoluteCounts = { pending: big.pending, events: big.events + WARMUP_CALLS + CYCLES * CYCLE_CALLS, dbBytes: dirBytes(dir) };
    if (absoluteCounts.pending !== PENDING) throw new Error(`expected ${PENDING} pending calls, the ledger holds ${absoluteCounts.pending}`);
    phase('absolute');

    // ------------------------------------------------------------ 5. scaling rounds
    for (const s of SMALL) {
      const n = await Node.open();
      others.push(n);
      await n.lb.block(await n.transfer(WARMUP_CALLS));
      await n.fill(s.pending);
      await n.emit(s.emitterCalls);
    }
    phase('small ledgers');
    const nodes = [...others, big];
    /** Each round visits the ledgers in a rotated order, so none is always first or last. */
    const rounds = async (count: number, visit: (n: Node, size: number) => Promise<void>): Promise<void> => {
      for (let r = 0; r < count; r++) {
        for (let j = 0; j < nodes.length; j++) {
          const i = (j + r) % nodes.length;
          await visit(nodes[i]!, i);
        }
      }
    };
    const sizes = nodes.map((n) => n.pending);
    const roundsIntake: GrowthResult['rounds']['intake'] = [];
    await rounds(INTAKE_ROUNDS, async (n, size) => {
      const { recs } = await n.build(INTAKE_CALLS);
      const pending = n.pending;
      const canaryMs = canary();
      roundsIntake.push({ size, pending, usPerOp: await n.acceptSerial(recs), canaryMs });
    });
    const roundsApply: GrowthResult['rounds']['apply'] = [];
    await rounds(APPLY_ROUNDS, async (n, size) => {
      const pending = n.pending;
      const txs = await n.transfer(BLOCK_CALLS);
      const canaryMs = canary();
      const { ms } = await n.lb.block(txs);
      roundsApply.push({ size, pending, usPerOp: (ms * 1000) / BLOCK_CALLS, canaryMs });
    });
    let seed = 0x9e3779b9;
    const rand = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    for (const n of nodes) await n.readPages(20, rand); // warm-up
    const roundsReads: GrowthResult['rounds']['reads'] = [];
    await rounds(READ_ROUNDS, async (n, size) => {
      const canaryMs = canary();
      const perS = await n.readPages(READS_PER_RUN, rand);
      roundsReads.push({ size, events: n.events, usPerOp: 1e6 / perS, canaryMs });
    });
    phase('scaling rounds');

    const envelopeBytes = encodeEnvelope({
      version: 1,
      contractId: Buffer.from(big.bank, 'hex'),
      function: 'transfer',
      args: [key(senders[1]!), u64(1)],
      caller: senders[0]!,
      callId: 1n,
      outpointTxid: id32('utxo', 1),
      outpointVout: 0,
      signature: new Uint8Array(64),
    }).length;

    return {
      config: {
        dbDir: tmpdir(),
        pending: PENDING,
        events: EVENTS,
        eventsPerCall: EVENTS_PER_CALL,
        eventCallsPerBlock: EVENT_CALLS_PER_BLOCK,
        blockCalls: BLOCK_CALLS,
        fillChunk: FILL_CHUNK,
        cycles: CYCLES,
        cycleCalls: CYCLE_CALLS,
        intakeCalls: INTAKE_CALLS,
        page: PAGE,
        readsPerRun: READS_PER_RUN,
      },
      baseline,
      pendingSamples,
      eventSamples,
      absolute,
      absoluteCounts,
      cycleSamples,
      intake,
      rounds: { sizes, events: nodes.map((n) => n.events), intake: roundsIntake, apply: roundsApply, reads: roundsReads },
      envelopeBytes,
      phases,
      phaseCpu,
    };
  } finally {
    for (const n of [...others, big]) await n.close();
  }
}

main().then(
  (result) => process.send!({ result }, () => process.exit(0)),
  (e: unknown) => {
    process.stderr.write(`growth child failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);

/**
 * Block application through the writer's ledger (VM, state tree, RocksDB batch with
 * undo log, synced) against VM-only execution of the same transfers; and a 6-block
 * reorg (roll back through undo logs, replay from the journal) against applying the
 * same 6 blocks once. Issue 6 target: >= 20,000 transfers/s; issue 9: >= 25% of
 * VM-only, reorg <= 3x.
 */
import { execute } from '../src/vm/execute.js';
import { verifyArtifact } from '../src/vm/verifier.js';
import type { Host, Program } from '../src/vm/types.js';
import type { Value } from '../src/protocol/value.js';
import { figure, measureCpuRate, measureRate, stat, threadCpuNs, type Figure } from './harness.js';
import { LedgerBench, compileContract, id32 } from './lib/ledger-fixture.js';

/** A block of this many transfers: a busy block of small contract calls. */
const BLOCK_CALLS = 1000;
/** Accounts that send; each holds enough to send in every block. */
const SENDERS = 1000;
const RUNS = 6;

const key = (b: Uint8Array): Value => ({ type: 'key', value: b });
const u64 = (n: number): Value => ({ type: 'u64', value: BigInt(n) });

function vmOnlyRate(program: Program, contractId: Uint8Array): { wall: ReturnType<typeof measureRate>; cpu: ReturnType<typeof measureRate> } {
  const storage = new Map<string, Uint8Array>();
  let size = 0;
  const host: Host = {
    program: () => program,
    storageGet: (_id, k) => storage.get(Buffer.from(k).toString('hex')),
    storageSize: () => size,
  };
  const ctx = (caller: Uint8Array) => ({ height: 1, txid: new Uint8Array(32), inputs: [], outputs: [], caller, callId: 1n });
  const senders = Array.from({ length: SENDERS }, (_, i) => id32('sender', i));
  const apply = (writes: { key: Uint8Array; value: Uint8Array | null }[]) => {
    for (const w of writes) {
      const k = Buffer.from(w.key).toString('hex');
      const prev = storage.get(k);
      size -= prev ? w.key.length + prev.length : 0;
      if (w.value) {
        storage.set(k, w.value);
        size += w.key.length + w.value.length;
      } else storage.delete(k);
    }
  };
  for (const s of senders) {
    const r = execute({ contractId, function: 'mint', args: [key(s), u64(1_000_000_000)], context: ctx(s), host });
    if (r.status !== 'executed') throw new Error('mint failed');
    apply(r.writes);
  }
  let i = 0;
  const step = (): number => {
    for (let j = 0; j < 100; j++, i++) {
      const from = senders[i % SENDERS]!;
      const to = senders[(i * 7 + 3) % SENDERS]!;
      const r = execute({ contractId, function: 'transfer', args: [key(to), u64(1)], context: ctx(from), host });
      if (r.status !== 'executed') throw new Error(`transfer failed: ${r.status === 'failed' ? r.message : ''}`);
      apply(r.writes);
    }
    return 100;
  };
  return { wall: measureRate(step), cpu: measureCpuRate(step, { runs: 3 }) };
}

export default async function run(): Promise<Figure[]> {
  const compiled = compileContract('test/fixtures/contracts/bank.svc');
  const artifact = compiled.artifact as unknown as Parameters<LedgerBench['deploy']>[0];
  const verified = verifyArtifact(artifact as never);
  if (!verified.ok) throw new Error('bank does not verify');

  const vm = vmOnlyRate(verified.program, id32('vm-only', 0));

  const lb = await LedgerBench.open();
  try {
    const cid = await lb.deploy(artifact);
    const senders = Array.from({ length: SENDERS }, (_, i) => id32('sender', i));
    let callId = 1n;
    const mintTxs = [];
    for (const s of senders) mintTxs.push(await lb.call(cid, 'mint', [key(s), u64(1_000_000_000)], s, callId++));
    await lb.block(mintTxs);

    // Every call is accepted first, then the blocks are applied back to back, as during
    // catch-up: each block's time includes waiting for the previous block's write, and
    // the last one's includes its own (flushBlocks).
    const blocks = [];
    for (let r = 0; r < RUNS; r++) {
      const txs = [];
      for (let i = 0; i < BLOCK_CALLS; i++) {
        const from = senders[i]!;
        const to = senders[(i * 7 + r + 3) % SENDERS]!;
        txs.push(await lb.call(cid, 'transfer', [key(to), u64(1)], from, callId++));
      }
      blocks.push(txs);
    }
    const rates: number[] = [];
    const cpuRates: number[] = [];
    const applyMs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      let { ms, cpuNs } = await lb.block(blocks[r]!);
      if (r === RUNS - 1) {
        const t0 = performance.now();
        const c0 = threadCpuNs();
        await lb.ledger.flushBlocks();
        ms += performance.now() - t0;
        cpuNs += threadCpuNs() - c0;
      }
      // This thread's CPU only (RocksDB writes on its own threads): the writer thread's cost.
      cpuRates.push((BLOCK_CALLS * 1e9) / cpuNs);
      applyMs.push(ms);
      rates.push((BLOCK_CALLS * 1000) / ms);
    }
    const applied = stat(rates);
    const status = await lb.ledger.call((await lb.ledger.callsOf(cid, SENDERS + RUNS * BLOCK_CALLS - 1, 1))[0]!.txid);
    if (status?.status !== 'executed') throw new Error('the last transfer did not execute');

    // Reorg: roll back the last 6 blocks through the undo logs and replay them.
    const onceMs = applyMs.slice(-6).reduce((a, b) => a + b, 0);
    const reorgMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await lb.ledger.replayFrom(lb.height - 5);
      reorgMs.push(performance.now() - t0);
    }

    return [
      figure({
        name: 'block application (1000-transfer blocks, RocksDB synced batch)',
        unit: 'transfers/s',
        value: applied,
        ceiling: { name: 'VM-only transfers/s, same contract', ...vm.wall },
        minRatio: 0.25,
        target: '>= 25% of VM-only and >= 20k/s',
        notes: `blocks applied back to back as in catch-up (each synced batch written while the next block is computed); absolute target 20,000/s ${applied.median >= 20_000 ? "met" : "missed"}`,
      }),
      figure({
        name: "block application per CPU-second of the applying thread (RocksDB's own threads not counted)",
        unit: 'transfers/cpu-s',
        value: stat(cpuRates),
        ceiling: { name: 'VM-only transfers per CPU-second, same contract', ...vm.cpu },
        minRatio: 0.25,
        target: '>= 25% of VM-only (load-robust form)',
        notes: 'from /proc/thread-self/schedstat; holds up when other work shares the cores',
      }),
      figure({
        name: 'reorg: roll back and replay 6 blocks of 1000 transfers',
        unit: 'ms',
        value: stat(reorgMs),
        ceiling: { name: 'apply the same 6 blocks once (ms)', median: onceMs, min: onceMs, max: onceMs },
        maxRatio: 3,
        target: '<= 3x applying once',
      }),
    ];
  } finally {
    await lb.close();
  }
}

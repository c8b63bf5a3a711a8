/**
 * Block application through the writer's ledger (VM, state tree, RocksDB batch with
 * undo log, synced) against VM-only execution of the same transfers; and a 6-block
 * reorg (roll back through undo logs, replay from the journal) against applying the
 * same 6 blocks once. Issue 6 target: >= 20,000 transfers/s; issue 9: >= 25% of
 * VM-only, reorg <= 3x.
 */
import { execute } from '../src/vm/execute.js';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import type { Host, Program } from '@svc-node/protocol/vm/types';
import type { Value } from '@svc-node/protocol/value';
import { figure, measureCpuRate, measureRate, stat, threadCpuNs, type Figure } from './harness.js';
import { LedgerBench, compileContract, id32 } from '../test/helpers/ledger-fixture.js';
import { StateTree } from '@svc-node/protocol/state/state-tree';
import { decisionsRoot, decodeDecision, encodeDecision } from '@svc-node/protocol/state/decisions';
import { blockDecisions } from '../src/writer/store/index.js';

/** A block of this many transfers: a busy block of small contract calls. */
const BLOCK_CALLS = 1000;
/** Accounts that send; each holds enough to send in every block. */
const SENDERS = 1000;
const RUNS = 6;
/**
 * Blocks of the same shape applied first and not counted, as the VM-only ceiling has its
 * warm-up: the first blocks run colder code (without them the slowest of six measured
 * blocks read 2-3x below the median; min-max 6.5k-23.8k became 14.9k-19.2k).
 */
const WARMUP_BLOCKS = 2;

/** Contract sizes (storage entries) of the state-root figure: its small and large case. */
const ROOT_SMALL = 1_000;
const ROOT_LARGE = 100_000;
/** State-root rounds per size (alternating), each one UTXO-token-shaped block. */
const ROOT_ROUNDS = 7;

/**
 * Calls left pending (never mined) around the 1-block reorg figure: its small and large
 * case. A rewind used to reload every pending call, so its cost grew with this number.
 */
const PENDING_SMALL = 1_000;
const PENDING_LARGE = 100_000;
/** 1-block reorgs measured per case. */
const PENDING_REORGS = 5;

const key = (b: Uint8Array): Value => ({ type: 'key', value: b });

/**
 * The state root's cost in a block of UTXO-token transfers, by contract size: 1,000 spent
 * outpoints deleted and 2,000 new ones inserted (36-byte keys, 16-byte values), then the
 * root. Rounds alternate between a contract of ROOT_SMALL and one of ROOT_LARGE entries,
 * so machine load falls on both alike. Returns ms per block for each.
 */
/**
 * The commitment a block's application adds for its decisions, on this thread's CPU: the
 * leaves of the last applied block (read back from the store and decoded, not timed)
 * encoded again and their decisions root computed, as applyBlock does once per block.
 */
async function decisionCommitmentCpuMs(lb: LedgerBench): Promise<{ ms: ReturnType<typeof stat>; leaves: number }> {
  const raw = await lb.ledger.db.get(blockDecisions.key(lb.height));
  if (!raw) throw new Error('the last block stored no decisions');
  const stored = blockDecisions.decode(raw).map(([txid, leaf]) => ({ txid: Uint8Array.from(txid), decision: decodeDecision(leaf) }));
  const rounds: number[] = [];
  let bytes = 0;
  for (let r = 0; r < WARMUP_BLOCKS + RUNS * 3; r++) {
    const c0 = threadCpuNs();
    const leaves = stored.map((d): [Uint8Array, Uint8Array] => [d.txid, encodeDecision(d.decision)]);
    decisionsRoot(leaves);
    const ns = threadCpuNs() - c0;
    bytes = leaves.reduce((a, l) => a + l[1].length, 0);
    if (r >= WARMUP_BLOCKS) rounds.push(ns / 1e6);
  }
  return { ms: stat(rounds), leaves: bytes };
}

function stateRootByContractSize(): { small: number[]; large: number[] } {
  // An outpoint-shaped key: 32-byte txid and a 4-byte vout.
  const entry = (tag: number, i: number): Uint8Array => {
    const k = new Uint8Array(36);
    k.set(id32(`utxo-${tag}`, i), 0);
    k[35] = i & 3;
    return k;
  };
  const make = (n: number, tag: number): { tree: StateTree; id: Uint8Array; live: Uint8Array[]; next: number } => {
    const tree = new StateTree();
    const id = id32('root-contract', tag);
    const live = Array.from({ length: n }, (_, i) => entry(tag, i));
    tree.addContract(id, id32('code', 0), live.map((k) => [k, new Uint8Array(16).fill(1)] as [Uint8Array, Uint8Array]));
    tree.root();
    return { tree, id, live, next: n };
  };
  const cases = [make(ROOT_SMALL, 1), make(ROOT_LARGE, 2)];
  const out = { small: [] as number[], large: [] as number[] };
  for (let r = 0; r < ROOT_ROUNDS; r++) {
    cases.forEach((c, which) => {
      const t0 = performance.now();
      for (let i = 0; i < 1000; i++) {
        const at = (r * 1000 + i) % c.live.length;
        c.tree.setStorage(c.id, c.live[at]!, null);
        c.live[at] = entry(which + 1, c.next++);
        c.tree.setStorage(c.id, c.live[at]!, new Uint8Array(16).fill(2));
        c.tree.setStorage(c.id, entry(which + 1, c.next++), new Uint8Array(16).fill(3));
      }
      c.tree.root();
      (which === 0 ? out.small : out.large).push(performance.now() - t0);
    });
  }
  // The first round of each warms the JIT.
  return { small: out.small.slice(1), large: out.large.slice(1) };
}
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
    for (let r = 0; r < WARMUP_BLOCKS + RUNS; r++) {
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
    const applyCpuMs: number[] = [];
    for (const b of blocks.slice(0, WARMUP_BLOCKS)) await lb.block(b);
    for (let r = 0; r < RUNS; r++) {
      let { ms, cpuNs } = await lb.block(blocks[WARMUP_BLOCKS + r]!);
      if (r === RUNS - 1) {
        const t0 = performance.now();
        const c0 = threadCpuNs();
        await lb.ledger.flushBlocks();
        ms += performance.now() - t0;
        cpuNs += threadCpuNs() - c0;
      }
      // This thread's CPU only (RocksDB writes on its own threads): the writer thread's cost.
      cpuRates.push((BLOCK_CALLS * 1e9) / cpuNs);
      applyCpuMs.push(cpuNs / 1e6);
      applyMs.push(ms);
      rates.push((BLOCK_CALLS * 1000) / ms);
    }
    const applied = stat(rates);
    const commitment = await decisionCommitmentCpuMs(lb);
    const status = await lb.ledger.call((await lb.ledger.callsOf(cid, SENDERS + (WARMUP_BLOCKS + RUNS) * BLOCK_CALLS - 1, 1))[0]!.txid);
    if (status?.status !== 'executed') throw new Error('the last transfer did not execute');

    // Reorg: roll back the last 6 blocks through the undo logs and replay them.
    const onceMs = applyMs.slice(-6).reduce((a, b) => a + b, 0);
    const reorgMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await lb.ledger.replayFrom(lb.height - 5);
      reorgMs.push(performance.now() - t0);
    }

    // A 1-block reorg (rewind the last block through its undo log, replay it) with few and
    // with many other calls pending: it must cost what the block wrote, not what is pending.
    const oneBlockReorg = async (): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < PENDING_REORGS; i++) {
        const t0 = performance.now();
        await lb.ledger.replayFrom(lb.height);
        out.push(performance.now() - t0);
      }
      return out.slice(1); // the first warms up
    };
    const leavePending = async (n: number): Promise<void> => {
      for (let done = 0; done < n; done += BLOCK_CALLS) {
        const recs = [];
        for (let i = 0; i < BLOCK_CALLS; i++) recs.push(lb.callRecord(cid, 'transfer', [key(senders[(i * 3 + 1) % SENDERS]!), u64(1)], senders[i]!, callId++).rec);
        await lb.ledger.acceptCalls(recs);
      }
    };
    await leavePending(PENDING_SMALL);
    const reorgFew = await oneBlockReorg();
    await leavePending(PENDING_LARGE - PENDING_SMALL);
    const reorgMany = await oneBlockReorg();
    if (lb.ledger.pendingCount !== PENDING_LARGE) throw new Error(`expected ${PENDING_LARGE} pending calls, have ${lb.ledger.pendingCount}`);

    const roots = stateRootByContractSize();
    const blocksPerS = (ms: number[]): ReturnType<typeof stat> => stat(ms.map((x) => 1000 / x));

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
        name: `state root of a UTXO-token block (1,000 outpoints spent, 2,000 created) in a contract of ${ROOT_LARGE / 1000}k entries`,
        unit: 'blocks/s',
        value: blocksPerS(roots.large),
        ceiling: { name: `the same in a contract of ${ROOT_SMALL / 1000}k entries, alternating rounds (blocks/s)`, ...blocksPerS(roots.small) },
        minRatio: 0.25,
        target: '>= 0.25: grows with log(entries); a cost linear in entries would read about 0.02 (issue 6: incremental)',
        notes: `ms per block: ${stat(roots.large).median.toFixed(1)} at ${ROOT_LARGE / 1000}k, ${stat(roots.small).median.toFixed(1)} at ${ROOT_SMALL / 1000}k; the sorted tree replaced in store format 3 rehashed the whole contract on every insertion or deletion (2.2 s at 100k)`,
      }),
      figure({
        name: "the decisions' commitment of a 1000-transfer block (its leaves encoded, its decisions root), CPU of the applying thread",
        unit: 'ms',
        value: commitment.ms,
        ceiling: { name: 'block application CPU per block, same blocks (ms)', ...stat(applyCpuMs) },
        maxRatio: 0.1,
        target: '<= 10% of applying the block: state roots commit to each call\'s decision (docs/STATE.md, "Decisions")',
        notes: `leaves of ${commitment.leaves} bytes per block (${(commitment.leaves / BLOCK_CALLS).toFixed(0)} a call, one event each), written once more per block (bucket decisions)`,
      }),
      figure({
        name: 'reorg: roll back and replay 6 blocks of 1000 transfers',
        unit: 'ms',
        value: stat(reorgMs),
        ceiling: { name: 'apply the same 6 blocks once (ms)', median: onceMs, min: onceMs, max: onceMs },
        maxRatio: 3,
        target: '<= 3x applying once',
      }),
      figure({
        name: `reorg of 1 block (1000 transfers: rewind and replay) with ${PENDING_LARGE / 1000}k other calls pending`,
        unit: 'ms',
        value: stat(reorgMany),
        ceiling: { name: `the same with ${PENDING_SMALL / 1000}k calls pending (ms)`, ...stat(reorgFew) },
        maxRatio: 2,
        target: '<= 2x: a rewind costs what the rewound blocks wrote, not what is pending (a full reload read 100k calls: about 3 s)',
      }),
    ];
  } finally {
    await lb.close();
  }
}

/**
 * VM benchmarks (issue 3): instructions per second on an arithmetic loop against the same loop
 * written directly in TypeScript with the same integer representation (numbers with exact
 * checked fast paths, bigint beyond 2^53), and utxo token transfers per second on one thread
 * with storage in and the write set out.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { compileSource } from '../src/compiler/index.js';
import { execute } from '../src/vm/execute.js';
import type { ExecContext, Host, Program } from '@svc-node/protocol/vm/types';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import { arith } from '../src/vm/handlers.js';
import { OP } from '@svc-node/protocol/vm/isa';
import { figure, measureRate, type Figure } from './harness.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const ITER = 11_000; // 9 instructions per iteration: just under the 100k budget per call

const LOOP_SRC = `contract Bench {
  pub readonly fn arith(seed: u64) -> u64 {
    let s: u64 = seed;
    for i in 0..${ITER} { s = s + i * 3 + 1; }
    return s;
  }
}`;

function program(src: string): Program {
  const c = compileSource(src, 'bench.svc');
  if (!c.ok) throw new Error(c.errors.map((e) => e.message).join('\n'));
  const v = verifyArtifact(c.artifact);
  if (!v.ok) throw new Error(v.reason);
  return v.program;
}

const bin = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');

/**
 * Byte-keyed map without building a string per lookup (string creation and hashing dominate
 * short calls on this box): FNV-1a 32-bit buckets, exact byte comparison inside a bucket.
 */
class BytesMap<V> {
  private buckets = new Map<number, { k: Uint8Array; v: V }[]>();
  private static hash(k: Uint8Array): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < k.length; i++) h = Math.imul(h ^ k[i]!, 0x01000193);
    return h >>> 0;
  }
  private static eq(a: Uint8Array, b: Uint8Array): boolean {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  get(k: Uint8Array): V | undefined {
    const b = this.buckets.get(BytesMap.hash(k));
    if (b) for (const e of b) if (BytesMap.eq(e.k, k)) return e.v;
    return undefined;
  }
  set(k: Uint8Array, v: V): void {
    const h = BytesMap.hash(k);
    const b = this.buckets.get(h);
    if (!b) { this.buckets.set(h, [{ k, v }]); return; }
    for (const e of b) if (BytesMap.eq(e.k, k)) { e.v = v; return; }
    b.push({ k, v });
  }
  delete(k: Uint8Array): void {
    const h = BytesMap.hash(k);
    const b = this.buckets.get(h);
    if (!b) return;
    const i = b.findIndex((e) => BytesMap.eq(e.k, k));
    if (i >= 0) b.splice(i, 1);
    if (b.length === 0) this.buckets.delete(h);
  }
}

class BenchHost implements Host {
  programs = new Map<string, Program>();
  store = new Map<string, BytesMap<Uint8Array>>();
  sizes = new Map<string, number>();
  private lastId: Uint8Array | null = null;
  private lastStore: BytesMap<Uint8Array> | undefined;
  program(c: Uint8Array): Program | undefined {
    return this.programs.get(bin(c));
  }
  storageGet(c: Uint8Array, k: Uint8Array): Uint8Array | undefined {
    if (this.lastId !== c) {
      this.lastId = c;
      this.lastStore = this.store.get(bin(c));
    }
    return this.lastStore?.get(k);
  }
  storageSize(c: Uint8Array): number {
    return this.sizes.get(bin(c)) ?? 0;
  }
}

/** The loop of LOOP_SRC in TypeScript, same representation and the same overflow checks. */
function direct(seed: number): number | bigint {
  let s: number | bigint = seed;
  for (let i = 0; i < ITER; i++) {
    let t: number | bigint = i * 3;
    if (t > 9007199254740991) t = arith(OP.MUL_U64, i, 3);
    let u: number | bigint = typeof s === 'number' && typeof t === 'number' ? s + t : arith(OP.ADD_U64, s, t);
    if (typeof u === 'number' && u > 9007199254740991) u = arith(OP.ADD_U64, s, t);
    let w: number | bigint = typeof u === 'number' ? u + 1 : arith(OP.ADD_U64, u, 1);
    if (typeof w === 'number' && w > 9007199254740991) w = arith(OP.ADD_U64, u, 1);
    s = w;
  }
  return s;
}

export default async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const opts = { runs: 5, runMs: 600, warmupMs: 300 };

  // ---- arithmetic loop ----
  const host = new BenchHost();
  const cid = new Uint8Array(32).fill(1);
  host.programs.set(bin(cid), program(LOOP_SRC));
  const context: ExecContext = { height: 1, txid: new Uint8Array(32), inputs: [], outputs: [], caller: new Uint8Array(32), callId: 0n };
  let seed = 0;
  let instructions = 0;
  const probe = execute({ contractId: cid, function: 'arith', args: [{ type: 'u64', value: 0n }], context, host });
  if (probe.status !== 'executed') throw new Error(`bench loop failed: ${JSON.stringify(probe)}`);
  instructions = probe.instructions;
  if (BigInt(direct(0)) !== probe.result!.value) throw new Error('direct loop disagrees with the VM');
  const vmRate = measureRate(() => {
    const r = execute({ contractId: cid, function: 'arith', args: [{ type: 'u64', value: BigInt(seed++ & 1023) }], context, host });
    return r.instructions;
  }, opts);
  let sink = 0;
  const tsRate = measureRate(() => {
    sink ^= Number(direct(seed++ & 1023)) & 1;
    return instructions; // the same work counted in VM instructions
  }, opts);
  void sink;
  figures.push(
    figure({ name: 'vm arithmetic loop (instructions/s)', unit: 'instr/s', value: vmRate, ceiling: { name: 'same loop in TypeScript, same integer representation', ...tsRate }, target: '>= 30M instr/s', minRatio: 0 }),
  );

  // ---- token transfers ----
  const src = readFileSync(join(repoRoot, 'examples', 'token.svc'), 'utf8');
  const tokenProg = program(src);
  const txid = (n: number, tag: number): Uint8Array => {
    const b = new Uint8Array(32);
    b[0] = n >>> 24; b[1] = n >>> 16; b[2] = n >>> 8; b[3] = n;
    b[31] = tag;
    return b;
  };
  const outputs = [{ value: 546n, script: new Uint8Array(34) }, { value: 546n, script: new Uint8Array(34) }];
  /** A token with `supply`, then transfers in a chain: each spends the change output of the previous one. */
  const tokenRate = (supply: bigint, tag: number) => {
    const T = new Uint8Array(32).fill(tag);
    host.programs.set(bin(T), tokenProg);
    const tstore = new BytesMap<Uint8Array>();
    host.store.set(bin(T), tstore);
    host.sizes.set(bin(T), 20_000);
    const apply = (writes: { key: Uint8Array; value: Uint8Array | null }[]): void => {
      for (const w of writes) {
        if (w.value === null) tstore.delete(w.key);
        else tstore.set(w.key, w.value);
      }
    };
    const init = execute({ contractId: T, function: 'init', args: [{ type: 'u128', value: supply }, { type: 'u64', value: 0n }], context: { ...context, txid: txid(0, tag), outputs }, host });
    if (init.status !== 'executed') throw new Error('token init failed');
    apply(init.writes);
    let n = 0;
    const args = [{ type: 'u64' as const, value: 0n }, { type: 'u128' as const, value: 1n }, { type: 'u64' as const, value: 1n }];
    const transfer = (): number => {
      const ctxN: ExecContext = { height: 2, txid: txid(n + 1, tag), inputs: [{ txid: txid(n, tag), vout: n === 0 ? 0 : 1 }], outputs, caller: context.caller, callId: BigInt(n) };
      const r = execute({ contractId: T, function: 'transfer', args, context: ctxN, host });
      if (r.status !== 'executed') throw new Error(`transfer failed: ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      apply(r.writes);
      n++;
      return 1;
    };
    const chained = measureRate(transfer, opts);
    // Executor view: storage in, write set out (returned, not applied). Spends, round robin,
    // the outpoints (txid k, vout 0) that the chain above funded with 1 token each.
    const funded = n - 1;
    let k = 0;
    const pure = (): number => {
      const src = 1 + (k++ % funded);
      const ctxN: ExecContext = { height: 3, txid: txid(0xffffff, tag), inputs: [{ txid: txid(src, tag), vout: 0 }], outputs, caller: context.caller, callId: BigInt(k) };
      const r = execute({ contractId: T, function: 'transfer', args, context: ctxN, host });
      if (r.status !== 'executed' || r.writes.length !== 2) throw new Error('pure transfer failed');
      return 1;
    };
    return { rate: chained, pure: measureRate(pure, opts), store: tstore };
  };
  const small = tokenRate(21_000_000n * 100_000_000n, 2); // 8 decimals: balances stay below 2^53
  const large = tokenRate(10n ** 30n, 3); // 18 decimals: every balance is a bigint
  // Ceiling: the same storage traffic without the VM (3 reads, 3 writes with key building).
  let m = 0;
  const tstore = small.store;
  const bare = (): number => {
    const k1 = new Uint8Array(45); k1.set([98, 97, 108, 97, 110, 99, 101, 115, 0]); k1.set(txid(m, 9), 9);
    const k2 = k1.slice(); k2[44] = 1;
    const k3 = k1.slice(); k3.set(txid(m + 1, 9), 9);
    const v = tstore.get(k1);
    tstore.get(k2);
    tstore.get(k3);
    tstore.set(k2, v ?? new Uint8Array(16));
    tstore.set(k3, new Uint8Array(16));
    tstore.delete(k1);
    m++;
    return 1;
  };
  const bareRate = measureRate(bare, opts);
  const ceiling = { name: 'same storage reads/writes without the VM', ...bareRate };
  figures.push(
    figure({ name: 'utxo token transfers, 8-decimal supply (storage in, write set out)', unit: 'transfers/s', value: small.pure, ceiling, target: '>= 100k transfers/s', minRatio: 0 }),
    figure({ name: 'utxo token transfers, 10^30 supply (bigint balances; storage in, write set out)', unit: 'transfers/s', value: large.pure, ceiling, target: '>= 100k transfers/s', minRatio: 0 }),
    figure({ name: 'utxo token transfers, 8-decimal supply, write set applied to the store (chain)', unit: 'transfers/s', value: small.rate, ceiling, target: '>= 100k transfers/s', minRatio: 0 }),
  );
  for (const f of figures) {
    const need = f.unit === 'instr/s' ? 30e6 : 100e3;
    f.met = f.value.median >= need;
  }
  return figures;
}

/** Test helpers: value shortcuts, the in-memory host (src/vm/mem-host.ts), a compile-and-deploy shortcut. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSource } from '../../src/compiler/index.js';
import type { CompiledArtifact as Artifact } from '@svc-node/protocol/contract';
import { execute } from '../../src/vm/execute.js';
import type { ExecContext, ExecResult, TraceHook } from '@svc-node/protocol/vm/types';
import type { Value } from '@svc-node/protocol/value';
import { repoRoot } from './paths.js';
import { MemHost } from '../../src/vm/mem-host.js';

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
export const u64 = (v: bigint | number): Value => ({ type: 'u64', value: BigInt(v) });
export const i64 = (v: bigint | number): Value => ({ type: 'i64', value: BigInt(v) });
export const u128 = (v: bigint | number): Value => ({ type: 'u128', value: BigInt(v) });
export const bool = (v: boolean): Value => ({ type: 'bool', value: v });
export const str = (v: string): Value => ({ type: 'string', value: v });
export const bytes = (v: Uint8Array): Value => ({ type: 'bytes', value: v });
export const key = (v: Uint8Array): Value => ({ type: 'key', value: v });
export function id(n: number): Uint8Array {
  const b = new Uint8Array(32);
  b[0] = 0xc0;
  b[31] = n;
  return b;
}

export function compileFile(rel: string): Artifact {
  const p = join(repoRoot, rel);
  const r = compileSource(readFileSync(p, 'utf8'), rel);
  if (!r.ok) throw new Error(r.errors.map((e) => `${e.file}:${e.line}:${e.col}: ${e.message}`).join('\n'));
  return r.artifact;
}
export function compile(src: string, name = 'test.svc'): Artifact {
  const r = compileSource(src, name);
  if (!r.ok) throw new Error(r.errors.map((e) => `${e.file}:${e.line}:${e.col}: ${e.message}`).join('\n'));
  return r.artifact;
}
export { load, MemHost } from '../../src/vm/mem-host.js';

export function ctx(over: Partial<ExecContext> = {}): ExecContext {
  return {
    height: 800_000,
    txid: fromHex('aa'.repeat(32)),
    inputs: [],
    outputs: [],
    caller: fromHex('11'.repeat(32)),
    callId: 1n,
    ...over,
  };
}

/** Execute and apply on success. */
export function call(host: MemHost, cid: Uint8Array, fn: string, args: Value[], c: ExecContext = ctx(), trace?: TraceHook): ExecResult {
  const r = execute({ contractId: cid, function: fn, args, context: c, host }, trace ? { trace } : undefined);
  host.apply(r);
  return r;
}

/** Compact JSON of a result, for byte-identical comparisons. */
export function serialize(r: ExecResult): string {
  return JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? hex(v) : v));
}

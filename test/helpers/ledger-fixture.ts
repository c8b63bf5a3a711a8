/**
 * Builds real protocol inputs for the writer's ledger without a network: envelopes,
 * anchoring transactions (bitcoinjs) that carry the call stamp and spend the named
 * outpoint, and block inputs. Signatures are placeholders: the ledger applies payloads
 * that intake already verified. Shared by the writer's tests and the ledger benchmarks
 * (bench/core.bench.ts and others), which measure application.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transaction } from 'bitcoinjs-lib';
import { Db } from '../../src/writer/db.js';
import { Ledger } from '../../src/writer/ledger/index.js';
import { compileSource } from '../../src/compiler/index.js';
import { encodeEnvelope, type CallEnvelope } from '@svc-node/protocol/envelope';
import { taggedHash, Tags, toHex, sha256 } from '@svc-node/protocol/hash';
import { callStampScript, deployStampScript, findStamp } from '@svc-node/protocol/stamp';
import { codeHash, contractId as deriveId } from '@svc-node/protocol/contract';
import { logger } from '../../src/log.js';
import { threadCpuNs } from '../../bench/harness.js';
import { repoRoot } from './paths.js';
import type { Value } from '@svc-node/protocol/value';
import { txPartsOf, type BlockInput, type CallRecord, type ContractRecord } from '../../src/records.js';

export { repoRoot };

export function compileContract(rel: string): ReturnType<typeof compileSource> & { ok: true } {
  const file = join(repoRoot, rel);
  const r = compileSource(readFileSync(file, 'utf8'), file);
  if (!r.ok) throw new Error(`${rel} does not compile`);
  return r;
}

/** Deterministic 32-byte ids from a counter. */
export function id32(label: string, n: number): Uint8Array {
  return sha256(Buffer.from(`${label}:${n}`));
}

let txCounter = 0;

/** A transaction spending `outpoint` with one OP_RETURN output `script`. */
export function anchorTx(outpointTxid: Uint8Array, vout: number, script: Uint8Array): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(outpointTxid).reverse(), vout);
  tx.addOutput(script, 0n);
  // A unique locktime keeps txids distinct even for equal inputs.
  tx.locktime = txCounter++ % 400_000_000;
  return tx;
}

/** The record intake stores for a verified call before its block decides it (src/core/intake.ts). */
/**
 * A call envelope spending output 0 of `outpointTxid`, with a zero signature (the ledger
 * never checks signatures; intake did), encoded and hashed as intake would.
 */
export function unsignedCall(
  contractId: string,
  fn: string,
  args: Value[],
  caller: Uint8Array,
  callId: bigint,
  outpointTxid: Uint8Array,
  outpointVout = 0,
): { envelope: CallEnvelope; bytes: Uint8Array; envelopeHash: Uint8Array } {
  const envelope: CallEnvelope = {
    version: 1,
    contractId: Buffer.from(contractId, 'hex'),
    function: fn,
    args,
    caller,
    callId,
    outpointTxid,
    outpointVout,
    signature: new Uint8Array(64),
  };
  const bytes = encodeEnvelope(envelope);
  return { envelope, bytes, envelopeHash: taggedHash(Tags.envelope, bytes) };
}

export function pendingCallRecord(anchorTxid: string, contractId: string, env: CallEnvelope, bytes: Uint8Array, envelopeHash: Uint8Array): CallRecord {
  return {
    txid: anchorTxid,
    contract_id: contractId,
    envelope_hash: toHex(envelopeHash),
    function: env.function,
    caller: toHex(env.caller),
    call_id: env.callId.toString(),
    status: 'pending',
    block_height: null,
    tx_index: null,
    result: null,
    error: null,
    payload: Buffer.from(bytes).toString('base64'),
    outpoint: `${toHex(env.outpointTxid)}:${env.outpointVout}`,
    instructions: null,
  };
}

export class LedgerBench {
  height = 0;
  hash = toHex(id32('block', 0));
  /**
   * Other nodes on the same chain: each applies every block and takes every deploy this
   * one does (opened empty, anchored at the same block), but holds only the calls given
   * to it, so what they hold pending may differ.
   */
  readonly followers: Ledger[] = [];
  private constructor(
    readonly ledger: Ledger,
    readonly dir: string,
  ) {}

  static async open(): Promise<LedgerBench> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
    const db = await Db.open(join(dir, 'db'));
    const ledger = new Ledger(db, logger('bench'));
    await ledger.load();
    const b = new LedgerBench(ledger, dir);
    await ledger.initAnchor({ height: 0, hash: b.hash });
    return b;
  }

  /** Applies a block of `txs`; `spends` are outpoints ("txid:vout") other transactions of the block spend. */
  async block(txs: Transaction[], spends: [string, string][] = []): Promise<{ ms: number; cpuNs: number; input: BlockInput }> {
    const height = this.height + 1;
    const hash = toHex(id32('block', height));
    const input: BlockInput = {
      height,
      hash,
      prevHash: this.hash,
      txs: txs.map((tx, i) => ({
        txIndex: i + 1,
        txid: tx.getId(),
        hex: tx.toHex(),
        parts: txPartsOf(tx, findStamp(tx)),
      })),
      txids: ['00'.repeat(32), ...txs.map((t) => t.getId())],
      spends,
    };
    const c0 = threadCpuNs();
    const t0 = performance.now();
    await this.ledger.applyBlock(input);
    const ms = performance.now() - t0;
    const cpuNs = threadCpuNs() - c0;
    for (const f of this.followers) await f.applyBlock(input);
    this.height = height;
    this.hash = hash;
    return { ms, cpuNs, input };
  }

  async deploy(artifact: { bytecode: string; abi: unknown[]; function_offsets: Record<string, unknown>; function_offset_to_locals: Record<string, unknown>; constants: unknown[] }): Promise<string> {
    const ch = codeHash(artifact);
    const tx = anchorTx(id32('deploy-in', this.height), 0, deployStampScript(ch));
    const txid = tx.getId();
    const cid = toHex(deriveId(Buffer.from(txid, 'hex'), ch));
    const rec: ContractRecord = {
      contract_id: cid,
      txid,
      code_hash: toHex(ch),
      status: 'pending',
      block_height: null,
      tx_index: null,
      artifact: { ...artifact, metadata: {} },
      body_hash: toHex(sha256(Buffer.from(txid))),
    };
    await this.ledger.acceptDeploy(rec);
    for (const f of this.followers) await f.acceptDeploy(rec);
    await this.block([tx]);
    return cid;
  }

  /** Accepts a call (as intake would after verifying it) and returns its anchoring tx. */
  async call(contractId: string, fn: string, args: Value[], caller: Uint8Array, callId: bigint): Promise<Transaction> {
    const { rec, tx } = this.callRecord(contractId, fn, args, caller, callId);
    await this.ledger.acceptCall(rec);
    return tx;
  }

  /** The record intake would store for a call, and its anchoring tx; nothing is stored. */
  callRecord(contractId: string, fn: string, args: Value[], caller: Uint8Array, callId: bigint): { rec: CallRecord; tx: Transaction } {
    const outpointTxid = id32('utxo', Number(callId) + caller[0]! * 1_000_003);
    const { envelope: env, bytes: payload, envelopeHash: eh } = unsignedCall(contractId, fn, args, caller, callId, outpointTxid);
    const tx = anchorTx(outpointTxid, 0, callStampScript(env.contractId, eh));
    const rec = pendingCallRecord(tx.getId(), contractId, env, payload, eh);
    return { rec, tx };
  }

  async close(): Promise<void> {
    await this.ledger.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

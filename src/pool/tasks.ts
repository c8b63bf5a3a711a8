/**
 * Tasks the core hands to the worker pool, typed in one place. Work that is pure and
 * CPU-bound (decoding, signature checks, bytecode verification, VM simulation) runs here
 * so the core's event loop and the writer thread stay free. A task never throws across
 * the thread for a client's bad input: it returns a tagged result.
 */
import { toWire, type WireError } from '@svc-node/protocol/errors';
import { openEnvelope } from '@svc-node/protocol/envelope';
import { toHex } from '@svc-node/protocol/hash';
import { checkDeploy } from '@svc-node/protocol/vm/deploy-check';
import { checkCoin, coinError, type CoinEvidence } from '@svc-node/protocol/coin';
import { runSimulation, type SimulateTask } from './simulate.js';

export type PoolTask =
  | { kind: 'ping'; n: number }
  /** Strict decode + signature check of a call payload (borsh bytes). */
  | { kind: 'openCall'; payload: Uint8Array }
  /**
   * `openCall` for several payloads in one task (src/pool/pool.ts batches intake's calls
   * under load); the value is one PoolResult per payload, in order.
   */
  | { kind: 'openCalls'; payloads: Uint8Array[] }
  /** Artifact shape, bytecode verification and code hash of a deploy registration (packages/protocol/src/vm/deploy-check.ts). */
  | { kind: 'checkDeploy'; body: Record<string, unknown> }
  /**
   * The coin evidence of a payload whose anchor is not confirmed (packages/protocol/src/coin.ts,
   * checkCoin): prev txs parsed and matched to the anchor's inputs, and the one
   * signature verify of the input spending `outpoint` (null: the anchor's first input).
   * The value is a CheckedCoin; a coin that does not hold is bad_coin.
   */
  | { kind: 'checkCoin'; anchorTx: Uint8Array; outpoint: { txid: string; vout: number } | null; coin: CoinEvidence }
  /** A read-only run against a state snapshot (src/pool/simulate.ts). */
  | ({ kind: 'simulate' } & SimulateTask);

/** What intake reads of an opened call: the fields of its record and of the binding check (the arguments stay in the payload, read at execution). */
export interface OpenedCall {
  contractId: string;
  function: string;
  caller: string;
  callId: string;
  outpoint: string;
  envelopeHash: string;
}

export type PoolResult = { ok: true; value: unknown } | { ok: false; error: WireError };

function openCall(payload: Uint8Array): OpenedCall {
  const { envelope: e, envelopeHash } = openEnvelope(payload);
  return {
    contractId: toHex(e.contractId),
    function: e.function,
    caller: toHex(e.caller),
    callId: e.callId.toString(),
    outpoint: `${toHex(e.outpointTxid)}:${e.outpointVout}`,
    envelopeHash: toHex(envelopeHash),
  };
}

export function runTask(task: PoolTask): PoolResult {
  try {
    switch (task.kind) {
      case 'ping':
        return { ok: true, value: task.n };
      case 'openCall':
        return { ok: true, value: openCall(task.payload) };
      case 'openCalls':
        // One bad payload fails only its own entry.
        return { ok: true, value: task.payloads.map((payload) => runTask({ kind: 'openCall', payload })) };
      case 'checkDeploy':
        return { ok: true, value: checkDeploy(task.body) };
      case 'checkCoin': {
        const r = checkCoin(task.anchorTx, task.outpoint, task.coin);
        if (!r.ok) throw coinError(r.reason);
        return { ok: true, value: r.coin };
      }
      case 'simulate':
        return { ok: true, value: runSimulation(task) };
    }
  } catch (e) {
    return { ok: false, error: toWire(e) };
  }
}

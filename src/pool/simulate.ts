/**
 * Simulation (POST /v2/{contract_id}/simulate): runs a call in a pool worker against a
 * snapshot of the latest state and never writes.
 *
 * The writer ships one atomic snapshot (program + all storage, at most 64 KiB per contract)
 * of the contracts named. Callees are discovered by running: when the VM asks the host for
 * a contract that is not in the snapshot (and not known to be absent), the run is thrown
 * away and answers `missing`; the core then takes a new atomic snapshot that includes
 * those contracts and runs again (at most SIM_ROUNDS times, one per newly reached
 * contract set). Each run sees a single snapshot, so the answer never mixes two blocks.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { toHex } from '@svc-node/protocol/hash';
import { typedValueFromJson, valueToJson, type Value } from '@svc-node/protocol/value';
import { execute } from '../vm/execute.js';
import type { AbiEntry, Host, Program } from '@svc-node/protocol/vm/types';
import type { SimContract, SimulateBody } from '../messages.js';

/** A call chain reaches at most 63 other contracts (call depth 64); 8 rounds cover realistic fan-out. */
export const SIM_ROUNDS = 8;

export interface SimulateTask {
  contractId: string;
  function: string;
  args: unknown[];
  caller: string | null;
  inputs: { txid: string; vout: number }[];
  outputs: { value: string; script: string }[];
  height: number;
  stateRoot: string | null;
  contracts: SimContract[];
  /** Ids the writer reported as not active: the VM sees them as unknown. */
  absent: string[];
}

export type SimulateOutcome = { missing: string[] } | { body: SimulateBody };

function eventParams(program: Program | undefined, name: string, params: Value[]): Record<string, unknown> {
  const entry = (program?.abi ?? []).find((a: AbiEntry) => a.type === 'event' && a.name === name);
  const out: Record<string, unknown> = {};
  params.forEach((v, i) => {
    out[entry && entry.type === 'event' ? (entry.inputs[i]?.name ?? String(i)) : String(i)] = valueToJson(v);
  });
  return out;
}

/** Checks the arguments against the ABI (400 malformed, 404 no such function, 422 wrong types). */
export function checkArgs(program: Program, fn: string, args: unknown[]): Value[] {
  const entry = program.abi.find((a) => a.type === 'function' && a.name === fn);
  if (!entry || entry.type !== 'function') throw new NodeError('not_found', `the contract has no public function ${fn}`);
  const values = args.map((a, i) => typedValueFromJson(a, `args[${i}]`));
  if (values.length !== entry.inputs.length) {
    throw new NodeError('bad_arguments', `${fn} takes ${entry.inputs.length} argument(s), got ${values.length}`, { field: 'args' });
  }
  values.forEach((v, i) => {
    const want = entry.inputs[i]!.type;
    if (v.type !== want) throw new NodeError('bad_arguments', `args[${i}] (${entry.inputs[i]!.name}) must be ${want}, got ${v.type}`, { field: `args[${i}]` });
  });
  return values;
}

export function runSimulation(t: SimulateTask): SimulateOutcome {
  const byId = new Map<string, SimContract>();
  for (const c of t.contracts) byId.set(c.id, c);
  const storage = new Map<string, Map<string, Uint8Array>>();
  for (const c of t.contracts) storage.set(c.id, new Map(c.storage.map(([k, v]) => [toHex(k), v])));
  const absent = new Set(t.absent);
  const missing = new Set<string>();
  const target = byId.get(t.contractId);
  if (!target) throw new NodeError('not_found', `no active contract ${t.contractId}`);
  const args = checkArgs(target.program, t.function, t.args);

  const host: Host = {
    program: (id) => {
      const h = toHex(id);
      const c = byId.get(h);
      if (c) return c.program;
      if (!absent.has(h)) missing.add(h);
      return undefined;
    },
    storageGet: (id, k) => storage.get(toHex(id))?.get(toHex(k)),
    storageSize: (id) => byId.get(toHex(id))?.size ?? 0,
  };
  const caller = t.caller === null ? new Uint8Array(32) : new Uint8Array(Buffer.from(t.caller, 'hex'));
  const out = execute({
    contractId: new Uint8Array(Buffer.from(t.contractId, 'hex')),
    function: t.function,
    args,
    context: {
      height: t.height,
      txid: new Uint8Array(32),
      inputs: t.inputs.map((i) => ({ txid: new Uint8Array(Buffer.from(i.txid, 'hex')), vout: i.vout })),
      outputs: t.outputs.map((o) => ({ value: BigInt(o.value), script: new Uint8Array(Buffer.from(o.script, 'hex')) })),
      caller,
      callId: 0n,
    },
    host,
  });
  if (missing.size > 0) return { missing: [...missing].sort() };
  const base = { contract_id: t.contractId, function: t.function, height: t.height, state_root: t.stateRoot, instructions: out.instructions };
  if (out.status === 'failed') {
    return { body: { ...base, status: 'failed', result: null, error: { code: out.code, message: out.message }, events: [] } };
  }
  return {
    body: {
      ...base,
      status: 'executed',
      result: out.result ? valueToJson(out.result) : null,
      error: null,
      events: out.events.map((e) => {
        const cid = toHex(e.contractId);
        return { contract_id: cid, name: e.name, params: eventParams(byId.get(cid)?.program, e.name, e.params) };
      }),
    },
  };
}

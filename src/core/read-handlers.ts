/**
 * Core handlers of ReadApi (the REST front's reads). Most forward to the writer; the
 * simulation runs in the worker pool on writer snapshots (src/pool/simulate.ts); the
 * state version (src/core/state-version.ts) reaches the REST read cache by a long poll
 * (waitState).
 */
import { NodeError } from '@svc-node/protocol/errors';
import type { Handlers } from '../ipc/rpc.js';
import type { ReadApi, SimulateBody } from '../messages.js';
import type { Core } from './core.js';
import { SIM_ROUNDS, type SimulateOutcome } from '../pool/simulate.js';

/** Longest a waitState long poll is held (the REST process asks again at once). */
const MAX_WAIT_MS = 30_000;

export function readHandlers(core: Core): Handlers<ReadApi> {
  const simulations: Record<string, number> = {};

  return {
    contractInfo: async (p) => {
      const c = await core.writer.call('contract', { id: p.contract_id });
      if (!c) throw new NodeError('not_found', `no contract ${p.contract_id}`);
      return { contract_id: c.contract_id, txid: c.txid, code_hash: c.code_hash, status: c.status, block_height: c.block_height, tx_index: c.tx_index, abi: c.artifact.abi, metadata: c.artifact.metadata };
    },
    contractIds: async () => ({ contract_ids: await core.writer.call('contractIds', {}) }),
    readField: (p) => core.writer.call('readField', p),
    events: (p) => core.writer.call('events', p),
    calls: (p) => core.writer.call('calls', p),
    streamStep: (p) => core.writer.call('streamStep', p),
    waitState: (p) => core.state.changedFrom(p.known, Math.min(Math.max(p.waitMs, 0), MAX_WAIT_MS)),
    simulate: async (p): Promise<SimulateBody> => {
      let ids = [p.contract_id];
      for (let round = 0; round < SIM_ROUNDS; round++) {
        const snap = await core.writer.call('simSnapshot', { ids });
        if (snap.missing.includes(p.contract_id)) {
          const rec = await core.writer.call('contract', { id: p.contract_id });
          throw new NodeError('not_found', rec ? `contract ${p.contract_id} is registered but its deploy is not confirmed yet` : `no contract ${p.contract_id}`);
        }
        const out = await core.pool.run<SimulateOutcome>({
          kind: 'simulate',
          contractId: p.contract_id,
          function: p.function,
          args: p.args,
          caller: p.caller,
          inputs: p.inputs,
          outputs: p.outputs,
          height: (snap.height ?? 0) + 1,
          stateRoot: snap.state_root,
          contracts: snap.contracts,
          absent: snap.missing,
        });
        if ('body' in out) {
          simulations[out.body.status] = (simulations[out.body.status] ?? 0) + 1;
          return out.body;
        }
        ids = [...new Set([...ids, ...out.missing])];
      }
      throw new NodeError('overloaded', `simulation reached more than ${SIM_ROUNDS} rounds of new contracts; retry`);
    },
    metrics: async () => {
      const writer = await core.writer.call('readMetrics', {});
      const pool = core.pool.stats();
      return {
        writer,
        tip_height: core.follower.chainTipHeight,
        chain_endpoint_ok: core.follower.endpointOk,
        pool,
        peers: core.peerState.peers,
        divergence_unresolved: core.peerState.divergence !== null && !core.peerState.divergence.resolved,
        simulations: { ...simulations },
      };
    },
  };
}

/**
 * Core handlers of PeerApi (issue 8): what the gossip process asks. Every payload a peer
 * sends runs through the same Intake methods as REST; the answers about contracts,
 * payloads and state roots come from the writer (src/writer/peer-queries.ts).
 */
import type { Handlers } from '../ipc/rpc.js';
import type { CallSubmission, DeployExtras, DivergenceReport, GossipCounters, PeerApi, WirePayload } from '../messages.js';
import type { Evidence } from '../protocol/evidence.js';
import { NodeError } from '../errors.js';
import { MAX_PAYLOAD_BYTES } from '../gossip/limits.js';
import { zeroCounters } from '../gossip/counters.js';
import type { Core } from './core.js';

const HEX32 = /^[0-9a-f]{64}$/;

/** What the gossip process last reported, for node_status. */
export class PeerState {
  peers = 0;
  counters: GossipCounters = zeroCounters();
  divergence: DivergenceReport | null = null;
}

/** A peer's payload as the arguments of the REST intake path; the same limits and shapes. */
export function intakeInput(p: WirePayload): { kind: 'call'; submission: CallSubmission } | { kind: 'deploy'; body: Record<string, unknown>; extras: DeployExtras } {
  if (!p || typeof p !== 'object' || !(p.body instanceof Uint8Array)) throw new NodeError('bad_request', 'payload must carry a body');
  if (p.body.length > MAX_PAYLOAD_BYTES) throw new NodeError('payload_too_large', `payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  if (typeof p.txid !== 'string' || !HEX32.test(p.txid)) throw new NodeError('bad_request', 'txid must be 32 bytes', { field: 'txid' });
  if (p.kind === 'call') {
    if (typeof p.contract_id !== 'string' || !HEX32.test(p.contract_id)) throw new NodeError('bad_request', 'contract_id must be 32 bytes', { field: 'contract_id' });
    return { kind: 'call', submission: { txid: p.txid, contract_id: p.contract_id, payload: p.body, evidence: p.evidence ?? undefined } };
  }
  if (p.kind !== 'deploy') throw new NodeError('bad_request', 'payload kind must be call or deploy', { field: 'kind' });
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(p.body));
  } catch {
    throw new NodeError('bad_request', 'deploy body is not UTF-8 JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new NodeError('bad_request', 'deploy body must be a JSON object');
  if ((body as Record<string, unknown>)['txid'] !== p.txid) throw new NodeError('bad_request', 'deploy body names another txid than the payload', { field: 'txid' });
  return { kind: 'deploy', body: body as Record<string, unknown>, extras: { evidence: p.evidence ?? undefined } };
}

/** The wire form of a payload REST intake just stored, for the gossip process. */
export function callPayload(s: CallSubmission, evidence: Evidence | null): WirePayload {
  return { kind: 'call', txid: s.txid, contract_id: s.contract_id, body: s.payload, evidence };
}

/** The registration as gossip sends it: the record without `anchor_tx` (that travels as evidence). */
export function deployPayload(body: Record<string, unknown>, evidence: Evidence | null): WirePayload {
  const { anchor_tx: _evidence, ...record } = body;
  return { kind: 'deploy', txid: String(body['txid']), contract_id: '', body: new Uint8Array(Buffer.from(JSON.stringify(record), 'utf8')), evidence };
}

/** A writer answer about a contract, or not_found when the writer does not know it (null). */
function known<T>(contractId: string, answer: T | null): T {
  if (answer === null) throw new NodeError('not_found', `contract ${contractId} is not known to this node`);
  return answer;
}

export function peerHandlers(core: Core): Handlers<PeerApi> {
  const w = core.writer;
  return {
    peerSubmit: async (p) => {
      const input = intakeInput(p.payload);
      const r = input.kind === 'call' ? await core.intake.submitCall(input.submission) : await core.intake.submitDeploy(input.body, input.extras);
      return { created: r.created };
    },
    peerPrepare: (p) => core.intake.preparePayload(intakeInput(p.payload)),
    peerContractIds: (p) => w.call('peerContractIds', { after: p.after, limit: p.limit }),
    peerSummary: async (p) => known(p.contract_id, await w.call('peerSummary', { contract_id: p.contract_id, after_txid: p.after_txid, limit: p.limit })),
    peerRoot: async (p) => known(p.contract_id, await w.call('peerRoot', { contract_id: p.contract_id })),
    peerFingerprints: () => w.call('peerFingerprints', {}),
    peerTxids: async (p) => known(p.contract_id, await w.call('peerTxids', { contract_id: p.contract_id, offset: p.offset, limit: p.limit })),
    peerRanges: async (p) => known(p.contract_id, await w.call('peerRanges', { contract_id: p.contract_id, ranges: p.ranges })),
    peerPayload: (p) => w.call('peerPayload', { txid: p.txid }),
    peerStateRoots: (p) => w.call('peerStateRoots', { from: p.from, to: p.to }),
    peerSettle: async () => {
      const s = await w.call('peerSettle', {});
      return { processed_height: s.processedHeight, state_root: s.stateRoot };
    },
    peerVerifyReplay: async () => {
      const s = await w.call('peerVerifyReplay', {});
      return { halted: s.halted, halt_reason: s.haltReason };
    },
    peerReport: (p) => {
      core.peerState.peers = p.peers;
      core.peerState.counters = p.counters;
      core.peerState.divergence = p.divergence;
      return { ok: true as const };
    },
  };
}

/**
 * Decision rules (PROTOCOL sections 4 and 5, packages/protocol/src/rules.ts): the verdict on a
 * confirmed call, which intake refusals may be taken later, and the strict decoding of a
 * decision leaf (what a client checks a decision proof down to).
 */
import { encodeDecision, type Decision } from '@svc-node/protocol/state/decisions';
import { INTAKE_REFUSALS } from '@svc-node/protocol/rules';
import { hex, type Area, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

function verdictCases(): CaseInput[] {
  const binds = { ok: true, stamp_vout: 0 };
  const at = { height: 100, tx_index: 5 };
  const c = (id: string, binding: unknown, deployAt: unknown, claimTaken: boolean, pins: string, where = at): CaseInput => ({ id, pins, input: { binding, deploy_at: deployAt, at: where, claim_taken: claimTaken } });
  return [
    c('executes', binds, { height: 99, tx_index: 9 }, false, 'bound, its contract deployed in an earlier block, its call id free: executes'),
    c('deploy-same-block-earlier', binds, { height: 100, tx_index: 4 }, false, 'a deploy earlier in the same block is active for the call'),
    c('deploy-same-block-later', binds, { height: 100, tx_index: 6 }, false, 'a deploy later in the same block is not active: unknown_contract'),
    c('deploy-same-position', binds, { height: 100, tx_index: 5 }, false, 'active strictly before the call\'s position: the same position is not'),
    c('deploy-later-block', binds, { height: 101, tx_index: 0 }, false, 'a deploy in a later block: unknown_contract'),
    c('never-deployed', binds, null, false, 'no active contract: unknown_contract'),
    c('no-stamp', null, { height: 99, tx_index: 0 }, false, 'the confirmed transaction carries no stamp: anchor_mismatch'),
    c('binding-failed', { ok: false, reason: 'outpoint_not_spent' }, { height: 99, tx_index: 0 }, false, 'the binding fails at confirmation: anchor_mismatch'),
    c('claim-taken', binds, { height: 99, tx_index: 0 }, true, 'its (caller, call_id) belongs to an earlier executed or failed call: duplicate_call_id'),
    c('binding-before-contract', { ok: false, reason: 'stamp_mismatch' }, null, true, 'the binding is checked first: anchor_mismatch'),
    c('contract-before-claim', binds, null, true, 'the contract is checked before the claim: unknown_contract'),
  ];
}

function refusalCases(): CaseInput[] {
  const codes = [...Object.keys(INTAKE_REFUSALS).sort(), 'not_a_code'];
  return codes.map((code) => ({ id: code, pins: code === 'not_a_code' ? 'an unknown refusal code counts as retryable' : `intake refusal ${code}: whether the same payload may be taken later`, input: { code } }));
}

function leafCases(): CaseInput[] {
  const executed: Decision = {
    status: 'executed', txIndex: 7, result: { type: 'u64', value: 42n }, errorCode: null,
    events: [{ contractId: seeded('leaf contract'), name: 'E', params: [{ type: 'string', value: 'x' }, { type: 'bool', value: true }] }],
  };
  const failed: Decision = { status: 'failed', txIndex: 1, result: null, errorCode: 'revert', events: [] };
  const invalid: Decision = { status: 'invalid', txIndex: 0, result: null, errorCode: 'duplicate_call_id', events: [] };
  const noResult: Decision = { status: 'executed', txIndex: 3, result: null, errorCode: null, events: [] };
  const e = encodeDecision(executed);
  const c = (id: string, b: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { hex: hex(b) } });
  const patched = (b: Uint8Array, at: number, v: number) => {
    const x = Uint8Array.from(b);
    x[at] = v;
    return x;
  };
  return [
    c('executed', e, 'an executed leaf: status 1, u32be tx_index, has_result, value, events'),
    c('executed-no-result', encodeDecision(noResult), 'an executed leaf with has_result 0 and no events'),
    c('failed', encodeDecision(failed), 'a failed leaf: status 2, u32be tx_index, u16be code length, code'),
    c('invalid', encodeDecision(invalid), 'an invalid leaf: status 3'),
    c('status-0', patched(e, 0, 0), 'status byte 0 is refused'),
    c('status-4', patched(e, 0, 4), 'status byte 4 is refused'),
    c('has-result-2', patched(e, 5, 2), 'has_result other than 0 or 1 is refused'),
    c('unknown-value-tag', patched(e, 6, 9), 'an unknown value tag is refused'),
    c('trailing-byte', Uint8Array.from([...e, 0]), 'a byte after the leaf is refused'),
    c('truncated', e.subarray(0, e.length - 1), 'a leaf cut short is refused'),
    c('empty', new Uint8Array(0), 'no bytes are refused'),
  ];
}

export function decisionsArea(): Area {
  return { 'decision.call-verdict': verdictCases(), 'decision.intake-refusal': refusalCases(), 'decision.leaf-decode': leafCases() };
}

/**
 * The decision rules of PROTOCOL sections 4 and 5, and the intake rules that keep them
 * independent of arrival order, as pure functions. Intake (src/core/intake.ts), the
 * ledger (src/writer/ledger/) and the gossip layer import them from here, so each rule
 * has exactly one definition; the deterministic simulation (test/sim) checks the ledger
 * against a reference model of the same sections.
 *
 * The principle (docs/ARCHITECTURE.md, "Intake refusals"): an outcome is decided at the
 * chain position, never at arrival. Intake refuses only what is wrong with the payload
 * itself and can never become right (intrinsic), or what cannot be checked yet and will
 * be taken when it can (retryable). Everything that depends on other payloads or on state
 * (a claimed call id, a deploy after the call, a spent outpoint) is stored and decided
 * when the call's block is applied.
 */
import { NodeError } from './errors.js';
import type { BindingResult } from './binding.js';

/** A position on the chain: (confirmation height, index of the transaction in its block). */
export interface Position {
  height: number;
  txIndex: number;
}

/** a < b in chain order. */
export function before(a: Position, b: Position): boolean {
  return a.height < b.height || (a.height === b.height && a.txIndex < b.txIndex);
}

// ------------------------------------------------------------------ intake

/** What a node holds under a txid (the payload bucket, src/writer/store/payloads.ts): the kind and the body hash. */
export interface HeldPayload {
  kind: 'deploy' | 'call';
  contract_id: string;
  body_hash: string;
}

/**
 * A submission against what the node holds for its txid (PROTOCOL section 6): `new`
 * when nothing, `repeat` when exactly this payload (answered 200 with the stored record),
 * and a 409 `conflict` when another payload or artifact holds the txid. The one
 * definition intake, the group commit and deploy acceptance share.
 */
export function repeatOrConflict(held: HeldPayload | null, txid: string, kind: 'deploy' | 'call', bodyHash: string): 'new' | 'repeat' {
  if (!held) return 'new';
  if (held.kind === kind && held.body_hash === bodyHash) return 'repeat';
  throw new NodeError('conflict', `txid ${txid} is already known with a different ${held.kind === 'call' ? 'payload' : 'artifact'}`);
}

/**
 * How each intake refusal behaves (docs/ARCHITECTURE.md, "Intake refusals"):
 * - `intrinsic`: wrong with the payload itself; no later event makes it right. A sender
 *   or peer retrying it gets the same answer, and sync remembers it and stops asking.
 * - `retryable`: not checkable yet (the anchor not visible at the chain endpoint, the
 *   contract's deploy payload not received) or the node cannot work now (overloaded,
 *   halted, the endpoint down). Sync and gossip bring the payload again; then it is taken.
 * Nothing that depends on other payloads or on chain state past the binding is refused:
 * those are decided on chain (see `callVerdict`).
 */
export const INTAKE_REFUSALS = {
  bad_request: 'intrinsic',
  payload_too_large: 'intrinsic',
  bad_signature: 'intrinsic',
  invalid_bytecode: 'intrinsic',
  code_hash_mismatch: 'intrinsic',
  anchor_mismatch: 'intrinsic',
  // Evidence that does not hold by itself (checkEvidence: the anchor's bytes, a branch,
  // the spender) or against the node's header chain (inclusionMatchesHeader: another
  // block at that height, a root the header does not commit to) is wrong for that
  // evidence and stays wrong. For the lead's intake: evidence naming a block above the
  // node's header tip is NOT refused (stored, checked when the header arrives); and the
  // payload itself, whose binding holds on the anchor's bytes, may still be taken
  // without the refused evidence (as if sent with none), so a wrong branch never costs a
  // sender the payload. Only where the evidence is all there is (a peer's answer to a
  // request for evidence) does this refusal stand alone.
  bad_evidence: 'intrinsic',
  // Coin evidence (packages/protocol/src/coin.ts) that shows no coin the sender controls is wrong
  // for good. A payload sent without any (coin_missing) is refused for what it came
  // with, like false evidence: the same payload with its coin's evidence, or once its
  // anchor confirms, is taken. The coin not provable here yet (its block's header not
  // held, the parent payload not here) or in use by a payload paying as much may change.
  bad_coin: 'intrinsic',
  coin_missing: 'intrinsic',
  // A coin confirmed at or below the node's journal anchor: the node holds no header there
  // and never will, so the same payload with the same coin evidence is refused for good
  // (like coin_missing, refused for what it came with: once its anchor confirms, it is taken).
  coin_before_anchor: 'intrinsic',
  coin_unproven: 'retryable',
  coin_in_use: 'retryable',
  conflict: 'intrinsic',
  anchor_not_found: 'retryable',
  unknown_contract: 'retryable',
  chain_unavailable: 'retryable',
  overloaded: 'retryable',
  rate_limited: 'retryable',
  halted: 'retryable',
  internal: 'retryable',
} as const satisfies Record<string, 'intrinsic' | 'retryable'>;

/** Whether a refusal with this code may be taken later (unknown codes count as retryable). */
export function refusalIsRetryable(code: string): boolean {
  return (INTAKE_REFUSALS as Record<string, string>)[code] !== 'intrinsic';
}

// ------------------------------------------------------------------ confirmation

/** Why a confirmed call is `invalid` (PROTOCOL section 4), or that it executes. */
export type CallVerdict = { execute: true } | { execute: false; code: 'anchor_mismatch' | 'unknown_contract' | 'duplicate_call_id'; message: string };

/**
 * The verdict on a call at its position, checked in this order:
 * 1. the binding against the transaction as confirmed (`binding` null: no SVC stamp);
 * 2. the contract is active strictly before the call's position (`deployAt` null: not
 *    active, or unknown);
 * 3. its (caller, call_id) does not already belong to an executed or failed call
 *    (`claimTaken`; only calls decided earlier on the chain can hold it).
 * The signature was verified when the payload was accepted, and is intrinsic to it.
 */
export function callVerdict(f: { binding: BindingResult | null; deployAt: Position | null; at: Position; claimTaken: boolean }): CallVerdict {
  if (!f.binding) return { execute: false, code: 'anchor_mismatch', message: 'the confirmed anchoring transaction carries no SVC stamp' };
  if (!f.binding.ok) return { execute: false, code: 'anchor_mismatch', message: `binding failed at confirmation: ${f.binding.reason}` };
  if (!f.deployAt) return { execute: false, code: 'unknown_contract', message: 'the contract is unknown or not yet active at this position' };
  if (!before(f.deployAt, f.at)) return { execute: false, code: 'unknown_contract', message: 'the call is confirmed at or before its contract deploy' };
  if (f.claimTaken) return { execute: false, code: 'duplicate_call_id', message: 'its (caller, call_id) already belongs to an executed or failed call' };
  return { execute: true };
}

/**
 * PROTOCOL section 5: a pending call is `dropped` when the outpoint it names is spent by
 * a confirmed transaction other than its anchor. A chain fact only: the same on every
 * node, whenever the payload arrived.
 */
export function dropsCall(spenderTxid: string, anchorTxid: string): boolean {
  return spenderTxid !== anchorTxid;
}

/**
 * Evidence that does not hold, sent with a payload (a call step's `evidence`,
 * conformance/README.md "Histories"): what the mutation run showed missing for the
 * ledger's checks of claims (src/writer/ledger/evidence.ts: placeClaim, evidenceEffect,
 * claimsInBlock). A claim naming a processed block is checked at once against the header
 * the node holds there; one naming a block above the node's tip is checked at once when
 * the node holds its header, else filed under its block and checked when the block is
 * applied; one that does not hold places and drops nothing, and a new payload it came
 * with is refused bad_evidence (docs/STATE.md, "Bitcoin evidence").
 */
import { merkleBranches } from '@svc-node/protocol/merkle-branch';
import { internalBytes } from '@svc-node/protocol/bytes';
import { Script, artifact, u64, CHECK, type Payload, type Step } from './history.js';
import { hex, type Area, type CaseInput } from './kit.js';

/** An inclusion in JSON (evidence.check's form): `txid` at `txIndex` of block `b`, with `branch` (default: its own). */
export function inclusion(b: { hash: string; height: number; txids: string[] }, txIndex: number, branchOf: string = b.txids[txIndex]!): Record<string, unknown> {
  const at = b.txids.indexOf(branchOf);
  if (at < 0) throw new Error(`ledger-claims-kills: ${branchOf} is not in block ${b.hash}`);
  const branch = merkleBranches(b.txids.map((t) => internalBytes(t)), [at])[0]!;
  return { block_hash: b.hash, height: b.height, tx_index: txIndex, branch: branch.map(hex) };
}

/** The payload's step sent again (or first) with `evidence` (`{confirmed, spent_by}`). */
export const withEvidence = (p: Payload, evidence: Record<string, unknown>): Step => ({ ...p.step, evidence: { confirmed: null, spent_by: null, ...evidence } });

/**
 * A full node: two calls' anchors in a processed block whose payloads arrive late (their
 * stamps seen, so admission does not ask for paid-for evidence), first with evidence that
 * does not hold there: a confirmation naming the block's height under another block's
 * hash (its branch the true one), one placing the anchor at another index, a spend of the
 * second call's outpoint whose branch does not fold to the block's root. Each is refused
 * bad_evidence and nothing is held; sent without evidence, both execute at their block.
 */
function forgedForProcessed(): CaseInput {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const b1Step = s.mine([d]);
  const b1 = s.chain.tip;
  const b2Step = s.mine([c1, c2]);
  const b2 = s.chain.tip;
  if (b2.txids.indexOf(c1.txid) !== 1 || b2.txids.indexOf(c2.txid) !== 2) throw new Error('ledger-claims-kills: the calls are not at indexes 1 and 2');
  const steps: Step[] = [
    d.step,
    b1Step,
    b2Step,
    withEvidence(c1, { confirmed: { ...inclusion(b2, 1), block_hash: b1.hash } }),
    withEvidence(c1, { confirmed: inclusion(b2, 2, c1.txid) }),
    withEvidence(c2, { spent_by: { tx: s.conflict(c2), vin: 0, at: inclusion(b2, 2) } }),
    c1.step,
    c2.step,
  ];
  return {
    id: 'evidence-forged-late-payload',
    pins: 'a late payload (its stamp in a processed block) sent with evidence that does not hold there is refused bad_evidence and not held: a confirmation naming the tip\'s height under another block\'s hash, one placing the anchor at another index of its block, a spend whose branch does not fold to the block\'s merkle root; sent without it, each executes at its block',
    input: { anchor: s.anchor, steps },
  };
}

/**
 * A light node deciding from the evidence filed under each block alone (one deferred
 * check): before the node holds block 2's header, a pending call is sent again with a
 * confirmation placing it at index 3 of block 2 (its anchor is in no block; no other
 * claim names that index) and another with a spend of its outpoint at index 3 there (no
 * block holds the spender): both are filed under block 2 and refused when it is applied,
 * so both stay pending. A fourth call, whose anchor block 2 holds, is sent again with
 * such a spend too. Once the header is announced, the deferred check files the third and
 * fourth calls' true inclusions there (the fourth's built on the evidence the node keeps
 * for it, as the node's own deferred checks build; the two claims in reverse tx order);
 * the third sent again with a confirmation at another index of that block is refused at
 * once (the header is held) and does not replace its true one: both execute, in tx order.
 */
function forgedAhead(): CaseInput {
  const s = new Script(6);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const c3 = s.call(d.contractId, 'bump', [u64(11n)]);
  const c4 = s.call(d.contractId, 'bump', [u64(13n)]);
  // An anchor never sent: block 2 holds four transactions (branches two deep).
  const filler = s.call(d.contractId, 'bump', [u64(1n)]);
  const b1Step = s.mine([d]);
  // The fourth call first: its claim's key (by txid) comes after the third's, the reverse of their tx order.
  const b2Step = s.mine([c4, c3, filler]);
  const b2 = s.chain.tip;
  if (b2.txids.indexOf(c4.txid) !== 1 || b2.txids.indexOf(c3.txid) !== 2 || !(c3.txid < c4.txid)) throw new Error('ledger-claims-kills: the calls are not at indexes 2 and 1 in reverse txid order');
  const steps: Step[] = [
    b1Step,
    d.step,
    c1.step,
    c2.step,
    c3.step,
    c4.step,
    withEvidence(c1, { confirmed: inclusion(b2, 3, c3.txid) }),
    withEvidence(c2, { spent_by: { tx: s.conflict(c2), vin: 0, at: inclusion(b2, 3, c3.txid) } }),
    withEvidence(c4, { spent_by: { tx: s.conflict(c4), vin: 0, at: inclusion(b2, 3, c3.txid) } }),
    { kind: 'headers', blocks: b2Step.blocks },
    { kind: 'deferred' },
    withEvidence(c3, { confirmed: inclusion(b2, 3, c3.txid) }),
    CHECK,
    b2Step,
  ];
  return {
    id: 'evidence-forged-ahead-light',
    pins: 'a light node deciding from the evidence filed under each block: a confirmation and spends filed under a block whose header the node does not hold yet, none folding to its merkle root, are refused when the block is applied (two calls stay pending); a false confirmation sent once the header is held is refused at once and leaves the true one filed before; a call sent with evidence is placed from what the node keeps of it (both execute, at indexes 2 and 1, their claims filed in the reverse of tx order)',
    input: { anchor: s.anchor, node: 'light', deferred: false, steps },
  };
}

export function ledgerClaimsKillArea(): Area {
  return { 'history.run': [forgedForProcessed(), forgedAhead()] };
}

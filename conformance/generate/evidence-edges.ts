/**
 * The edges of a payload's evidence (packages/protocol/src/evidence.ts, checkEvidence and
 * parseProven; docs/STATE.md, "Bitcoin evidence") the other evidence cases leave open: an
 * inclusion's height is a u32 (at 2^32 - 1 and one past, negative, fractional), a branch
 * of 17 levels is the deepest a confirmation may carry, a spender must parse and fold and
 * name its input by a JSON integer, a txid list is never empty, and a proven transaction's
 * length prefixes are minimal (what Bitcoin Core writes).
 */
import { Transaction } from 'bitcoinjs-lib';
import { merkleBranches, merkleRoot } from '@svc-node/protocol/merkle-branch';
import { evidenceArea } from './evidence.js';
import type { CaseInput } from './kit.js';

/** A case of evidence.ts's own list, to vary (the world it builds is fixed). */
function base(op: string, id: string): CaseInput {
  const c = evidenceArea()[op]?.find((x) => x.id === id);
  if (!c) throw new Error(`evidence-edges: ${op} has no case ${id}`);
  return JSON.parse(JSON.stringify(c)) as CaseInput;
}

type Json = Record<string, unknown>;

export function evidenceCheckEdgeCases(): CaseInput[] {
  const confirmed = base('evidence.check', 'confirmed');
  const spent = base('evidence.check', 'spent');
  const listed = base('evidence.check', 'spent-64-listed');
  const withConfirmed = (id: string, change: (inc: Json) => Json, pins: string): CaseInput => {
    const ev = confirmed.input.evidence as Json;
    return { id, pins, input: { ...confirmed.input, evidence: { ...ev, confirmed: change({ ...(ev.confirmed as Json) }) } } };
  };
  const withSpentBy = (from: CaseInput, id: string, change: (s: Json) => Json, pins: string): CaseInput => {
    const ev = from.input.evidence as Json;
    return { id, pins, input: { ...from.input, evidence: { ...ev, spent_by: change({ ...(ev.spent_by as Json) }) } } };
  };
  const level = (i: number) => (i + 1).toString(16).padStart(2, '0').repeat(32);
  return [
    withConfirmed('confirmed-height-max', (i) => ({ ...i, height: 0xffffffff }), 'an inclusion\'s height may be 2^32 - 1 (a u32): the branch folds, the header check then places it'),
    withConfirmed('confirmed-height-past-u32', (i) => ({ ...i, height: 0x100000000 }), 'an inclusion\'s height of 2^32 is refused (confirmed)'),
    withConfirmed('confirmed-height-negative', (i) => ({ ...i, height: -1 }), 'a negative inclusion height is refused (confirmed)'),
    withConfirmed('confirmed-height-fraction', (i) => ({ ...i, height: 1.5 }), 'an inclusion height that is not an integer is refused (confirmed)'),
    withConfirmed('confirmed-depth-17', (i) => ({ ...i, tx_index: 2, branch: Array.from({ length: 17 }, (_, k) => level(k)) }), 'a confirmation of 17 levels (the deepest Bitcoin block) is sound in shape: it folds to a root the header check then compares'),
    withSpentBy(spent, 'spent-unparseable', (s) => ({ ...s, tx: `${s.tx as string}00` }), 'a spender whose bytes are not one transaction is refused (spent_by)'),
    withSpentBy(spent, 'spent-vin-string', (s) => ({ ...s, vin: '1' }), 'a spender\'s input named by anything but a JSON integer is refused (spent_by)'),
    withSpentBy(spent, 'spent-too-deep', (s) => ({ ...s, at: { ...(s.at as Json), branch: Array.from({ length: 18 }, (_, k) => level(k)) } }), 'a spender\'s inclusion deeper than 17 levels is refused (spent_by)'),
    withSpentBy(listed, 'spent-64-list-empty', (s) => ({ ...s, block_txids_internal: [] }), 'a 64-byte spender with an empty txid list is refused (spent_by)'),
  ];
}

export function provenTxEdgeCases(): CaseInput[] {
  const stripped = base('evidence.proven-tx', 'stripped');
  const tx = stripped.input.tx_hex as string;
  // version (4 bytes), then the input count: 01 written as the three-byte fd0100.
  if (tx.slice(8, 10) !== '01') throw new Error('evidence-edges: the stripped anchor does not have one input');
  return [
    { id: 'non-minimal-input-count', pins: 'an input count written in more bytes than it needs (fd0100 for 1) is not the canonical serialization: refused', input: { tx_hex: `${tx.slice(0, 8)}fd0100${tx.slice(10)}` } },
  ];
}

/** evidence.branch-fold: an index is a non-negative integer. */
export function branchFoldEdgeCases(): CaseInput[] {
  const first = base('evidence.branch-fold', 'block-index-1');
  return [
    { id: 'index-negative', pins: 'an index of -1 is refused', input: { ...first.input, index: -1 } },
    { id: 'index-fraction', pins: 'an index that is not an integer (1.5) is refused', input: { ...first.input, index: 1.5 } },
  ];
}

/** evidence.header-match: the header must be the inclusion's block, not only commit to its root. */
export function headerMatchEdgeCases(): CaseInput[] {
  const m = base('evidence.header-match', 'matches');
  const header = Buffer.from(m.input.header as string, 'hex');
  header[76]! ^= 1; // the nonce: the same merkle root, another block hash
  return [{ id: 'same-root-other-block', pins: 'a header committing to the folded root whose hash is not the inclusion\'s block hash is refused', input: { ...m.input, header: header.toString('hex') } }];
}

/** evidence.coinbase-depth: only a coinbase proves a depth, and its branch must fold. */
export function coinbaseDepthEdgeCases(): CaseInput[] {
  const d = base('evidence.coinbase-depth', 'depth-3');
  const tooDeep = Array.from({ length: 18 }, (_, k) => (k + 1).toString(16).padStart(2, '0').repeat(32));
  return [{ id: 'branch-too-deep', pins: 'a coinbase branch of 18 levels folds to nothing: no depth', input: { ...d.input, branch: tooDeep } }];
}

/** evidence.coinbase-depth: a block whose first transaction is not a coinbase proves no depth, though its branch folds. */
export function coinbaseFirstEdgeCases(): CaseInput[] {
  const d = base('evidence.coinbase-depth', 'not-coinbase');
  const header = Buffer.from(base('evidence.coinbase-depth', 'depth-3').input.header as string, 'hex');
  const payment = Transaction.fromHex(d.input.coinbase_tx as string);
  const other = Transaction.fromHex(base('evidence.proven-tx', 'sixty-five-bytes').input.tx_hex as string);
  const leaves = [payment.getHash(), other.getHash()].map((h) => Uint8Array.from(h));
  header.set(merkleRoot(leaves).root, 36);
  return [{
    id: 'first-not-coinbase',
    pins: 'the first transaction of a block that is not a coinbase proves no depth, though its branch folds to the header\'s root',
    input: { coinbase_tx: d.input.coinbase_tx, branch: merkleBranches(leaves, [0])[0]!.map((b) => Buffer.from(b).toString('hex')), header: header.toString('hex') },
  }];
}

/** The 64-byte transaction of evidence.ts's world with a witness added: still 64 bytes without it, which is what counts. */
function sixtyFourWithWitness(): string {
  const tiny = Transaction.fromHex(base('evidence.proven-tx', 'sixty-four-bytes').input.tx_hex as string);
  tiny.setWitness(0, [Buffer.alloc(72, 1)]);
  return tiny.toHex();
}

/** A transaction with no inputs and two outputs (the count 0 then 2 is no segwit marker and flag: it reads as no inputs). */
function noInputs(): string {
  const out = '0000000000000000' + '016a';
  return `02000000` + `00` + `02` + out + out + `00000000`;
}

export function witnessSizeEdgeCases(): { proven: CaseInput[]; check: CaseInput[] } {
  const unlisted = base('evidence.check', 'spent-64-unlisted');
  const ev = unlisted.input.evidence as Json;
  return {
    proven: [
      { id: 'sixty-four-with-witness', pins: 'a transaction of 64 bytes without its witness is refused even when it travels with one (the size that counts is the txid\'s bytes)', input: { tx_hex: sixtyFourWithWitness() } },
      { id: 'no-inputs', pins: 'a transaction with no inputs is refused', input: { tx_hex: noInputs() } },
    ],
    check: [
      { id: 'spent-64-with-witness-unlisted', pins: 'a spender of 64 bytes without its witness sent with its witness and no txid list is left out, not proven by its branch (spender_unproven)', input: { ...unlisted.input, evidence: { ...ev, spent_by: { ...(ev.spent_by as Json), tx: sixtyFourWithWitness() } } } },
    ],
  };
}

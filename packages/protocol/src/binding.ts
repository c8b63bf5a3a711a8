/**
 * Anchor binding on raw Bitcoin transactions (PROTOCOL.md sections 1-3).
 *
 * Byte order: the protocol holds a txid as the bytes of its display hex. Inside a raw
 * input the prevout hash is stored reversed, so an input spends (txid, vout) when
 * reverse(input.hash) == txid and input.index == vout.
 */
import { Transaction } from 'bitcoinjs-lib';
import type { TxShape } from './tx-shape.js';
import { NodeError } from './errors.js';
import { findStamp, type StampResult } from './stamp.js';
import { envelopeHash, bytesEqual, type CallEnvelope } from './envelope.js';
import { toHex } from './hash.js';

/** Reasons a transaction does not bind; stable strings (anchors.json uses the first five). */
export type BindingReason =
  | 'outpoint_not_spent'
  | 'stamp_mismatch'
  | 'multiple_stamps'
  | 'malformed_stamp'
  | 'no_stamp'
  | 'wrong_contract'
  | 'not_a_call_stamp'
  | 'not_a_deploy_stamp'
  | 'code_hash_mismatch';

export type BindingResult = { ok: true; stampVout: number } | { ok: false; reason: BindingReason };

const REASON_TEXT: Record<BindingReason, string> = {
  outpoint_not_spent: 'the anchoring transaction does not spend the outpoint the envelope names',
  stamp_mismatch: 'the call stamp does not name this envelope hash',
  multiple_stamps: 'the anchoring transaction carries more than one SVC stamp',
  malformed_stamp: 'the anchoring transaction carries a malformed SVC stamp',
  no_stamp: 'the anchoring transaction carries no SVC stamp',
  wrong_contract: 'the call stamp names another contract',
  not_a_call_stamp: 'the anchoring transaction carries a deploy stamp, not a call stamp',
  not_a_deploy_stamp: 'the anchoring transaction carries a call stamp, not a deploy stamp',
  code_hash_mismatch: "the deploy stamp's code hash is not the artifact's code hash",
};

/** NodeError for a failed binding: anchor_mismatch (code_hash_mismatch for a deploy stamp naming other code). */
export function bindingError(reason: string): NodeError {
  const text = (REASON_TEXT as Record<string, string>)[reason] ?? `binding failed (${reason})`;
  const code = reason === 'code_hash_mismatch' ? 'code_hash_mismatch' : 'anchor_mismatch';
  return new NodeError(code, `anchor mismatch: ${text}`, { reason });
}

/** Parses raw transaction hex (or bytes); throws NodeError bad_request when it is not one transaction. */
export function parseTx(tx: string | Uint8Array | Transaction): Transaction {
  if (tx instanceof Transaction) return tx;
  try {
    if (typeof tx === 'string') {
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(tx)) throw new Error('not hex');
      return Transaction.fromHex(tx);
    }
    return Transaction.fromBuffer(tx);
  } catch (e) {
    throw new NodeError('bad_request', `not a raw Bitcoin transaction: ${(e as Error).message}`);
  }
}

/** Display-order txid hex (what Esplora shows). */
export function txidOf(tx: string | Uint8Array | Transaction): string {
  return parseTx(tx).getId();
}

/** The 32 protocol bytes of a transaction's txid (display order). */
export function txidBytesOf(tx: string | Uint8Array | Transaction): Uint8Array {
  return new Uint8Array(Buffer.from(txidOf(tx), 'hex'));
}

/** Outpoints a transaction spends, txid in display hex. */
export function spentOutpoints(tx: string | Uint8Array | Transaction): { txid: string; vout: number }[] {
  return parseTx(tx).ins.map((i) => ({ txid: toHex(Uint8Array.from(i.hash).reverse()), vout: i.index }));
}

/** Does this input spend (txid, vout)? txid in protocol (display) byte order. */
export function inputSpends(input: { hash: Uint8Array; index: number }, txid: Uint8Array, vout: number): boolean {
  if (input.index !== vout) return false;
  const h = input.hash;
  if (h.length !== 32 || txid.length !== 32) return false;
  for (let i = 0; i < 32; i++) if (h[31 - i] !== txid[i]) return false;
  return true;
}

/** Does one of the inputs spend (txid, vout)? txid in protocol (display) byte order. */
export function spendsOutpoint(tx: TxShape, txid: Uint8Array, vout: number): boolean {
  for (const input of tx.ins) if (inputSpends(input, txid, vout)) return true;
  return false;
}

function stampOf(tx: TxShape): StampResult {
  return findStamp(tx);
}

/**
 * Binding of a call (PROTOCOL section 3): T carries exactly one well-formed call stamp naming
 * E.contract_id and envelope_hash(E), and one of T's inputs spends E's outpoint. Stamp
 * checks come first, then the outpoint. `knownEnvelopeHash` (the hash of the bytes received)
 * saves re-encoding the envelope on the hot path.
 */
export function checkCallBinding(
  txHexOrTx: string | Uint8Array | Transaction,
  envelope: CallEnvelope,
  knownEnvelopeHash?: Uint8Array,
): BindingResult {
  const tx = parseTx(txHexOrTx);
  return checkCallBindingWithStamp(tx, stampOf(tx), envelope, knownEnvelopeHash);
}

/** checkCallBinding for a transaction whose stamp the caller already parsed (block application). */
export function checkCallBindingWithStamp(tx: TxShape, s: StampResult, envelope: CallEnvelope, knownEnvelopeHash?: Uint8Array): BindingResult {
  if (!s.ok) return s;
  if (s.stamp.kind !== 'call') return { ok: false, reason: 'not_a_call_stamp' };
  if (!bytesEqual(s.stamp.contractId, envelope.contractId)) return { ok: false, reason: 'wrong_contract' };
  const h = knownEnvelopeHash ?? envelopeHash(envelope);
  if (!bytesEqual(s.stamp.envelopeHash, h)) return { ok: false, reason: 'stamp_mismatch' };
  if (!spendsOutpoint(tx, envelope.outpointTxid, envelope.outpointVout)) return { ok: false, reason: 'outpoint_not_spent' };
  return { ok: true, stampVout: s.stamp.vout };
}

/** Binding of a deploy (PROTOCOL section 2): T carries exactly one well-formed deploy stamp naming `codeHash`. */
export function checkDeployBinding(txHexOrTx: string | Uint8Array | Transaction, codeHash: Uint8Array): BindingResult {
  const tx = parseTx(txHexOrTx);
  const s = stampOf(tx);
  if (!s.ok) return s;
  if (s.stamp.kind !== 'deploy') return { ok: false, reason: 'not_a_deploy_stamp' };
  if (!bytesEqual(s.stamp.codeHash, codeHash)) return { ok: false, reason: 'code_hash_mismatch' };
  return { ok: true, stampVout: s.stamp.vout };
}

/** Like checkCallBinding but throws bindingError(reason) on failure. */
export function assertCallBinding(tx: string | Uint8Array | Transaction, envelope: CallEnvelope, knownEnvelopeHash?: Uint8Array): void {
  const r = checkCallBinding(tx, envelope, knownEnvelopeHash);
  if (!r.ok) throw bindingError(r.reason);
}

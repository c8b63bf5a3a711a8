/**
 * Calls anchored by a wallet the client does not hold (a hardware signer, a custody
 * service): the client builds and signs the envelope, lays out the anchoring transaction
 * as an unsigned PSBT (BIP-174) for the wallet, takes it back signed, checks it still
 * anchors the call (the stamp, the named outpoint spent) and its fee, and submits it
 * with a Submitter (`submitAnchored`): coin evidence, post, and only once the node
 * accepted, broadcast. docs/CLI.md, "Coin evidence, and an external wallet's PSBT".
 */
import * as bitcoin from 'bitcoinjs-lib';
import { buildUnsignedAnchor, type Payment, type Utxo } from './anchor.js';
import type { WalletPublic } from './wallet.js';
import type { BuiltCall } from './sdk.js';
import { ClientError } from './errors.js';
import { checkFee } from './fees.js';
import { callStampScript } from '@svc-node/protocol/stamp';
import { checkCallBinding } from '@svc-node/protocol/binding';
import { toHex } from '@svc-node/protocol/hash';

export interface CallPsbt {
  /** The unsigned PSBT, base64: each input with its witnessUtxo (and tapInternalKey for P2TR). */
  psbt: string;
  inputs: Utxo[];
  fee: number;
  paymentVouts: number[];
  changeVout: number | null;
}

/** The signed anchoring transaction taken back from the wallet, checked against the call. */
export interface SignedAnchor {
  hex: string;
  txid: string;
  fee: number;
  vsize: number;
}

/** The call's anchoring transaction as an unsigned PSBT for `wallet` (its public side only) to sign; the envelope's outpoint is input 0. */
export function buildCallPsbt(wallet: WalletPublic, utxos: readonly Utxo[], call: BuiltCall, feeRate: number, payments: readonly Payment[] = []): CallPsbt {
  const e = call.envelope;
  const u = buildUnsignedAnchor({ wallet, utxos, feeRate, stampScript: callStampScript(e.contractId, call.envelopeHash), mustSpend: { txid: toHex(e.outpointTxid), vout: e.outpointVout }, payments });
  const r = checkCallBinding(Buffer.from(u.psbt.data.globalMap.unsignedTx.toBuffer()).toString('hex'), e, call.envelopeHash);
  if (!r.ok) throw new ClientError('internal', `the unsigned anchor does not bind the call: ${r.reason}`); // a bug in this SDK
  return { psbt: u.psbt.toBase64(), inputs: u.inputs, fee: u.fee, paymentVouts: u.paymentVouts, changeVout: u.changeVout };
}

/**
 * The wallet's signed PSBT (base64) back as a transaction: inputs it signed but did not
 * finalize are finalized here; the transaction must still anchor `call` (stamp and
 * outpoint, as the node checks) and its fee pass the sanity bound, else ClientError
 * before anything is sent (`anchor_mismatch`, `bad_argument`, `fee_too_high`).
 */
export function anchorFromSignedPsbt(signed: string, call: BuiltCall, o: { network: bitcoin.Network; allowHighFee?: boolean }): SignedAnchor {
  let psbt: bitcoin.Psbt;
  try {
    psbt = bitcoin.Psbt.fromBase64(signed, { network: o.network });
  } catch (e) {
    throw new ClientError('bad_argument', `the signed PSBT does not read: ${(e as Error).message}`);
  }
  let tx: bitcoin.Transaction;
  try {
    psbt.data.inputs.forEach((input, i) => {
      if (!input.finalScriptWitness && !input.finalScriptSig) psbt.finalizeInput(i);
    });
    tx = psbt.extractTransaction(true);
  } catch (e) {
    throw new ClientError('bad_argument', `the PSBT is not signed and final: ${(e as Error).message}`);
  }
  const hex = tx.toHex();
  const r = checkCallBinding(hex, call.envelope, call.envelopeHash);
  if (!r.ok) throw new ClientError('anchor_mismatch', `the signed transaction does not anchor this call (nothing was sent): ${r.reason}`);
  const fee = Number(psbt.getFee());
  const vsize = tx.virtualSize();
  checkFee({ fee, vsize }, Math.ceil(fee / vsize), o.allowHighFee);
  return { hex, txid: tx.getId(), fee, vsize };
}

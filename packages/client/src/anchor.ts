/**
 * Funded, signed anchoring transactions: one OP_RETURN stamp output (vout 0), then the
 * payments asked for (vouts 1..n, in the order given: a contract can credit another owner's
 * output, e.g. a token's `transfer(to_vout, ...)`), then change to the wallet (vout n+1,
 * dropped when it would be dust), inputs from the wallet's UTXOs with the envelope's named
 * outpoint first. Returned as a finalized PSBT and as raw hex.
 */
import * as bitcoin from 'bitcoinjs-lib';
import { ClientError } from './errors.js';
import { DUST, type Wallet, type WalletPublic } from './wallet.js';
import { HEX32 } from '@svc-node/protocol/identifiers';

/** A wallet output as Esplora's GET /address/:addr/utxo lists it (value in sats). */
export interface Utxo {
  txid: string;
  vout: number;
  value: number;
  status?: { confirmed: boolean; block_height?: number; block_hash?: string };
}

/** One extra output of an anchoring transaction. */
export interface Payment {
  address: string;
  /** sats; at least the output's dust threshold. */
  value: number;
}

export interface AnchorRequest {
  /** The wallet paying: its secret only when the anchor is signed here (buildAnchorTx). */
  wallet: WalletPublic;
  utxos: readonly Utxo[];
  /** The OP_RETURN stamp script (deployStampScript / callStampScript). */
  stampScript: Uint8Array;
  /** sat/vB; > 0. */
  feeRate: number;
  /** The outpoint the envelope names: always spent, as input 0. */
  mustSpend?: { txid: string; vout: number };
  /** Outputs after the stamp, at vouts 1..n in this order. */
  payments?: readonly Payment[];
}

export interface AnchorTx {
  /** Signed and finalized PSBT, base64. */
  psbt: string;
  /** The same PSBT before signing, base64 (for an external signer). */
  unsignedPsbt: string;
  /** Raw transaction hex, ready for POST /tx. */
  hex: string;
  txid: string;
  fee: number;
  vsize: number;
  inputs: Utxo[];
  stampVout: number;
  /** vout of each payment, in the order asked (1..n). */
  paymentVouts: number[];
  changeVout: number | null;
  change: number;
}

// Weight units (BIP-141). Non-witness bytes count 4, witness bytes 1.
const TX_OVERHEAD_WU = 4 * (4 + 1 + 1 + 4) + 2; // version, in/out counts (< 253), locktime; segwit marker+flag
const INPUT_BASE_WU = 4 * (32 + 4 + 1 + 4); // prevout, empty scriptSig, sequence
// P2WPKH witness upper bound: count 1, sig len 1 + 72 (DER, high-R worst case) , pubkey len 1 + 33.
const P2WPKH_WITNESS_WU = 1 + 1 + 72 + 1 + 33;
// P2TR key path with SIGHASH_DEFAULT: count 1, sig len 1 + 64.
const P2TR_WITNESS_WU = 1 + 1 + 64;

function outputWU(scriptLen: number): number {
  return 4 * (8 + (scriptLen < 253 ? 1 : 3) + scriptLen);
}

function inputWU(wallet: WalletPublic): number {
  return INPUT_BASE_WU + (wallet.kind === 'p2wpkh' ? P2WPKH_WITNESS_WU : P2TR_WITNESS_WU);
}

/** Upper bound of the vsize of an anchoring transaction with `nIn` wallet inputs (`paymentScriptLens`: one per payment output). */
export function estimateVsize(wallet: WalletPublic, nIn: number, stampLen: number, withChange: boolean, paymentScriptLens: readonly number[] = []): number {
  const payWU = paymentScriptLens.reduce((s, n) => s + outputWU(n), 0);
  const wu = TX_OVERHEAD_WU + nIn * inputWU(wallet) + outputWU(stampLen) + payWU + (withChange ? outputWU(wallet.outputScript.length) : 0);
  return Math.ceil(wu / 4);
}

/**
 * Bitcoin Core's dust threshold at its default dust relay fee (3 sat/vB): three times the
 * bytes of the output plus of the input that would spend it (a witness input counts a
 * quarter of its witness). 294 for P2WPKH, 330 for P2TR, 546 for P2PKH.
 */
export function dustThreshold(script: Uint8Array): number {
  const n = script.length;
  const witnessProgram = n >= 4 && n <= 42 && (script[0] === 0x00 || (script[0]! >= 0x51 && script[0]! <= 0x60)) && script[1] === n - 2;
  const outputBytes = 8 + (n < 253 ? 1 : 3) + n;
  const inputBytes = 32 + 4 + 1 + 4 + (witnessProgram ? Math.floor(107 / 4) : 107);
  return 3 * (outputBytes + inputBytes);
}

/** Output scripts of the payments, each checked against the wallet's network and the dust threshold. */
export function paymentOutputs(network: bitcoin.Network, payments: readonly Payment[]): { script: Uint8Array; value: number }[] {
  return payments.map((p, i) => {
    let script: Uint8Array;
    try {
      script = bitcoin.address.toOutputScript(p.address, network);
    } catch {
      throw new ClientError('bad_argument', `payment ${i + 1}: "${p.address}" is not an address of the network (${network.bech32})`);
    }
    if (!Number.isSafeInteger(p.value) || p.value < dustThreshold(script)) {
      throw new ClientError('bad_argument', `payment ${i + 1} to ${p.address}: ${p.value} sats is below the dust threshold of ${dustThreshold(script)} sats`);
    }
    return { script, value: p.value };
  });
}


function checkUtxo(u: Utxo): void {
  if (!u || !HEX32.test(u.txid) || !Number.isInteger(u.vout) || u.vout < 0 || !Number.isSafeInteger(u.value) || u.value < 0) {
    throw new ClientError('bad_argument', `malformed UTXO ${JSON.stringify(u)}`);
  }
}

/**
 * Coin selection: the named outpoint first, then confirmed before unconfirmed, larger
 * first. Stops at the first set paying the stamp, the fee and either a non-dust change
 * or no change (the remainder, below dust, goes to the fee).
 */
export function selectInputs(req: AnchorRequest): { inputs: Utxo[]; fee: number; change: number } {
  const { wallet, feeRate, stampScript } = req;
  if (!(typeof feeRate === 'number' && Number.isFinite(feeRate) && feeRate > 0 && feeRate <= 100_000)) {
    throw new ClientError('bad_argument', `fee rate must be a number of sat/vB in (0, 100000], got ${String(feeRate)}`);
  }
  req.utxos.forEach(checkUtxo);
  const outs = paymentOutputs(wallet.network, req.payments ?? []);
  const pay = outs.reduce((s, o) => s + o.value, 0);
  const payLens = outs.map((o) => o.script.length);
  const pool = [...req.utxos];
  const chosen: Utxo[] = [];
  if (req.mustSpend) {
    const i = pool.findIndex((u) => u.txid === req.mustSpend!.txid && u.vout === req.mustSpend!.vout);
    if (i < 0) {
      throw new ClientError('bad_argument', `outpoint ${req.mustSpend.txid}:${req.mustSpend.vout} is not among the wallet's UTXOs`);
    }
    chosen.push(pool.splice(i, 1)[0]!);
  }
  pool.sort((a, b) => Number(b.status?.confirmed ?? true) - Number(a.status?.confirmed ?? true) || b.value - a.value);
  const dust = DUST[wallet.kind];
  let total = chosen.reduce((s, u) => s + u.value, 0);
  for (;;) {
    if (chosen.length > 0) {
      const feeWith = Math.ceil(feeRate * estimateVsize(wallet, chosen.length, stampScript.length, true, payLens));
      if (total - pay - feeWith >= dust) return { inputs: chosen, fee: feeWith, change: total - pay - feeWith };
      const feeWithout = Math.ceil(feeRate * estimateVsize(wallet, chosen.length, stampScript.length, false, payLens));
      if (total - pay >= feeWithout) return { inputs: chosen, fee: total - pay, change: 0 };
    }
    const next = pool.shift();
    if (!next) break;
    chosen.push(next);
    total += next.value;
  }
  const need = pay + Math.ceil(feeRate * estimateVsize(wallet, Math.max(1, chosen.length), stampScript.length, false, payLens));
  throw new ClientError(
    'insufficient_funds',
    `insufficient funds: wallet ${wallet.address} has ${total} sats in ${req.utxos.length} UTXO(s), the anchoring transaction needs at least ${need} sats${pay ? ` (${pay} of them payments)` : ''} at ${feeRate} sat/vB`,
  );
}

/** The anchoring transaction before signing (an external signer's PSBT: src/client/psbt.ts), with its inputs, fee and outputs' places. */
export interface UnsignedAnchor {
  psbt: bitcoin.Psbt;
  inputs: Utxo[];
  fee: number;
  change: number;
  paymentVouts: number[];
  changeVout: number | null;
}

/** Selects the inputs and lays out the anchoring transaction as an unsigned PSBT (each input with its witnessUtxo). */
export function buildUnsignedAnchor(req: AnchorRequest): UnsignedAnchor {
  const { wallet } = req;
  const { inputs, fee, change } = selectInputs(req);
  const psbt = new bitcoin.Psbt({ network: wallet.network });
  for (const u of inputs) {
    psbt.addInput({
      hash: u.txid, // display hex; bitcoinjs reverses a string hash into the raw prevout order
      index: u.vout,
      sequence: 0xfffffffd, // opt-in RBF, so a stuck anchor can be bumped
      witnessUtxo: { script: wallet.outputScript, value: BigInt(u.value) },
      ...(wallet.kind === 'p2tr' ? { tapInternalKey: wallet.xOnly } : {}),
    });
  }
  psbt.addOutput({ script: req.stampScript, value: 0n });
  const outs = paymentOutputs(wallet.network, req.payments ?? []);
  for (const o of outs) psbt.addOutput({ script: o.script, value: BigInt(o.value) });
  const paymentVouts = outs.map((_, i) => 1 + i);
  const changeVout = change > 0 ? 1 + outs.length : null;
  if (change > 0) psbt.addOutput({ script: wallet.outputScript, value: BigInt(change) });
  return { psbt, inputs, fee, change, paymentVouts, changeVout };
}

/** Builds, signs and finalizes the anchoring transaction. */
export function buildAnchorTx(req: AnchorRequest & { wallet: Wallet }): AnchorTx {
  const { wallet } = req;
  const { psbt, inputs, fee, change, paymentVouts, changeVout } = buildUnsignedAnchor(req);
  const unsignedPsbt = psbt.toBase64();
  psbt.signAllInputs(wallet.signer);
  psbt.finalizeAllInputs();
  const tx = psbt.extractTransaction(true);
  const vsize = tx.virtualSize();
  if (fee < Math.ceil(req.feeRate * vsize)) {
    // The estimate is an upper bound; reaching this is a bug, not a user error.
    throw new ClientError('internal', `fee ${fee} below ${req.feeRate} sat/vB for vsize ${vsize}`);
  }
  return { psbt: psbt.toBase64(), unsignedPsbt, hex: tx.toHex(), txid: tx.getId(), fee, vsize, inputs, stampVout: 0, paymentVouts, changeVout, change };
}

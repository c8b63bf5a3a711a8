/** Builds and signs P2WPKH transactions for devnet tests. */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import { createHash } from 'node:crypto';

const ECPair = ECPairFactory(ecc);
export const regtest = bitcoin.networks.regtest;

export interface Wallet {
  key: ECPairInterface;
  address: string;
  script: Uint8Array;
}

export function wallet(seed: string): Wallet {
  const key = ECPair.fromPrivateKey(new Uint8Array(createHash('sha256').update(seed).digest()), { network: regtest });
  const p = bitcoin.payments.p2wpkh({ pubkey: key.publicKey, network: regtest });
  return { key, address: p.address!, script: p.output! };
}

export interface Utxo {
  txid: string;
  vout: number;
  value: bigint;
}

/** Spends `inputs` (all paying `w`) to `outputs`; signs SIGHASH_ALL. */
export function spend(w: Wallet, inputs: Utxo[], outputs: { script: Uint8Array; value: bigint }[]): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  for (const i of inputs) tx.addInput(Buffer.from(i.txid, 'hex').reverse(), i.vout);
  for (const o of outputs) tx.addOutput(o.script, o.value);
  const code = bitcoin.payments.p2pkh({ pubkey: w.key.publicKey }).output!;
  inputs.forEach((u, i) => {
    const h = tx.hashForWitnessV0(i, code, u.value, bitcoin.Transaction.SIGHASH_ALL);
    tx.setWitness(i, [bitcoin.script.signature.encode(w.key.sign(h), bitcoin.Transaction.SIGHASH_ALL), w.key.publicKey]);
  });
  return tx;
}

export function opReturn(...pushes: Uint8Array[]): Uint8Array {
  return bitcoin.script.compile([bitcoin.opcodes.OP_RETURN, ...pushes]);
}

export interface TaprootWallet {
  key: ECPairInterface;
  tweaked: ECPairInterface;
  address: string;
  script: Uint8Array;
}

/** A P2TR key-path wallet (BIP-86 style: no script tree). */
export function taprootWallet(seed: string): TaprootWallet {
  const key = ECPair.fromPrivateKey(new Uint8Array(createHash('sha256').update(seed).digest()), { network: regtest });
  const x = bitcoin.toXOnly(key.publicKey);
  const p = bitcoin.payments.p2tr({ internalPubkey: x, network: regtest });
  const tweaked = key.tweak(bitcoin.crypto.taggedHash('TapTweak', x));
  return { key, tweaked, address: p.address!, script: p.output! };
}

/** Key-path spend with SIGHASH_DEFAULT (64-byte signatures). */
export function spendTaproot(w: TaprootWallet, inputs: Utxo[], outputs: { script: Uint8Array; value: bigint }[]): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  for (const i of inputs) tx.addInput(Buffer.from(i.txid, 'hex').reverse(), i.vout);
  for (const o of outputs) tx.addOutput(o.script, o.value);
  const scripts = inputs.map(() => w.script);
  const values = inputs.map((i) => i.value);
  inputs.forEach((_u, i) => {
    const h = tx.hashForWitnessV1(i, scripts, values, bitcoin.Transaction.SIGHASH_DEFAULT);
    tx.setWitness(i, [w.tweaked.signSchnorr(h)]);
  });
  return tx;
}

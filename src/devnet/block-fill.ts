/**
 * Mainnet-sized blocks for the devnet (`POST /devnet/mine {"fill": ...}`): ordinary signed
 * payments added to a block until it holds a given number of transactions or bytes.
 *
 * The payments run in lanes: each lane holds two P2WPKH coins of the filler's own key,
 * and each block's payment of a lane spends both and pays them back (two new lane coins)
 * plus one payout to one of 64 payee addresses: 2 inputs, 3 outputs, 1 sat/vB, about 403
 * bytes and 958 weight units, the shape of most mainnet payments. So a 1.5 MB block holds
 * ~3,700 of them and weighs ~3.6 M of the 4 M weight units a block may carry: as dense
 * as mainnet's, in bytes and in weight. Lanes are funded from the faucet when more are
 * needed, or when a lane is spent out (each payment costs it PAYOUT_SATS and its fee), or
 * when a reorg took its coins away.
 *
 * Signatures: a 1.5 MB block needs ~7,400 (one per input, as mainnet's ~6,000-8,000).
 * Signed the usual way (tiny-secp256k1, 180-240 us each on this shared machine) that was
 * 5.8 s a block. The filler signs with one fixed nonce instead: R = k*G is computed once
 * and each signature is s = k^-1 (z + r d) mod n, a few BigInt operations. The signatures
 * are valid ECDSA (low S, DER) that any verifier accepts; a fixed nonce reveals the key,
 * which is public anyway (a fixed devnet seed, like the faucet's). The devnet does not
 * verify them again: the filler built them.
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import { createHash } from 'node:crypto';
import { internalBytes } from '@svc-node/protocol/bytes';

const ECPair = ECPairFactory(ecc);

/** secp256k1's group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  b %= m;
  for (; e > 0n; e >>= 1n, b = (b * b) % m) if (e & 1n) r = (r * b) % m;
  return r;
}

const toBig = (b: Uint8Array): bigint => BigInt('0x' + Buffer.from(b).toString('hex'));

function to32(x: bigint): Buffer {
  return Buffer.from(x.toString(16).padStart(64, '0'), 'hex');
}

/** ECDSA with one fixed nonce (see the header comment): valid, low-S signatures at a BigInt multiply each. */
class FixedNonceSigner {
  private readonly r: bigint;
  private readonly rd: bigint;
  private readonly kInv: bigint;
  private readonly rBytes: Buffer;

  constructor(privateKey: Uint8Array, seed: string) {
    const k = toBig(createHash('sha256').update(`${seed}/nonce`).digest()) % N;
    this.r = toBig(ecc.pointFromScalar(to32(k), true)!.subarray(1)) % N;
    this.rBytes = to32(this.r);
    this.rd = (this.r * toBig(privateKey)) % N;
    this.kInv = modPow(k, N - 2n, N);
  }

  /** The 64-byte r || s signature of the 32-byte digest `z`. */
  sign(z: Uint8Array): Buffer {
    let s = (this.kInv * ((toBig(z) + this.rd) % N)) % N;
    if (s > HALF_N) s = N - s;
    return Buffer.concat([this.rBytes, to32(s)]);
  }
}

/** How full to make a block: it ends at whichever is reached first (coinbase included). */
export interface FillTarget {
  /** Transactions in the block. */
  txs?: number;
  /** Block size in bytes (serialized, with witnesses). */
  bytes?: number;
}

/**
 * `"fill": "mainnet"`: 1.5 MB, the size of a typical recent mainnet block (1.5-2 MB,
 * 3,000-4,000 transactions); with this filler's payments, ~3,700 transactions.
 */
export const MAINNET_FILL: FillTarget = { bytes: 1_500_000 };

const FILL_SEED = 'svc-devnet/fill/v1';
/** Each lane coin starts with this: ~350 blocks of payouts and fees before the lane is refunded. */
const LANE_COIN_SATS = 200_000n;
/** The payout of each payment: the dust limit of a P2WPKH output, so a lane lasts long. */
const PAYOUT_SATS = 294n;
/** 1 sat/vB (Bitcoin Core's minimum relay fee) on the payment's 240 vbytes. */
const PAYMENT_FEE = 240n;
const PAYEES = 64;
/** Lanes funded by one fan-out transaction: 4,000 lanes (8,000 outputs, ~250 KB) fill any block. */
const LANES_PER_FUNDING = 4_000;
/** Bytes of one payment (2 P2WPKH inputs with witnesses, 3 P2WPKH outputs), for estimates. */
const PAYMENT_BYTES = 403;
/** Lanes funded beyond the estimate of a block's payments (see `payments`). */
const LANE_MARGIN = 32;

interface Coin {
  txid: string;
  vout: number;
  value: bigint;
}

/** What the filler needs of the chain: its coins' state, and the faucet for funding. */
export interface FillChain {
  /** Whether the output exists (confirmed or in the mempool) and nothing spends it yet. */
  spendable(txid: string, vout: number): boolean;
  /** Pays `sats` to `address` from the faucet into the mempool. */
  faucet(address: string, sats: bigint): { txid: string; vout: number };
  /** Accepts a transaction the filler built into the mempool. */
  submitOwn(tx: bitcoin.Transaction): void;
  readonly network: bitcoin.Network;
}

export class BlockFiller {
  private readonly key: ECPairInterface;
  private readonly signer: FixedNonceSigner;
  private readonly script: Uint8Array;
  private readonly address: string;
  private readonly scriptCode: Uint8Array;
  private readonly payees: Uint8Array[];
  private lanes: [Coin, Coin][] = [];
  private payeeTurn = 0;

  constructor(private readonly chain: FillChain) {
    this.key = ECPair.fromPrivateKey(new Uint8Array(createHash('sha256').update(FILL_SEED).digest()), { network: chain.network });
    this.signer = new FixedNonceSigner(this.key.privateKey!, FILL_SEED);
    const pay = bitcoin.payments.p2wpkh({ pubkey: this.key.publicKey, network: chain.network });
    this.script = pay.output!;
    this.address = pay.address!;
    this.scriptCode = bitcoin.payments.p2pkh({ pubkey: this.key.publicKey }).output!;
    this.payees = Array.from({ length: PAYEES }, (_, i) => bitcoin.payments.p2wpkh({ hash: createHash('sha256').update(`${FILL_SEED}/payee/${i}`).digest().subarray(0, 20), network: chain.network }).output!);
  }

  /**
   * Payments for one block that already holds `have` (its transactions and bytes, coinbase
   * included), up to `target`. Funding a lane goes through the mempool first (the caller
   * mines the mempool ahead of these payments in the same block).
   */
  payments(target: FillTarget, have: { txs: number; bytes: number }): { txs: bitcoin.Transaction[]; fees: bigint } {
    if (target.txs === undefined && target.bytes === undefined) throw new RangeError('a fill target needs txs or bytes');
    /** Payments still wanted, by the estimate of PAYMENT_BYTES each (the loop below counts exactly). */
    const wanted = (): number => {
      const byTxs = target.txs === undefined ? Infinity : Math.max(0, target.txs - have.txs);
      const byBytes = target.bytes === undefined ? Infinity : Math.max(0, Math.ceil((target.bytes - have.bytes) / PAYMENT_BYTES));
      return Math.min(byTxs, byBytes);
    };
    this.lanes = this.lanes.filter(([a, b]) => a.value + b.value >= PAYOUT_SATS + PAYMENT_FEE + 2n * 1_000n && this.chain.spendable(a.txid, a.vout) && this.chain.spendable(b.txid, b.vout));
    // Funding joins the block ahead of the payments: counted in what it holds. A few lanes
    // more than the estimate: a signature a byte shorter makes a payment 402 bytes.
    while (this.lanes.length < wanted() + LANE_MARGIN) {
      const added = this.fund(Math.min(LANES_PER_FUNDING, wanted() + LANE_MARGIN - this.lanes.length));
      have = { txs: have.txs + added.txs, bytes: have.bytes + added.bytes };
    }
    const txs: bitcoin.Transaction[] = [];
    let bytes = have.bytes;
    const full = (): boolean => (target.txs !== undefined && have.txs + txs.length >= target.txs) || (target.bytes !== undefined && bytes >= target.bytes);
    for (let l = 0; !full(); l++) {
      const [a, b] = this.lanes[l]!;
      const tx = new bitcoin.Transaction();
      tx.version = 2;
      tx.addInput(internalBytes(a.txid), a.vout, 0xfffffffd);
      tx.addInput(internalBytes(b.txid), b.vout, 0xfffffffd);
      const keep = (a.value + b.value - PAYOUT_SATS - PAYMENT_FEE) / 2n;
      tx.addOutput(this.script, keep);
      tx.addOutput(this.script, a.value + b.value - PAYOUT_SATS - PAYMENT_FEE - keep);
      tx.addOutput(this.payees[this.payeeTurn++ % PAYEES]!, PAYOUT_SATS);
      this.sign(tx, [a.value, b.value]);
      const txid = tx.getId();
      this.lanes[l] = [
        { txid, vout: 0, value: keep },
        { txid, vout: 1, value: a.value + b.value - PAYOUT_SATS - PAYMENT_FEE - keep },
      ];
      txs.push(tx);
      bytes += tx.byteLength();
    }
    return { txs, fees: BigInt(txs.length) * PAYMENT_FEE };
  }

  /** New lanes: a faucet payment to the filler, fanned out to two coins per lane (both into the mempool). */
  private fund(lanes: number): { txs: number; bytes: number } {
    const fee = BigInt(11 + 68 + 31 * 2 * lanes); // 1 sat/vB on the fan-out's vbytes
    const paid = this.chain.faucet(this.address, LANE_COIN_SATS * 2n * BigInt(lanes) + fee);
    const tx = new bitcoin.Transaction();
    tx.version = 2;
    tx.addInput(internalBytes(paid.txid), paid.vout, 0xfffffffd);
    for (let i = 0; i < 2 * lanes; i++) tx.addOutput(this.script, LANE_COIN_SATS);
    this.sign(tx, [LANE_COIN_SATS * 2n * BigInt(lanes) + fee]);
    this.chain.submitOwn(tx);
    const txid = tx.getId();
    const added = { txs: 2, bytes: tx.byteLength() + 222 }; // the faucet payment: ~222 bytes
    for (let i = 0; i < lanes; i++) {
      this.lanes.push([
        { txid, vout: 2 * i, value: LANE_COIN_SATS },
        { txid, vout: 2 * i + 1, value: LANE_COIN_SATS },
      ]);
    }
    return added;
  }

  private sign(tx: bitcoin.Transaction, values: bigint[]): void {
    values.forEach((value, i) => {
      const h = tx.hashForWitnessV0(i, this.scriptCode, value, bitcoin.Transaction.SIGHASH_ALL);
      tx.setWitness(i, [bitcoin.script.signature.encode(this.signer.sign(h), bitcoin.Transaction.SIGHASH_ALL), this.key.publicKey]);
    });
  }
}

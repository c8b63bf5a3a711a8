/**
 * Signed calls to the Bank fixture (`mint`) with their anchoring transactions, for the
 * benches that drive real nodes over a devnet chain: coins fanned out from the devnet's
 * faucet in one block, then one call per coin (a BIP-340-signed envelope and a signed
 * P2WPKH anchor built by the SDK, broadcast straight into the in-process chain's mempool).
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import type { DevnetChain } from '../../src/devnet/chain-server.js';
import { buildCallAnchor, buildDeploy, type BuiltDeploy } from '@svc-node/client/sdk';
import { walletFromSecret, networkOf, type Wallet } from '@svc-node/client/wallet';
import { encodeEnvelope, envelopeHash, signingMessage, type CallEnvelope } from '@svc-node/protocol/envelope';
import { sha256 } from '@svc-node/protocol/hash';
import { compileContract } from '../../test/helpers/ledger-fixture.js';
import { coinJson, type CoinJson } from '@svc-node/protocol/coin';
import { merkleBranches } from '@svc-node/protocol/merkle-branch';

export interface Coin {
  txid: string;
  vout: number;
  value: number;
}

/** A POST /contract_call body (with the coin the anchor spends: docs/STATE.md, "Coin evidence"). */
export interface CallBody {
  txid: string;
  contract_id: string;
  payload: string;
  anchor_tx?: string;
  coin?: CoinJson;
}

/**
 * The coin evidence (docs/STATE.md, "Coin evidence") of an anchor spending outputs of
 * `txids`, all confirmed in the in-process devnet chain: each transaction with its
 * inclusion, as a client gathers them from its endpoint (packages/client/src/coin.ts).
 */
export function chainCoinJson(chain: DevnetChain, txids: readonly string[]): CoinJson {
  return coinJson({
    prevTxs: [...new Set(txids)].map((txid) => {
      const at = chain.txPosition(txid)!;
      const block = chain.blockAt(at.height)!;
      const [branch] = merkleBranches(block.txids.map((t) => Buffer.from(t, 'hex').reverse()), [at.index]);
      return { tx: chain.getTx(txid)!.toBuffer(), at: { blockHash: block.hash, height: at.height, txIndex: at.index, branch: branch! } };
    }),
  });
}

/** The distinct txids a raw transaction's inputs spend (what its coin evidence lists). */
export function spentTxids(hex: string): string[] {
  return [...new Set(bitcoin.Transaction.fromHex(hex).ins.map((i) => Buffer.from(i.hash).reverse().toString('hex')))];
}

/** Signs a one-input P2WPKH transaction paying `outs` from `coin` (the funding fan-outs). */
export function fanOut(wallet: Wallet, coin: Coin, outs: { script: Uint8Array; value: number }[]): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(coin.txid, 'hex').reverse(), coin.vout);
  for (const o of outs) tx.addOutput(o.script, BigInt(o.value));
  const scriptCode = bitcoin.payments.p2pkh({ pubkey: wallet.publicKey }).output!;
  const h = tx.hashForWitnessV0(0, scriptCode, BigInt(coin.value), bitcoin.Transaction.SIGHASH_ALL);
  tx.setWitness(0, [bitcoin.script.signature.encode(wallet.signer.sign(h), bitcoin.Transaction.SIGHASH_ALL), wallet.publicKey]);
  return tx;
}

/**
 * Coins per fan-out transaction: ~3.2 KB, well inside a block. A call's coin evidence
 * carries its whole fan-out transaction, and a REST body or gossip payload is at most
 * 64 KiB: 100 outputs keep it a few KB (2,000, ~62 KB, would not fit).
 */
const FAN_OUT = 100;
/** Sats per call coin: the anchor's stamp, change and fee at 1 sat/vB. */
const CALL_COIN_SATS = 20_000;
/** Distinct callers (each call is signed by one of them in turn). */
const CALLERS = 64;

/** A funded wallet that builds Bank calls, one coin each. */
export class BankCalls {
  readonly wallet: Wallet;
  private readonly coins: Coin[] = [];
  private readonly callerSecrets: Uint8Array[];
  private readonly callers: Uint8Array[];
  private callId = 1n;
  contractId = '';

  constructor(
    private readonly chain: DevnetChain,
    label: string,
  ) {
    this.wallet = walletFromSecret(sha256(Buffer.from(`${label} wallet`)), 'p2wpkh', networkOf('regtest'));
    this.callerSecrets = Array.from({ length: CALLERS }, (_, i) => sha256(Buffer.from(`${label} caller ${i}`)));
    this.callers = this.callerSecrets.map((s) => ecc.xOnlyPointFromScalar(s));
  }

  /** Funds `n` call coins (plus two for the deploy) and mines them in one block. */
  fund(n: number): void {
    let left = n + 2;
    while (left > 0) {
      const k = Math.min(FAN_OUT, left);
      const value = k * CALL_COIN_SATS + 10_000;
      const big = this.chain.faucet(this.wallet.address, value);
      const tx = fanOut(this.wallet, { ...big, value }, Array.from({ length: k }, () => ({ script: this.wallet.outputScript, value: CALL_COIN_SATS })));
      this.chain.submitTx(tx.toHex());
      const txid = tx.getId();
      for (let i = 0; i < k; i++) this.coins.push({ txid, vout: i, value: CALL_COIN_SATS });
      left -= k;
    }
    this.chain.mine(1);
  }

  /** The Bank deploy, its anchor broadcast (mine it after registering with the node). */
  deploy(): BuiltDeploy {
    const dep = buildDeploy(this.wallet, [this.coins.pop()!, this.coins.pop()!], compileContract('test/fixtures/contracts/bank.svc').artifact, 1);
    dep.body.coin = chainCoinJson(this.chain, spentTxids(dep.anchor.hex));
    this.chain.submitTx(dep.anchor.hex);
    this.contractId = dep.contractId;
    return dep;
  }

  get left(): number {
    return this.coins.length;
  }

  /** The next call's body (anchor_tx included when `withAnchor`); its anchor is put in the chain's mempool unless `broadcast` is false (the caller broadcasts it). */
  next(withAnchor: boolean, broadcast = true): CallBody {
    const u = this.coins.pop();
    if (!u) throw new Error('out of call coins');
    const i = Number(this.callId % BigInt(CALLERS));
    const unsigned = {
      version: 1,
      contractId: Buffer.from(this.contractId, 'hex'),
      function: 'mint',
      args: [
        { type: 'key' as const, value: this.callers[(i + 1) % CALLERS]! },
        { type: 'u64' as const, value: 1n + (this.callId % 1000n) },
      ],
      caller: this.callers[i]!,
      callId: this.callId++,
      outpointTxid: Buffer.from(u.txid, 'hex'),
      outpointVout: u.vout,
    };
    const envelope: CallEnvelope = { ...unsigned, signature: ecc.signSchnorr(signingMessage(unsigned), this.callerSecrets[i]!, new Uint8Array(32)) };
    const bytes = encodeEnvelope(envelope);
    const payload = Buffer.from(bytes).toString('base64');
    const anchor = buildCallAnchor(this.wallet, [u], { envelope, bytes, payload, envelopeHash: envelopeHash(bytes) }, 1);
    if (broadcast) this.chain.submitTx(anchor.hex);
    return { txid: anchor.txid, contract_id: this.contractId, payload, ...(withAnchor ? { anchor_tx: anchor.hex } : {}), coin: this.coinOf(u.txid) };
  }

  /** The coin evidence of a call coin: its fan-out transaction with its inclusion, as a client gathers it (one per fan-out, cached). */
  private readonly coinJsons = new Map<string, CoinJson>();
  private coinOf(txid: string): CoinJson {
    let c = this.coinJsons.get(txid);
    if (!c) this.coinJsons.set(txid, (c = chainCoinJson(this.chain, [txid])));
    return c;
  }
}

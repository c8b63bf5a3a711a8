/**
 * Signed calls to the Bank fixture (`mint`) with their anchoring transactions, for the
 * benches that drive real nodes over a devnet chain: coins fanned out from the devnet's
 * faucet in one block, then one call per coin (a BIP-340-signed envelope and a signed
 * P2WPKH anchor built by the SDK, broadcast straight into the in-process chain's mempool).
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import type { DevnetChain } from '../../src/devnet/chain-server.js';
import { buildCallAnchor, buildDeploy, type BuiltDeploy } from '../../src/client/sdk.js';
import { walletFromSecret, networkOf, type Wallet } from '../../src/client/wallet.js';
import { encodeEnvelope, envelopeHash, signingMessage, type CallEnvelope } from '../../src/protocol/envelope.js';
import { sha256 } from '../../src/protocol/hash.js';
import { compileContract } from '../../test/helpers/ledger-fixture.js';

export interface Coin {
  txid: string;
  vout: number;
  value: number;
}

/** A POST /contract_call body. */
export interface CallBody {
  txid: string;
  contract_id: string;
  payload: string;
  anchor_tx?: string;
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

/** Coins per fan-out transaction: ~62 KB, well inside a block. */
const FAN_OUT = 2_000;
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
    this.chain.submitTx(dep.anchor.hex);
    this.contractId = dep.contractId;
    return dep;
  }

  get left(): number {
    return this.coins.length;
  }

  /** The next call's body (anchor_tx included when `withAnchor`); its anchor is broadcast. */
  next(withAnchor: boolean): CallBody {
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
    this.chain.submitTx(anchor.hex);
    return { txid: anchor.txid, contract_id: this.contractId, payload, ...(withAnchor ? { anchor_tx: anchor.hex } : {}) };
  }
}

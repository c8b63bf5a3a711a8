/**
 * Wallet keys for anchoring transactions: one secp256k1 secret spending either a P2WPKH
 * output (BIP-141) or a P2TR key-path output (BIP-86 style, no script tree).
 *
 * Text form (flag --wallet-key or SVC_WALLET_KEY): `[p2wpkh:|p2tr:]<secret>` where the
 * secret is 64 hex characters or a WIF. Without a prefix the wallet is P2WPKH.
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import { ClientError } from './errors.js';

bitcoin.initEccLib(ecc);
export const ECPair = ECPairFactory(ecc);

export type WalletKind = 'p2wpkh' | 'p2tr';
export type NetworkName = 'bitcoin' | 'testnet' | 'signet' | 'regtest';

export function networkOf(name: string): bitcoin.Network {
  switch (name) {
    case 'bitcoin':
    case 'mainnet':
      return bitcoin.networks.bitcoin;
    case 'testnet':
    case 'signet':
      return bitcoin.networks.testnet;
    case 'regtest':
      return bitcoin.networks.regtest;
    default:
      throw new ClientError('bad_argument', `unknown network "${name}" (bitcoin, testnet, signet, regtest)`);
  }
}

export interface Wallet {
  kind: WalletKind;
  network: bitcoin.Network;
  /** 32-byte secret key. */
  secret: Uint8Array;
  /** 33-byte compressed public key. */
  publicKey: Uint8Array;
  /** 32-byte x-only internal key (P2TR) or of publicKey (P2WPKH). */
  xOnly: Uint8Array;
  address: string;
  /** scriptPubKey of the wallet's outputs. */
  outputScript: Uint8Array;
  /** Signer for the PSBT inputs (tweaked for P2TR key path). */
  signer: ECPairInterface;
}

/** What a wallet shows without its secret: enough to lay out an anchor another signer signs (src/client/psbt.ts). */
export type WalletPublic = Omit<Wallet, 'secret' | 'signer'>;

/**
 * A wallet the client does not hold (a hardware signer, another service): its 33-byte
 * compressed public key gives its address and output script; anchors are built as PSBTs
 * for it to sign (src/client/psbt.ts).
 */
export function watchOnlyWallet(publicKey: Uint8Array, kind: WalletKind, network: bitcoin.Network): WalletPublic {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 33 || !ecc.isPoint(publicKey)) throw new ClientError('bad_key', 'wallet public key must be a 33-byte compressed secp256k1 point');
  const xOnly = bitcoin.toXOnly(publicKey);
  const pay = kind === 'p2wpkh' ? bitcoin.payments.p2wpkh({ pubkey: publicKey, network }) : bitcoin.payments.p2tr({ internalPubkey: xOnly, network });
  return { kind, network, publicKey, xOnly, address: pay.address!, outputScript: pay.output! };
}

export function walletFromSecret(secret: Uint8Array, kind: WalletKind, network: bitcoin.Network): Wallet {
  if (!(secret instanceof Uint8Array) || secret.length !== 32 || !ecc.isPrivate(secret)) {
    throw new ClientError('bad_key', 'wallet key is not a valid secp256k1 secret key');
  }
  const pair = ECPair.fromPrivateKey(secret, { network });
  const xOnly = bitcoin.toXOnly(pair.publicKey);
  if (kind === 'p2wpkh') {
    const pay = bitcoin.payments.p2wpkh({ pubkey: pair.publicKey, network });
    return { kind, network, secret, publicKey: pair.publicKey, xOnly, address: pay.address!, outputScript: pay.output!, signer: pair };
  }
  const pay = bitcoin.payments.p2tr({ internalPubkey: xOnly, network });
  const signer = pair.tweak(bitcoin.crypto.taggedHash('TapTweak', xOnly));
  return { kind, network, secret, publicKey: pair.publicKey, xOnly, address: pay.address!, outputScript: pay.output!, signer };
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** Reads a 32-byte secret from 64 hex characters or a WIF (any network). */
export function parseSecret(text: string, what = 'key'): Uint8Array {
  const t = text.trim();
  if (HEX64.test(t)) {
    const b = new Uint8Array(Buffer.from(t, 'hex'));
    if (!ecc.isPrivate(b)) throw new ClientError('bad_key', `${what} is not a valid secp256k1 secret key`);
    return b;
  }
  try {
    const pair = ECPair.fromWIF(t, [bitcoin.networks.bitcoin, bitcoin.networks.testnet, bitcoin.networks.regtest]);
    return pair.privateKey!;
  } catch {
    throw new ClientError('bad_key', `${what} must be 64 hex characters or a WIF`);
  }
}

/** Parses `[p2wpkh:|p2tr:]<hex or WIF>`. */
export function parseWalletKey(text: string, network: bitcoin.Network): Wallet {
  if (typeof text !== 'string' || text.length === 0) throw new ClientError('bad_key', 'no wallet key given');
  let kind: WalletKind = 'p2wpkh';
  let rest = text.trim();
  const m = /^(p2wpkh|p2tr):(.*)$/.exec(rest);
  if (m) {
    kind = m[1] as WalletKind;
    rest = m[2]!;
  } else if (/^[a-z0-9]+:/.test(rest)) {
    throw new ClientError('bad_key', 'wallet key prefix must be p2wpkh: or p2tr:');
  }
  return walletFromSecret(parseSecret(rest, 'wallet key'), kind, network);
}

/** Dust limits of Bitcoin Core's default relay policy (3 sat/vB dust relay fee). */
export const DUST = { p2wpkh: 294, p2tr: 330 } as const;

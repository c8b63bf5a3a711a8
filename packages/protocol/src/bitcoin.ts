/**
 * Bitcoin consensus-format helpers shared by the Esplora client, the block watcher, the
 * devnet chain and payload evidence (evidence.ts), so they live in the protocol layer
 * that all of those import: strict parsing of raw blocks, headers and transactions, and the
 * integrity checks every chain-data answer must pass (hash = requested hash, txids fold
 * to the header's merkle root, witness commitment, no trailing bytes).
 *
 * Byte order: every hash handled as a string here is display hex (the reverse of the
 * bytes inside raw headers and inputs), as Esplora spells it in URLs and JSON.
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { hash } from 'node:crypto';
import { displayHex, sha256d } from './hash.js';
import { merkleRoot } from './merkle-branch.js';
import { parseHeader80, type Header80 } from './headers.js';

let eccReady = false;
/** bitcoinjs-lib needs an ecc backend for taproot helpers; idempotent. */
export function initEcc(): void {
  if (eccReady) return;
  bitcoin.initEccLib(ecc);
  eccReady = true;
}

// The hash, merkle tree and header homes (packages/protocol/src/hash.ts, packages/protocol/src/merkle-branch.ts,
// packages/protocol/src/headers.ts), under the names the chain-data code has always imported them by.
export { sha256d, displayHex } from './hash.js';
export { merkleRoot } from './merkle-branch.js';
export { parseHeader80 as parseHeaderBytes, headerHash, headerPrevHash, hashMeetsTarget, type Header80 as ParsedHeader } from './headers.js';

/** Internal-order bytes of a display-hex hash. */
export function internalBytes(display: string): Uint8Array {
  return new Uint8Array(Buffer.from(display, 'hex').reverse());
}

/** Merkle root (display hex) of a list of display-hex txids; null if mutated/empty. */
export function merkleRootOfTxids(txids: readonly string[]): string | null {
  if (txids.length === 0) return null;
  const { root, mutated } = merkleRoot(txids.map(internalBytes));
  return mutated ? null : displayHex(root);
}

export interface ParsedBlock {
  hash: string;
  header: Header80;
  /** Transactions in block order (coinbase first). Treat as read-only: may be cached. */
  txs: bitcoin.Transaction[];
  txids: string[];
  size: number;
  weight: number;
}

/**
 * Parses a raw block and checks everything a server could get wrong or forge:
 * complete parse with no trailing bytes, hash = `expectedHash` (when given), at least one
 * transaction, coinbase first and only first, unique txids folding to the header's merkle
 * root (no CVE-2012-2459 mutation), and the segwit witness commitment when any
 * transaction carries a witness. Throws Error with a reason on any failure.
 */
export function parseRawBlock(bytes: Uint8Array, expectedHash?: string): ParsedBlock {
  if (bytes.length < 81) throw new Error('raw block too short');
  const header = parseHeader80(bytes.subarray(0, 80));
  if (expectedHash !== undefined && header.hash !== expectedHash) {
    throw new Error(`block hashes to ${header.hash}, expected ${expectedHash}`);
  }
  let block: bitcoin.Block;
  try {
    block = bitcoin.Block.fromBuffer(bytes);
  } catch (e) {
    throw new Error(`raw block does not parse: ${(e as Error).message}`);
  }
  const txs = block.transactions ?? [];
  if (txs.length === 0) throw new Error('block holds no transactions');
  if (block.byteLength(false, true) !== bytes.length) throw new Error('raw block has trailing or missing bytes');
  txs.forEach((tx, i) => {
    if (tx.isCoinbase() !== (i === 0)) throw new Error(`transaction ${i} coinbase position is wrong`);
  });
  // Every hash from the block's own bytes with node:crypto: bitcoinjs's getId and
  // getHash(true) re-serialise each transaction and hash it in JS, which was four fifths
  // of parsing a 3,000-transaction block (about 400 ms of 500). The whole block has its
  // canonical length (checked above), so every length prefix is minimal and transaction
  // i lies at the sum of the lengths before it.
  const txids: string[] = [];
  const wtxids: Uint8Array[] = [];
  let witnesses = false;
  let at = 80 + varIntSize(txs.length);
  for (const tx of txs) {
    const witness = tx.hasWitnesses();
    const raw = bytes.subarray(at, at + tx.byteLength(witness));
    at += raw.length;
    txids.push(txidFromRaw(tx, raw));
    wtxids.push(witness ? sha256d(raw) : internalBytes(txids[txids.length - 1]!));
    witnesses ||= witness;
  }
  if (new Set(txids).size !== txids.length) throw new Error('duplicate txids in block');
  const root = merkleRootOfTxids(txids);
  if (root !== header.merkleRoot) throw new Error('txids do not match the merkle root');
  if (witnesses) checkWitnessCommitment(txs, wtxids);
  return { hash: header.hash, header, txs, txids, size: bytes.length, weight: block.weight() };
}

/** Bytes of a Bitcoin CompactSize integer's minimal encoding. */
function varIntSize(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9;
}

/** BIP-141: the last coinbase output starting 6a24aa21a9ed commits to the wtxid root. */
function checkWitnessCommitment(txs: bitcoin.Transaction[], wtxidsInBlock: Uint8Array[]): void {
  const cb = txs[0]!;
  let commit: Uint8Array | null = null;
  for (const o of cb.outs) {
    const s = o.script;
    if (s.length >= 38 && s[0] === 0x6a && s[1] === 0x24 && s[2] === 0xaa && s[3] === 0x21 && s[4] === 0xa9 && s[5] === 0xed) {
      commit = s.subarray(6, 38);
    }
  }
  if (!commit) throw new Error('segwit block without witness commitment');
  const reserved = cb.ins[0]?.witness;
  if (!reserved || reserved.length !== 1 || reserved[0]!.length !== 32) throw new Error('coinbase witness reserved value missing');
  // The coinbase's wtxid counts as zero (BIP-141).
  const wroot = merkleRoot([new Uint8Array(32), ...wtxidsInBlock.slice(1)]).root;
  const buf = new Uint8Array(64);
  buf.set(wroot, 0);
  buf.set(reserved[0]!, 32);
  if (Buffer.compare(sha256d(buf), commit) !== 0) throw new Error('witness commitment mismatch');
}

/**
 * The txid (display hex) of `tx`, parsed from exactly the bytes `raw`, hashed with
 * node:crypto straight from those bytes. bitcoinjs's `getId` re-serialises the
 * transaction and hashes with a JS SHA-256, which was about a tenth of the core's main
 * thread per intake call (every call parses its anchoring transaction). The txid hashes
 * the serialisation without witness data (BIP-144): for a segwit transaction that is
 * `raw` less the marker and flag (bytes 4-5) and the witnesses (between the outputs and
 * the 4-byte locktime). Only when `raw` is the canonical serialisation (its length is
 * what bitcoinjs would write, so every length prefix is minimal and the regions line up)
 * is that slicing valid; otherwise this falls back to `getId`.
 */
export function txidFromRaw(tx: bitcoin.Transaction, raw: Uint8Array): string {
  const witness = tx.hasWitnesses();
  if (raw.length !== tx.byteLength(witness)) return tx.getId();
  let stripped = raw;
  if (witness) {
    const insOuts = tx.byteLength(false) - 8;
    stripped = Buffer.concat([raw.subarray(0, 4), raw.subarray(6, 6 + insOuts), raw.subarray(raw.length - 4)]);
  }
  return hash('sha256', hash('sha256', stripped, 'buffer'), 'buffer').reverse().toString('hex');
}

/** Parses a full transaction hex strictly; checks it hashes to `expectedTxid` when given. */
export function parseTxHex(hex: string, expectedTxid?: string): bitcoin.Transaction {
  if (!/^(?:[0-9a-f]{2})+$/.test(hex)) throw new Error('transaction hex is malformed');
  const b = Buffer.from(hex, 'hex');
  // A plain Uint8Array view, as bitcoinjs's own fromHex makes: its reader then copies
  // each field (Uint8Array slice) instead of handing out views of a pooled Buffer.
  const raw = new Uint8Array(b.buffer, b.byteOffset, b.length);
  let tx: bitcoin.Transaction;
  try {
    tx = bitcoin.Transaction.fromBuffer(raw);
  } catch (e) {
    throw new Error(`transaction does not parse: ${(e as Error).message}`);
  }
  if (tx.ins.length === 0 || tx.outs.length === 0) throw new Error('transaction has no inputs or no outputs');
  if (expectedTxid !== undefined && txidFromRaw(tx, raw) !== expectedTxid) {
    throw new Error(`transaction hashes to ${tx.getId()}, expected ${expectedTxid}`);
  }
  return tx;
}

/** Regtest/mainnet compact target → difficulty relative to the mainnet minimum (0x1d00ffff), as Bitcoin Core computes it. */
export function difficultyOfBits(bits: number): number {
  let shift = (bits >>> 24) & 0xff;
  let diff = 0x0000ffff / (bits & 0x00ffffff);
  while (shift < 29) {
    diff *= 256;
    shift++;
  }
  while (shift > 29) {
    diff /= 256;
    shift--;
  }
  return diff;
}

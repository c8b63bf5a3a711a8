/**
 * The coin behind a pending payload (docs/STATE.md, "Coin evidence"): a node holds a
 * payload whose anchor is not confirmed only when the anchor spends a real coin its
 * sender controls, as Bitcoin's own mempool admits a transaction only when its inputs
 * exist and its scripts verify. The evidence is the transactions that created the
 * outputs the anchor spends (their bytes hash to each input's txid, so amounts and
 * scripts are read from them), each with, where known, the inclusion that places it in
 * a block. This is node policy about what it holds while waiting, never consensus: a
 * call confirmed in a block is applied whether or not its coin was ever seen.
 *
 * Checked in two parts, as Bitcoin evidence is (evidence.ts):
 * - `checkCoin` (here, pure, run in the worker pool): every prev tx parses strictly and
 *   is used by some input, every input's prevout is in one of them, and the input that
 *   spends the checked outpoint carries a valid signature for that output's script,
 *   checked the way Bitcoin checks it (bitcoinjs-lib's sighash, tiny-secp256k1's
 *   verify), for P2WPKH, P2TR key path, P2PKH and P2SH-P2WPKH. Other scripts are refused:
 *   their payloads wait for a confirmed anchor.
 * - the writer's: the checked outpoint's transaction is confirmed in a header the node
 *   holds (its inclusion folds to that header's merkle root), or it is the anchor of a
 *   payload the node holds pending, at most MAX_UNCONFIRMED_ANCESTORS deep; and the
 *   pending set's rules (one coin, one waiting payload; who waits when it is full).
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { NodeError } from './errors.js';
import { decodeInclusion, MAX_EVIDENCE_TX_BYTES, parseProven, type Inclusion } from './evidence.js';
import { displayHex } from './bytes.js';

/** A transaction that created an output the anchor spends, and where known the block that holds it. */
export interface PrevTx {
  /** Raw, as broadcast (with or without its witness). */
  tx: Uint8Array;
  /** Its inclusion in a block (evidence.ts form); null: unconfirmed, or not proven. */
  at: Inclusion | null;
}

/** The coin evidence of a payload: one entry per distinct transaction the anchor's inputs spend. */
export interface CoinEvidence {
  prevTxs: PrevTx[];
}

/**
 * Most prev txs a coin evidence carries. A payload and its evidence travel in one gossip
 * request of 66,560 bytes and one REST body of 65,536, so no wallet's anchor that fits
 * spends more distinct transactions than this (each is at least 60 bytes, and real ones
 * a few hundred); the bound keeps a decoder's loop short whatever the bytes say.
 */
export const MAX_COIN_PREV_TXS = 64;

/**
 * Longest chain of unconfirmed anchors a payload may hang from (its coin created by the
 * anchor of a payload held pending, whose coin was too, ...). Bitcoin Core's default
 * ancestor limit (-limitancestorcount), for the same reason: a chain longer than the
 * mempools relay does not confirm as one, and each link is held on trust in the one below.
 */
export const MAX_UNCONFIRMED_ANCESTORS = 25;

export type CoinScript = 'p2wpkh' | 'p2tr' | 'p2pkh' | 'p2sh-p2wpkh';

/** What the pool found in a coin evidence that holds by itself (plain data: it crosses threads). */
export interface CheckedCoin {
  /** The outpoint checked: a call's named outpoint, a deploy's anchor's first input. */
  outpoint: string;
  /** The anchor's input spending it. */
  vin: number;
  script: CoinScript;
  /** Per anchor input, in order: the prev tx it spends (index into prevTxs) and the output's value in sats (decimal). */
  inputs: { prev: number; value: string }[];
  /** The prev txs' txids, in the evidence's order. */
  prevTxids: string[];
  /** Sum of the anchor's output values, sats (decimal). */
  outputsValue: string;
  /** The anchor's virtual size (BIP141 weight / 4, rounded up). */
  vsize: number;
}

export type CoinCheck = { ok: true; coin: CheckedCoin } | { ok: false; reason: string };

const SIGHASH_TYPES = new Set([0x01, 0x02, 0x03, 0x81, 0x82, 0x83]);

/** Which of the supported scripts `script` is; null for any other. */
export function coinScriptOf(script: Uint8Array): CoinScript | null {
  const s = script;
  if (s.length === 22 && s[0] === 0x00 && s[1] === 0x14) return 'p2wpkh';
  if (s.length === 34 && s[0] === 0x51 && s[1] === 0x20) return 'p2tr';
  if (s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) return 'p2pkh';
  if (s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return 'p2sh-p2wpkh';
  return null;
}

const P2PKH_HEAD = Buffer.from([0x76, 0xa9, 0x14]);
const P2PKH_TAIL = Buffer.from([0x88, 0xac]);

/** A verify's answer; false where tiny-secp256k1 throws (a key off the curve, an x-only key that is none). */
function verifies(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return false;
  }
}

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

/** An ECDSA signature with its sighash byte, strict DER (BIP66), low S (standardness); null when not one. */
function ecdsaSig(b: Uint8Array | undefined): { signature: Uint8Array; hashType: number } | null {
  if (!(b instanceof Uint8Array)) return null;
  try {
    const d = bitcoin.script.signature.decode(b);
    return SIGHASH_TYPES.has(d.hashType) ? d : null;
  } catch {
    return null;
  }
}

/**
 * Whether the anchor's input `vin` is signed for `prevouts[vin]` as Bitcoin checks it
 * (the one signature verify this costs); why not otherwise. `prevouts`: every input's
 * spent output, which the taproot sighash commits to.
 */
function verifyInput(anchor: bitcoin.Transaction, vin: number, prevouts: { script: Uint8Array; value: bigint }[]): { ok: true; script: CoinScript } | { ok: false; reason: string } {
  const input = anchor.ins[vin]!;
  const prev = prevouts[vin]!;
  const kind = coinScriptOf(prev.script);
  const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });
  if (!kind) return fail('the coin is locked by a script this node does not check without a confirmed anchor (P2WPKH, P2TR key path, P2PKH and P2SH-P2WPKH are checked)');
  const w = input.witness;
  if (kind === 'p2wpkh' || kind === 'p2sh-p2wpkh') {
    let program: Uint8Array;
    if (kind === 'p2wpkh') {
      if (input.script.length !== 0) return fail('a P2WPKH spend carries a non-empty scriptSig');
      program = prev.script.subarray(2);
    } else {
      const redeem = bitcoin.script.decompile(input.script);
      const r = redeem?.length === 1 ? redeem[0] : null;
      if (!(r instanceof Uint8Array) || r.length !== 22 || r[0] !== 0x00 || r[1] !== 0x14) return fail('a P2SH-P2WPKH spend does not push exactly its P2WPKH redeem script');
      if (!same(bitcoin.crypto.hash160(r), prev.script.subarray(2, 22))) return fail("the redeem script does not hash to the coin's script hash");
      program = r.subarray(2);
    }
    if (w.length !== 2) return fail('a P2WPKH spend has not exactly two witness items (signature, public key)');
    const sig = ecdsaSig(w[0]);
    const pub = w[1]!;
    if (!sig) return fail('the witness signature is not a strict DER signature with a defined sighash type');
    // A compressed key (BIP143 standardness); whether it is on the curve, verify says.
    if (pub.length !== 33 || (pub[0] !== 0x02 && pub[0] !== 0x03)) return fail('the witness public key is not a compressed secp256k1 key');
    if (!same(bitcoin.crypto.hash160(pub), program)) return fail("the witness public key does not hash to the coin's key hash");
    // BIP143's scriptCode of a P2WPKH spend: the P2PKH script of its key hash (bitcoinjs's
    // payments object builds the same 25 bytes at ~50 µs, a quarter of the verify).
    const scriptCode = Buffer.concat([P2PKH_HEAD, program, P2PKH_TAIL]);
    const h = anchor.hashForWitnessV0(vin, scriptCode, prev.value, sig.hashType);
    return verifies(() => ecc.verify(h, pub, sig.signature, true)) ? { ok: true, script: kind } : fail("the signature does not verify against the coin's key");
  }
  if (kind === 'p2pkh') {
    if (w.length !== 0) return fail('a P2PKH spend carries a witness');
    const chunks = bitcoin.script.decompile(input.script);
    if (!chunks || chunks.length !== 2 || !(chunks[0] instanceof Uint8Array) || !(chunks[1] instanceof Uint8Array)) return fail('a P2PKH scriptSig is not exactly two pushes (signature, public key)');
    const sig = ecdsaSig(chunks[0]);
    const pub = chunks[1];
    if (!sig) return fail('the scriptSig signature is not a strict DER signature with a defined sighash type');
    if (!same(bitcoin.crypto.hash160(pub), prev.script.subarray(3, 23))) return fail("the public key does not hash to the coin's key hash");
    const h = anchor.hashForSignature(vin, prev.script, sig.hashType);
    return verifies(() => ecc.verify(h, pub, sig.signature, true)) ? { ok: true, script: kind } : fail("the signature does not verify against the coin's key");
  }
  // P2TR key path: one witness item, the signature (an annex is not standard: refused).
  if (input.script.length !== 0) return fail('a P2TR spend carries a non-empty scriptSig');
  if (w.length !== 1) return fail('a P2TR spend that is not a key-path spend (one witness item) is checked only once its anchor confirms');
  const s = w[0]!;
  let hashType = 0x00;
  if (s.length === 65) {
    hashType = s[64]!;
    if (!SIGHASH_TYPES.has(hashType)) return fail('the taproot signature has an undefined sighash type');
  } else if (s.length !== 64) return fail('the taproot signature is not 64 or 65 bytes');
  // BIP341: SIGHASH_SINGLE without the matching output fails.
  if ((hashType & 0x03) === 0x03 && vin >= anchor.outs.length) return fail('SIGHASH_SINGLE without a matching output');
  const h = anchor.hashForWitnessV1(
    vin,
    prevouts.map((p) => p.script),
    prevouts.map((p) => p.value),
    hashType,
  );
  return verifies(() => ecc.verifySchnorr(h, prev.script.subarray(2), s.subarray(0, 64))) ? { ok: true, script: 'p2tr' } : fail("the signature does not verify against the coin's key");
}

/**
 * The stateless check of a coin evidence (see the file header) for the anchor `anchorTx`
 * (raw, already checked to hash to the payload's txid) and the outpoint checked
 * (`null`: the anchor's first input, a deploy's).
 */
export function checkCoin(anchorTx: Uint8Array, outpoint: { txid: string; vout: number } | null, coin: CoinEvidence, opts: { verify?: boolean } = {}): CoinCheck {
  const fail = (reason: string): CoinCheck => ({ ok: false, reason });
  if (!coin || !Array.isArray(coin.prevTxs) || coin.prevTxs.length === 0) return fail('no prev txs');
  if (coin.prevTxs.length > MAX_COIN_PREV_TXS) return fail(`more than ${MAX_COIN_PREV_TXS} prev txs`);
  const anchor = parseProven(anchorTx);
  if (!anchor.ok) return fail(`the anchoring transaction ${anchor.reason}`);
  const byTxid = new Map<string, { i: number; tx: bitcoin.Transaction }>();
  for (let i = 0; i < coin.prevTxs.length; i++) {
    const p = parseProven(coin.prevTxs[i]!.tx);
    if (!p.ok) return fail(`prev tx ${i} ${p.reason}`);
    if (byTxid.has(p.txid)) return fail(`prev tx ${i} (${p.txid}) is given twice`);
    byTxid.set(p.txid, { i, tx: p.tx });
  }
  const inputs: CheckedCoin['inputs'] = [];
  const prevouts: { script: Uint8Array; value: bigint }[] = [];
  const used = new Set<number>();
  for (const [n, input] of anchor.tx.ins.entries()) {
    const txid = displayHex(input.hash);
    const p = byTxid.get(txid);
    if (!p) return fail(`input ${n} spends ${txid}, which is not among the prev txs`);
    const out = p.tx.outs[input.index];
    if (!out) return fail(`input ${n} spends ${txid}:${input.index}, an output that transaction does not have`);
    used.add(p.i);
    inputs.push({ prev: p.i, value: out.value.toString() });
    prevouts.push({ script: out.script, value: out.value });
  }
  if (used.size !== coin.prevTxs.length) return fail('a prev tx is spent by no input of the anchor');
  const first = anchor.tx.ins[0]!;
  const named = outpoint ?? { txid: displayHex(first.hash), vout: first.index };
  const vin = anchor.tx.ins.findIndex((i) => i.index === named.vout && displayHex(i.hash) === named.txid);
  if (vin < 0) return fail(`the anchor does not spend ${named.txid}:${named.vout}`);
  // Without `verify` (the writer re-reading coins it checked at admission from its own
  // store, at start-up) the script type is read and the signature taken as checked.
  const v = opts.verify === false ? { ok: true as const, script: coinScriptOf(prevouts[vin]!.script) ?? 'p2wpkh' } : verifyInput(anchor.tx, vin, prevouts);
  if (!v.ok) return fail(`input ${vin}: ${v.reason}`);
  let outputsValue = 0n;
  for (const o of anchor.tx.outs) outputsValue += o.value;
  return {
    ok: true,
    coin: {
      outpoint: `${named.txid}:${named.vout}`,
      vin,
      script: v.script,
      inputs,
      prevTxids: [...byTxid.keys()],
      outputsValue: outputsValue.toString(),
      vsize: anchor.tx.virtualSize(),
    },
  };
}

/** A coin check's refusal as the node's error. */
export function coinError(reason: string): NodeError {
  return new NodeError('bad_coin', `the coin evidence does not show a coin the sender controls: ${reason}`);
}

/**
 * The fee the anchor pays out of proven coins, sats: the values of the inputs whose prev
 * tx is proven (`proven[i]` for prevTxs[i]) less every output, at least 0. An input whose
 * creating transaction is not proven counts nothing, so no one raises their place in the
 * pending set with a made-up coin.
 */
export function provenFee(c: Pick<CheckedCoin, 'inputs' | 'outputsValue'>, proven: readonly boolean[]): bigint {
  let sum = 0n;
  for (const i of c.inputs) if (proven[i.prev]) sum += BigInt(i.value);
  const fee = sum - BigInt(c.outputsValue);
  return fee > 0n ? fee : 0n;
}

// ------------------------------------------------------------------ JSON (REST bodies)

/** An inclusion in a REST body: as in call proofs (evidence.ts, InclusionJson) without the header. */
export interface CoinInclusionJson {
  block_hash: string;
  height: number;
  tx_index: number;
  /** Sibling hashes, hex of their internal-order bytes, leaf level first. */
  branch: string[];
}
/** The `coin` member of POST /contract_call and POST /deploy_contract (docs/STATE.md, "Coin evidence"). */
export interface CoinJson {
  prev_txs: { tx: string; at: CoinInclusionJson | null }[];
}

const hexOf = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

export function coinJson(c: CoinEvidence): CoinJson {
  return {
    prev_txs: c.prevTxs.map((p) => ({
      tx: hexOf(p.tx),
      at: p.at ? { block_hash: p.at.blockHash, height: p.at.height, tx_index: p.at.txIndex, branch: p.at.branch.map(hexOf) } : null,
    })),
  };
}

/**
 * The `coin` member of a POST body read strictly: every member present with its type,
 * hex lowercase, at most MAX_COIN_PREV_TXS prev txs of at most MAX_EVIDENCE_TX_BYTES,
 * branches of at most MAX_BRANCH_DEPTH hashes. Absent or null: undefined. Throws
 * NodeError bad_request naming the member.
 */
export function parseCoinJson(v: unknown): CoinEvidence | undefined {
  if (v === undefined || v === null) return undefined;
  const bad = (field: string, what: string): never => {
    throw new NodeError('bad_request', `coin.${field} ${what}`, { field: `coin.${field}` });
  };
  const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
  const hexBytes = (x: unknown, field: string): Uint8Array => {
    if (typeof x !== 'string' || x.length === 0 || x.length % 2 !== 0 || !/^[0-9a-f]+$/.test(x)) bad(field, 'is not lowercase hex');
    return new Uint8Array(Buffer.from(x as string, 'hex'));
  };
  if (!isObj(v)) bad('', 'is not an object');
  const list = (v as Record<string, unknown>)['prev_txs'];
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_COIN_PREV_TXS) bad('prev_txs', `is not a list of 1 to ${MAX_COIN_PREV_TXS} entries`);
  return {
    prevTxs: (list as unknown[]).map((e, i) => {
      const f = `prev_txs[${i}]`;
      if (!isObj(e)) bad(f, 'is not an object');
      const o = e as Record<string, unknown>;
      const tx = hexBytes(o['tx'], `${f}.tx`);
      if (tx.length > MAX_EVIDENCE_TX_BYTES) bad(`${f}.tx`, `is more than ${MAX_EVIDENCE_TX_BYTES} bytes`);
      const a = o['at'];
      if (a === null || a === undefined) return { tx, at: null };
      const at = decodeInclusion(a, 'hex');
      if (!at.ok) return bad(at.fault.member ? `${f}.at.${at.fault.member}` : `${f}.at`, at.fault.what);
      return { tx, at: at.inclusion };
    }),
  };
}

/**
 * Coin evidence (packages/protocol/src/coin.ts): the stateless check accepts a coin its sender
 * controls for each script a wallet makes (P2WPKH, P2TR key path, P2PKH, P2SH-P2WPKH),
 * signed by bitcoinjs-lib as a wallet signs, and refuses coins that do not exist in the
 * bytes given or that the sender does not control; the storage codec and the REST JSON
 * carry it; the proven fee counts only proven coins. And the pending set's ordering
 * (src/writer/pending-coins.ts): replacement and eviction by fee rate, never by arrival.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { ECPairFactory } from 'ecpair';
import { createHash } from 'node:crypto';
import { checkCoin, coinJson, parseCoinJson, provenFee, MAX_COIN_PREV_TXS, type CoinEvidence } from '@svc-node/protocol/coin';
import { decodeEvidence, encodeEvidence } from '@svc-node/protocol/evidence';
import { NodeError } from '@svc-node/protocol/errors';
import { PendingCoins, compareRate, replaces, type CoinPlace } from '../../src/writer/pending-coins.js';
import { opReturn, spend, spendTaproot, taprootWallet, wallet } from '../helpers/txbuilder.js';
import { initEcc } from '@svc-node/protocol/bitcoin';

initEcc();

const ECPair = ECPairFactory(ecc);
const STAMP = opReturn(Buffer.from('SVC-test'));

/** A transaction creating `value` sats for `script` at output `vout` (earlier outputs 1,000 sats to the same script). */
function funding(script: Uint8Array, value: bigint, vout = 0, salt = 1): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  tx.addInput(createHash('sha256').update(`fund-${salt}`).digest(), 0);
  for (let i = 0; i < vout; i++) tx.addOutput(script, 1_000n);
  tx.addOutput(script, value);
  return tx;
}

const coinOf = (...txs: bitcoin.Transaction[]): CoinEvidence => ({ prevTxs: txs.map((t) => ({ tx: t.toBuffer(), at: null })) });
const outpoint = (t: bitcoin.Transaction, vout: number) => ({ txid: t.getId(), vout });

test('a coin the sender controls passes for P2WPKH, P2TR key path, P2PKH and P2SH-P2WPKH, with the fee and vsize of the anchor', () => {
  // P2WPKH (a wallet's SIGHASH_ALL spend, two inputs from two transactions).
  const w = wallet('coin-1');
  const f1 = funding(w.script, 50_000n, 1, 1);
  const f2 = funding(w.script, 20_000n, 0, 2);
  const a = spend(w, [{ txid: f1.getId(), vout: 1, value: 50_000n }, { txid: f2.getId(), vout: 0, value: 20_000n }], [{ script: STAMP, value: 0n }, { script: w.script, value: 69_000n }]);
  const r = checkCoin(a.toBuffer(), outpoint(f1, 1), coinOf(f1, f2));
  assert.ok(r.ok, !r.ok ? r.reason : '');
  assert.equal(r.coin.script, 'p2wpkh');
  assert.equal(r.coin.outpoint, `${f1.getId()}:1`);
  assert.equal(r.coin.vin, 0);
  assert.equal(r.coin.outputsValue, '69000');
  assert.equal(r.coin.vsize, a.virtualSize());
  assert.equal(provenFee(r.coin, [true, true]), 1_000n);
  // Only the named coin proven: the other input counts nothing (no one raises their place with a made-up coin).
  assert.equal(provenFee(r.coin, [true, false]), 0n);
  // A deploy checks the anchor's first input.
  assert.ok(checkCoin(a.toBuffer(), null, coinOf(f1, f2)).ok);

  // P2TR key path (SIGHASH_DEFAULT: the signature commits to every input's amount and script).
  const t = taprootWallet('coin-2');
  const ft = funding(t.script, 30_000n);
  const at = spendTaproot(t, [{ txid: ft.getId(), vout: 0, value: 30_000n }], [{ script: STAMP, value: 0n }, { script: t.script, value: 29_000n }]);
  const rt = checkCoin(at.toBuffer(), outpoint(ft, 0), coinOf(ft));
  assert.ok(rt.ok && rt.coin.script === 'p2tr', !rt.ok ? rt.reason : '');

  // P2PKH (legacy sighash).
  const key = ECPair.fromPrivateKey(createHash('sha256').update('coin-3').digest());
  const pkh = bitcoin.payments.p2pkh({ pubkey: key.publicKey }).output!;
  const fp = funding(pkh, 40_000n);
  const ap = new bitcoin.Transaction();
  ap.version = 2;
  ap.addInput(Buffer.from(fp.getId(), 'hex').reverse(), 0);
  ap.addOutput(STAMP, 0n);
  const hp = ap.hashForSignature(0, pkh, bitcoin.Transaction.SIGHASH_ALL);
  ap.setInputScript(0, bitcoin.script.compile([bitcoin.script.signature.encode(key.sign(hp), bitcoin.Transaction.SIGHASH_ALL), key.publicKey]));
  const rp = checkCoin(ap.toBuffer(), outpoint(fp, 0), coinOf(fp));
  assert.ok(rp.ok && rp.coin.script === 'p2pkh', !rp.ok ? rp.reason : '');

  // P2SH-P2WPKH (nested segwit).
  const redeem = bitcoin.payments.p2wpkh({ pubkey: key.publicKey }).output!;
  const sh = bitcoin.payments.p2sh({ redeem: { output: redeem } }).output!;
  const fs = funding(sh, 60_000n);
  const as = new bitcoin.Transaction();
  as.version = 2;
  as.addInput(Buffer.from(fs.getId(), 'hex').reverse(), 0);
  as.addOutput(STAMP, 0n);
  as.setInputScript(0, bitcoin.script.compile([redeem]));
  const hs = as.hashForWitnessV0(0, pkh, 60_000n, bitcoin.Transaction.SIGHASH_ALL);
  as.setWitness(0, [bitcoin.script.signature.encode(key.sign(hs), bitcoin.Transaction.SIGHASH_ALL), key.publicKey]);
  const rs = checkCoin(as.toBuffer(), outpoint(fs, 0), coinOf(fs));
  assert.ok(rs.ok && rs.coin.script === 'p2sh-p2wpkh', !rs.ok ? rs.reason : '');
});

test('coins that do not exist in the bytes given, or that the sender does not control, are refused with the reason', () => {
  const w = wallet('coin-4');
  const thief = wallet('coin-5');
  const f = funding(w.script, 50_000n);
  const anchor = (signer = w, fund = f, value = 50_000n) => spend(signer, [{ txid: fund.getId(), vout: 0, value }], [{ script: STAMP, value: 0n }]);
  const refused = (a: bitcoin.Transaction, c: CoinEvidence, re: RegExp, op = outpoint(f, 0)) => {
    const r = checkCoin(a.toBuffer(), op, c);
    assert.ok(!r.ok, `refused: ${String(re)}`);
    assert.match(r.reason, re);
  };
  // A coin that does not exist: the anchor spends a txid no prev tx hashes to.
  const made = funding(w.script, 50_000n, 0, 99);
  refused(anchor(w, made), coinOf(f), /not among the prev txs/, outpoint(made, 0));
  // The sender does not control it: another key signs for the owner's coin.
  refused(anchor(thief), coinOf(f), /does not hash to the coin's key hash/);
  // A real signature over other amounts (the sighash commits to the coin's value).
  refused(anchor(w, f, 49_999n), coinOf(f), /does not verify/);
  // A tampered signature.
  const t = anchor();
  const sig = Buffer.from(t.ins[0]!.witness[0]!);
  sig[10] ^= 1;
  t.setWitness(0, [sig, t.ins[0]!.witness[1]!]);
  refused(t, coinOf(f), /strict DER|does not verify/);
  // An output the prev tx does not have, a prev tx given twice or spent by no input, none at all.
  refused(anchor(), coinOf(f), /does not spend/, outpoint(f, 1));
  refused(anchor(), coinOf(f, f), /given twice/);
  refused(anchor(), coinOf(f, funding(w.script, 1n, 0, 7)), /spent by no input/);
  refused(anchor(), { prevTxs: [] }, /no prev txs/);
  refused(anchor(), { prevTxs: Array.from({ length: MAX_COIN_PREV_TXS + 1 }, (_, i) => ({ tx: funding(w.script, 1n, 0, i).toBuffer(), at: null })) }, /more than 64/);
  // A script the node does not check: its payload waits for a confirmed anchor.
  const wsh = bitcoin.payments.p2wsh({ redeem: { output: bitcoin.script.compile([bitcoin.opcodes.OP_TRUE]) } }).output!;
  const fw = funding(wsh, 10_000n);
  const aw = new bitcoin.Transaction();
  aw.version = 2;
  aw.addInput(Buffer.from(fw.getId(), 'hex').reverse(), 0);
  aw.addOutput(STAMP, 0n);
  aw.setWitness(0, [bitcoin.script.compile([bitcoin.opcodes.OP_TRUE])]);
  refused(aw, coinOf(fw), /does not check without a confirmed anchor/, outpoint(fw, 0));
});

test('coin evidence round-trips through the storage codec and the REST JSON; malformed JSON is bad_request naming the member', () => {
  const w = wallet('coin-6');
  const f = funding(w.script, 50_000n);
  const a = spend(w, [{ txid: f.getId(), vout: 0, value: 50_000n }], [{ script: STAMP, value: 0n }]);
  const at = { blockHash: 'ab'.repeat(32), height: 7, txIndex: 3, branch: [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)] };
  const coin: CoinEvidence = { prevTxs: [{ tx: f.toBuffer(), at }] };
  const ev = { anchorTx: a.toBuffer(), confirmed: null, spentBy: null, coin };
  const back = decodeEvidence(encodeEvidence(ev));
  assert.deepEqual(coinJson(back.coin!), coinJson(coin));
  // Evidence without coin encodes as before (no part bit): stored evidence keeps its bytes.
  assert.equal(encodeEvidence({ ...ev, coin: null }).toString('hex'), encodeEvidence({ anchorTx: ev.anchorTx, confirmed: null, spentBy: null }).toString('hex'));
  assert.deepEqual(coinJson(parseCoinJson(JSON.parse(JSON.stringify(coinJson(coin))))!), coinJson(coin));
  assert.equal(parseCoinJson(undefined), undefined);
  for (const [bad, field] of [
    [[], 'coin.'],
    [{ prev_txs: [] }, 'coin.prev_txs'],
    [{ prev_txs: [{ tx: 'XY', at: null }] }, 'coin.prev_txs[0].tx'],
    [{ prev_txs: [{ tx: '00', at: { block_hash: 'ab', height: 1, tx_index: 0, branch: [] } }] }, 'coin.prev_txs[0].at.block_hash'],
    [{ prev_txs: [{ tx: '00', at: { block_hash: 'ab'.repeat(32), height: -1, tx_index: 0, branch: [] } }] }, 'coin.prev_txs[0].at.height'],
  ] as const) {
    assert.throws(() => parseCoinJson(bad), (e: unknown) => e instanceof NodeError && e.code === 'bad_request' && e.message.startsWith(field), JSON.stringify(bad));
  }
});

test('the pending set replaces a coin\'s payload only for a higher fee and fee rate, and evicts the lowest fee rate first (ties: the highest txid), never by arrival', () => {
  const live = new Set<string>();
  const book = new PendingCoins((p) => live.has(p.txid));
  const place = (txid: string, outpoint: string, fee: bigint, vsize: number): CoinPlace => {
    live.add(txid);
    return { txid, kind: 'call', contractId: '', outpoint, fee, vsize, depth: 0, parents: [] };
  };
  const a = place('aa', 'o:1', 1_000n, 200); // 5 sat/vB
  const b = place('bb', 'o:2', 400n, 200); // 2 sat/vB
  const c = place('cc', 'o:3', 800n, 400); // 2 sat/vB, higher txid: first out among equals
  for (const p of [a, b, c]) book.add(p);
  assert.equal(book.lowestCall()?.txid, 'cc');
  assert.equal(book.lowestCall(new Set(['cc']))?.txid, 'bb');
  // A bump on o:1: a higher fee at a lower rate does not replace, a higher fee and rate does.
  assert.equal(replaces(place('ab', 'o:1', 1_100n, 300), a), false);
  assert.equal(replaces(place('ac', 'o:1', 1_000n, 100), a), false); // same fee
  const bump = place('ad', 'o:1', 1_200n, 200);
  assert.equal(replaces(bump, a), true);
  book.add(bump);
  assert.equal(book.holderOf('o:1')?.txid, 'ad');
  assert.equal(book.placeOf('aa'), undefined);
  // Exact comparison: 1/3 against 333/1000 sat/vB.
  assert.equal(compareRate({ fee: 1n, vsize: 3 }, { fee: 333n, vsize: 1000 }), 1);
  // A payload decided elsewhere leaves its place lazily.
  live.delete('cc');
  assert.equal(book.lowestCall()?.txid, 'bb');
  assert.equal(book.holderOf('o:3'), undefined);
});

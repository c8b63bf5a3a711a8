/** SDK builders: envelopes from typed arguments, anchoring transactions (P2WPKH and P2TR). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { fixturesDir } from '../helpers/paths.js';
import { compileFile } from '../helpers/vm.js';
import {
  buildCall,
  buildCallAnchor,
  buildDeploy,
  walletFromSecret,
  parseWalletKey,
  networkOf,
  ClientError,
  type Utxo,
  type Wallet,
  selectInputs,
  argsFromText,
  findFunction,
  encodeFieldArg,
} from '@svc-node/client';
import {
  findStamp,
  checkCallBinding,
  checkDeployBinding,
  decodeEnvelope,
  verifyEnvelopeSignature,
  toHex,
  contractId,
  parseHex,
  spendsOutpoint,
  callStampScript,
} from '@svc-node/protocol';

const contract = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'contract.json'), 'utf8'));
const abi = contract.artifact.abi as unknown[];
/** A deployable artifact (the vectors' artifact is not code the verifier accepts). */
const token = compileFile('examples/token.svc');
const regtest = networkOf('regtest');
const txid = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
const secret = new Uint8Array(32).fill(0x11);
const callerSecret = new Uint8Array(32).fill(0x22);

function isClientError(code: string) {
  return (e: unknown) => e instanceof ClientError && e.code === code;
}

/** Every input's signature really spends its prevout (ECDSA for P2WPKH, BIP-341 key path for P2TR). */
function assertSignedInputs(tx: bitcoin.Transaction, wallet: Wallet, utxos: Utxo[]): void {
  const prevScripts = utxos.map(() => wallet.outputScript);
  const values = utxos.map((u) => BigInt(u.value));
  tx.ins.forEach((input, i) => {
    if (wallet.kind === 'p2wpkh') {
      const [sigDer, pub] = input.witness;
      assert.deepEqual(pub, wallet.publicKey);
      const scriptCode = bitcoin.payments.p2pkh({ pubkey: wallet.publicKey }).output!;
      const h = tx.hashForWitnessV0(i, scriptCode, values[i]!, bitcoin.Transaction.SIGHASH_ALL);
      const sig = bitcoin.script.signature.decode(sigDer!);
      assert.ok(ecc.verify(h, wallet.publicKey, sig.signature), `input ${i} ECDSA`);
    } else {
      assert.equal(input.witness.length, 1);
      assert.equal(input.witness[0]!.length, 64);
      const h = tx.hashForWitnessV1(i, prevScripts, values, bitcoin.Transaction.SIGHASH_DEFAULT);
      const outputKey = wallet.outputScript.subarray(2);
      assert.ok(ecc.verifySchnorr(h, outputKey, input.witness[0]!), `input ${i} Schnorr key path`);
    }
  });
}

for (const kind of ['p2wpkh', 'p2tr'] as const) {
  test(`${kind}: call anchor spends the named outpoint, carries one stamp, binds, signs, pays the fee rate`, () => {
    const wallet = walletFromSecret(secret, kind, regtest);
    const utxos: Utxo[] = [
      { txid: txid(1), vout: 3, value: 300, status: { confirmed: true } }, // too small alone
      { txid: txid(2), vout: 0, value: 50_000, status: { confirmed: true } },
      { txid: txid(3), vout: 1, value: 9_000, status: { confirmed: false } },
    ];
    const call = buildCall({
      contractId: contract.contract_id,
      function: 'transfer',
      args: ['key:' + 'ab'.repeat(32), 'u64:1000'],
      abi,
      callerSecret,
      outpoint: { txid: utxos[0]!.txid, vout: 3 },
      callId: 42n,
    });
    const anchor = buildCallAnchor(wallet, utxos, call, 3.5);
    const tx = bitcoin.Transaction.fromHex(anchor.hex);
    assert.equal(tx.getId(), anchor.txid);
    // PSBT base64 gives the same transaction
    const fromPsbt = bitcoin.Psbt.fromBase64(anchor.psbt, { network: regtest }).extractTransaction();
    assert.equal(fromPsbt.toHex(), anchor.hex);
    assert.equal(bitcoin.Psbt.fromBase64(anchor.unsignedPsbt).txInputs.length, tx.ins.length);
    // spends the named outpoint (raw prevout hash is reversed display hex)
    assert.equal(toHex(Uint8Array.from(tx.ins[0]!.hash).reverse()), utxos[0]!.txid);
    assert.ok(spendsOutpoint(tx, parseHex(utxos[0]!.txid)!, 3));
    // exactly one well-formed call stamp
    const s = findStamp(tx);
    assert.ok(s.ok && s.stamp.kind === 'call' && s.stamp.vout === 0);
    assert.equal(tx.outs.filter((o) => o.script[0] === 0x6a).length, 1);
    assert.deepEqual(tx.outs[0]!.script, callStampScript(call.envelope.contractId, call.envelopeHash));
    // binds under the codec's own check, from the decoded payload
    const decoded = decodeEnvelope(Buffer.from(call.payload, 'base64'));
    assert.ok(verifyEnvelopeSignature(decoded));
    assert.deepEqual(checkCallBinding(anchor.hex, decoded), { ok: true, stampVout: 0 });
    // value conservation and fee rate
    const inSum = anchor.inputs.reduce((a, u) => a + u.value, 0);
    const outSum = tx.outs.reduce((a, o) => a + Number(o.value), 0);
    assert.equal(inSum - outSum, anchor.fee);
    assert.ok(anchor.fee >= Math.ceil(3.5 * tx.virtualSize()), `fee ${anchor.fee} vsize ${tx.virtualSize()}`);
    assert.ok(anchor.fee <= Math.ceil(3.5 * (tx.virtualSize() + 2)), 'estimate within 2 vB');
    // change back to the wallet, confirmed coin chosen before the unconfirmed one
    assert.deepEqual(tx.outs[1]!.script, wallet.outputScript);
    assert.deepEqual(anchor.inputs.map((u) => u.txid), [txid(1), txid(2)]);
    assertSignedInputs(tx, wallet, anchor.inputs);
  });

  test(`${kind}: deploy anchor carries the deploy stamp; contract id from its txid`, () => {
    const wallet = walletFromSecret(secret, kind, regtest);
    const d = buildDeploy(wallet, [{ txid: txid(9), vout: 0, value: 10_000 }], token, 1);
    assert.equal(toHex(d.codeHash), token.metadata.code_hash);
    assert.deepEqual(checkDeployBinding(d.anchor.hex, d.codeHash), { ok: true, stampVout: 0 });
    assert.equal(d.contractId, toHex(contractId(parseHex(d.anchor.txid)!, d.codeHash)));
    assert.equal(d.body.txid, d.anchor.txid);
    assert.deepEqual(d.body.metadata, token.metadata);
    assertSignedInputs(bitcoin.Transaction.fromHex(d.anchor.hex), wallet, d.anchor.inputs);
  });
}

test('change below dust goes to the fee; not enough is insufficient_funds', () => {
  const wallet = walletFromSecret(secret, 'p2wpkh', regtest);
  const stamp = new Uint8Array(70);
  const noChange = selectInputs({ wallet, utxos: [{ txid: txid(1), vout: 0, value: 400 }], feeRate: 1, stampScript: stamp });
  assert.equal(noChange.change, 0);
  assert.equal(noChange.fee, 400);
  assert.throws(
    () => selectInputs({ wallet, utxos: [{ txid: txid(1), vout: 0, value: 100 }], feeRate: 1, stampScript: stamp }),
    (e: unknown) => isClientError('insufficient_funds')(e) && /insufficient funds/.test((e as Error).message),
  );
  assert.throws(() => selectInputs({ wallet, utxos: [], feeRate: 1, stampScript: stamp }), isClientError('insufficient_funds'));
  assert.throws(() => selectInputs({ wallet, utxos: [], feeRate: 0, stampScript: stamp }), isClientError('bad_argument'));
  assert.throws(
    () => selectInputs({ wallet, utxos: [{ txid: txid(1), vout: 0, value: 5000 }], feeRate: 1, stampScript: stamp, mustSpend: { txid: txid(2), vout: 0 } }),
    isClientError('bad_argument'),
  );
});

test('typed arguments are checked against the ABI', () => {
  const f = findFunction(abi, 'transfer');
  assert.deepEqual(argsFromText(f, ['key:' + 'AB'.repeat(32), '7']).map((v) => v.type), ['key', 'u64']);
  assert.throws(() => findFunction(abi, 'nope'), (e: unknown) => isClientError('unknown_function')(e) && /transfer/.test((e as Error).message));
  assert.throws(() => argsFromText(f, ['key:' + 'ab'.repeat(32)]), isClientError('bad_argument'));
  assert.throws(() => argsFromText(f, ['u64:5', 'u64:5']), (e: unknown) => isClientError('bad_argument')(e) && /ABI says key/.test((e as Error).message));
  assert.throws(() => argsFromText(f, ['key:abcd', 'u64:5']), isClientError('bad_argument'));
  assert.throws(() => argsFromText(f, ['key:' + 'ab'.repeat(32), 'u64:-5']), isClientError('bad_argument'));
  assert.throws(() => argsFromText(f, ['key:' + 'ab'.repeat(32), 'u64:18446744073709551616']), isClientError('bad_argument'));
  assert.equal(encodeFieldArg('string', 'a b/ü'), 'a%20b%2F%C3%BC');
  assert.equal(encodeFieldArg('key', 'key:' + 'CD'.repeat(32)), 'cd'.repeat(32));
  assert.equal(encodeFieldArg('u64', '12'), '12');
});

test('wallet keys: hex, WIF, p2tr prefix; bad keys are bad_key', () => {
  const hex = '11'.repeat(32);
  const w = parseWalletKey(hex, regtest);
  assert.equal(w.kind, 'p2wpkh');
  assert.match(w.address, /^bcrt1q/);
  const t = parseWalletKey(`p2tr:${hex}`, regtest);
  assert.match(t.address, /^bcrt1p/);
  const wif = w.signer.toWIF();
  assert.equal(parseWalletKey(wif, regtest).address, w.address);
  for (const bad of ['', 'zz', '00'.repeat(32), 'ff'.repeat(32), 'p2sh:' + hex, hex + '00']) {
    assert.throws(() => parseWalletKey(bad, regtest), isClientError('bad_key'), bad);
  }
});

test('buildCall refuses unknown functions, text args without ABI, bad caller keys', () => {
  const base = { contractId: contract.contract_id, callerSecret, outpoint: { txid: txid(1), vout: 0 } };
  assert.throws(() => buildCall({ ...base, function: 'nope', args: [], abi }), isClientError('unknown_function'));
  assert.throws(() => buildCall({ ...base, function: 'transfer', args: ['u64:1'] }), isClientError('bad_argument'));
  assert.throws(() => buildCall({ ...base, callerSecret: new Uint8Array(32), function: 'f', args: [] }), isClientError('bad_key'));
  assert.throws(() => buildCall({ ...base, contractId: 'xyz', function: 'f', args: [] }), isClientError('bad_argument'));
  const ok = buildCall({ ...base, function: 'transfer', args: [{ type: 'key', value: new Uint8Array(32) }, { type: 'u64', value: 1n }], abi });
  assert.equal(ok.envelope.function, 'transfer');
  assert.throws(
    () => buildCall({ ...base, function: 'transfer', args: [{ type: 'u64', value: 1n }, { type: 'u64', value: 1n }], abi }),
    isClientError('bad_argument'),
  );
});

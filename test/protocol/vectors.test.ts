/** Every vector of test/fixtures/vectors (copies of ../shared/vectors) byte for byte. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, sharedDir } from '../helpers/paths.js';
import { NodeError } from '@svc-node/protocol/errors';
import {
  toHex,
  parseHex,
  decodeEnvelope,
  encodeEnvelope,
  encodeEnvelopeBody,
  envelopeFromJson,
  envelopeToJson,
  signingMessage,
  envelopeHash,
  signEnvelope,
  verifyEnvelopeSignature,
  verifyEnvelopeSignatureNoble,
  openEnvelope,
  encodePayload,
  decodePayload,
  callStampScript,
  deployStampScript,
  codeHash,
  canonicalCore,
  extractCore,
  contractId,
  checkCallBinding,
  checkDeployBinding,
  txidOf,
  bindingError,
  envelopesEqual,
} from '@svc-node/protocol';

const vdir = join(fixturesDir, 'vectors');
const load = (name: string) => JSON.parse(readFileSync(join(vdir, name), 'utf8'));
const envelopes = load('envelopes.json');
const bad = load('bad_envelopes.json');
const contract = load('contract.json');
const anchors = load('anchors.json');
const hex = (s: string) => parseHex(s)!;

test('fixture vectors are identical to ../shared/vectors when that folder exists', (t) => {
  const shared = join(sharedDir, 'vectors');
  if (!existsSync(shared)) {
    t.skip(`no ${shared}`);
    return;
  }
  const ours = readdirSync(vdir).sort();
  const theirs = readdirSync(shared).sort();
  assert.deepEqual(ours, theirs);
  for (const f of ours) {
    assert.ok(readFileSync(join(vdir, f)).equals(readFileSync(join(shared, f))), `${f} differs from ${shared}`);
  }
});

for (const c of envelopes.cases) {
  test(`envelope vector ${c.name}: borsh, message, signature, hash, payload, stamp`, () => {
    const unsigned = envelopeFromJson(c.envelope);
    assert.equal(toHex(encodeEnvelopeBody(unsigned)), c.body_borsh);
    assert.equal(toHex(signingMessage(unsigned)), c.signed_message);
    const signed = signEnvelope(unsigned, hex(c.caller_secret), hex(c.aux_rand));
    assert.equal(toHex(signed.signature), c.signature);
    const bytes = encodeEnvelope(signed);
    assert.equal(toHex(bytes), c.envelope_borsh);
    assert.equal(encodePayload(signed), c.payload_base64);
    assert.equal(toHex(envelopeHash(signed)), c.envelope_hash);
    assert.equal(toHex(envelopeHash(bytes)), c.envelope_hash);
    assert.equal(toHex(callStampScript(signed.contractId, envelopeHash(signed))), c.call_stamp_script);
    // decode back, equal field by field, and the JSON form matches the vector
    const decoded = decodeEnvelope(decodePayload(c.payload_base64));
    assert.ok(envelopesEqual(decoded, signed));
    assert.deepEqual(envelopeToJson(decoded), { ...c.envelope, signature: c.signature });
    assert.equal(verifyEnvelopeSignature(decoded), true);
    assert.equal(verifyEnvelopeSignatureNoble(decoded), true);
    const opened = openEnvelope(bytes);
    assert.equal(toHex(opened.envelopeHash), c.envelope_hash);
    assert.equal(toHex(opened.message), c.signed_message);
  });
}

for (const c of bad.cases) {
  test(`bad envelope vector refused with bad_request: ${c.why}`, () => {
    assert.throws(
      () => decodeEnvelope(hex(c.borsh)),
      (e: unknown) => e instanceof NodeError && e.code === 'bad_request' && typeof e.detail?.offset === 'number',
    );
    assert.throws(() => openEnvelope(hex(c.borsh)), (e: unknown) => e instanceof NodeError && e.code === 'bad_request');
  });
}

test('bad envelope errors name the field and offset', () => {
  const byWhy = new Map<string, string>(bad.cases.map((c: { why: string; borsh: string }) => [c.why, c.borsh]));
  const err = (why: string) => {
    try {
      decodeEnvelope(hex(byWhy.get(why)!));
    } catch (e) {
      return e as NodeError;
    }
    assert.fail(`${why} decoded`);
  };
  assert.equal(err('trailing byte').detail?.field, '(end)');
  assert.equal(err('truncated (signature short by one byte)').detail?.field, 'signature');
  assert.equal(err('empty').detail?.field, 'version');
  assert.equal(err('unknown Value tag 7').detail?.field, 'args[0].tag');
  assert.match(err('bool byte 2').message, /args\[\d+\] at offset \d+: bool byte must be 0 or 1, got 2/);
  assert.equal(err('function name not valid UTF-8').detail?.field, 'function');
  assert.equal(err('function name not valid UTF-8').detail?.offset, 37);
  assert.equal(err('string length larger than the rest').detail?.field, 'function');
});

test('contract vector: JCS, code_hash, deploy stamp, contract_id', () => {
  const core = extractCore(contract.artifact);
  assert.equal(canonicalCore(core), contract.jcs);
  assert.equal(toHex(codeHash(core)), contract.code_hash);
  assert.equal(toHex(codeHash(contract.artifact)), contract.code_hash);
  assert.equal(toHex(deployStampScript(hex(contract.code_hash))), contract.deploy_stamp_script);
  assert.equal(toHex(contractId(hex(contract.deploy_txid), hex(contract.code_hash))), contract.contract_id);
  // metadata is not part of the hash; key order of the input does not matter
  const reordered = Object.fromEntries(Object.entries(contract.artifact).reverse());
  assert.equal(toHex(codeHash({ ...(reordered as typeof contract.artifact), metadata: { other: 1 } })), contract.code_hash);
});

test('anchors vector: deploy transaction binds the contract code hash and gives the contract id', () => {
  const d = anchors.deploy_tx;
  assert.equal(txidOf(d.tx_hex), d.txid);
  assert.deepEqual(checkDeployBinding(d.tx_hex, hex(d.code_hash)), { ok: true, stampVout: 0 });
  assert.equal(toHex(contractId(hex(d.txid), hex(d.code_hash))), d.contract_id);
  assert.deepEqual(checkDeployBinding(d.tx_hex, new Uint8Array(32)), { ok: false, reason: 'code_hash_mismatch' });
  assert.equal(bindingError('code_hash_mismatch').code, 'code_hash_mismatch');
});

const anchorEnvelope = envelopes.cases.find((c: { name: string }) => c.name === anchors.envelope_case);

for (const c of anchors.cases) {
  test(`anchor vector ${c.name}: binds=${c.binds} reason=${c.reason}`, () => {
    const e = decodeEnvelope(hex(anchorEnvelope.envelope_borsh));
    assert.equal(txidOf(c.tx_hex), c.txid);
    const r = checkCallBinding(c.tx_hex, e);
    assert.equal(r.ok, c.binds);
    if (!r.ok) {
      assert.equal(r.reason, c.reason);
      const err = bindingError(r.reason);
      assert.equal(err.code, 'anchor_mismatch');
      assert.equal(err.detail?.reason, c.reason);
    }
    // same answer with the precomputed hash (hot path)
    assert.deepEqual(checkCallBinding(c.tx_hex, e, hex(anchorEnvelope.envelope_hash)), r);
  });
}

test('anchor vectors: a deploy stamp is not a call stamp; another contract is wrong_contract', () => {
  const e = decodeEnvelope(hex(anchorEnvelope.envelope_borsh));
  assert.deepEqual(checkCallBinding(anchors.deploy_tx.tx_hex, e), { ok: false, reason: 'not_a_call_stamp' });
  const binds = anchors.cases.find((c: { binds: boolean }) => c.binds);
  const other = { ...e, contractId: new Uint8Array(32).fill(7) };
  assert.deepEqual(checkCallBinding(binds.tx_hex, other), { ok: false, reason: 'wrong_contract' });
  assert.deepEqual(checkDeployBinding(binds.tx_hex, hex(anchors.deploy_tx.code_hash)), { ok: false, reason: 'not_a_deploy_stamp' });
});

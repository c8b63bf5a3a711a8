/** Stamps and binding: which outputs are a stamp, and whether a real signed transaction anchors an envelope or a deploy. */
import { opcodes, script as bscript } from 'bitcoinjs-lib';
import { callStampScript, deployStampScript } from '@svc-node/protocol/stamp';
import { envelopeHash, encodeEnvelope } from '@svc-node/protocol/envelope';
import { codeHash } from '@svc-node/protocol/contract';
import { txidOf } from '@svc-node/protocol/binding';
import { opReturn, spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type Area, type CaseInput } from './kit.js';
import { envelope, seeded } from './keys.js';
import { fixtureArtifact } from './codec.js';

const payer = wallet('conformance payer');
const change = { script: payer.script, value: 9_000n };
const funding: Utxo = { txid: hex(seeded('conformance funding')), vout: 2, value: 10_000n };

function stampCases(): CaseInput[] {
  const cid = seeded('conformance contract');
  const eh = seeded('conformance envelope hash');
  const ch = seeded('conformance code hash');
  const call = callStampScript(cid, eh);
  const deploy = deployStampScript(ch);
  const push = (...bytes: number[]) => Uint8Array.from(bytes);
  const svc = [0x53, 0x56, 0x43];
  const callPush = call.subarray(2);
  const c = (id: string, outputs: Uint8Array[], pins: string): CaseInput => ({ id, pins, input: { outputs: outputs.map(hex) } });
  return [
    c('call-stamp', [call], 'OP_RETURN <"SVC" 02 contract_id envelope_hash> (68 bytes) is a call stamp'),
    c('deploy-stamp', [deploy], 'OP_RETURN <"SVC" 01 code_hash> (36 bytes) is a deploy stamp'),
    c('stamp-after-payment', [payer.script, call], "the stamp's vout is its place among the outputs"),
    c('no-outputs', [], 'no outputs: no stamp'),
    c('no-op-return', [payer.script], 'a payment only: no stamp'),
    c('other-op-return', [opReturn(push(0x53, 0x56, 0x58, 2))], 'an OP_RETURN whose push does not start with "SVC" is not a stamp candidate'),
    c('svc-outside-op-return', [bscript.compile([callPush, opcodes.OP_DROP])], '"SVC" in a script that does not start with OP_RETURN is not a stamp candidate'),
    c('two-stamps', [call, deploy], 'two SVC candidates: multiple_stamps'),
    c('stamp-and-malformed', [call, opReturn(push(...svc, 2))], 'a well-formed and a malformed candidate: multiple_stamps'),
    c('call-67-bytes', [opReturn(callPush.subarray(0, 67))], 'a call stamp of 67 bytes is malformed'),
    c('deploy-37-bytes', [opReturn(Uint8Array.from([...deploy.subarray(2), 0]))], 'a deploy stamp of 37 bytes is malformed'),
    c('unknown-kind', [opReturn(Uint8Array.from([...svc, 3, ...ch]))], 'kind 03 is malformed'),
    c('kind-length-swapped', [opReturn(Uint8Array.from([...svc, 1, ...cid, ...eh]))], 'kind 01 with a call stamp\'s 68 bytes is malformed'),
    c('second-push', [opReturn(callPush, push(1))], 'OP_RETURN with the stamp and a second push is malformed'),
    c('pushdata1-form', [Uint8Array.from([opcodes.OP_RETURN, opcodes.OP_PUSHDATA1, 68, ...callPush])], 'the call stamp pushed with OP_PUSHDATA1 (not minimal) is read as the same push'),
    c('bare-magic', [opReturn(push(...svc))], 'OP_RETURN <"SVC"> alone is a malformed candidate'),
  ];
}

function callCases(): CaseInput[] {
  const e = envelope({ function: 'transfer', args: [{ type: 'u64', value: 5n }], outpointTxid: Buffer.from(funding.txid, 'hex'), outpointVout: funding.vout });
  const eBytes = encodeEnvelope(e);
  const h = envelopeHash(eBytes);
  const stamp = callStampScript(e.contractId, h);
  const other = envelope({ function: 'transfer', args: [{ type: 'u64', value: 6n }], outpointTxid: Buffer.from(funding.txid, 'hex'), outpointVout: funding.vout });
  const elsewhere: Utxo = { txid: hex(seeded('conformance elsewhere')), vout: 0, value: 10_000n };
  const tx = (inputs: Utxo[], outs: Uint8Array[]) => spend(payer, inputs, [...outs.map((s) => ({ script: s, value: 0n })), change]).toHex();
  const c = (id: string, txHex: string, pins: string, env = eBytes): CaseInput => ({ id, pins, input: { tx_hex: txHex, envelope_hex: hex(env) } });
  return [
    c('binds', tx([funding], [stamp]), 'one call stamp naming contract_id and envelope_hash, and an input spending the named outpoint: binds'),
    c('binds-second-input', tx([elsewhere, funding], [stamp]), 'the named outpoint may be spent by any input'),
    c('binds-stamp-last', spend(payer, [funding], [change, { script: stamp, value: 0n }]).toHex(), 'the stamp may be any output; its vout is reported'),
    c('wrong-outpoint', tx([elsewhere], [stamp]), 'no input spends the named outpoint: outpoint_not_spent'),
    c('wrong-vout', tx([{ ...funding, vout: funding.vout + 1 }], [stamp]), 'spending another vout of the named txid: outpoint_not_spent'),
    c('stamp-names-other-envelope', tx([funding], [stamp]), 'the stamp names another envelope_hash: stamp_mismatch', encodeEnvelope(other)),
    c('wrong-contract', tx([funding], [callStampScript(seeded('another contract'), h)]), 'the stamp names another contract: wrong_contract'),
    c('deploy-stamp', tx([funding], [deployStampScript(seeded('code'))]), 'a deploy stamp does not anchor a call: not_a_call_stamp'),
    c('two-stamps', tx([funding], [stamp, stamp]), 'two stamps: multiple_stamps'),
    c('malformed-stamp', tx([funding], [opReturn(stamp.subarray(2, 60))]), 'a malformed stamp: malformed_stamp'),
    c('no-stamp', tx([funding], []), 'no stamp: no_stamp'),
    c('not-a-transaction', 'deadbeef', 'bytes that are not a transaction are refused (bad_request)'),
    c('odd-hex', tx([funding], [stamp]).slice(1), 'odd-length hex is refused (bad_request)'),
  ];
}

function deployCases(): CaseInput[] {
  const art = fixtureArtifact('counter.svc');
  const ch = codeHash(art as never);
  const tx = (outs: Uint8Array[]) => spend(payer, [funding], [...outs.map((s) => ({ script: s, value: 0n })), change]).toHex();
  const c = (id: string, txHex: string, pins: string, hash = ch): CaseInput => ({ id, pins, input: { tx_hex: txHex, code_hash: hex(hash) } });
  const binds = tx([deployStampScript(ch)]);
  if (txidOf(binds).length !== 64) throw new Error('binding: txid');
  return [
    c('binds', binds, 'one deploy stamp naming the artifact\'s code_hash: binds'),
    c('other-code', tx([deployStampScript(seeded('other code'))]), 'the stamp names other code: code_hash_mismatch'),
    c('call-stamp', tx([callStampScript(seeded('c'), seeded('e'))]), 'a call stamp does not anchor a deploy: not_a_deploy_stamp'),
    c('two-stamps', tx([deployStampScript(ch), deployStampScript(ch)]), 'two stamps, even equal ones: multiple_stamps'),
    c('no-stamp', tx([]), 'no stamp: no_stamp'),
    c('malformed', tx([opReturn(deployStampScript(ch).subarray(2, 30))]), 'a malformed stamp: malformed_stamp'),
  ];
}

export function bindingArea(): Area {
  return { 'binding.stamp': stampCases(), 'binding.call': callCases(), 'binding.deploy': deployCases() };
}

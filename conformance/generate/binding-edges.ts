/**
 * Binding and stamp edges (PROTOCOL.md sections 2 and 3; packages/protocol/src/binding.ts
 * and stamp.ts) the other cases leave open:
 * - an input spends the named outpoint only when all 32 bytes of its txid match, at the
 *   same vout: a txid differing in its first or its last byte (display order) is another
 *   outpoint;
 * - tx_hex is hex from end to end (a transaction's hex followed by non-hex is refused,
 *   not read up to where the hex stops);
 * - a stamp is an OP_RETURN output: a push beginning "SVC" after another opcode is none;
 *   the first push of an OP_RETURN is what counts however it is pushed, so a PUSHDATA1
 *   push of "SVC" alone or of 75 bytes is a malformed stamp, and a direct push cut short by the script's end is no push at all.
 */
import { callStampScript } from '@svc-node/protocol/stamp';
import { envelopeHash, encodeEnvelope } from '@svc-node/protocol/envelope';
import { spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type CaseInput } from './kit.js';
import { envelope, seeded } from './keys.js';

const payer = wallet('conformance payer');
const change = { script: payer.script, value: 9_000n };
const funding: Utxo = { txid: hex(seeded('conformance funding')), vout: 2, value: 10_000n };

/** funding's txid (display hex) with one byte changed. */
function otherTxid(byte: number): string {
  const b = Buffer.from(funding.txid, 'hex');
  b[byte]! ^= 1;
  return b.toString('hex');
}

export function bindingCallEdgeCases(): CaseInput[] {
  const e = envelope({ function: 'transfer', args: [{ type: 'u64', value: 5n }], outpointTxid: Buffer.from(funding.txid, 'hex'), outpointVout: funding.vout });
  const eBytes = encodeEnvelope(e);
  const stamp = callStampScript(e.contractId, envelopeHash(eBytes));
  const tx = (inputs: Utxo[]) => spend(payer, inputs, [{ script: stamp, value: 0n }, change]).toHex();
  const c = (id: string, txHex: string, pins: string): CaseInput => ({ id, pins, input: { tx_hex: txHex, envelope_hex: hex(eBytes) } });
  return [
    c('txid-first-byte-differs', tx([{ ...funding, txid: otherTxid(0) }]), 'an input at the named vout whose txid differs in its first byte (display order) spends another outpoint: outpoint_not_spent'),
    c('txid-last-byte-differs', tx([{ ...funding, txid: otherTxid(31) }]), 'an input at the named vout whose txid differs in its last byte (display order) spends another outpoint: outpoint_not_spent'),
    c('tx-hex-then-non-hex', `${tx([funding])}zz`, 'a transaction\'s hex followed by characters that are not hex is refused (bad_request)'),
  ];
}

export function stampPushEdgeCases(): CaseInput[] {
  const call = callStampScript(seeded('conformance contract'), seeded('conformance envelope hash'));
  const push = Buffer.from(call.subarray(2)); // "SVC" 02 contract_id envelope_hash: 68 bytes
  const c = (id: string, outputs: Buffer[], pins: string): CaseInput => ({ id, pins, input: { outputs: outputs.map((b) => b.toString('hex')) } });
  // OP_RETURN OP_PUSHDATA1 75 <the call push and 7 more bytes>: 78 bytes, 2 + 0x4c (read as a direct push of 76 it would begin with 75).
  const pushdata75 = Buffer.concat([Buffer.of(0x6a, 0x4c, 75), push, Buffer.alloc(7)]);
  return [
    c('svc-push-after-op-0', [Buffer.concat([Buffer.of(0x00, push.length), push])], 'a call stamp\'s push after OP_0, not OP_RETURN, is no stamp'),
    c('pushdata1-magic-alone', [Buffer.from('6a4c03535643', 'hex')], 'OP_RETURN with a PUSHDATA1 push of "SVC" alone: a stamp candidate, malformed'),
    c('pushdata1-75', [pushdata75], 'OP_RETURN and a PUSHDATA1 push of 75 bytes beginning "SVC" (the script 2 + 0x4c bytes long): a stamp candidate of the wrong length, malformed'),
    c('direct-push-one-short', [Buffer.concat([Buffer.of(0x6a, push.length), push.subarray(0, push.length - 1)])], 'OP_RETURN and a direct push of 68 bytes of which the script holds 67: no push, no stamp'),
    c('direct-push-cut-short', [Buffer.concat([Buffer.of(0x6a, push.length), push.subarray(0, 40)])], 'OP_RETURN and a direct push of 68 bytes of which the script holds 40: no push, no stamp'),
  ];
}

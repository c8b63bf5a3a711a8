/**
 * Bucket `call`: the fields of a call fixed at intake, by txid (32 bytes), JSON; written
 * once when the call is accepted and never again. A call record is this with its
 * decision (call-decisions.ts), pending when there is none.
 */
import type { CallDecision, CallRecord } from '../../records.js';
import { Bucket } from './buckets.js';
import * as decisions from './call-decisions.js';
import { bucketRange, keyOfId } from './keys.js';

export const key = (txid: Uint8Array): Buffer => keyOfId(Bucket.call, txid);
export const all = () => bucketRange(Bucket.call);
export const txidOf = (k: Buffer): Buffer => k.subarray(1);

type CallFixed = Pick<CallRecord, 'txid' | 'contract_id' | 'envelope_hash' | 'function' | 'caller' | 'call_id' | 'outpoint'>;

/** The part of a call record fixed at intake. */
export function encode(rec: CallRecord): Buffer {
  const fixed: CallFixed = {
    txid: rec.txid,
    contract_id: rec.contract_id,
    envelope_hash: rec.envelope_hash,
    function: rec.function,
    caller: rec.caller,
    call_id: rec.call_id,
    outpoint: rec.outpoint,
  };
  return Buffer.from(JSON.stringify(fixed), 'utf8');
}

const PENDING: CallDecision = { status: 'pending', block_height: null, tx_index: null, result: null, error: null, instructions: null };

/** A call record from its stored fixed part and its stored decision (none: pending). */
export function decode(fixed: Buffer, decision: Buffer | undefined): CallRecord {
  // Fields set on the parsed object, not spread into a new one: a rewind decodes every
  // call it makes pending again.
  const rec = JSON.parse(fixed.toString('utf8')) as CallRecord;
  const d = decision ? decisions.decode(decision) : PENDING;
  rec.status = d.status;
  rec.block_height = d.block_height;
  rec.tx_index = d.tx_index;
  rec.result = d.result;
  rec.error = d.error;
  rec.instructions = d.instructions;
  return rec;
}

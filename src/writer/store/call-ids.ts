/**
 * Bucket `callIdIndex`: the (caller, call_id) pairs taken by executed and failed calls,
 * key caller (32 bytes) || u64be call_id, value the txid (32 bytes) that took it.
 */
import { Bucket } from './buckets.js';

/** One allocation: built per call accepted and per call a block decides. */
export function key(caller: Uint8Array, callId: bigint): Buffer {
  const out = Buffer.allocUnsafe(1 + caller.length + 8);
  out[0] = Bucket.callIdIndex;
  out.set(caller, 1);
  out.writeBigUInt64BE(callId, 1 + caller.length);
  return out;
}


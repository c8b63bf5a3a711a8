/**
 * Protocol stamps (PROTOCOL.md sections 2 and 3): OP_RETURN outputs carrying
 * "SVC" || kind || payload. One parser for the node, the devnet, the watcher and the SDK.
 */
import { script as bscript, opcodes } from 'bitcoinjs-lib';
import type { TxShape } from './tx-shape.js';

export const STAMP_MAGIC = Uint8Array.of(0x53, 0x56, 0x43); // "SVC"
export const STAMP_KIND_DEPLOY = 0x01;
export const STAMP_KIND_CALL = 0x02;
export const DEPLOY_STAMP_LEN = 36; // magic 3 + kind 1 + code_hash 32
export const CALL_STAMP_LEN = 68; // magic 3 + kind 1 + contract_id 32 + envelope_hash 32

export type Stamp =
  | { kind: 'deploy'; codeHash: Uint8Array; vout: number }
  | { kind: 'call'; contractId: Uint8Array; envelopeHash: Uint8Array; vout: number };

/** Why a transaction anchors nothing; names match ../shared/vectors/anchors.json. */
export type NoStampReason = 'no_stamp' | 'multiple_stamps' | 'malformed_stamp';

export type StampResult = { ok: true; stamp: Stamp } | { ok: false; reason: NoStampReason };

export function deployStampScript(codeHash: Uint8Array): Uint8Array {
  if (codeHash.length !== 32) throw new TypeError('code_hash must be 32 bytes');
  const push = new Uint8Array(DEPLOY_STAMP_LEN);
  push.set(STAMP_MAGIC, 0);
  push[3] = STAMP_KIND_DEPLOY;
  push.set(codeHash, 4);
  return new Uint8Array(bscript.compile([opcodes.OP_RETURN, push]));
}

export function callStampScript(contractId: Uint8Array, envelopeHash: Uint8Array): Uint8Array {
  if (contractId.length !== 32) throw new TypeError('contract_id must be 32 bytes');
  if (envelopeHash.length !== 32) throw new TypeError('envelope_hash must be 32 bytes');
  const push = new Uint8Array(CALL_STAMP_LEN);
  push.set(STAMP_MAGIC, 0);
  push[3] = STAMP_KIND_CALL;
  push.set(contractId, 4);
  push.set(envelopeHash, 36);
  return new Uint8Array(bscript.compile([opcodes.OP_RETURN, push]));
}

/**
 * Classifies one output script: null when it is not an OP_RETURN whose first push begins
 * with "SVC" (so it does not count as a stamp candidate at all); otherwise the first push.
 */
function svcPush(script: Uint8Array): Uint8Array | null {
  if (script.length < 1 || script[0] !== opcodes.OP_RETURN) return null;
  const single = singleDirectPush(script);
  if (single) return single.length >= 3 && single[0] === 0x53 && single[1] === 0x56 && single[2] === 0x43 ? single : null;
  let chunks: ReturnType<typeof bscript.decompile>;
  try {
    chunks = bscript.decompile(script);
  } catch {
    return null;
  }
  if (!chunks || chunks.length < 2) return null;
  const first = chunks[1];
  if (typeof first === 'number') return null;
  if (first.length < 3 || first[0] !== 0x53 || first[1] !== 0x56 || first[2] !== 0x43) return null;
  return first;
}

/**
 * OP_RETURN followed by exactly one direct push (opcode 3..75) filling the rest of the
 * script, which every well-formed stamp is: its data without decompiling. What
 * decompile would give for it, found in one comparison (blocks carry thousands).
 */
function singleDirectPush(script: Uint8Array): Uint8Array | null {
  const n = script[1];
  return n !== undefined && n >= 3 && n <= 75 && script.length === 2 + n ? script.subarray(2) : null;
}

/** Parses a well-formed stamp push; null when malformed (wrong kind or length, trailing script). */
function parseStampPush(script: Uint8Array, push: Uint8Array, vout: number): Stamp | null {
  const chunks = singleDirectPush(script) ? null : bscript.decompile(script);
  if (chunks !== null && (!chunks || chunks.length !== 2)) return null; // OP_RETURN and exactly one push
  if (push[3] === STAMP_KIND_DEPLOY && push.length === DEPLOY_STAMP_LEN) {
    return { kind: 'deploy', codeHash: push.slice(4, 36), vout };
  }
  if (push[3] === STAMP_KIND_CALL && push.length === CALL_STAMP_LEN) {
    return { kind: 'call', contractId: push.slice(4, 36), envelopeHash: push.slice(36, 68), vout };
  }
  return null;
}

/** The stamp a transaction carries, by PROTOCOL section 3's "exactly one" rule. */
export function findStampInOutputs(outputScripts: readonly Uint8Array[]): StampResult {
  let found: { script: Uint8Array; push: Uint8Array; vout: number } | null = null;
  for (let vout = 0; vout < outputScripts.length; vout++) {
    const s = outputScripts[vout]!;
    const push = svcPush(s);
    if (!push) continue;
    if (found) return { ok: false, reason: 'multiple_stamps' };
    found = { script: s, push, vout };
  }
  if (!found) return { ok: false, reason: 'no_stamp' };
  const stamp = parseStampPush(found.script, found.push, found.vout);
  return stamp ? { ok: true, stamp } : { ok: false, reason: 'malformed_stamp' };
}

export function findStamp(tx: Pick<TxShape, 'outs'>): StampResult {
  return findStampInOutputs(tx.outs.map((o) => o.script));
}

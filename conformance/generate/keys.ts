/** Fixed keys and envelopes the areas share: every secret is sha256 of a seed, every signature uses zero aux randomness. */
import { createHash } from 'node:crypto';
import { xOnlyPublicKey } from '@svc-node/protocol/schnorr';
import { encodeEnvelope, signEnvelope, type CallEnvelope } from '@svc-node/protocol/envelope';
import type { Value } from '@svc-node/protocol/value';

export function seeded(seed: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(seed).digest());
}

export const CALLER_SECRET = seeded('conformance caller');
export const CALLER = xOnlyPublicKey(CALLER_SECRET);
/** BIP-340 aux randomness: fixed, so signatures (and the vectors) are deterministic. */
const AUX = new Uint8Array(32);

export interface EnvelopeSpec {
  contractId?: Uint8Array;
  function?: string;
  args?: Value[];
  callId?: bigint;
  outpointTxid?: Uint8Array;
  outpointVout?: number;
}

/** A signed envelope with defaults for every field not given. */
export function envelope(spec: EnvelopeSpec = {}): CallEnvelope {
  return signEnvelope(
    {
      version: 1,
      contractId: spec.contractId ?? seeded('conformance contract'),
      function: spec.function ?? 'transfer',
      args: spec.args ?? [],
      caller: CALLER,
      callId: spec.callId ?? 1n,
      outpointTxid: spec.outpointTxid ?? seeded('conformance outpoint'),
      outpointVout: spec.outpointVout ?? 0,
    },
    CALLER_SECRET,
    AUX,
  );
}

export function envelopeBytes(spec: EnvelopeSpec = {}): Uint8Array {
  return encodeEnvelope(envelope(spec));
}

/**
 * Intake's batched openCall (src/pool/pool.ts): calls sent together share pool tasks, every
 * call gets its own answer (a bad payload fails only itself), and the queue limit still
 * refuses with 503 overloaded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ecc from 'tiny-secp256k1';
import { WorkPool } from '../../src/pool/pool.js';
import { encodeEnvelope, envelopeHash, signingMessage, type CallEnvelope } from '@svc-node/protocol/envelope';
import { sha256, toHex } from '@svc-node/protocol/hash';
import { NodeError } from '@svc-node/protocol/errors';

const secret = sha256(Buffer.from('pool batching caller'));
const caller = ecc.xOnlyPointFromScalar(secret);
const contractId = sha256(Buffer.from('pool batching contract'));

function envelope(i: number, tamper = false): Uint8Array {
  const unsigned = {
    version: 1,
    contractId,
    function: 'bump',
    args: [{ type: 'u64' as const, value: BigInt(i) }],
    caller,
    callId: BigInt(i + 1),
    outpointTxid: sha256(Buffer.from(`outpoint ${i}`)),
    outpointVout: i % 3,
  };
  const e: CallEnvelope = { ...unsigned, signature: ecc.signSchnorr(signingMessage(unsigned), secret, new Uint8Array(32)) };
  const bytes = encodeEnvelope(e);
  if (tamper) bytes[bytes.length - 1]! ^= 1; // signature no longer verifies
  return bytes;
}

test('calls sent together get their own answers; a bad payload fails only itself', async () => {
  const pool = new WorkPool({ threads: 2, queueLimit: 1000 });
  try {
    const n = 60;
    const inputs = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? envelope(i, true) : i % 11 === 5 ? new Uint8Array([1, 2, 3]) : envelope(i)));
    const results = await Promise.allSettled(inputs.map((p) => pool.openCall(p)));
    results.forEach((r, i) => {
      if (i % 7 === 3) {
        assert.equal(r.status, 'rejected');
        assert.ok((r as PromiseRejectedResult).reason instanceof NodeError);
        assert.equal((r as PromiseRejectedResult).reason.code, 'bad_signature', `call ${i}`);
      } else if (i % 11 === 5) {
        assert.equal(r.status, 'rejected', `call ${i}`);
        assert.ok((r as PromiseRejectedResult).reason instanceof NodeError, `call ${i}`);
      } else {
        assert.equal(r.status, 'fulfilled', `call ${i}: ${String((r as PromiseRejectedResult).reason)}`);
        const v = (r as PromiseFulfilledResult<Awaited<ReturnType<WorkPool['openCall']>>>).value;
        assert.equal(v.callId, String(i + 1));
        assert.equal(v.contractId, toHex(contractId));
        assert.equal(v.outpoint, `${toHex(sha256(Buffer.from(`outpoint ${i}`)))}:${i % 3}`);
        assert.equal(v.envelopeHash, toHex(envelopeHash(inputs[i]!)));
      }
    });
    // Fewer pool tasks than calls: the burst was batched.
    assert.ok(pool.stats().completed < n, `${pool.stats().completed} tasks for ${n} calls`);
  } finally {
    await pool.close();
  }
});

test('the queue limit counts calls waiting to be batched: beyond it, 503 overloaded', async () => {
  const pool = new WorkPool({ threads: 1, queueLimit: 4 });
  try {
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => pool.openCall(envelope(i))));
    const refused = results.filter((r) => r.status === 'rejected');
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 4);
    assert.equal(refused.length, 6);
    for (const r of refused) assert.equal(((r as PromiseRejectedResult).reason as NodeError).code, 'overloaded');
    // Once drained, calls are taken again.
    assert.equal((await pool.openCall(envelope(42))).callId, '43');
  } finally {
    await pool.close();
  }
});

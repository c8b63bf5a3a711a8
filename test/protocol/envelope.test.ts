/** Envelope codec: property tests, strictness beyond borsh@2, Value JSON. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { deserialize as borshDeserialize } from 'borsh';
import { NodeError } from '@svc-node/protocol/errors';
import {
  type CallEnvelope,
  type Value,
  encodeEnvelope,
  decodeEnvelope,
  envelopeHash,
  signEnvelope,
  signAndEncodeEnvelope,
  verifyEnvelopeSignature,
  verifyEnvelopeSignatureNoble,
  openEnvelope,
  tryOpenEnvelope,
  envelopesEqual,
  ENVELOPE_SCHEMA,
  valueToBorshObject,
  MAX_ENVELOPE_BYTES,
  decodePayload,
  encodePayload,
  xOnlyPublicKey,
  valueFromJson,
  valueToJson,
  typedValueFromJson,
  envelopeFromJson,
  envelopeToJson,
  bytesEqual,
} from '@svc-node/protocol';

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });

const valueArb: fc.Arbitrary<Value> = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((value) => ({ type: 'u64', value }) as Value),
  fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map((value) => ({ type: 'i64', value }) as Value),
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((value) => ({ type: 'u128', value }) as Value),
  fc.boolean().map((value) => ({ type: 'bool', value }) as Value),
  fc.string({ unit: 'binary', maxLength: 40 }).map((value) => ({ type: 'string', value }) as Value),
  fc.uint8Array({ maxLength: 80 }).map((value) => ({ type: 'bytes', value }) as Value),
  bytes(32).map((value) => ({ type: 'key', value }) as Value),
);

const envelopeArb: fc.Arbitrary<CallEnvelope> = fc.record({
  version: fc.constant(1),
  contractId: bytes(32),
  function: fc.string({ unit: 'binary', maxLength: 30 }),
  args: fc.array(valueArb, { maxLength: 8 }),
  caller: bytes(32),
  callId: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  outpointTxid: bytes(32),
  outpointVout: fc.integer({ min: 0, max: 0xffffffff }),
  signature: bytes(64),
});

const isBadRequest = (e: unknown) => e instanceof NodeError && e.code === 'bad_request';

/** borsh@2's decoded object -> our CallEnvelope shape, for the differential check. */
function fromBorshObject(o: Record<string, unknown>): CallEnvelope {
  const arr = (x: unknown) => Uint8Array.from(x as number[]);
  const tagOf: Record<string, Value['type']> = { U64: 'u64', I64: 'i64', U128: 'u128', Bool: 'bool', Str: 'string', Bytes: 'bytes', Key: 'key' };
  return {
    version: o.version as number,
    contractId: arr(o.contract_id),
    function: o.function as string,
    args: (o.args as Record<string, unknown>[]).map((a) => {
      const k = Object.keys(a)[0]!;
      const t = tagOf[k]!;
      const v = a[k];
      return { type: t, value: t === 'bytes' || t === 'key' ? arr(v) : v } as Value;
    }),
    caller: arr(o.caller),
    callId: o.call_id as bigint,
    outpointTxid: arr(o.outpoint_txid),
    outpointVout: o.outpoint_vout as number,
    signature: arr(o.signature),
  };
}

test('property: random envelopes round-trip, and agree with borsh@2 both ways', () => {
  fc.assert(
    fc.property(envelopeArb, (e) => {
      const b = encodeEnvelope(e);
      const d = decodeEnvelope(b);
      assert.ok(envelopesEqual(d, e));
      assert.ok(bytesEqual(encodeEnvelope(d), b));
      // differential: borsh@2 reads the same envelope from our bytes
      assert.ok(envelopesEqual(fromBorshObject(borshDeserialize(ENVELOPE_SCHEMA, b) as Record<string, unknown>), e));
      // JSON form round-trips too
      assert.ok(envelopesEqual(envelopeFromJson(JSON.parse(JSON.stringify(envelopeToJson(e)))), e));
      // payload base64 round-trips
      assert.ok(bytesEqual(decodePayload(encodePayload(b)), b));
    }),
    { numRuns: 400 },
  );
});

test('property: every strict prefix of a valid envelope is refused with bad_request', () => {
  fc.assert(
    fc.property(envelopeArb, fc.nat(), (e, k) => {
      const b = encodeEnvelope(e);
      const cut = k % b.length;
      assert.throws(() => decodeEnvelope(b.subarray(0, cut)), isBadRequest);
      const extra = new Uint8Array(b.length + 1);
      extra.set(b);
      assert.throws(() => decodeEnvelope(extra), isBadRequest);
    }),
    { numRuns: 300 },
  );
});

test('property: random bytes never crash the decoder (NodeError or a re-encodable envelope)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), (b) => {
      try {
        const d = decodeEnvelope(b);
        assert.ok(bytesEqual(encodeEnvelope(d), b), 'accepted bytes must be canonical');
      } catch (e) {
        assert.ok(isBadRequest(e), String(e));
      }
    }),
    { numRuns: 2000 },
  );
});

// Signing with noble costs ~2 ms; a fixed pool of keys keeps these properties fast.
const secrets = Array.from({ length: 4 }, (_, i) => new Uint8Array(32).fill(i + 1));
const pubs = secrets.map((s) => xOnlyPublicKey(s));

test('property: signed envelopes verify (fast and noble); another key fails; any changed byte breaks hash or signature', () => {
  fc.assert(
    fc.property(envelopeArb, fc.nat(3), fc.nat(), fc.integer({ min: 1, max: 255 }), (e0, ki, pos, xor) => {
      const unsigned = { ...e0, caller: pubs[ki]! };
      const signed = signEnvelope(unsigned, secrets[ki]!, new Uint8Array(32));
      assert.equal(verifyEnvelopeSignature(signed), true);
      assert.equal(verifyEnvelopeSignatureNoble(signed), true);
      const b = encodeEnvelope(signed);
      // signed and encoded in one pass: the same envelope and bytes
      const once = signAndEncodeEnvelope(unsigned, secrets[ki]!, new Uint8Array(32));
      assert.ok(envelopesEqual(once.envelope, signed));
      assert.ok(bytesEqual(once.bytes, b));
      const h = envelopeHash(b);
      openEnvelope(b);
      // a signature by another key fails under this caller
      const other = secrets[(ki + 1) % 4]!;
      const forged = signEnvelope({ ...unsigned, caller: pubs[(ki + 1) % 4]! }, other, new Uint8Array(32));
      const swapped = { ...signed, signature: forged.signature };
      assert.equal(verifyEnvelopeSignature(swapped), false);
      assert.equal(verifyEnvelopeSignatureNoble(swapped), false);
      // flip one byte anywhere: refused by the decoder, or a different hash and a bad signature
      const m = b.slice();
      m[pos % m.length]! ^= xor;
      assert.ok(!bytesEqual(envelopeHash(m), h));
      try {
        openEnvelope(m);
        assert.fail('a changed byte still opened');
      } catch (e) {
        assert.ok(e instanceof NodeError && (e.code === 'bad_request' || e.code === 'bad_signature'), String(e));
      }
    }),
    { numRuns: 100 },
  );
});

test('signEnvelope refuses a secret that is not the caller key', () => {
  const e = { version: 1, contractId: new Uint8Array(32), function: 'f', args: [], caller: pubs[0]!, callId: 0n, outpointTxid: new Uint8Array(32), outpointVout: 0 };
  assert.throws(() => signEnvelope(e, secrets[1]!), isBadRequest);
  assert.throws(() => signEnvelope(e, new Uint8Array(32)), isBadRequest);
  assert.throws(() => signAndEncodeEnvelope(e, secrets[1]!), isBadRequest);
});

// --- Strictness the borsh@2 deserializer lacks, and our own cases ------------------------

const base: CallEnvelope = {
  version: 1,
  contractId: new Uint8Array(32).fill(0xaa),
  function: 'ab',
  args: [{ type: 'bool', value: true }],
  caller: new Uint8Array(32).fill(0xbb),
  callId: 7n,
  outpointTxid: new Uint8Array(32).fill(0xcc),
  outpointVout: 3,
  signature: new Uint8Array(64).fill(0xdd),
};
const FN_AT = 33; // offset of the function length
const ARGS_AT = FN_AT + 4 + 2; // offset of the args count (function "ab")
const BOOL_AT = ARGS_AT + 4 + 1; // offset of the bool byte of args[0]

function mutated(f: (b: Uint8Array) => Uint8Array | void): Uint8Array {
  const b = encodeEnvelope(base);
  return f(b) ?? b;
}

function withFunctionBytes(fnBytes: number[]): Uint8Array {
  const b = encodeEnvelope({ ...base, function: 'x'.repeat(fnBytes.length) });
  b.set(fnBytes, FN_AT + 4);
  return b;
}

function fieldOf(b: Uint8Array): { field: unknown; offset: unknown } {
  try {
    decodeEnvelope(b);
  } catch (e) {
    assert.ok(isBadRequest(e), String(e));
    return { field: (e as NodeError).detail?.field, offset: (e as NodeError).detail?.offset };
  }
  assert.fail('decoded');
}

test('borsh@2 is lax where the protocol is strict; our decoder refuses each case', () => {
  const lax = (b: Uint8Array) => {
    try {
      borshDeserialize(ENVELOPE_SCHEMA, b);
      return true;
    } catch {
      return false;
    }
  };
  const trailing = mutated((b) => Uint8Array.from([...b, 0]));
  const bool2 = mutated((b) => void (b[BOOL_AT] = 2));
  const overlong = withFunctionBytes([0xc0, 0x80]);
  const surrogate = withFunctionBytes([0xed, 0xa0, 0x80]);
  const truncatedUtf8 = withFunctionBytes([0x61, 0xe4]);
  for (const [name, b] of [['trailing byte', trailing], ['bool 2', bool2], ['overlong UTF-8', overlong], ['UTF-16 surrogate in UTF-8', surrogate], ['truncated UTF-8', truncatedUtf8]] as const) {
    assert.equal(lax(b), true, `borsh@2 now refuses ${name}: revisit the notes in envelope.ts`);
    assert.throws(() => decodeEnvelope(b), isBadRequest, name);
  }
  // enum tag equal to the variant count: borsh@2 crashes with a TypeError, we answer bad_request
  const tag7 = mutated((b) => void (b[ARGS_AT + 4] = 7));
  assert.throws(() => borshDeserialize(ENVELOPE_SCHEMA, tag7), TypeError);
  assert.deepEqual(fieldOf(tag7), { field: 'args[0].tag', offset: ARGS_AT + 4 });
});

test('strict decoder: fields and offsets of our own bad cases', () => {
  assert.deepEqual(fieldOf(mutated((b) => void (b[0] = 2))), { field: 'version', offset: 0 });
  assert.deepEqual(fieldOf(mutated((b) => void (b[BOOL_AT] = 2))), { field: 'args[0]', offset: BOOL_AT });
  assert.deepEqual(fieldOf(withFunctionBytes([0xc0, 0x80])), { field: 'function', offset: FN_AT + 4 });
  assert.deepEqual(fieldOf(mutated((b) => void new DataView(b.buffer).setUint32(FN_AT, 0xffffffff, true))), { field: 'function', offset: FN_AT });
  assert.deepEqual(fieldOf(mutated((b) => void new DataView(b.buffer).setUint32(ARGS_AT, 0xffffffff, true))), { field: 'args', offset: ARGS_AT });
  assert.deepEqual(fieldOf(mutated((b) => Uint8Array.from([...b, 1, 2]))).field, '(end)');
  assert.deepEqual(fieldOf(new Uint8Array([1])), { field: 'contract_id', offset: 1 });
  // a bytes value whose length runs past the end
  const bv = encodeEnvelope({ ...base, args: [{ type: 'bytes', value: Uint8Array.of(1, 2) }] });
  new DataView(bv.buffer).setUint32(ARGS_AT + 5, 1000, true);
  assert.deepEqual(fieldOf(bv), { field: 'args[0]', offset: ARGS_AT + 5 });
});

test('strings: a leading BOM and astral characters survive; valid UTF-8 is exact', () => {
  for (const s of ['\ufeffbom', '😀 x', 'é', '']) {
    const d = decodeEnvelope(encodeEnvelope({ ...base, function: s, args: [{ type: 'string', value: s }] }));
    assert.equal(d.function, s);
    assert.equal(d.args[0]!.value, s);
  }
});

test('size limit: 65,536 bytes accepted, one more is payload_too_large', () => {
  const fixed = encodeEnvelope({ ...base, args: [{ type: 'bytes', value: new Uint8Array(0) }] }).length;
  const fill = MAX_ENVELOPE_BYTES - fixed;
  const atLimit = { ...base, args: [{ type: 'bytes', value: new Uint8Array(fill) } as Value] };
  const b = encodeEnvelope(atLimit);
  assert.equal(b.length, MAX_ENVELOPE_BYTES);
  assert.equal(decodeEnvelope(b).args[0]!.value.valueOf().constructor, Uint8Array);
  const over = { ...base, args: [{ type: 'bytes', value: new Uint8Array(fill + 1) } as Value] };
  const tooLarge = (e: unknown) => e instanceof NodeError && e.code === 'payload_too_large';
  assert.throws(() => encodeEnvelope(over), tooLarge);
  assert.throws(() => decodeEnvelope(new Uint8Array(MAX_ENVELOPE_BYTES + 1)), tooLarge);
});

test('encoder refuses what borsh@2 would silently wrap or mangle', () => {
  const bad: [string, Partial<CallEnvelope>][] = [
    ['u64 negative', { args: [{ type: 'u64', value: -1n }] }],
    ['u64 too big', { args: [{ type: 'u64', value: 1n << 64n }] }],
    ['i64 too small', { args: [{ type: 'i64', value: -(1n << 63n) - 1n }] }],
    ['u128 too big', { args: [{ type: 'u128', value: 1n << 128n }] }],
    ['lone surrogate', { function: 'a\ud800' }],
    ['lone surrogate arg', { args: [{ type: 'string', value: '\udc00' }] }],
    ['key 31 bytes', { args: [{ type: 'key', value: new Uint8Array(31) }] }],
    ['call_id too big', { callId: 1n << 64n }],
    ['vout too big', { outpointVout: 2 ** 32 }],
    ['vout fraction', { outpointVout: 1.5 }],
    ['caller short', { caller: new Uint8Array(31) }],
    ['version 2', { version: 2 }],
    ['signature short', { signature: new Uint8Array(63) }],
  ];
  for (const [name, patch] of bad) assert.throws(() => encodeEnvelope({ ...base, ...patch }), isBadRequest, name);
});

test('payload base64 is strict', () => {
  const b = encodeEnvelope(base);
  const p = encodePayload(b);
  assert.ok(bytesEqual(decodePayload(p), b));
  for (const s of [p.replace(/=+$/, ''), ` ${p}`, 'ab-_', `${p}\n`, 'QQ=', 'QR==', 42]) {
    assert.throws(() => decodePayload(s), isBadRequest, String(s));
  }
});

test('Value JSON: decimal strings and lowercase hex, strictly', () => {
  assert.equal(valueToJson({ type: 'u64', value: 18446744073709551615n }), '18446744073709551615');
  assert.equal(valueToJson({ type: 'i64', value: -5n }), '-5');
  assert.equal(valueToJson({ type: 'bytes', value: Uint8Array.of(0xde, 0xad) }), 'dead');
  assert.deepEqual(valueFromJson('u128', '340282366920938463463374607431768211455'), { type: 'u128', value: (1n << 128n) - 1n });
  assert.deepEqual(valueFromJson('i64', '-9223372036854775808'), { type: 'i64', value: -(1n << 63n) });
  assert.deepEqual(valueFromJson('bool', false), { type: 'bool', value: false });
  const refused: [Value['type'], unknown][] = [
    ['u64', '01'], ['u64', '-1'], ['u64', '+1'], ['u64', '18446744073709551616'], ['u64', 5], ['u64', ''],
    ['i64', '-0'], ['i64', '9223372036854775808'], ['u128', '1e3'], ['bool', 'true'], ['bytes', 'ABCD'],
    ['bytes', 'abc'], ['key', '00'], ['string', 5], ['string', 'a\ud800'],
  ];
  for (const [t, j] of refused) assert.throws(() => valueFromJson(t, j), isBadRequest, `${t} ${String(j)}`);
  assert.throws(() => typedValueFromJson({ type: 'float', value: '1' }), isBadRequest);
});

test('borsh object shape helper matches the schema variants', () => {
  assert.deepEqual(valueToBorshObject({ type: 'string', value: 'x' }), { Str: 'x' });
});

test('tryOpenEnvelope: tagged results with plain wire errors, never a throw', () => {
  const secret = secrets[0]!;
  const signed = signEnvelope({ ...base, caller: pubs[0]! }, secret, new Uint8Array(32));
  const b = encodeEnvelope(signed);
  const ok = tryOpenEnvelope(b);
  assert.ok(ok.ok && ok.envelope.callId === 7n && bytesEqual(ok.envelopeHash, envelopeHash(b)));
  const badSig = b.slice();
  badSig[b.length - 1]! ^= 1;
  assert.deepEqual(tryOpenEnvelope(badSig), { ok: false, error: { code: 'bad_signature', message: 'envelope signature does not verify under its caller key' } });
  const r = tryOpenEnvelope(b.subarray(0, 10));
  assert.ok(!r.ok && r.error.code === 'bad_request' && r.error.detail?.field === 'contract_id');
  assert.deepEqual(structuredClone(r), r);
});

test('field-read path args: round trip for every type, strict refusals', async () => {
  const { valueFromPathArg, valueToPathArg, valuesEqual } = await import('@svc-node/protocol/value');
  fc.assert(
    fc.property(valueArb, (v) => {
      const seg = valueToPathArg(v);
      assert.ok(!seg.includes('/'));
      assert.ok(valuesEqual(valueFromPathArg(v.type, seg), v));
    }),
    { numRuns: 300 },
  );
  for (const [t, raw] of [['string', '%E0%A4%A'], ['string', '%ED%A0%80'], ['bool', '1'], ['u64', '007'], ['key', 'AB'.repeat(32)]] as const) {
    assert.throws(() => valueFromPathArg(t, raw), isBadRequest, `${t} ${raw}`);
  }
});

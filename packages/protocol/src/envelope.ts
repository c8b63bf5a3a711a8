/**
 * The call envelope (PROTOCOL.md section 3): Borsh layout, signed message, envelope hash.
 *
 * Encoding goes through the `borsh` package with the schema below, after the fields are
 * checked (borsh@2 would silently wrap out-of-range integers and write lone surrogates).
 *
 * Decoding is a hand-written strict reader of the same layout. borsh@2's deserializer is
 * lax exactly where the protocol is strict, so it cannot be the decoder of record:
 *   - it ignores trailing bytes;
 *   - it reads any non-zero bool byte as true;
 *   - an enum tag equal to the variant count crashes with a TypeError (off-by-one check);
 *   - it does not validate UTF-8 (it reads past truncated sequences, accepts overlong
 *     forms and surrogates);
 *   - it has no size limit and reports no offsets.
 * The reader also runs ~40x faster (CEILINGS.md row 04) and gives every error a field
 * name and byte offset. test/protocol/envelope.test.ts checks it against borsh on random
 * envelopes, and that each laxness above is refused.
 */
import { serialize as borshSerialize, type Schema } from 'borsh';
import { NodeError, toWire, type WireError } from './errors.js';
import { taggedHash, Tags, toHex, parseHex } from './hash.js';
import {
  type Value,
  type ValueType,
  VALUE_TYPES,
  valueProblem,
  isWellFormedString,
  typedValueFromJson,
  typedValueToJson,
  valuesEqual,
  U64_MAX,
} from './value.js';
import { signSchnorr, verifySchnorrFast, verifySchnorrNoble, xOnlyPublicKey } from './schnorr.js';
import { MAX_ENVELOPE_BYTES } from './limits.js';
import { bytesEqual } from './bytes.js';

export const ENVELOPE_VERSION = 1;
export { MAX_ENVELOPE_BYTES, MAX_BODY_BYTES, postedBytes } from './limits.js';
/** Fixed part: version 1 + contract_id 32 + fn len 4 + args len 4 + caller 32 + call_id 8 + txid 32 + vout 4 + sig 64. */
export const MIN_ENVELOPE_BYTES = 181;
export const SIGNATURE_BYTES = 64;

export interface CallEnvelope {
  version: number;
  contractId: Uint8Array;
  function: string;
  args: Value[];
  caller: Uint8Array;
  callId: bigint;
  outpointTxid: Uint8Array;
  outpointVout: number;
  signature: Uint8Array;
}

/** An envelope before signing (`signature` absent or ignored). */
export type UnsignedEnvelope = Omit<CallEnvelope, 'signature'> & { signature?: Uint8Array };

// --- Borsh schema (the layout of record, used by the encoder and the differential tests) --

export const VALUE_SCHEMA: Schema = {
  enum: [
    { struct: { U64: 'u64' } },
    { struct: { I64: 'i64' } },
    { struct: { U128: 'u128' } },
    { struct: { Bool: 'bool' } },
    { struct: { Str: 'string' } },
    { struct: { Bytes: { array: { type: 'u8' } } } },
    { struct: { Key: { array: { type: 'u8', len: 32 } } } },
  ],
};

const BODY_FIELDS = {
  version: 'u8',
  contract_id: { array: { type: 'u8', len: 32 } },
  function: 'string',
  args: { array: { type: VALUE_SCHEMA } },
  caller: { array: { type: 'u8', len: 32 } },
  call_id: 'u64',
  outpoint_txid: { array: { type: 'u8', len: 32 } },
  outpoint_vout: 'u32',
} as const;

export const ENVELOPE_BODY_SCHEMA: Schema = { struct: { ...BODY_FIELDS } } as Schema;
export const ENVELOPE_SCHEMA: Schema = {
  struct: { ...BODY_FIELDS, signature: { array: { type: 'u8', len: 64 } } },
} as Schema;

const BORSH_VARIANT: Record<ValueType, string> = {
  u64: 'U64',
  i64: 'I64',
  u128: 'U128',
  bool: 'Bool',
  string: 'Str',
  bytes: 'Bytes',
  key: 'Key',
};

/** In-memory Value -> the object shape borsh@2 expects for VALUE_SCHEMA. */
export function valueToBorshObject(v: Value): Record<string, unknown> {
  return { [BORSH_VARIANT[v.type]]: v.value };
}

// --- Encoding --------------------------------------------------------------------------

function badField(field: string, what: string): NodeError {
  return new NodeError('bad_request', `envelope ${field}: ${what}`, { field });
}

function checkBytes(field: string, b: unknown, len: number): void {
  if (!(b instanceof Uint8Array)) throw badField(field, 'must be a Uint8Array');
  if (b.length !== len) throw badField(field, `must be ${len} bytes, got ${b.length}`);
}

/** Checks every field of an envelope (signature too when `withSignature`). Throws bad_request. */
export function checkEnvelopeFields(e: UnsignedEnvelope, withSignature: boolean): void {
  if (e === null || typeof e !== 'object') throw new NodeError('bad_request', 'envelope must be an object');
  if (e.version !== ENVELOPE_VERSION) throw badField('version', `must be ${ENVELOPE_VERSION}, got ${String(e.version)}`);
  checkBytes('contract_id', e.contractId, 32);
  if (typeof e.function !== 'string') throw badField('function', 'must be a string');
  if (!isWellFormedString(e.function)) throw badField('function', 'has a lone UTF-16 surrogate');
  if (!Array.isArray(e.args)) throw badField('args', 'must be an array');
  for (let i = 0; i < e.args.length; i++) {
    const p = valueProblem(e.args[i]!);
    if (p) throw badField(`args[${i}]`, p);
  }
  checkBytes('caller', e.caller, 32);
  if (typeof e.callId !== 'bigint' || e.callId < 0n || e.callId > U64_MAX) throw badField('call_id', 'must be a u64 bigint');
  checkBytes('outpoint_txid', e.outpointTxid, 32);
  if (!Number.isInteger(e.outpointVout) || e.outpointVout < 0 || e.outpointVout > 0xffffffff) {
    throw badField('outpoint_vout', 'must be a u32');
  }
  if (withSignature) checkBytes('signature', e.signature, SIGNATURE_BYTES);
}

function borshObject(e: UnsignedEnvelope): Record<string, unknown> {
  return {
    version: e.version,
    contract_id: e.contractId,
    function: e.function,
    args: e.args.map(valueToBorshObject),
    caller: e.caller,
    call_id: e.callId,
    outpoint_txid: e.outpointTxid,
    outpoint_vout: e.outpointVout,
  };
}

function checkSize(n: number): void {
  if (n > MAX_ENVELOPE_BYTES) {
    throw new NodeError('payload_too_large', `envelope is ${n} bytes, more than ${MAX_ENVELOPE_BYTES}`, {
      size: n,
      limit: MAX_ENVELOPE_BYTES,
    });
  }
}

/** borsh(envelope fields version..outpoint_vout): the bytes under the signature. */
export function encodeEnvelopeBody(e: UnsignedEnvelope): Uint8Array {
  checkEnvelopeFields(e, false);
  const out = borshSerialize(ENVELOPE_BODY_SCHEMA, borshObject(e), false);
  checkSize(out.length + SIGNATURE_BYTES);
  return out;
}

/** borsh(whole envelope). Throws bad_request on an invalid field, payload_too_large over 65,536 bytes. */
export function encodeEnvelope(e: CallEnvelope): Uint8Array {
  checkEnvelopeFields(e, true);
  const body = encodeEnvelopeBody(e);
  const out = new Uint8Array(body.length + SIGNATURE_BYTES);
  out.set(body, 0);
  out.set(e.signature, body.length);
  return out;
}

// --- Decoding --------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeError(field: string, offset: number, what: string): NodeError {
  return new NodeError('bad_request', `envelope ${field} at offset ${offset}: ${what}`, { field, offset });
}

class Reader {
  pos = 0;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  need(n: number, field: string): void {
    if (this.bytes.length - this.pos < n) {
      throw decodeError(field, this.pos, `needs ${n} bytes, ${this.bytes.length - this.pos} left`);
    }
  }
  u8(field: string): number {
    this.need(1, field);
    return this.bytes[this.pos++]!;
  }
  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  i64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigInt64(this.pos, true);
    this.pos += 8;
    return v;
  }
  u128(field: string): bigint {
    this.need(16, field);
    const lo = this.view.getBigUint64(this.pos, true);
    const hi = this.view.getBigUint64(this.pos + 8, true);
    this.pos += 16;
    return (hi << 64n) | lo;
  }
  fixed(n: number, field: string): Uint8Array {
    this.need(n, field);
    const b = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** u32 length then that many bytes. */
  vec(field: string): Uint8Array {
    const at = this.pos;
    const len = this.u32(field);
    if (len > this.bytes.length - this.pos) {
      throw decodeError(field, at, `length ${len} is more than the ${this.bytes.length - this.pos} bytes left`);
    }
    return this.fixed(len, field);
  }
  string(field: string): string {
    const start = this.pos;
    const b = this.vec(field);
    // ASCII fast path: every byte < 0x80 is valid UTF-8 and maps 1:1.
    let ascii = true;
    for (let i = 0; i < b.length; i++) {
      if (b[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
    try {
      return utf8.decode(b);
    } catch {
      throw decodeError(field, start + 4, 'is not valid UTF-8');
    }
  }
}

function readValue(r: Reader, field: string): Value {
  const at = r.pos;
  const tag = r.u8(`${field}.tag`);
  switch (tag) {
    case 0:
      return { type: 'u64', value: r.u64(field) };
    case 1:
      return { type: 'i64', value: r.i64(field) };
    case 2:
      return { type: 'u128', value: r.u128(field) };
    case 3: {
      const bat = r.pos;
      const b = r.u8(field);
      if (b > 1) throw decodeError(field, bat, `bool byte must be 0 or 1, got ${b}`);
      return { type: 'bool', value: b === 1 };
    }
    case 4:
      return { type: 'string', value: r.string(field) };
    case 5:
      return { type: 'bytes', value: r.vec(field) };
    case 6:
      return { type: 'key', value: r.fixed(32, field) };
    default:
      throw decodeError(`${field}.tag`, at, `unknown Value tag ${tag} (0..${VALUE_TYPES.length - 1})`);
  }
}

/**
 * Strict decoder of borsh(whole envelope). Throws NodeError `bad_request` naming the field
 * and byte offset (detail {field, offset}), or `payload_too_large` over 65,536 bytes.
 * The returned byte fields are copies, never views of `bytes`.
 */
export function decodeEnvelope(bytes: Uint8Array): CallEnvelope {
  if (!(bytes instanceof Uint8Array)) throw new NodeError('bad_request', 'envelope must be bytes');
  checkSize(bytes.length);
  const r = new Reader(bytes);
  const version = r.u8('version');
  if (version !== ENVELOPE_VERSION) throw decodeError('version', 0, `unsupported version ${version} (expected 1)`);
  const contractId = r.fixed(32, 'contract_id');
  const fn = r.string('function');
  const argsAt = r.pos;
  const n = r.u32('args');
  // Every Value takes at least 2 bytes (tag + bool); refuse impossible counts up front.
  if (n * 2 > bytes.length - r.pos) {
    throw decodeError('args', argsAt, `count ${n} cannot fit in the ${bytes.length - r.pos} bytes left`);
  }
  const args: Value[] = new Array(n);
  for (let i = 0; i < n; i++) args[i] = readValue(r, `args[${i}]`);
  const caller = r.fixed(32, 'caller');
  const callId = r.u64('call_id');
  const outpointTxid = r.fixed(32, 'outpoint_txid');
  const outpointVout = r.u32('outpoint_vout');
  const signature = r.fixed(SIGNATURE_BYTES, 'signature');
  if (r.pos !== bytes.length) {
    throw decodeError('(end)', r.pos, `${bytes.length - r.pos} trailing byte(s) after the signature`);
  }
  return { version, contractId, function: fn, args, caller, callId, outpointTxid, outpointVout, signature };
}

// --- Hashes and signature --------------------------------------------------------------

/** m = TH("SVC/call", borsh(fields version..outpoint_vout)). */
export function signingMessage(e: UnsignedEnvelope): Uint8Array {
  return taggedHash(Tags.call, encodeEnvelopeBody(e));
}

/**
 * envelope_hash = TH("SVC/envelope", borsh(whole envelope)). Given bytes, hashes them as
 * they are (they should be the canonical encoding, e.g. bytes that decodeEnvelope accepted).
 */
export function envelopeHash(e: CallEnvelope | Uint8Array): Uint8Array {
  return taggedHash(Tags.envelope, e instanceof Uint8Array ? e : encodeEnvelope(e));
}

/**
 * Signs (BIP-340, schnorr.ts's signSchnorr). `secret` must be the caller's secret key:
 * throws bad_request when its x-only public key is not `unsigned.caller`.
 */
export function signEnvelope(unsigned: UnsignedEnvelope, secret: Uint8Array, auxRand?: Uint8Array): CallEnvelope {
  return signAndEncodeEnvelope(unsigned, secret, auxRand).envelope;
}

/**
 * signEnvelope with borsh(whole envelope) of the result (encodeEnvelope's bytes): the body
 * encoded and its fields checked once for the signed message and the bytes alike, where
 * signing then encoding did both twice (a submitter does this a call).
 */
export function signAndEncodeEnvelope(unsigned: UnsignedEnvelope, secret: Uint8Array, auxRand?: Uint8Array): { envelope: CallEnvelope; bytes: Uint8Array } {
  let pub: Uint8Array;
  try {
    pub = xOnlyPublicKey(secret);
  } catch {
    throw new NodeError('bad_request', 'caller secret key is not a valid secp256k1 secret key');
  }
  if (!(unsigned.caller instanceof Uint8Array) || !bytesEqual(pub, unsigned.caller)) {
    throw new NodeError('bad_request', 'envelope caller is not the public key of the signing secret', { field: 'caller' });
  }
  const body = encodeEnvelopeBody(unsigned);
  const signature = signSchnorr(taggedHash(Tags.call, body), secret, auxRand);
  const bytes = new Uint8Array(body.length + SIGNATURE_BYTES);
  bytes.set(body, 0);
  bytes.set(signature, body.length);
  const { signature: _old, ...rest } = unsigned;
  return { envelope: { ...rest, signature }, bytes };
}

/** Fast path (tiny-secp256k1 / libsecp256k1): does `e.signature` verify under `e.caller`? */
export function verifyEnvelopeSignature(e: CallEnvelope): boolean {
  return verifySchnorrFast(e.signature, signingMessage(e), e.caller);
}

/** The same check with @noble/curves (pure JavaScript reference). */
export function verifyEnvelopeSignatureNoble(e: CallEnvelope): boolean {
  return verifySchnorrNoble(e.signature, signingMessage(e), e.caller);
}

export interface OpenedEnvelope {
  envelope: CallEnvelope;
  /** envelope_hash of the given bytes. */
  envelopeHash: Uint8Array;
  /** The signed message m. */
  message: Uint8Array;
}

/**
 * m of envelope bytes decodeEnvelope accepted, hashed as received: TH("SVC/call", the bytes
 * before the signature), which are borsh(fields version..outpoint_vout) themselves (the
 * decoder refuses any other encoding), with no re-encoding.
 */
export function receivedSigningMessage(bytes: Uint8Array): Uint8Array {
  return taggedHash(Tags.call, bytes.subarray(0, bytes.length - SIGNATURE_BYTES));
}

/**
 * The intake hot path: strict decode, then hashes over the received bytes (no re-encoding),
 * then the fast signature check. Throws bad_request / payload_too_large from the decoder, or
 * NodeError `bad_signature`.
 */
export function openEnvelope(bytes: Uint8Array): OpenedEnvelope {
  const envelope = decodeEnvelope(bytes);
  const message = receivedSigningMessage(bytes);
  if (!verifySchnorrFast(envelope.signature, message, envelope.caller)) {
    throw new NodeError('bad_signature', 'envelope signature does not verify under its caller key');
  }
  return { envelope, envelopeHash: taggedHash(Tags.envelope, bytes), message };
}

export type OpenResult = ({ ok: true } & OpenedEnvelope) | { ok: false; error: WireError };

/**
 * openEnvelope as a tagged result that never throws, for worker threads: the error crosses
 * the thread as a plain WireError (structured clone drops class identity).
 */
export function tryOpenEnvelope(bytes: Uint8Array): OpenResult {
  try {
    return { ok: true, ...openEnvelope(bytes) };
  } catch (e) {
    return { ok: false, error: toWire(e) };
  }
}

// --- Payload (REST base64) and JSON form -------------------------------------------------

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** REST `payload`: standard base64 with padding of borsh(whole envelope). */
export function encodePayload(e: CallEnvelope | Uint8Array): string {
  const b = e instanceof Uint8Array ? e : encodeEnvelope(e);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

/**
 * Strict base64 (standard alphabet, padding required, no whitespace, canonical final
 * bits) -> bytes. Throws bad_request. Does not decode the envelope.
 */
export function decodePayload(b64: unknown): Uint8Array {
  if (typeof b64 !== 'string') throw new NodeError('bad_request', 'payload must be a base64 string', { field: 'payload' });
  // Cheap bound before the regex: 65,536 bytes encode to 87,384 characters.
  if (b64.length > Math.ceil(MAX_ENVELOPE_BYTES / 3) * 4) checkSize(Math.floor((b64.length * 3) / 4));
  if (!B64.test(b64)) throw new NodeError('bad_request', 'payload is not standard padded base64', { field: 'payload' });
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.toString('base64') !== b64) {
    throw new NodeError('bad_request', 'payload base64 is not canonical', { field: 'payload' });
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** JSON form as in vectors/envelopes.json (snake_case; u64 as decimal strings; bytes as hex). */
export interface EnvelopeJson {
  version: number;
  contract_id: string;
  function: string;
  args: { type: ValueType; value: string | boolean }[];
  caller: string;
  call_id: string;
  outpoint_txid: string;
  outpoint_vout: number;
  signature?: string;
}

export function envelopeToJson(e: UnsignedEnvelope): EnvelopeJson {
  const j: EnvelopeJson = {
    version: e.version,
    contract_id: toHex(e.contractId),
    function: e.function,
    args: e.args.map(typedValueToJson),
    caller: toHex(e.caller),
    call_id: e.callId.toString(10),
    outpoint_txid: toHex(e.outpointTxid),
    outpoint_vout: e.outpointVout,
  };
  if (e.signature) j.signature = toHex(e.signature);
  return j;
}

function hexField(o: Record<string, unknown>, k: string, len: number): Uint8Array {
  const v = o[k];
  const b = typeof v === 'string' ? parseHex(v, len) : null;
  if (!b) throw badField(k, `must be ${len * 2} lowercase hex characters`);
  return b;
}

/** Inverse of envelopeToJson; signature optional (all zero when absent). Throws bad_request. */
export function envelopeFromJson(json: unknown): CallEnvelope {
  if (json === null || typeof json !== 'object') throw new NodeError('bad_request', 'envelope must be a JSON object');
  const o = json as Record<string, unknown>;
  if (!Array.isArray(o.args)) throw badField('args', 'must be an array');
  if (typeof o.call_id !== 'string' || !/^(?:0|[1-9][0-9]{0,19})$/.test(o.call_id)) {
    throw badField('call_id', 'must be a decimal string');
  }
  const e: CallEnvelope = {
    version: o.version as number,
    contractId: hexField(o, 'contract_id', 32),
    function: o.function as string,
    args: o.args.map((a, i) => typedValueFromJson(a, `args[${i}]`)),
    caller: hexField(o, 'caller', 32),
    callId: BigInt(o.call_id),
    outpointTxid: hexField(o, 'outpoint_txid', 32),
    outpointVout: o.outpoint_vout as number,
    signature: o.signature === undefined ? new Uint8Array(64) : hexField(o, 'signature', 64),
  };
  checkEnvelopeFields(e, true);
  return e;
}

export { bytesEqual } from './bytes.js';

export function envelopesEqual(a: CallEnvelope, b: CallEnvelope): boolean {
  return (
    a.version === b.version &&
    bytesEqual(a.contractId, b.contractId) &&
    a.function === b.function &&
    a.args.length === b.args.length &&
    a.args.every((v, i) => valuesEqual(v, b.args[i]!)) &&
    bytesEqual(a.caller, b.caller) &&
    a.callId === b.callId &&
    bytesEqual(a.outpointTxid, b.outpointTxid) &&
    a.outpointVout === b.outpointVout &&
    bytesEqual(a.signature, b.signature)
  );
}

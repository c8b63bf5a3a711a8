/**
 * Envelope and value edges (PROTOCOL.md's borsh(envelope) and the values' JSON form;
 * packages/protocol/src/envelope.ts, value.ts) the codec cases leave open: a u128
 * argument whose two little-endian halves differ (u128-max reads alike in any order), a
 * string whose only byte past ASCII is a lone continuation byte (0x80, not UTF-8), and
 * the JSON form's shapes: an envelope or argument that is not an object, arguments that
 * are not a list, byte fields that are not strings, a signature one byte short, a value
 * type that is not a JSON string and a string value that is a number.
 */
import { envelopeToJson } from '@svc-node/protocol/envelope';
import { codecArea } from './codec.js';
import { hex, type CaseInput } from './kit.js';
import { envelope, envelopeBytes } from './keys.js';

const U128_BOTH_HALVES = (0x0123456789abcdefn << 64n) | 0xfedcba9876543210n;

/** `b` with the byte at the first occurrence of `find` (ASCII) replaced by `by`. */
function patched(b: Uint8Array, find: string, by: number): Uint8Array {
  const at = Buffer.from(b).indexOf(Buffer.from(find, 'latin1'));
  if (at < 0) throw new Error(`envelope-edges: ${find} not in the envelope`);
  const x = Uint8Array.from(b);
  x[at] = by;
  return x;
}

export function envelopeDecodeEdgeCases(): CaseInput[] {
  const c = (id: string, b: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { hex: hex(b) } });
  return [
    c('arg-u128-both-halves', envelopeBytes({ args: [{ type: 'u128', value: U128_BOTH_HALVES }] }), 'a u128 argument is 16 bytes little-endian, the low 8 first: both halves read back in place'),
    c('function-lone-continuation-byte', patched(envelopeBytes({ function: 'tranzfer' }), 'z', 0x80), 'a function name whose only non-ASCII byte is a lone continuation byte (0x80) is not UTF-8: refused (function)'),
    c('arg-string-lone-continuation-byte', patched(envelopeBytes({ args: [{ type: 'string', value: 'a~b' }] }), '~', 0x80), 'a string argument whose only non-ASCII byte is 0x80 is not UTF-8: refused (args[0])'),
    c('arg-string-leading-bom', envelopeBytes({ args: [{ type: 'string', value: '\ufeffx' }] }), 'a string argument starting with U+FEFF (ef bb bf) keeps it: a byte order mark is a character like any other'),
    c('arg-string-two-byte-utf8', envelopeBytes({ args: [{ type: 'string', value: 'aĀb' }] }), 'a string argument holding U+0100 (c4 80, a continuation byte of 0x80) is UTF-8: read back'),
  ];
}

export function envelopeEncodeEdgeCases(): CaseInput[] {
  const base = envelopeToJson(envelope()) as unknown as Record<string, unknown>;
  const c = (id: string, e: unknown, pins: string): CaseInput => ({ id, pins, input: { envelope: e } });
  return [
    c('envelope-null', null, 'an envelope that is not a JSON object is refused'),
    c('envelope-array', [], 'an envelope that is a JSON list is refused'),
    c('args-object', { ...base, args: {} }, 'args that are not a list are refused (args)'),
    c('arg-null', { ...base, args: [null] }, 'an argument that is not a {type, value} object is refused (args[0])'),
    c('arg-type-list', { ...base, args: [{ type: ['u64'], value: '1' }] }, 'an argument type that is not a JSON string is refused (args[0])'),
    c('arg-string-number', { ...base, args: [{ type: 'string', value: 5 }] }, 'a string argument whose value is a JSON number is refused (args[0])'),
    c('contract-id-number', { ...base, contract_id: 5 }, 'a contract_id that is not a hex string is refused (contract_id)'),
    c('signature-63-bytes', { ...base, signature: (base.signature as string).slice(0, 126) }, 'a signature of 63 bytes is refused (signature)'),
  ];
}

export function valueBinaryEdgeCases(): CaseInput[] {
  return [
    { id: 'type-list', pins: 'a value type that is not a JSON string is refused', input: { type: ['u64'], value: '1' } },
    { id: 'string-json-number', pins: 'a string value that is a JSON number is refused', input: { type: 'string', value: 5 } },
    { id: 'u128-zero', pins: 'u128: 0 is its least value', input: { type: 'u128', value: '0' } },
    { id: 'u128-both-halves', pins: 'u128: 16 bytes big-endian, both halves in place', input: { type: 'u128', value: U128_BOTH_HALVES.toString() } },
  ];
}

/** codec.artifact: function_offset_to_locals is a JSON object. */
export function artifactEdgeCases(): CaseInput[] {
  const c = codecArea()['codec.artifact']?.find((x) => x.id === 'minimal-shape');
  if (!c) throw new Error('envelope-edges: codec.artifact has no case minimal-shape');
  const input = JSON.parse(JSON.stringify(c.input)) as { artifact: Record<string, unknown>; deploy_txid: string };
  return [{ id: 'offsets-to-locals-list', pins: 'function_offset_to_locals given as a list is refused (function_offset_to_locals)', input: { ...input, artifact: { ...input.artifact, function_offset_to_locals: [] } } }];
}

/** A low surrogate followed by another low one: the first is alone (no high one before it). */
export function surrogateEdgeCases(): CaseInput[] {
  return [{ id: 'string-low-then-low', pins: 'a low surrogate U+DC00 followed by another low one is refused: the first stands alone', input: { type: 'string', value: '\udc00\udc00' } }];
}

/** Signatures and caller keys libsecp256k1 refuses before verifying: they do not verify (never an error). */
export function signatureEdgeCases(): CaseInput[] {
  const good = envelopeBytes();
  const withSignature = (sig: Buffer) => Buffer.concat([Buffer.from(good.subarray(0, good.length - 64)), sig]);
  const callerAt = Buffer.from(good).indexOf(Buffer.from(envelope().caller));
  const offCurve = Buffer.from(good);
  offCurve.fill(0xff, callerAt, callerAt + 32);
  const c = (id: string, b: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { hex: hex(b) } });
  return [
    c('signature-all-ff', withSignature(Buffer.alloc(64, 0xff)), 'a signature whose r and s are past the field and the group order decodes, and does not verify'),
    c('caller-not-a-key', offCurve, 'a caller of 32 bytes 0xff (no x coordinate of a curve point) decodes, and its signature does not verify'),
  ];
}

/** Codec: typed values (binary form), envelopes (bytes -> fields or refusal, JSON -> bytes), artifacts (code hash, contract id). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../../test/helpers/paths.js';
import { compileSource } from '../../src/compiler/index.js';
import { MAX_ENVELOPE_BYTES } from '@svc-node/protocol/limits';
import { envelopeToJson } from '@svc-node/protocol/envelope';
import type { Value } from '@svc-node/protocol/value';
import { hex, type Area, type CaseInput } from './kit.js';
import { envelope, envelopeBytes, seeded } from './keys.js';

const U64_MAX = '18446744073709551615';
const I64_MIN = '-9223372036854775808';
const I64_MAX = '9223372036854775807';
const U128_MAX = '340282366920938463463374607431768211455';

function valueCases(): CaseInput[] {
  const c = (id: string, type: unknown, value: unknown, pins: string): CaseInput => ({ id, pins, input: { type, value } });
  return [
    c('u64-zero', 'u64', '0', 'u64: tag 0, 8 bytes big-endian'),
    c('u64-max', 'u64', U64_MAX, 'u64 accepts 2^64-1'),
    c('u64-past-max', 'u64', '18446744073709551616', 'u64 refuses 2^64'),
    c('u64-leading-zero', 'u64', '01', 'decimal JSON form refuses a leading zero'),
    c('u64-plus-sign', 'u64', '+1', "decimal JSON form refuses '+'"),
    c('u64-negative', 'u64', '-1', 'u64 refuses a negative number'),
    c('u64-json-number', 'u64', 1, 'integers travel as decimal strings, never JSON numbers'),
    c('i64-min', 'i64', I64_MIN, 'i64: tag 1, two\'s complement big-endian, accepts -2^63'),
    c('i64-max', 'i64', I64_MAX, 'i64 accepts 2^63-1'),
    c('i64-minus-one', 'i64', '-1', 'i64 -1 is eight 0xff bytes'),
    c('i64-past-min', 'i64', '-9223372036854775809', 'i64 refuses -2^63-1'),
    c('i64-past-max', 'i64', '9223372036854775808', 'i64 refuses 2^63'),
    c('i64-minus-zero', 'i64', '-0', "i64 refuses '-0' (not canonical)"),
    c('u128-max', 'u128', U128_MAX, 'u128: tag 2, 16 bytes big-endian, accepts 2^128-1'),
    c('u128-past-max', 'u128', '340282366920938463463374607431768211456', 'u128 refuses 2^128'),
    c('bool-true', 'bool', true, 'bool: tag 3, one byte 1'),
    c('bool-false', 'bool', false, 'bool false is one byte 0'),
    c('bool-string', 'bool', 'true', 'bool must be a JSON boolean'),
    c('string-empty', 'string', '', 'string: tag 4, u32be length 0'),
    c('string-utf8', 'string', 'h\u00e9llo \u{1f600}', 'string length counts UTF-8 bytes, not characters'),
    c('string-lone-surrogate', 'string', '\ud800', 'a string with a lone surrogate has no UTF-8 form and is refused'),
    c('bytes-empty', 'bytes', '', 'bytes: tag 5, u32be length 0'),
    c('bytes-some', 'bytes', '00ff10', 'bytes: u32be length then the bytes'),
    c('bytes-uppercase', 'bytes', '00FF', 'bytes JSON form is lowercase hex only'),
    c('bytes-odd', 'bytes', 'abc', 'bytes JSON form has an even number of hex digits'),
    c('key-32', 'key', 'ab'.repeat(32), 'key: tag 6, 32 bytes, no length'),
    c('key-31', 'key', 'ab'.repeat(31), 'key refuses 31 bytes'),
    c('key-33', 'key', 'ab'.repeat(33), 'key refuses 33 bytes'),
    c('unknown-type', 'u32', '1', 'an unknown type name is refused'),
  ];
}

export const ALL_ARGS: Value[] = [
  { type: 'u64', value: (1n << 64n) - 1n },
  { type: 'i64', value: -(1n << 63n) },
  { type: 'u128', value: (1n << 128n) - 1n },
  { type: 'bool', value: true },
  { type: 'string', value: 'h\u00e9llo' },
  { type: 'bytes', value: Uint8Array.of(1, 2, 3) },
  { type: 'key', value: seeded('conformance key arg') },
];

/** Byte offsets of the fixed layout after the function name, for an envelope with no args and a function of `fnLen` bytes. */
function layout(fnLen: number) {
  const fn = 1 + 32;
  const args = fn + 4 + fnLen;
  const caller = args + 4;
  return { version: 0, contractId: 1, fn, args, caller, callId: caller + 32, outpointTxid: caller + 40, outpointVout: caller + 72, signature: caller + 76, end: caller + 140 };
}

function decodeCases(): CaseInput[] {
  const c = (id: string, b: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { hex: hex(b) } });
  const plain = envelopeBytes({ function: 'f' });
  const L = layout(1);
  const patched = (at: number, ...v: number[]) => {
    const b = Uint8Array.from(plain);
    b.set(v, at);
    return b;
  };
  const withArgs = (argBytes: number[]) => {
    // plain with its u32 arg count and args replaced by `argBytes` (signature left as is: decoding comes first)
    const out = new Uint8Array(plain.length - 4 + argBytes.length);
    out.set(plain.subarray(0, L.args), 0);
    out.set(argBytes, L.args);
    out.set(plain.subarray(L.args + 4), L.args + argBytes.length);
    return out;
  };
  const badSig = Uint8Array.from(plain);
  badSig[badSig.length - 1]! ^= 1;
  const emptyFn = envelopeBytes({ function: '' });
  // One bytes argument sized so the whole envelope is exactly the limit (and one past it).
  const fixed = envelopeBytes({ function: 'f', args: [{ type: 'bytes', value: new Uint8Array(0) }] }).length;
  const atLimit = envelopeBytes({ function: 'f', args: [{ type: 'bytes', value: new Uint8Array(MAX_ENVELOPE_BYTES - fixed) }] });
  const pastLimit = new Uint8Array(MAX_ENVELOPE_BYTES + 1);
  pastLimit.set(atLimit, 0);
  const fnBad = Uint8Array.from(plain);
  fnBad[L.fn + 4] = 0xff; // the one byte of the function name: not UTF-8
  const cases: CaseInput[] = [
    c('plain', plain, 'a well-formed envelope with no args decodes to its fields; the signature verifies under the caller'),
    c('every-value-type', envelopeBytes({ function: 'transfer', args: ALL_ARGS, callId: (1n << 64n) - 1n, outpointVout: 0xffffffff }), 'every value tag in args (borsh, little-endian), call_id 2^64-1 and outpoint_vout 2^32-1 decode'),
    c('empty-function', emptyFn, 'the smallest envelope (181 bytes, empty function name) decodes'),
    c('bad-signature', badSig, 'a flipped signature bit still decodes; the signature does not verify'),
    c('at-size-limit', atLimit, `an envelope of exactly ${MAX_ENVELOPE_BYTES} bytes decodes`),
    c('past-size-limit', pastLimit, `an envelope of ${MAX_ENVELOPE_BYTES + 1} bytes is refused for its size (payload_too_large) before anything else`),
    c('empty', new Uint8Array(0), 'no bytes: refused at version'),
    c('version-0', patched(0, 0), 'version byte 0 is refused'),
    c('version-2', patched(0, 2), 'version byte 2 is refused'),
    c('truncated-contract-id', plain.subarray(0, 20), 'bytes ending inside contract_id are refused'),
    c('truncated-function', plain.subarray(0, L.fn + 2), 'bytes ending inside the function length are refused'),
    c('function-length-past-end', patched(L.fn, 0xff, 0xff, 0, 0), 'a function length beyond the bytes left is refused'),
    c('function-not-utf8', fnBad, 'a function name that is not UTF-8 is refused'),
    c('args-count-impossible', patched(L.args, 0xff, 0xff, 0xff, 0x7f), 'an args count that cannot fit the bytes left is refused'),
    c('arg-unknown-tag', withArgs([1, 0, 0, 0, 7, 0]), 'value tag 7 is refused'),
    c('arg-bool-2', withArgs([1, 0, 0, 0, 3, 2]), 'a bool byte other than 0 or 1 is refused'),
    c('arg-bytes-length-past-end', withArgs([1, 0, 0, 0, 5, 0xff, 0xff, 0, 0]), 'a bytes length beyond the bytes left is refused'),
    c('arg-string-not-utf8', withArgs([1, 0, 0, 0, 4, 2, 0, 0, 0, 0xc3, 0x28]), 'a string arg that is not UTF-8 is refused'),
    c('truncated-signature', plain.subarray(0, plain.length - 1), 'a 63-byte signature is refused'),
    c('trailing-byte', Uint8Array.from([...plain, 0]), 'one byte after the signature is refused'),
  ];
  if (L.end !== plain.length) throw new Error('codec: envelope layout drifted from the encoder');
  return cases;
}

function encodeCases(): CaseInput[] {
  const base = envelopeToJson(envelope({ function: 'transfer', args: ALL_ARGS.slice(0, 3) }));
  const c = (id: string, patch: Record<string, unknown>, pins: string): CaseInput => ({ id, pins, input: { envelope: { ...base, ...patch } } });
  const fixed = envelopeBytes({ function: 'f', args: [{ type: 'bytes', value: new Uint8Array(0) }] }).length;
  const room = MAX_ENVELOPE_BYTES - fixed;
  return [
    c('base', {}, 'JSON fields encode to borsh bytes; envelope_hash = TH("SVC/envelope", bytes)'),
    c('call-id-max', { call_id: '18446744073709551615' }, 'call_id accepts 2^64-1'),
    c('call-id-past-max', { call_id: '18446744073709551616' }, 'call_id refuses 2^64'),
    c('call-id-leading-zero', { call_id: '01' }, 'call_id refuses a leading zero'),
    c('vout-max', { outpoint_vout: 4294967295 }, 'outpoint_vout accepts 2^32-1'),
    c('vout-past-max', { outpoint_vout: 4294967296 }, 'outpoint_vout refuses 2^32'),
    c('version-2', { version: 2 }, 'version must be 1'),
    c('contract-id-short', { contract_id: 'ab'.repeat(31) }, 'contract_id must be 32 bytes'),
    c('caller-uppercase', { caller: 'AB'.repeat(32) }, 'caller must be lowercase hex'),
    c('arg-out-of-range', { args: [{ type: 'u64', value: '18446744073709551616' }] }, 'an arg out of its type range is refused'),
    c('at-size-limit', { function: 'f', args: [{ type: 'bytes', value: '00'.repeat(room) }] }, `fields whose encoding is exactly ${MAX_ENVELOPE_BYTES} bytes encode`),
    c('past-size-limit', { function: 'f', args: [{ type: 'bytes', value: '00'.repeat(room + 1) }] }, `fields whose encoding is ${MAX_ENVELOPE_BYTES + 1} bytes are refused (payload_too_large)`),
  ];
}

function compiled(file: string): Record<string, unknown> {
  const path = join(fixturesDir, 'contracts', file);
  const r = compileSource(readFileSync(path, 'utf8'), file);
  if (!r.ok) throw new Error(`${file} does not compile`);
  return r.artifact as unknown as Record<string, unknown>;
}

/** The compiled fixture contracts the codec and verifier areas use (test/fixtures/contracts). */
export const FIXTURE_CONTRACTS = ['counter.svc', 'bank.svc', 'emitter.svc', 'fields.svc', 'kinds.svc', 'proxy.svc'];
export function fixtureArtifact(file: string): Record<string, unknown> {
  return compiled(file);
}

function artifactCases(): CaseInput[] {
  const txid = hex(seeded('conformance deploy txid'));
  const counter = compiled('counter.svc');
  const { metadata: _m, ...core } = counter;
  const c = (id: string, artifact: unknown, pins: string, deployTxid = txid): CaseInput => ({ id, pins, input: { artifact, deploy_txid: deployTxid } });
  const minimal = { bytecode: '0000000000', abi: [], function_offsets: {}, function_offset_to_locals: {}, constants: [] };
  return [
    ...FIXTURE_CONTRACTS.map((f) => c(`fixture-${f.replace('.svc', '')}`, compiled(f), `${f} compiled: code_hash = TH("SVC/code", JCS(core)); contract_id = TH("SVC/contract", deploy_txid || code_hash)`)),
    c('core-without-metadata', core, 'metadata is not hashed: the bare core of counter.svc has the same code_hash'),
    c('other-deploy-txid', core, 'the same code deployed by another transaction has another contract_id', hex(seeded('another deploy txid'))),
    c('extra-key-ignored', { ...core, comment: 'not hashed' }, 'keys outside the five core keys are not hashed'),
    c('minimal-shape', minimal, 'code_hash needs only the JSON types of the core, not verified code'),
    c('unicode-and-escapes', { ...minimal, constants: [{ type: 'string', value: '\u00e9\u0000"\\\u2028' }] }, 'JCS escapes strings per RFC 8785 (\\u0000, quote, backslash; U+2028 and non-ASCII raw)'),
    c('number-forms', { ...minimal, constants: [{ type: 'u64', value: 9007199254740991 }, { type: 'i64', value: -9007199254740991 }, { type: 'u64', value: '9007199254740992' }] }, 'integers up to 2^53-1 are JSON numbers in JCS form; larger ones are strings'),
    c('unsafe-integer', { ...minimal, constants: [{ type: 'u64', value: 9007199254740992 }] }, 'a JSON integer beyond 2^53-1 is refused (it must be a decimal string)'),
    c('bytecode-uppercase', { ...minimal, bytecode: '00000000AA' }, 'bytecode must be lowercase hex'),
    c('abi-not-array', { ...minimal, abi: {} }, 'abi must be an array'),
    c('offsets-not-object', { ...minimal, function_offsets: [] }, 'function_offsets must be an object'),
    c('missing-constants', { bytecode: '00', abi: [], function_offsets: {}, function_offset_to_locals: {} }, 'every core key is required'),
    c('not-an-object', [], 'an artifact must be a JSON object'),
  ];
}

export function codecArea(): Area {
  return {
    'codec.value-binary': valueCases(),
    'codec.envelope-decode': decodeCases(),
    'codec.envelope-encode': encodeCases(),
    'codec.artifact': artifactCases(),
  };
}

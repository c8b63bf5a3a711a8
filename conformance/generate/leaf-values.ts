/**
 * Decision leaves holding a value of every type, as a result and as event parameters
 * (PROTOCOL.md's value binary form inside a leaf): a decoder must read each type's own
 * width (u64 and i64 8 bytes, u128 16 as two big-endian halves, bool 1, key 32, string
 * and bytes a u32be length first) and answer the value back in its JSON form. The
 * numbers set bits in both halves of a u128 and the sign of an i64; the string holds
 * multi-byte UTF-8.
 */
import { encodeDecision, type Decision } from '@svc-node/protocol/state/decisions';
import type { Value } from '@svc-node/protocol/value';
import { hex, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

const U128_BOTH_HALVES = (0x0123456789abcdefn << 64n) | 0xfedcba9876543210n;

/** One value of each type, each one whose bytes a wrong width or byte order would misread. */
function everyType(): [string, Value][] {
  return [
    ['u64', { type: 'u64', value: 0x8000000000000001n }],
    ['i64', { type: 'i64', value: -2n }],
    ['u128', { type: 'u128', value: U128_BOTH_HALVES }],
    ['bool-true', { type: 'bool', value: true }],
    ['bool-false', { type: 'bool', value: false }],
    ['key', { type: 'key', value: seeded('leaf key') }],
    ['string', { type: 'string', value: 'é€😀' }],
    ['string-empty', { type: 'string', value: '' }],
    ['bytes', { type: 'bytes', value: Uint8Array.of(0, 1, 0xfe, 0xff) }],
    ['bytes-empty', { type: 'bytes', value: new Uint8Array(0) }],
  ];
}

export function leafValueCases(): CaseInput[] {
  const c = (id: string, d: Decision, pins: string): CaseInput => ({ id, pins, input: { hex: hex(encodeDecision(d)) } });
  const results = everyType().map(([name, v]) =>
    c(`result-${name}`, { status: 'executed', txIndex: 2, result: v, errorCode: null, events: [] }, `an executed leaf whose result is a ${v.type}: its binary form read back to the JSON value`),
  );
  const params = everyType().map(([, v]) => v);
  return [
    ...results,
    c(
      'event-every-type',
      { status: 'executed', txIndex: 9, result: { type: 'u128', value: U128_BOTH_HALVES }, errorCode: null, events: [{ contractId: seeded('leaf contract'), name: 'Every', params }] },
      'an event whose parameters are a value of every type in a row: each read with its own width, the next one starting where it ends',
    ),
    c(
      'two-events',
      {
        status: 'executed', txIndex: 0, result: null, errorCode: null,
        events: [
          { contractId: seeded('leaf contract'), name: 'First', params: [{ type: 'bytes', value: Uint8Array.of(7, 7, 7) }] },
          { contractId: seeded('leaf contract 2'), name: 'Second', params: [{ type: 'string', value: 'ok' }, { type: 'i64', value: -9223372036854775808n }] },
        ],
      },
      'two events in log order, the second starting where the first one\'s last parameter ends',
    ),
  ];
}

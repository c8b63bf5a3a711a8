/** fast-check generators of evidence (any shape the codecs must carry) and a comparable form of it. */
import fc from 'fast-check';
import { MAX_BRANCH_DEPTH } from '@svc-node/protocol/merkle-branch';
import type { Evidence, Inclusion } from '@svc-node/protocol/evidence';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const hash32 = fc.uint8Array({ minLength: 32, maxLength: 32 });

export const inclusionArb: fc.Arbitrary<Inclusion> = fc.record({
  blockHash: hash32.map(hex),
  height: fc.nat({ max: 0xffffffff }),
  txIndex: fc.nat({ max: 0xffffffff }),
  branch: fc.array(hash32, { maxLength: MAX_BRANCH_DEPTH }),
});

const txArb = fc.uint8Array({ minLength: 1, maxLength: 300 });

export const evidenceArb: fc.Arbitrary<Evidence> = fc.record({
  anchorTx: txArb,
  confirmed: fc.option(inclusionArb, { nil: null }),
  spentBy: fc.option(fc.record({ tx: txArb, vin: fc.nat({ max: 0xffffffff }), at: inclusionArb }), { nil: null }),
});

/** A value with every byte field as hex (Buffers and Uint8Arrays alike), for deepEqual. */
export const bytesAsHex = (v: unknown): unknown =>
  v instanceof Uint8Array ? hex(v) : Array.isArray(v) ? v.map(bytesAsHex) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bytesAsHex(x)])) : v;

/**
 * Compact targets and proof of work at their edges (packages/protocol/src/headers.ts;
 * Bitcoin Core's arith_uint256 SetCompact, CheckProofOfWork and CalculateNextWorkRequired):
 * - SetCompact's overflow flag at each of its three bounds (a zero mantissa never
 *   overflows; a mantissa above 0xff overflows from size 34, above 0xffff from size 33),
 *   and a target of exactly 2^255 (the top bit of 256);
 * - the retarget's product wraps at 2^256 only: on signet a target near 2^233 times four
 *   periods passes 2^255 and is clamped to the powLimit;
 * - CheckProofOfWork refuses bits that are negative, that overflow (even when the bits
 *   left in 256 make a reachable target) or that ask less work than the network's
 *   powLimit, each in a header that meets the target its bits state: regtest headers on
 *   the devnet's genesis, mined for these cases (regtest's powLimit is 2^255 - 2^232).
 */
import { DevnetChain } from '../../src/devnet/chain.js';
import { decodeCompact, headerHash } from '@svc-node/protocol/headers';
import { hex, type CaseInput } from './kit.js';

const SIGNET = '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6';
const REGTEST = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';
const TWO_WEEKS = 1_209_600;

export function compactEdgeCases(): CaseInput[] {
  const rows: [number, string][] = [
    [0x23000000, 'a zero mantissa never overflows, whatever its size (35)'],
    [0x220000ff, 'a mantissa of 0xff at size 34 fits 256 bits'],
    [0x2100ffff, 'a mantissa of 0xffff at size 33 fits 256 bits'],
    [0x21010000, 'a mantissa above 0xffff at size 33 overflows'],
    [0x21008000, 'size 33, mantissa 0x8000: the target 2^255, the top bit of 256'],
  ];
  return rows.map(([bits, pins]) => {
    const h = bits.toString(16).padStart(8, '0');
    return { id: `edge-${h}`, pins: `SetCompact(0x${h}): ${pins}`, input: { bits } };
  });
}

export function nextWorkEdgeCases(): CaseInput[] {
  return [
    {
      id: 'signet-product-past-2-255',
      pins: 'signet: a target of 2^233 (0x1e020000) over a period four times too slow: the product passes 2^255 (not 2^256, where arith_uint256 wraps) and the result is clamped to the powLimit',
      input: { genesis_hash: SIGNET, first: { timestamp: 0, bits: 0x1e020000 }, last: { timestamp: 4 * TWO_WEEKS, bits: 0x1e020000 } },
    },
  ];
}

/** A header on `prev` with `bits`, its nonce the first from 0 whose hash is at most `target`. */
function mined(prev: Uint8Array, bits: number, target: bigint, time: number): string {
  const h = Buffer.alloc(80);
  h.writeUInt32LE(0x20000000, 0);
  Buffer.from(headerHash(prev), 'hex').reverse().copy(h, 4);
  h.fill(0x5a, 36, 68);
  h.writeUInt32LE(time, 68);
  h.writeUInt32LE(bits, 72);
  for (let nonce = 0; ; nonce++) {
    h.writeUInt32LE(nonce, 76);
    if (BigInt(`0x${headerHash(h)}`) <= target) return hex(h);
  }
}

export function powEdgeRunCases(): CaseInput[] {
  const chain = new DevnetChain();
  const genesis = Buffer.from(chain.blockAt(0)!.raw.subarray(0, 80));
  const time = genesis.readUInt32LE(68) + 600;
  const c = (id: string, bits: number, target: bigint, pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: REGTEST, start: { height: 1, prev: hex(genesis), period_first: null }, run: [mined(genesis, bits, target, time)] },
  });
  const low = (bits: number) => decodeCompact(bits).target;
  return [
    c('regtest-negative-bits', 0x20ffffff, low(0x20ffffff), 'bits with the sign bit set (0x20ffffff) are refused, though the hash meets their magnitude'),
    c('regtest-overflowing-bits', 0x21010001, 1n << 240n, 'bits that overflow 256 bits (0x21010001) are refused, though the hash meets the 2^240 left of them'),
    c('regtest-bits-above-pow-limit', 0x21008000, 1n << 255n, 'bits asking less work than regtest\'s powLimit (2^255 for 2^255 - 2^232) are refused, though the hash meets them'),
    c('regtest-bits-below-pow-limit', 0x207ffffe, low(0x207ffffe), 'bits a little under regtest\'s powLimit, met by the hash: accepted'),
  ];
}

/**
 * Signet's retarget clamps (its blocks retarget as mainnet's: no minimum-difficulty rule):
 * a boundary header whose previous period's first header is not held may ask at most four
 * times less work than its parent, and at most four times more (its target between a
 * quarter of the parent's and four times it, each bound rounded through the compact form). The header below is held (checked when it was taken), so
 * only its time and bits count here: genesis's bytes with those changed. Each boundary
 * header is mined at signet's difficulty on it; the nonces were found by searching from 0
 * (about 2^23 hashes each at the upper clamp, 2^24 at the lower) and are checked here
 * rather than searched again.
 */
const SIGNET_CLAMP: { id: string; prevBits: number; bits: number; nonce: number; pins: string }[] = [
  { id: 'signet-boundary-4x-edge', prevBits: 0x1e008000, bits: 0x1e020000, nonce: 852607, pins: 'signet: a boundary header whose target is exactly four times its parent\'s (2^231 to 2^233), the previous period\'s first not held: within the clamps' },
  { id: 'signet-boundary-past-4x', prevBits: 0x1e007fff, bits: 0x1e020000, nonce: 9881859, pins: 'signet: a boundary header whose target is a little more than four times its parent\'s: outside the clamps, refused' },
  // The lower clamp, a quarter of a parent at the powLimit (0x1e0377ae / 4 = 0x1e00ddeb.8, rounded down through the compact form): about 2^24 hashes each.
  { id: 'signet-boundary-quarter-edge', prevBits: 0x1e0377ae, bits: 0x1e00ddeb, nonce: 15636339, pins: 'signet: a boundary header whose target is a quarter of its parent\'s at the powLimit, rounded through the compact form (0x1e00ddeb), the previous period\'s first not held: at the lower clamp, accepted' },
  { id: 'signet-boundary-under-quarter', prevBits: 0x1e0377ae, bits: 0x1e00ddea, nonce: 15491007, pins: 'signet: a boundary header whose target is a little less than a quarter of its parent\'s (0x1e00ddea after 0x1e0377ae): asks more than four times the work, outside the clamps, refused' },
];

export function signetClampRunCases(): CaseInput[] {
  const mainnetGenesis = Buffer.from('0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c', 'hex');
  return SIGNET_CLAMP.map(({ id, prevBits, bits, nonce, pins }) => {
    const prev = Buffer.from(mainnetGenesis);
    prev.writeUInt32LE(1_600_000_000, 68);
    prev.writeUInt32LE(prevBits, 72);
    const h = Buffer.alloc(80);
    h.writeUInt32LE(0x20000000, 0);
    Buffer.from(headerHash(prev), 'hex').reverse().copy(h, 4);
    h.fill(0x5a, 36, 68);
    h.writeUInt32LE(1_600_000_600, 68);
    h.writeUInt32LE(bits, 72);
    h.writeUInt32LE(nonce, 76);
    if (BigInt(`0x${headerHash(h)}`) > decodeCompact(bits).target) throw new Error(`compact-edges: ${id}'s nonce does not meet its bits`);
    return { id, pins, input: { genesis_hash: SIGNET, start: { height: 2016, prev: hex(prev), period_first: null }, run: [hex(h)] } };
  });
}

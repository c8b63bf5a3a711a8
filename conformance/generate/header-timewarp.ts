/**
 * Header runs at the two test-network time bounds that only a header mined at a test
 * network's powLimit (0x1d00ffff) can pin (packages/protocol/src/headers.ts,
 * verifyHeaderRun; Bitcoin Core's GetNextWorkRequired with fPowAllowMinDifficultyBlocks,
 * and BIP94):
 * - testnet4's timewarp bound: the first header of a retarget period exactly 600 s before
 *   its parent is accepted, one 601 s before it refused. Each carries the bits the retarget
 *   asks (the powLimit's: the previous period's first header, at the powLimit, is more than
 *   four periods older than the parent), so only the time bound can refuse it;
 * - testnet3's minimum-difficulty gap: a header exactly 1,200 s (twice the spacing) after
 *   its parent must carry its period's bits (0x1c00ffff here), not the powLimit's, which
 *   only a gap of more than 1,200 s allows: one carrying the powLimit's is refused.
 * The headers below the run (start.prev, start.period_first) are held, not checked: mainnet
 * genesis's bytes with the time and bits each case needs. Each run header is on that
 * parent (version 0x20000000, a merkle root of 0x5a bytes but for the miner's roll) and was
 * mined once by scripts/mine-header.c, searching the nonce from 0 (2^32 double SHA-256 each
 * on average; these took 0.09, 7.4 and 1.4 billion, about 17 minutes in all at 8.7 million
 * a second on one shared core): the table keeps the nonces and this generator only checks
 * that each header meets its bits.
 */
import { decodeCompact, headerHash } from '@svc-node/protocol/headers';
import { hex, type Area, type CaseInput } from './kit.js';
import { periodFirstWith } from './header-networks.js';

const TESTNET3 = '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943';
const TESTNET4 = '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043';
const MAINNET_GENESIS = '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c';
/** The test networks' powLimit as compact bits. */
const POW_LIMIT_BITS = 0x1d00ffff;
/** The parent's time: any, so long as the period's first (at time 0) is more than four periods before it. */
const PARENT_TIME = 1_600_000_000;

/**
 * The mined headers: each one's time relative to its parent, the miner's roll (added to the
 * merkle root's last four bytes, read little-endian, when a roll's 2^32 nonces held none) and
 * the nonce that makes it meet POW_LIMIT_BITS.
 */
const MINED: Record<'timewarp600' | 'timewarp601' | 'gap1200', { offset: number; roll: number; nonce: number }> = {
  timewarp600: { offset: -600, roll: 1, nonce: 3086393147 },
  timewarp601: { offset: -601, roll: 0, nonce: 92846103 },
  gap1200: { offset: 1200, roll: 0, nonce: 1395755715 },
};

/** The run header `which` on `parent`, checked against its bits. */
function minedHeader(parent: string, which: keyof typeof MINED): string {
  const { offset, roll, nonce } = MINED[which];
  const h = Buffer.alloc(80);
  h.writeUInt32LE(0x20000000, 0);
  Buffer.from(headerHash(Buffer.from(parent, 'hex')), 'hex').reverse().copy(h, 4);
  h.fill(0x5a, 36, 68);
  h.writeUInt32LE(0x5a5a5a5a + roll, 64);
  h.writeUInt32LE(PARENT_TIME + offset, 68);
  h.writeUInt32LE(POW_LIMIT_BITS, 72);
  h.writeUInt32LE(nonce, 76);
  if (BigInt(`0x${headerHash(h)}`) > decodeCompact(POW_LIMIT_BITS).target) throw new Error(`header-timewarp: ${which}'s nonce does not meet its bits`);
  return hex(h);
}

export function headerTimewarpArea(): Area {
  const parent = periodFirstWith(MAINNET_GENESIS, PARENT_TIME, POW_LIMIT_BITS);
  const c = (id: string, genesis: string, height: number, periodFirst: string, which: keyof typeof MINED, pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: genesis, start: { height, prev: parent, period_first: periodFirst }, run: [minedHeader(parent, which)] },
  });
  const retargetFirst = periodFirstWith(MAINNET_GENESIS, 0, POW_LIMIT_BITS);
  const periodBits = periodFirstWith(MAINNET_GENESIS, 0, 0x1c00ffff);
  return {
    'headers.run': [
      c('testnet4-timewarp-600-s-before', TESTNET4, 2016, retargetFirst, 'timewarp600', 'testnet4 (BIP94): a period\'s first header exactly 600 s before its parent, with the retarget\'s bits (the powLimit\'s) and a mined proof of work: at the timewarp bound, accepted'),
      c('testnet4-timewarp-601-s-before', TESTNET4, 2016, retargetFirst, 'timewarp601', 'testnet4 (BIP94): a period\'s first header 601 s before its parent, with the retarget\'s bits (the powLimit\'s) and a mined proof of work: one second past the timewarp bound, refused'),
      c('testnet3-gap-1200-s-min-bits', TESTNET3, 2020, periodBits, 'gap1200', 'testnet3: inside a period, a header exactly 1,200 s (twice the spacing) after its parent carrying the powLimit\'s bits, with a mined proof of work, is refused: the minimum difficulty needs more than 1,200 s, and its period\'s bits are 0x1c00ffff'),
    ],
  };
}

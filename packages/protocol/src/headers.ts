/**
 * Bitcoin block headers: the one 80-byte header parser, Bitcoin Core's compact-target
 * arithmetic (arith_uint256 SetCompact / GetCompact), proof of work, the retarget
 * (CalculateNextWorkRequired) and the check of a run of headers against a network's
 * rules (docs/STATE.md, "Bitcoin evidence"). Pure: no chain access, no clock.
 *
 * Byte order: hashes as strings are display hex (the reverse of the bytes inside raw
 * headers), as Esplora spells them.
 */
import { displayHex, sha256d } from './hash.js';
import type { PowParams } from './activation.js';

export const HEADER_BYTES = 80;

/** A parsed 80-byte block header. */
export interface Header80 {
  hash: string;
  version: number;
  prevHash: string;
  merkleRoot: string;
  timestamp: number;
  bits: number;
  nonce: number;
  /** The 80 header bytes as lowercase hex. */
  hex: string;
}

/** The previous block's hash an 80-byte header names (display hex): `parseHeader80`'s `prevHash`. */
export function headerPrevHash(bytes: Uint8Array): string {
  return displayHex(bytes.subarray(4, 36));
}

/** Parses an 80-byte header (throws Error when it is not 80 bytes). */
export function parseHeader80(bytes: Uint8Array): Header80 {
  if (bytes.length !== HEADER_BYTES) throw new Error(`header must be 80 bytes, got ${bytes.length}`);
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    hash: displayHex(sha256d(bytes)),
    version: b.readUInt32LE(0),
    prevHash: headerPrevHash(bytes),
    merkleRoot: displayHex(bytes.subarray(36, 68)),
    timestamp: b.readUInt32LE(68),
    bits: b.readUInt32LE(72),
    nonce: b.readUInt32LE(76),
    hex: b.toString('hex'),
  };
}

/** The block hash (display hex) of an 80-byte header. */
export function headerHash(header80: Uint8Array): string {
  if (header80.length !== HEADER_BYTES) throw new Error(`header must be 80 bytes, got ${header80.length}`);
  return displayHex(sha256d(header80));
}

// ------------------------------------------------------------------ compact targets

const U256 = (1n << 256n) - 1n;

/** A compact target decoded as arith_uint256::SetCompact does, with its two error flags. */
export interface CompactTarget {
  /** The 256-bit target (bits shifted past 256 are lost, as in arith_uint256). */
  target: bigint;
  /** The sign bit (0x00800000) is set on a non-zero mantissa. */
  negative: boolean;
  /** The number does not fit 256 bits. */
  overflow: boolean;
}

export function decodeCompact(bits: number): CompactTarget {
  const size = bits >>> 24;
  let word = bits & 0x007fffff;
  let target: bigint;
  if (size <= 3) {
    word >>>= 8 * (3 - size);
    target = BigInt(word);
  } else {
    target = (BigInt(word) << BigInt(8 * (size - 3))) & U256;
  }
  const negative = word !== 0 && (bits & 0x00800000) !== 0;
  const overflow = word !== 0 && (size > 34 || (word > 0xff && size > 33) || (word > 0xffff && size > 32));
  return { target, negative, overflow };
}

/** arith_uint256::GetCompact of a non-negative target. */
export function encodeCompact(target: bigint): number {
  let size = target === 0n ? 0 : Math.ceil(target.toString(2).length / 8);
  let compact: number;
  if (size <= 3) compact = Number(target << BigInt(8 * (3 - size)));
  else compact = Number((target >> BigInt(8 * (size - 3))) & 0xffffffffn);
  // The mantissa's top bit is the sign: move one byte down and grow the exponent.
  if (compact & 0x00800000) {
    compact >>>= 8;
    size++;
  }
  return (compact | (size << 24)) >>> 0;
}

/**
 * Bitcoin Core's CheckProofOfWork: the bits decode to a positive target within 256
 * bits, not above the network's powLimit, and the hash (display hex, read as a
 * 256-bit number) is at most the target. Answers true or why not.
 */
export function checkProofOfWork(hashDisplay: string, bits: number, powLimit: bigint): true | string {
  const t = decodeCompact(bits);
  if (t.negative || t.overflow || t.target === 0n) return `bits 0x${hex32(bits)} do not decode to a positive target`;
  if (t.target > powLimit) return `bits 0x${hex32(bits)} ask less work than the network's minimum`;
  if (BigInt('0x' + hashDisplay) > t.target) return `hash ${hashDisplay} is above the target of its bits 0x${hex32(bits)}`;
  return true;
}

/** Whether a block hash (display hex) meets the compact target `bits` (no network limit: the devnet's miner). */
export function hashMeetsTarget(hashDisplay: string, bits: number): boolean {
  return checkProofOfWork(hashDisplay, bits, U256) === true;
}

const hex32 = (n: number): string => (n >>> 0).toString(16).padStart(8, '0');

/**
 * Bitcoin Core's CalculateNextWorkRequired: the bits of the first block of a new period,
 * from the first (`first`) and last (`last`) headers of the period before. The timespan
 * is last.timestamp - first.timestamp, which covers 2015 intervals, not 2016 (Core's
 * off-by-one, part of consensus), clamped to [timespan / 4, timespan * 4]; the target
 * scales from the last header's bits (BIP94: the first's), at most powLimit.
 */
export function nextWorkRequired(first: { timestamp: number; bits: number }, last: { timestamp: number; bits: number }, params: PowParams): number {
  let span = last.timestamp - first.timestamp;
  const min = Math.floor(params.targetTimespan / 4);
  const max = params.targetTimespan * 4;
  if (span < min) span = min;
  if (span > max) span = max;
  // arith_uint256 arithmetic: products wrap at 256 bits.
  let target = decodeCompact(params.enforceBIP94 ? first.bits : last.bits).target;
  target = ((target * BigInt(span)) & U256) / BigInt(params.targetTimespan);
  if (target > params.powLimit) target = params.powLimit;
  return encodeCompact(target);
}

/**
 * Bitcoin Core's PermittedDifficultyTransition for a period boundary whose previous
 * period's first header is unknown: the new target lies within the 4x clamps of the
 * previous bits (each bound rounded through its compact form, as Core does).
 */
function permittedRetarget(oldBits: number, newBits: number, params: PowParams): boolean {
  const bound = (span: number): bigint => {
    let t = ((decodeCompact(oldBits).target * BigInt(span)) & U256) / BigInt(params.targetTimespan);
    if (t > params.powLimit) t = params.powLimit;
    return decodeCompact(encodeCompact(t)).target;
  };
  const observed = decodeCompact(newBits).target;
  return observed <= bound(params.targetTimespan * 4) && observed >= bound(Math.floor(params.targetTimespan / 4));
}

/** BIP94's timewarp bound: a period's first block is at most this much older than its parent. */
const MAX_TIMEWARP = 600;

// ------------------------------------------------------------------ header runs

/** Where a run of headers starts, and what the caller holds below it. */
export interface RunStart {
  /** Height of the run's first header. */
  height: number;
  /** The header at height - 1; null when the run starts at genesis or nothing below is held (its linkage is then the caller's). */
  prev: Header80 | null;
  /**
   * The first header of the retarget period that `prev` belongs to (height
   * floor((height - 1) / interval) * interval), when held: it makes the retarget exact
   * at the run's first boundary, and on test networks gives the period's bits. Headers
   * of the run itself serve from the period they start on.
   */
  periodFirst?: Header80 | null;
}

export type RunCheck = { ok: true } | { ok: false; index: number; reason: string };

/**
 * Checks a run of consecutive headers against a network's rules:
 * - linkage: each prevHash is the hash of the header below (run[0] against start.prev);
 * - proof of work: hash <= target(bits), bits decode per SetCompact (not negative, no
 *   overflow, non-zero) and ask at least the network's minimum (powLimit);
 * - networks that retarget (params.retargetInterval): within a period the bits are the
 *   previous header's (test networks: the period's bits, or the powLimit's when the
 *   header is more than twice the spacing after its parent, which then must carry them);
 *   at a period boundary the bits are exactly CalculateNextWorkRequired's when the
 *   previous period's first header is known (in the run, or start.periodFirst), else
 *   within its 4x clamps (mainnet and signet; test networks: only powLimit). BIP94
 *   networks also bound the boundary header's timestamp (timewarp).
 * - regtest and unlisted chains (no retarget): linkage and proof of work only.
 * The median-time-past and future-time rules of full nodes are not applied (they need
 * eleven ancestors and a clock): a header chain is authenticated by its work and by the
 * endpoint's hash at its top (docs/STATE.md, "Bitcoin evidence").
 */
export function verifyHeaderRun(start: RunStart, run: readonly Header80[], params: PowParams): RunCheck {
  const interval = params.retargetInterval;
  const minBits = encodeCompact(params.powLimit);
  let prev = start.prev;
  // The first header of the period the previous header belongs to.
  let periodFirst: Header80 | null = start.periodFirst ?? null;
  if (interval && prev && (start.height - 1) % interval === 0) periodFirst = prev;
  for (let i = 0; i < run.length; i++) {
    const h = run[i]!;
    const height = start.height + i;
    const fail = (reason: string): RunCheck => ({ ok: false, index: i, reason: `header at height ${height} (${h.hash}): ${reason}` });
    if (prev && h.prevHash !== prev.hash) return fail(`its previous hash ${h.prevHash} is not the header below (${prev.hash})`);
    const pow = checkProofOfWork(h.hash, h.bits, params.powLimit);
    if (pow !== true) return fail(pow);
    if (interval && prev && height > 0) {
      if (height % interval === 0) {
        if (params.enforceBIP94 && h.timestamp < prev.timestamp - MAX_TIMEWARP) {
          return fail(`its time ${h.timestamp} is more than ${MAX_TIMEWARP} s before its parent's (${prev.timestamp}), BIP94`);
        }
        if (periodFirst) {
          const want = nextWorkRequired(periodFirst, prev, params);
          if (h.bits !== want) return fail(`bits 0x${hex32(h.bits)} are not the retarget's 0x${hex32(want)}`);
        } else if (!params.allowMinDifficulty && !permittedRetarget(prev.bits, h.bits, params)) {
          return fail(`bits 0x${hex32(h.bits)} change more than four times from 0x${hex32(prev.bits)} at the retarget`);
        }
        periodFirst = h;
      } else if (!params.allowMinDifficulty) {
        if (h.bits !== prev.bits) return fail(`bits 0x${hex32(h.bits)} change within a retarget period (0x${hex32(prev.bits)} below)`);
      } else if (h.timestamp > prev.timestamp + 2 * params.targetSpacing) {
        if (h.bits !== minBits) return fail(`bits 0x${hex32(h.bits)} are not the minimum difficulty 0x${hex32(minBits)} its ${h.timestamp - prev.timestamp} s gap calls for`);
      } else if (periodFirst && h.bits !== periodFirst.bits) {
        return fail(`bits 0x${hex32(h.bits)} are not its period's 0x${hex32(periodFirst.bits)}`);
      }
    } else if (interval && height % interval === 0) {
      periodFirst = h;
    }
    prev = h;
  }
  return { ok: true };
}

/**
 * A sanity bound on what an anchoring transaction pays, checked after the transaction is
 * built and before it is broadcast: a fee rate or fee far above what the network asks is
 * a typo or a stale setting (`SVC_FEE_RATE=20000` once paid 3,780,000 sats for a 189-vB
 * anchor), not an intent. `allowHighFee` (svc: --allow-high-fee) pays it anyway.
 */
import { ClientError } from './errors.js';

/** Esplora's GET /fee-estimates: confirmation target in blocks (as a string) -> sat/vB. */
export type FeeEstimates = Record<string, number>;

/**
 * With estimates, a rate above this multiple of the fastest one (the next-block rate) is
 * refused: that rate already buys the fastest confirmation there is, and 3x leaves room for
 * the market to move between the estimate and the broadcast.
 */
export const FEE_RATE_ESTIMATE_MULTIPLE = 3;
/**
 * ...but a rate at or below this is never refused: on a quiet network (estimates of 1-2
 * sat/vB) a habitual 10 or 20 costs a few thousand sats for an anchor, a price, not a mistake.
 */
export const FEE_RATE_FLOOR = 25;
/**
 * Without estimates (the endpoint does not serve GET /fee-estimates): above this rate is
 * refused. Mainnet's next-block rate has stayed below it on all but a handful of days.
 */
export const MAX_FEE_RATE_WITHOUT_ESTIMATES = 200;
/**
 * Whatever the rate, an anchoring transaction paying more than this is refused: 0.001 BTC
 * pays 300 sat/vB for a 330-vB anchor (several inputs and payments), a rate only the most
 * congested hours of mainnet ever asked.
 */
export const MAX_ANCHOR_FEE_SATS = 100_000;

/** The fastest (highest) rate of an estimate table; null when it holds no usable rate. */
export function fastestRate(estimates: FeeEstimates | null): number | null {
  if (!estimates) return null;
  const rates = Object.values(estimates).filter((r) => typeof r === 'number' && Number.isFinite(r) && r > 0);
  return rates.length ? Math.max(...rates) : null;
}

/** The highest fee rate paid without allowHighFee, and where that bound comes from. */
export function feeRateBound(estimates: FeeEstimates | null): { max: number; why: string } {
  const fastest = fastestRate(estimates);
  if (fastest === null) return { max: MAX_FEE_RATE_WITHOUT_ESTIMATES, why: 'the endpoint offers no fee estimates' };
  const max = Math.max(FEE_RATE_FLOOR, Math.ceil(fastest * FEE_RATE_ESTIMATE_MULTIPLE));
  return { max, why: `${FEE_RATE_ESTIMATE_MULTIPLE}x the endpoint's next-block estimate of ${fastest} sat/vB, at least ${FEE_RATE_FLOOR}` };
}

const ANYWAY = 'nothing was broadcast; to pay it anyway, allow high fees (svc: --allow-high-fee)';

/**
 * Refuses (ClientError fee_too_high) a fee rate above feeRateBound unless `allowHighFee`.
 * Checked before coin selection, which would otherwise answer an absurd rate with
 * `insufficient_funds` and the advice to fund the wallet.
 */
export function checkFeeRate(feeRate: number, estimates: FeeEstimates | null, allowHighFee = false): void {
  if (allowHighFee) return;
  const bound = feeRateBound(estimates);
  if (feeRate > bound.max) throw new ClientError('fee_too_high', `fee rate ${feeRate} sat/vB is above ${bound.max} sat/vB (${bound.why}); ${ANYWAY}`);
}

/** Refuses (ClientError fee_too_high) a built anchoring transaction paying more than MAX_ANCHOR_FEE_SATS unless `allowHighFee`. */
export function checkFee(anchor: { fee: number; vsize: number }, feeRate: number, allowHighFee = false): void {
  if (!allowHighFee && anchor.fee > MAX_ANCHOR_FEE_SATS) {
    throw new ClientError('fee_too_high', `this anchor would pay ${anchor.fee} sats (${anchor.vsize} vB at ${feeRate} sat/vB), above ${MAX_ANCHOR_FEE_SATS} sats; ${ANYWAY}`);
  }
}

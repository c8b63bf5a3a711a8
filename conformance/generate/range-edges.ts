/**
 * The integer types' ranges (packages/protocol/src/value.ts INT_RANGE, read by the VM's
 * exact arithmetic): 0 is a u128, also as the result of operands past 2^53, which the VM
 * computes exactly (below 2^53 it takes a faster path that never reads the range).
 */
import { executionArea } from './execution.js';
import type { CaseInput } from './kit.js';

export function rangeEdgeCases(): CaseInput[] {
  const c = executionArea()['execution.call']?.find((x) => x.id === 'u128-sub-to-zero');
  if (!c) throw new Error('range-edges: execution.call has no case u128-sub-to-zero');
  const input = JSON.parse(JSON.stringify(c.input)) as { call: { args: { type: string; value: string }[] } };
  const big = String(1n << 60n);
  input.call.args = [{ type: 'u128', value: big }, { type: 'u128', value: big }];
  return [{ id: 'u128-sub-to-zero-past-2-53', pins: 'u128 subtraction of two operands past 2^53 down to 0: 0 is in range', input: input as unknown as Record<string, unknown> }];
}

/**
 * Every proper prefix of a valid encoding is refused: the envelope with an argument of
 * every value type (each prefix names the field being read when the bytes ran out) and a
 * decision leaf with a result and an event. A decoder that reads one byte past what it
 * checked, or checks a length one off, answers one of these differently.
 */
import type { Area, CaseInput } from './kit.js';
import { codecArea } from './codec.js';
import { decisionsArea } from './decisions.js';

/** The hex input of another area's case: the prefixes are of bytes the kit already pins whole. */
function inputHex(area: Area, op: string, id: string): string {
  const c = area[op]?.find((x) => x.id === id);
  if (!c || typeof c.input.hex !== 'string') throw new Error(`truncations: ${op} has no case ${id}`);
  return c.input.hex;
}

function prefixes(hex: string, what: string): CaseInput[] {
  const n = hex.length / 2;
  return Array.from({ length: n - 1 }, (_, i) => ({
    id: `prefix-${i + 1}`,
    pins: `the first ${i + 1} of the ${n} bytes of ${what} are refused`,
    input: { hex: hex.slice(0, 2 * (i + 1)) },
  }));
}

export function envelopePrefixCases(): CaseInput[] {
  return prefixes(inputHex(codecArea(), 'codec.envelope-decode', 'every-value-type'), 'the every-value-type envelope');
}

export function leafPrefixCases(): CaseInput[] {
  return prefixes(inputHex(decisionsArea(), 'decision.leaf-decode', 'executed'), 'the executed leaf (a result and an event)');
}

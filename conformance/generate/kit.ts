/**
 * What every area of the generator shares: the shape of a case before it is filled, and
 * the canonical JSON the vector files are written in (keys sorted at every level, two
 * spaces, a final newline), so regenerating gives identical bytes.
 */
import { answerAsync } from '../adapters/svc-node-answers.js';

/** A case as an area writes it: what it feeds the operation and the rule it pins. */
export interface CaseInput {
  id: string;
  pins: string;
  input: Record<string, unknown>;
}

/** A case as the vector files hold it: `expected` is svc-node's answer; `note`, when present, its message (never compared). */
export interface FilledCase extends CaseInput {
  expected: unknown;
  note?: string;
}

/** The cases of each operation (a vector file's name without ".json"). */
export type Area = Record<string, CaseInput[]>;

/** `x` with the keys of every object sorted (arrays keep their order: theirs is meaningful). */
export function sortKeys(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(sortKeys);
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(x).sort()) Object.defineProperty(out, k, { value: sortKeys((x as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return x;
}

/** The canonical text of a vector file. */
export function canonicalJson(x: unknown): string {
  return JSON.stringify(sortKeys(x), null, 2) + '\n';
}

/**
 * Fills one operation's cases: each input goes through its canonical JSON first, so
 * `expected` is the answer to exactly the bytes the file holds. Refuses duplicate ids.
 */
export async function fill(op: string, cases: CaseInput[]): Promise<FilledCase[]> {
  const seen = new Set<string>();
  const out: FilledCase[] = [];
  for (const c of cases) {
    if (seen.has(c.id)) throw new Error(`${op}: duplicate case id ${c.id}`);
    seen.add(c.id);
    const input = JSON.parse(canonicalJson(c.input)) as Record<string, unknown>;
    const a = await answerAsync(op, input);
    out.push(a.note === undefined ? { id: c.id, pins: c.pins, input, expected: a.output } : { id: c.id, pins: c.pins, input, expected: a.output, note: a.note });
  }
  return out;
}

export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

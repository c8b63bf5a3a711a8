/**
 * Feed messages checked against docs/stream.asyncapi.yaml: the spec is bundled and
 * dereferenced by Redocly's CLI (as test/helpers/openapi-check.ts does for the REST
 * answers), each server message's payload schema is compiled by Ajv with
 * `additionalProperties: false` on every object that lists its properties (a field the
 * spec does not document is an error here, whatever the spec says), and every message the
 * feed tests receive is checked as it arrives (FeedClient, and the SDK's iterator where a
 * test reads through it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { redocly } from './openapi-check.js';

type Schema = Record<string, unknown>;

/** The schema with every object that lists its properties closed to others. */
function closed(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(closed);
  if (s === null || typeof s !== 'object') return s;
  const out: Schema = {};
  for (const [k, v] of Object.entries(s as Schema)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([p, ps]) => [p, closed(ps)])) : closed(v);
  if (out['properties'] !== undefined && out['additionalProperties'] === undefined) out['additionalProperties'] = false;
  return out;
}

let validators: Map<string, ValidateFunction> | null = null;

/** One validator per server message, by its `type`. */
function load(): Map<string, ValidateFunction> {
  if (validators) return validators;
  const out = join(mkdtempSync(join(tmpdir(), 'svc-asyncapi-')), 'stream.json');
  const r = redocly(['bundle', 'docs/stream.asyncapi.yaml', '--dereferenced', '--ext', 'json', '-o', out]);
  if (r.status !== 0) throw new Error(`redocly bundle of docs/stream.asyncapi.yaml failed:\n${r.output}`);
  const spec = JSON.parse(readFileSync(out, 'utf8')) as { operations: Record<string, { action: string; messages: { payload: Schema }[] }> };
  const ajv = new Ajv({ strict: false, allErrors: true });
  validators = new Map();
  for (const op of Object.values(spec.operations)) {
    if (op.action !== 'send') continue; // the node sends; it receives subscribe/unsubscribe
    for (const msg of op.messages) {
      const type = ((msg.payload['properties'] as Schema)['type'] as { const: string }).const;
      validators.set(type, ajv.compile(closed(msg.payload) as Schema));
    }
  }
  return validators;
}

/** Problems found so far (the first few, with the message), and the count of messages checked per type. */
const problems: string[] = [];
export const checkedTypes = new Map<string, number>();

/** What is wrong with one server message (parsed JSON) by the spec, or null. */
export function feedProblem(m: unknown): string | null {
  const type = (m as { type?: unknown })?.type;
  const validate = load().get(String(type));
  if (!validate) return `type ${JSON.stringify(type)} is not a server message of the spec`;
  if (!validate(m)) return validate.errors!.map((e) => `${e.instancePath || '/'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${JSON.stringify(e.params)})` : ''}`).join('; ');
  return null;
}

/** Checks one message the node sent; problems are kept for `assertFeedMatchesSpec`. */
export function checkFeedMessage(m: unknown): void {
  const type = String((m as { type?: unknown })?.type);
  checkedTypes.set(type, (checkedTypes.get(type) ?? 0) + 1);
  const problem = feedProblem(m);
  if (problem !== null && problems.length < 20) problems.push(`${problem}: ${JSON.stringify(m).slice(0, 300)}`);
}

/** Every message checked so far matched the spec; at least one was checked. */
export function assertFeedMatchesSpec(): void {
  assert.ok(checkedTypes.size > 0, 'no feed message was checked');
  assert.deepEqual(problems, [], `feed messages that docs/stream.asyncapi.yaml does not describe (types checked: ${JSON.stringify(Object.fromEntries(checkedTypes))})`);
}

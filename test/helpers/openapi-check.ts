/**
 * Live answers checked against docs/openapi.yaml (issue 20): the spec is bundled and
 * dereferenced by Redocly's CLI (the linter the project uses), every answer a test
 * records is matched to its operation by method and path, and its status, its
 * `x-request-id` header and its body (JSON Schema 2020-12, as OpenAPI 3.1 uses, by Ajv)
 * must be what the spec says.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { repoRoot } from './paths.js';

export interface Answer {
  method: string;
  path: string;
  status: number;
  requestId: string | null;
  contentType: string;
  text: string;
}

interface Operation {
  method: string;
  template: string;
  segments: string[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: object }> }>;
}

/** Runs Redocly's CLI with telemetry and the update check off (tests run offline). */
export function redocly(args: string[]): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules/@redocly/cli/bin/cli.js'), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

export class SpecChecker {
  private readonly ops: Operation[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  /** Statuses seen per operation ("GET /path/{param}"). */
  readonly seen = new Map<string, Set<number>>();

  constructor() {
    const out = join(mkdtempSync(join(tmpdir(), 'svc-openapi-')), 'openapi.json');
    const r = redocly(['bundle', 'docs/openapi.yaml', '--dereferenced', '--ext', 'json', '-o', out]);
    if (r.status !== 0) throw new Error(`redocly bundle failed:\n${r.output}`);
    const spec = JSON.parse(readFileSync(out, 'utf8')) as { paths: Record<string, Record<string, { responses: Operation['responses'] }>> };
    for (const [template, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item)) {
        this.ops.push({ method: method.toUpperCase(), template, segments: template.split('/').filter(Boolean), responses: op.responses });
      }
    }
  }

  /** The JSON body schema of an operation's answer with `status` ("GET /v2/state_root"), dereferenced. */
  responseSchema(operation: string, status: number): { properties?: Record<string, unknown>; required?: string[] } | undefined {
    const op = this.ops.find((o) => `${o.method} ${o.template}` === operation);
    return op?.responses[String(status)]?.content?.['application/json']?.schema as { properties?: Record<string, unknown> } | undefined;
  }

  get operations(): string[] {
    return this.ops.map((o) => `${o.method} ${o.template}`);
  }

  /** Operations of the path (most literal segments first: /v2/state_root/{h} before /v2/{id}/{field}). */
  private pathOps(path: string): Operation[] {
    const parts = path.split('?')[0]!.split('/').filter(Boolean);
    const literal = (o: Operation): number => o.segments.filter((s) => !s.startsWith('{')).length;
    return this.ops
      .filter((o) => o.segments.length === parts.length && o.segments.every((s, i) => s.startsWith('{') || s === decodeURIComponent(parts[i]!)))
      .sort((x, y) => literal(y) - literal(x));
  }

  /**
   * Checks one answer; returns the problems (empty when it matches the spec). A 405 is
   * an answer of the path's documented operations (each documents it), so it counts for
   * each of them.
   */
  check(a: Answer): string[] {
    const ops = this.pathOps(a.path);
    const candidates = a.status === 405 ? ops : ops.filter((o) => o.method === a.method).slice(0, 1);
    if (candidates.length === 0) return a.status === 404 ? [] : [`${a.method} ${a.path}: no documented operation, answered ${a.status}`];
    const problems: string[] = [];
    for (const op of candidates) {
      const name = `${op.method} ${op.template}`;
      const where = `${a.method} ${a.path} -> ${name} ${a.status}`;
      const resp = op.responses[String(a.status)] ?? op.responses['default'];
      if (!resp) {
        problems.push(`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`);
        continue;
      }
      let set = this.seen.get(name);
      if (!set) this.seen.set(name, (set = new Set()));
      set.add(a.status);
      if (resp.headers?.['x-request-id'] && !a.requestId) problems.push(`${where}: no x-request-id header`);
      const mediaType = a.contentType.split(';')[0]!.trim();
      const media = resp.content?.[mediaType];
      if (!media) {
        problems.push(`${where}: content type ${mediaType} not documented (documented: ${Object.keys(resp.content ?? {}).join(', ')})`);
        continue;
      }
      if (!media.schema) continue;
      const body: unknown = mediaType === 'application/json' ? JSON.parse(a.text) : a.text;
      const validate = this.ajv.compile(media.schema);
      if (!validate(body)) problems.push(`${where}: body does not match the schema: ${this.ajv.errorsText(validate.errors)}; body ${a.text.slice(0, 300)}`);
    }
    return problems;
  }
}

/**
 * Wraps the global fetch so every answer from `base` (the node under test) is recorded,
 * without changing what the caller receives. Returns the records and an undo function.
 */
export function recordAnswers(base: () => string): { answers: Answer[]; restore: () => void } {
  const answers: Answer[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await original(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const prefix = base();
    if (prefix && url.startsWith(prefix)) {
      const u = new URL(url);
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      answers.push({ method, path: u.pathname, status: res.status, requestId: res.headers.get('x-request-id'), contentType: res.headers.get('content-type') ?? '', text: await res.clone().text() });
    }
    return res;
  };
  return { answers, restore: () => void (globalThis.fetch = original) };
}

/**
 * Structured JSON-line logging with RUST_LOG filter semantics: a default level plus
 * per-target overrides ("warn,gossip=debug,rest::access=info"); a target matches a
 * directive when it equals it or starts with it followed by "::" or ".".
 * Secrets registered with `registerSecret` are replaced in every line before it is
 * written, and fields named like secrets are dropped.
 */

export type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LEVELS: Record<Level | 'off', number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

export interface Filter {
  defaultLevel: number;
  /** Longest target prefix first. */
  directives: { target: string; level: number }[];
}

export function parseFilter(spec: string): Filter {
  let defaultLevel = LEVELS.info;
  const directives: { target: string; level: number }[] = [];
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq < 0) {
      const lvl = LEVELS[part.toLowerCase() as Level];
      if (lvl !== undefined) defaultLevel = lvl;
      else directives.push({ target: part, level: LEVELS.trace }); // a bare target enables all its levels
    } else {
      const lvl = LEVELS[part.slice(eq + 1).trim().toLowerCase() as Level];
      if (lvl !== undefined) directives.push({ target: part.slice(0, eq).trim(), level: lvl });
    }
  }
  directives.sort((a, b) => b.target.length - a.target.length);
  return { defaultLevel, directives };
}

function levelFor(filter: Filter, target: string): number {
  for (const d of filter.directives) {
    if (target === d.target || target.startsWith(d.target + '::') || target.startsWith(d.target + '.')) return d.level;
  }
  return filter.defaultLevel;
}

const SECRET_FIELD = /token|secret|private|password|authorization/i;
const secrets = new Set<string>();
let filter: Filter = parseFilter(process.env['RUST_LOG'] ?? 'info');
let sink: (line: string) => void = (line) => process.stdout.write(line + '\n');
let processName = 'node';

export function registerSecret(s: string): void {
  if (s.length >= 4) secrets.add(s);
}

export function configureLogging(opts: { filter?: string; process?: string; sink?: (line: string) => void }): void {
  if (opts.filter !== undefined) filter = parseFilter(opts.filter);
  if (opts.process !== undefined) processName = opts.process;
  if (opts.sink !== undefined) sink = opts.sink;
}

export function redact(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

function safeFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET_FIELD.test(k)) continue;
    if (v instanceof Error) out[k] = { name: v.name, message: v.message, code: (v as { code?: unknown }).code };
    else if (typeof v === 'bigint') out[k] = v.toString();
    else if (v instanceof Uint8Array) out[k] = Buffer.from(v).toString('hex');
    else out[k] = v;
  }
  return out;
}

export interface Logger {
  readonly target: string;
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  trace(msg: string, fields?: Record<string, unknown>): void;
  enabled(level: Level): boolean;
  child(sub: string): Logger;
}

export function logger(target: string): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>): void => {
    if (LEVELS[level] > levelFor(filter, target)) return;
    let line: string;
    try {
      line = JSON.stringify({ ts: new Date().toISOString(), level, target, proc: processName, pid: process.pid, msg, ...safeFields(fields) });
    } catch {
      line = JSON.stringify({ ts: new Date().toISOString(), level, target, msg, note: 'fields not serialisable' });
    }
    sink(redact(line));
  };
  return {
    target,
    error: (m, f) => write('error', m, f),
    warn: (m, f) => write('warn', m, f),
    info: (m, f) => write('info', m, f),
    debug: (m, f) => write('debug', m, f),
    trace: (m, f) => write('trace', m, f),
    enabled: (level) => LEVELS[level] <= levelFor(filter, target),
    child: (sub) => logger(`${target}::${sub}`),
  };
}

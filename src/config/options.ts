/**
 * Node configuration (SERVICE-SPEC section 2): config.toml next to the program (path
 * overridable with SVC_CONFIG), environment variables over the file, a working default
 * for every key. Validated once at startup; an invalid value stops the node before it
 * binds anything, with one line naming the key, its source and what is expected.
 * Secret values (api_token, gossip_private_key) are never echoed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { parse as parseToml, TomlError } from 'smol-toml';

export interface WorkersOptions {
  /** Threads in the verification/VM pool. */
  poolSize: number;
  /** Tasks that may wait for a pool thread before intake answers 503 overloaded. */
  queueLimit: number;
}

export interface NodeConfig {
  nodeId: string;
  restAddress: HostPort;
  bindAddress: HostPort;
  publicUrl: string;
  peers: string[];
  peerLimit: number;
  esploraUrl: string;
  /** Outbound requests per second to the chain-data endpoint. */
  esploraRatePerS: number;
  /** Outbound requests in flight at once to the chain-data endpoint. */
  esploraMaxConcurrent: number;
  dbPath: string;
  dataDir: string;
  /** 32-byte Ed25519 seed, or null for an ephemeral identity. Secret. */
  gossipPrivateKey: Uint8Array | null;
  /** Bearer token for private endpoints, or null (they stay locked). Secret. */
  apiToken: string | null;
  blockCheckIntervalS: number;
  peerSyncIntervalS: number;
  /** Height to anchor a node with no data at; null = the chain tip. */
  startHeight: number | null;
  workers: WorkersOptions;
  /** RUST_LOG filter string. */
  logFilter: string;
  /** Where each key's value came from, for operators (`node_status`). */
  sources: Record<string, string>;
}

export interface HostPort {
  host: string;
  port: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Public mainnet chain-data endpoint; set SVC_ESPLORA_URL for testnet or the devnet. */
export const DEFAULT_ESPLORA_URL = 'https://blockstream.info/api';

type Parsed = { ok: true; value: unknown } | { ok: false; expected: string };
type Parser = (raw: unknown, fromEnv: boolean) => Parsed;

interface KeyDef {
  /** Dotted path in config.toml, e.g. "workers.pool_size". */
  key: string;
  env: string | null;
  default: unknown;
  parse: Parser;
  secret?: boolean;
}

const ok = (value: unknown): Parsed => ({ ok: true, value });
const bad = (expected: string): Parsed => ({ ok: false, expected });

function str(expected = 'a non-empty string'): Parser {
  return (raw) => (typeof raw === 'string' && raw.length > 0 && raw.length <= 4096 ? ok(raw) : bad(expected));
}

function hostPort(raw: unknown): Parsed {
  const expected = 'HOST:PORT with a port from 0 to 65535 (e.g. 0.0.0.0:8080 or [::1]:8080)';
  if (typeof raw !== 'string') return bad(expected);
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(raw);
  if (!m) return bad(expected);
  const port = Number(m[3]);
  if (port > 65535) return bad(expected);
  const host = (m[1] ?? m[2])!;
  if (m[2] !== undefined && !/^(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)$/.test(host)) return bad(expected);
  if (/^\d+(\.\d+){3}$/.test(host) && host.split('.').some((o) => Number(o) > 255)) return bad(expected);
  return ok({ host, port });
}

function url(schemes: string[]): Parser {
  const expected = `an absolute ${schemes.join(' or ')} URL`;
  return (raw) => {
    if (typeof raw !== 'string') return bad(expected);
    try {
      const u = new URL(raw);
      if (!schemes.includes(u.protocol.replace(/:$/, '')) || !u.hostname) return bad(expected);
      return ok(raw.replace(/\/+$/, ''));
    } catch {
      return bad(expected);
    }
  };
}

function number(min: number, max: number, integer: boolean): Parser {
  const expected = `${integer ? 'an integer' : 'a number'} from ${min} to ${max}`;
  return (raw, fromEnv) => {
    let n: number;
    if (fromEnv) {
      if (typeof raw !== 'string' || !/^-?\d+(\.\d+)?$/.test(raw.trim())) return bad(expected);
      n = Number(raw.trim());
    } else if (typeof raw === 'number' || typeof raw === 'bigint') {
      n = Number(raw);
    } else return bad(expected);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) return bad(expected);
    return ok(n);
  };
}

function optionalHeight(raw: unknown, fromEnv: boolean): Parsed {
  if (raw === '' || raw === undefined) return ok(null);
  return number(0, 10_000_000, true)(raw, fromEnv);
}

function peerList(raw: unknown, fromEnv: boolean): Parsed {
  const expected = 'a list of peer gRPC URLs (TOML array; env: comma-separated), at most 256';
  let items: unknown[];
  if (fromEnv) {
    if (typeof raw !== 'string') return bad(expected);
    items = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  } else if (Array.isArray(raw)) items = raw;
  else return bad(expected);
  if (items.length > 256) return bad(expected);
  const out: string[] = [];
  for (const it of items) {
    const p = url(['http', 'https', 'grpc'])(it, false);
    if (!p.ok) return bad(expected);
    out.push(p.value as string);
  }
  return ok(out);
}

function gossipKey(raw: unknown): Parsed {
  const expected = 'an Ed25519 seed of exactly 64 hex characters, or empty for an ephemeral identity';
  if (raw === '') return ok(null);
  if (typeof raw !== 'string' || !/^[0-9a-fA-F]{64}$/.test(raw)) return bad(expected);
  return ok(new Uint8Array(Buffer.from(raw, 'hex')));
}

function token(raw: unknown): Parsed {
  if (raw === '') return ok(null);
  if (typeof raw !== 'string' || raw.length > 1024 || /[\s\x00-\x1f\x7f]/.test(raw)) return bad('a token of printable characters without spaces, at most 1024');
  return ok(raw);
}

const nodeId: Parser = (raw) =>
  typeof raw === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(raw) ? ok(raw) : bad('1 to 64 characters of A-Z a-z 0-9 . _ -');


/** Every key the node reads, its variable and default. The order is config.toml's. */
export const KEYS: readonly KeyDef[] = [
  { key: 'node_id', env: 'SVC_NODE_ID', default: 'svc-node-1', parse: nodeId },
  { key: 'rest_address', env: 'SVC_REST_ADDRESS', default: '0.0.0.0:8080', parse: hostPort },
  { key: 'bind_address', env: 'SVC_BIND_ADDRESS', default: '0.0.0.0:50051', parse: hostPort },
  { key: 'url', env: 'SVC_PUBLIC_URL', default: 'http://localhost:50051', parse: url(['http', 'https', 'grpc']) },
  { key: 'peers', env: 'SVC_PEERS', default: [], parse: peerList },
  { key: 'peer_limit', env: 'SVC_PEER_LIMIT', default: 10, parse: number(0, 1000, true) },
  { key: 'esplora', env: 'SVC_ESPLORA_URL', default: DEFAULT_ESPLORA_URL, parse: url(['http', 'https']) },
  // Esplora's shipped nginx allows 5 req/s per client IP with a burst of 10; stay under it.
  { key: 'esplora_rate_per_s', env: 'SVC_ESPLORA_RATE_PER_S', default: 4, parse: number(0.1, 100_000, false) },
  // Esplora's nginx allows 10 connections per IP; 4 leaves room for a second client. A
  // local endpoint can take many more: intake fetches one transaction per call.
  { key: 'esplora_max_concurrent', env: 'SVC_ESPLORA_MAX_CONCURRENT', default: 4, parse: number(1, 1024, true) },
  { key: 'db_path', env: 'SVC_DB_PATH', default: 'data/svc-node', parse: str() },
  { key: 'data_dir', env: null, default: 'data', parse: str() },
  { key: 'gossip_private_key', env: 'SVC_GOSSIP_PRIVATE_KEY', default: '', parse: gossipKey, secret: true },
  { key: 'api_token', env: 'SVC_API_TOKEN', default: '', parse: token, secret: true },
  { key: 'block_check_interval_s', env: 'SVC_BLOCK_CHECK_INTERVAL_S', default: 60, parse: number(0.01, 86_400, false) },
  { key: 'peer_sync_interval_s', env: 'SVC_PEER_SYNC_INTERVAL_S', default: 300, parse: number(0.01, 86_400, false) },
  { key: 'start_height', env: 'SVC_START_HEIGHT', default: '', parse: optionalHeight },
  // 0 = one thread per core: verification is CPU-bound, more threads than cores only add switching.
  { key: 'workers.pool_size', env: 'SVC_WORKERS_POOL_SIZE', default: 0, parse: number(0, 256, true) },
  // 4096 queued tasks is about half a second of verification at the measured ~9k/s on
  // two threads: enough to absorb a burst, short enough that clients see 503 quickly.
  { key: 'workers.queue_limit', env: 'SVC_WORKERS_QUEUE_LIMIT', default: 4096, parse: number(1, 1_000_000, true) },
];

/** config.toml next to the program: the package root above dist/. */
export function defaultConfigPath(): string {
  return join(fileURLToPath(new URL('../../../', import.meta.url)), 'config.toml');
}

function lookup(obj: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function unknownKeys(obj: Record<string, unknown>, prefix = ''): string[] {
  const known = new Set(KEYS.map((k) => k.key));
  const tables = new Set(KEYS.filter((k) => k.key.includes('.')).map((k) => k.key.split('.')[0]!));
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    const full = prefix ? `${prefix}.${k}` : k;
    if (!prefix && tables.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out.push(...unknownKeys(v as Record<string, unknown>, k));
    } else if (!known.has(full)) out.push(full);
  }
  return out;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Explicit file path; otherwise SVC_CONFIG, otherwise config.toml next to the program. */
  path?: string;
}

/** Loads and validates the configuration; throws ConfigError with a one-line message. */
export function loadConfig(opts: LoadOptions = {}): NodeConfig {
  const env = opts.env ?? process.env;
  const explicit = opts.path ?? (env['SVC_CONFIG'] ? env['SVC_CONFIG'] : undefined);
  const path = resolve(explicit ?? defaultConfigPath());
  let file: Record<string, unknown> = {};
  if (existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new ConfigError(`config error: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'read failed'}`);
    }
    try {
      file = parseToml(text) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof TomlError) {
        const first = String(e.message).split('\n')[0];
        throw new ConfigError(`config error: ${path}:${e.line}:${e.column}: ${first}`);
      }
      throw new ConfigError(`config error: ${path}: not valid TOML`);
    }
    const unknown = unknownKeys(file);
    if (unknown.length > 0) {
      throw new ConfigError(`config error: unknown key "${unknown[0]}" in ${path} (known keys: ${KEYS.map((k) => k.key).join(', ')})`);
    }
  } else if (explicit) {
    throw new ConfigError(`config error: SVC_CONFIG names ${path}, which does not exist`);
  }

  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const def of KEYS) {
    let raw: unknown = def.default;
    let source = 'default';
    let fromEnv = false;
    const fileVal = lookup(file, def.key);
    if (fileVal !== undefined) {
      raw = fileVal;
      source = path;
    }
    if (def.env && env[def.env] !== undefined) {
      raw = env[def.env];
      source = def.env;
      fromEnv = true;
    }
    const parsed = def.parse(raw, fromEnv);
    if (!parsed.ok) {
      const shown = def.secret ? '' : `, got ${JSON.stringify(typeof raw === 'bigint' ? String(raw) : raw)?.slice(0, 80)}`;
      throw new ConfigError(`config error: ${def.key} from ${source}: expected ${parsed.expected}${shown}`);
    }
    values[def.key] = parsed.value;
    sources[def.key] = source;
  }

  return {
    nodeId: values['node_id'] as string,
    restAddress: values['rest_address'] as HostPort,
    bindAddress: values['bind_address'] as HostPort,
    publicUrl: values['url'] as string,
    peers: values['peers'] as string[],
    peerLimit: values['peer_limit'] as number,
    esploraUrl: values['esplora'] as string,
    esploraRatePerS: values['esplora_rate_per_s'] as number,
    esploraMaxConcurrent: values['esplora_max_concurrent'] as number,
    dbPath: values['db_path'] as string,
    dataDir: values['data_dir'] as string,
    gossipPrivateKey: values['gossip_private_key'] as Uint8Array | null,
    apiToken: values['api_token'] as string | null,
    blockCheckIntervalS: values['block_check_interval_s'] as number,
    peerSyncIntervalS: values['peer_sync_interval_s'] as number,
    startHeight: values['start_height'] as number | null,
    workers: { poolSize: (values['workers.pool_size'] as number) || availableParallelism(), queueLimit: values['workers.queue_limit'] as number },
    logFilter: env['RUST_LOG'] && env['RUST_LOG'].length > 0 ? env['RUST_LOG'] : 'info',
    sources,
  };
}

/** The secret strings of a config, for the logger's redaction list. */
export function secretsOf(c: NodeConfig): string[] {
  const out: string[] = [];
  if (c.apiToken) out.push(c.apiToken);
  if (c.gossipPrivateKey) {
    const hex = Buffer.from(c.gossipPrivateKey).toString('hex');
    out.push(hex, hex.toUpperCase());
  }
  return out;
}

/** Config without secrets, for node_status and logs. */
export function publicView(c: NodeConfig): Record<string, unknown> {
  return {
    node_id: c.nodeId,
    rest_address: `${c.restAddress.host}:${c.restAddress.port}`,
    bind_address: `${c.bindAddress.host}:${c.bindAddress.port}`,
    url: c.publicUrl,
    peers: c.peers,
    peer_limit: c.peerLimit,
    esplora: c.esploraUrl,
    db_path: c.dbPath,
    data_dir: c.dataDir,
    gossip_identity: c.gossipPrivateKey ? 'stable' : 'ephemeral',
    api_token: c.apiToken ? 'set' : 'unset',
    block_check_interval_s: c.blockCheckIntervalS,
    peer_sync_interval_s: c.peerSyncIntervalS,
    start_height: c.startHeight,
    workers: { pool_size: c.workers.poolSize, queue_limit: c.workers.queueLimit },
  };
}

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
import { DEFAULT_BUDGET } from '../chain/budget.js';

export interface WorkersOptions {
  /** Threads in the verification/VM pool. */
  poolSize: number;
  /** Tasks that may wait for a pool thread before intake answers 503 overloaded. */
  queueLimit: number;
}

export interface GossipOptions {
  heartbeatIntervalS: number;
  peerExpiryS: number;
  maxPeers: number;
  inboundRatePerS: number;
  inboundQueue: number;
  globalRatePerS: number;
  sendConcurrency: number;
  batchMax: number;
  batchDelayMs: number;
  seenCapacity: number;
  syncConcurrency: number;
  requestTimeoutS: number;
}

export interface NodeConfig {
  nodeId: string;
  restAddress: HostPort;
  /** Origins whose pages may read REST answers (CORS); "*" for any. */
  corsOrigins: string[];
  bindAddress: HostPort;
  publicUrl: string;
  peers: string[];
  peerLimit: number;
  esploraUrl: string;
  /** Requests an hour to the chain-data endpoint, every attempt counted (src/chain/budget.ts). */
  esploraRequestsPerHour: number;
  /** Requests the chain-data budget lets through at once after a quiet spell. */
  esploraBurst: number;
  /** Outbound requests in flight at once to the chain-data endpoint. */
  esploraMaxConcurrent: number;
  /**
   * Bound of one attempt to the chain-data endpoint (headers and body), and of the whole
   * wait of an intake submission on it (rate-limit slot, attempts, backoff).
   */
  esploraTimeoutMs: number;
  dbPath: string;
  dataDir: string;
  /** 32-byte Ed25519 seed, or null for an ephemeral identity. Secret. */
  gossipPrivateKey: Uint8Array | null;
  /** Bearer token for private endpoints, or null (they stay locked). Secret. */
  apiToken: string | null;
  blockCheckIntervalS: number;
  peerSyncIntervalS: number;
  /** How blocks are read: headers and evidence ("light"), or every block in full ("blocks"). */
  chainMode: 'light' | 'blocks';
  /** Height to anchor a node with no data at; null = the chain tip. */
  startHeight: number | null;
  /** Pending calls held at once; beyond, intake answers 503 overloaded. */
  maxPendingCalls: number;
  workers: WorkersOptions;
  /** Gossip and sync tuning. */
  gossip: GossipOptions;
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

/** A list key's items: a TOML array, or from the environment one comma-separated string; null when neither. */
function listItems(raw: unknown, fromEnv: boolean): unknown[] | null {
  if (fromEnv) return typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0) : null;
  return Array.isArray(raw) ? (raw as unknown[]) : null;
}

function peerList(raw: unknown, fromEnv: boolean): Parsed {
  const expected = 'a list of peer gRPC URLs (TOML array; env: comma-separated), at most 256';
  const items = listItems(raw, fromEnv);
  if (items === null || items.length > 256) return bad(expected);
  const out: string[] = [];
  for (const it of items) {
    const p = url(['http', 'https', 'grpc'])(it, false);
    if (!p.ok) return bad(expected);
    out.push(p.value as string);
  }
  return ok(out);
}

function chainMode(raw: unknown): Parsed {
  return raw === 'light' || raw === 'blocks' ? ok(raw) : bad('"light" or "blocks"');
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

/** An origin as browsers send it (scheme, host, optional port; no path), or "*" for any. */
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(?::\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](?::\d{1,5})?$/;

function originList(raw: unknown, fromEnv: boolean): Parsed {
  const expected = 'a list of origins such as "https://app.example.com" or "http://localhost:5173" (scheme, lowercase host, optional port; no path), or ["*"] for any (TOML array; env: comma-separated), at most 64';
  const items = listItems(raw, fromEnv);
  if (items === null || items.length > 64 || !items.every((o) => typeof o === 'string' && (o === '*' || ORIGIN.test(o)))) return bad(expected);
  return ok(items as string[]);
}

const nodeId: Parser = (raw) =>
  typeof raw === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(raw) ? ok(raw) : bad('1 to 64 characters of A-Z a-z 0-9 . _ -');


/** Every key the node reads, its variable and default. The order is config.toml's. */
export const KEYS: readonly KeyDef[] = [
  { key: 'node_id', env: 'SVC_NODE_ID', default: 'svc-node-1', parse: nodeId },
  { key: 'rest_address', env: 'SVC_REST_ADDRESS', default: '0.0.0.0:8080', parse: hostPort },
  // Web pages allowed to read the REST answers from another origin (CORS; docs/OPERATING.md,
  // "Browsers"). Empty: no page but the node's own origin may read them, as before browsers
  // ran the SDK.
  { key: 'cors_origins', env: 'SVC_CORS_ORIGINS', default: [], parse: originList },
  { key: 'bind_address', env: 'SVC_BIND_ADDRESS', default: '0.0.0.0:50051', parse: hostPort },
  { key: 'url', env: 'SVC_PUBLIC_URL', default: 'http://localhost:50051', parse: url(['http', 'https', 'grpc']) },
  { key: 'peers', env: 'SVC_PEERS', default: [], parse: peerList },
  { key: 'peer_limit', env: 'SVC_PEER_LIMIT', default: 10, parse: number(0, 1000, true) },
  { key: 'esplora', env: 'SVC_ESPLORA_URL', default: DEFAULT_ESPLORA_URL, parse: url(['http', 'https']) },
  // The chain-data request budget (src/chain/budget.ts, DEFAULT_BUDGET says why these
  // defaults): public Esplora answers 429 past ~700 requests an hour per address. Burst at
  // least 2: off-path checks need half the burst left after they take a token.
  { key: 'esplora_requests_per_hour', env: 'SVC_ESPLORA_REQUESTS_PER_HOUR', default: DEFAULT_BUDGET.requestsPerHour, parse: number(1, 1_000_000_000, true) },
  { key: 'esplora_burst', env: 'SVC_ESPLORA_BURST', default: DEFAULT_BUDGET.burst, parse: number(2, 1_000_000, true) },
  // Esplora's nginx allows 10 connections per IP; 4 leaves room for a second client. A
  // local endpoint can take many more: intake fetches one transaction per call.
  { key: 'esplora_max_concurrent', env: 'SVC_ESPLORA_MAX_CONCURRENT', default: DEFAULT_BUDGET.maxConcurrent, parse: number(1, 1024, true) },
  // Each attempt to the chain-data endpoint, and everything one intake submission waits on
  // it (slot, attempts, backoff), is bounded by this. 10 s: public Esplora answers a
  // transaction in well under a second, and its retries of fast failures (0.5 + 1 + 2 + 4 s
  // of backoff) still fit; a hanging endpoint answers 503 chain_unavailable after 10 s
  // instead of ~57 s (5 attempts of 10 s plus backoff).
  { key: 'esplora_timeout_ms', env: 'SVC_ESPLORA_TIMEOUT_MS', default: 10_000, parse: number(100, 600_000, true) },
  { key: 'db_path', env: 'SVC_DB_PATH', default: 'data/svc-node', parse: str() },
  { key: 'data_dir', env: null, default: 'data', parse: str() },
  { key: 'gossip_private_key', env: 'SVC_GOSSIP_PRIVATE_KEY', default: '', parse: gossipKey, secret: true },
  { key: 'api_token', env: 'SVC_API_TOKEN', default: '', parse: token, secret: true },
  { key: 'block_check_interval_s', env: 'SVC_BLOCK_CHECK_INTERVAL_S', default: 60, parse: number(0.01, 86_400, false) },
  { key: 'peer_sync_interval_s', env: 'SVC_PEER_SYNC_INTERVAL_S', default: 300, parse: number(0.01, 86_400, false) },
  { key: 'start_height', env: 'SVC_START_HEIGHT', default: '', parse: optionalHeight },
  // How blocks are read (docs/ARCHITECTURE.md, "Following the chain"): "light" keeps a
  // header chain and reads a raw block only near the tip while payloads wait, so a public
  // endpoint's hourly budget suffices; "blocks" reads every block in full (an endpoint of
  // one's own, without a budget to keep).
  { key: 'chain_mode', env: 'SVC_CHAIN_MODE', default: 'light', parse: chainMode },
  // A pending call stays in the writer's memory until its anchor confirms: 1-2 KiB for a
  // typical envelope of a few hundred bytes (record, stored JSON, decoded envelope), about
  // 3x the envelope for large ones. A million is far beyond what confirms in a day (a
  // block holds a few thousand transactions) and each needs a real anchoring transaction
  // (a fee); operators with little memory lower it.
  { key: 'max_pending_calls', env: 'SVC_MAX_PENDING_CALLS', default: 1_000_000, parse: number(1, 100_000_000, true) },
  // ---- gossip and sync tuning (src/gossip/options.ts reads them) ----
  // A heartbeat is one signed ~200-byte message per peer; every 15 s keeps a 64-peer set
  // under 5 messages/s while a dead peer is noticed within a minute.
  { key: 'gossip.heartbeat_interval_s', env: 'SVC_GOSSIP_HEARTBEAT_INTERVAL_S', default: 15, parse: number(0.05, 3_600, false) },
  // Four missed heartbeats: one lost packet or a GC pause never expires a live peer.
  { key: 'gossip.peer_expiry_s', env: 'SVC_GOSSIP_PEER_EXPIRY_S', default: 60, parse: number(0.2, 86_400, false) },
  // Configured plus learned peers. Bounded so heartbeats from throwaway identities cannot
  // grow memory or our outbound traffic; 64 is 6x the default peer_limit fan-out.
  { key: 'gossip.max_peers', env: 'SVC_GOSSIP_MAX_PEERS', default: 64, parse: number(1, 10_000, true) },
  // Inbound requests per second per peer (by verified key). A sync pulls one payload per
  // request; 500/s is ~3x what intake verifies on this 2-core box (docs/PERFORMANCE.md
  // "Gossip": REST intake 161/s, sync 72/s), so honest sync and gossip are never
  // throttled, while one peer's flood stays a bounded share of the CPU.
  { key: 'gossip.inbound_rate_per_s', env: 'SVC_GOSSIP_INBOUND_RATE_PER_S', default: 500, parse: number(1, 1_000_000, false) },
  // Requests of one peer that may wait for its rate budget before further ones are refused
  // (rate_limited): one second of budget, so a burst is smoothed but a flood never queues.
  { key: 'gossip.inbound_queue', env: 'SVC_GOSSIP_INBOUND_QUEUE', default: 500, parse: number(0, 1_000_000, true) },
  // All peers together, before any signature is checked: caps the Ed25519 verify cost of
  // unsigned or forged floods at ~20% of one core (node:crypto verifies ~10k/s, CEILINGS 02).
  { key: 'gossip.global_rate_per_s', env: 'SVC_GOSSIP_GLOBAL_RATE_PER_S', default: 2_000, parse: number(1, 1_000_000, false) },
  // Outbound RPCs in flight at once (p-queue). Sends are I/O; 8 keeps a 10-peer fan-out
  // moving without letting gossip crowd out the 2 cores' verification work.
  { key: 'gossip.send_concurrency', env: 'SVC_GOSSIP_SEND_CONCURRENCY', default: 8, parse: number(1, 1_000, true) },
  // Payloads per signed SubmitPayload: CEILINGS 02 says sign and verify per batch, not per
  // call; 64 amortises one ~100 us Ed25519 verify to under 2 us per payload.
  { key: 'gossip.batch_max', env: 'SVC_GOSSIP_BATCH_MAX', default: 64, parse: number(1, 1_000, true) },
  // How long a payload waits for others to share its batch: small next to a network hop
  // and the ~1 ms of intake it triggers on the peer.
  { key: 'gossip.batch_delay_ms', env: 'SVC_GOSSIP_BATCH_DELAY_MS', default: 5, parse: number(0, 10_000, false) },
  // Already-seen payloads remembered (txid + body hash, ~120 B each: ~12 MB). Covers
  // about 10 minutes at the ~150 payloads/s that intake sustains, longer than any gossip wave.
  { key: 'gossip.seen_capacity', env: 'SVC_GOSSIP_SEEN_CAPACITY', default: 100_000, parse: number(16, 10_000_000, true) },
  // Requests in flight during a sync (range questions, pending evidence; payload fetches
  // at most LIST_CONCURRENCY, what a peer answers at once): enough to hide the RPC round
  // trip behind the peer's and our intake work, few enough to stay under its inbound queue.
  { key: 'gossip.sync_concurrency', env: 'SVC_GOSSIP_SYNC_CONCURRENCY', default: 16, parse: number(1, 1_000, true) },
  // Deadline of one outbound RPC: a peer slower than this is treated as down for now.
  { key: 'gossip.request_timeout_s', env: 'SVC_GOSSIP_REQUEST_TIMEOUT_S', default: 10, parse: number(0.1, 600, false) },
  // 0 = one thread per core: verification is CPU-bound, more threads than cores only add switching.
  { key: 'workers.pool_size', env: 'SVC_WORKERS_POOL_SIZE', default: 0, parse: number(0, 256, true) },
  // 4096 queued tasks is about half a second of verification at the measured ~9k/s on
  // two threads: enough to absorb a burst, short enough that clients see 503 quickly.
  { key: 'workers.queue_limit', env: 'SVC_WORKERS_QUEUE_LIMIT', default: 4096, parse: number(1, 1_000_000, true) },
];

/**
 * Keys the node no longer reads, refused with what replaced them (a silently ignored
 * setting would leave an operator believing it applies).
 */
const REPLACED: readonly { key: string; env: string; instead: string }[] = [
  {
    key: 'esplora_rate_per_s',
    env: 'SVC_ESPLORA_RATE_PER_S',
    instead: `was replaced by esplora_requests_per_hour (SVC_ESPLORA_REQUESTS_PER_HOUR: the old value x 3600, e.g. 4 -> 14400) and esplora_burst (SVC_ESPLORA_BURST, default ${DEFAULT_BUDGET.burst})`,
  },
];

/** HOST:PORT as written in config (IPv6 hosts in brackets). */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/**
 * Two listening addresses that cannot both be bound: the same port (0 picks a free one, so
 * never clashes) on the same host, or where either host is a wildcard. Addresses this does
 * not catch (two names of one interface) still fail at the bind with one line naming them.
 */
export function addressesClash(a: HostPort, b: HostPort): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  const wildcard = (h: string): boolean => h === '0.0.0.0' || h === '::';
  return a.host === b.host || wildcard(a.host) || wildcard(b.host);
}

/**
 * A port setting outside the node's table (the devnet's SVC_DEVNET_PORT), read with the
 * node's own parser and refused in the node's one-line form: `config error: KEY from VAR:
 * expected ..., got "..."`. An unset variable gives `def`.
 */
export function portFromEnv(env: NodeJS.ProcessEnv, key: string, variable: string, def: number): number {
  const raw = env[variable];
  if (raw === undefined) return def;
  const parsed = number(0, 65535, true)(raw, true);
  if (!parsed.ok) throw new ConfigError(`config error: ${key} from ${variable}: expected ${parsed.expected}, got ${JSON.stringify(raw).slice(0, 80)}`);
  return parsed.value as number;
}

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
    for (const r of REPLACED) {
      if (lookup(file, r.key) !== undefined) throw new ConfigError(`config error: ${r.key} in ${path} ${r.instead}`);
    }
    const unknown = unknownKeys(file);
    if (unknown.length > 0) {
      throw new ConfigError(`config error: unknown key "${unknown[0]}" in ${path} (known keys: ${KEYS.map((k) => k.key).join(', ')})`);
    }
  } else if (explicit) {
    throw new ConfigError(`config error: SVC_CONFIG names ${path}, which does not exist`);
  }

  for (const r of REPLACED) {
    if (env[r.env] !== undefined) throw new ConfigError(`config error: ${r.env} (${r.key}) ${r.instead}`);
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
  const rest = values['rest_address'] as HostPort;
  const grpc = values['bind_address'] as HostPort;
  if (addressesClash(rest, grpc)) {
    throw new ConfigError(
      `config error: rest_address from ${sources['rest_address']} (${formatHostPort(rest)}) and bind_address from ${sources['bind_address']} (${formatHostPort(grpc)}) are the same address: REST and gRPC each need their own port`,
    );
  }

  return {
    nodeId: values['node_id'] as string,
    restAddress: values['rest_address'] as HostPort,
    corsOrigins: values['cors_origins'] as string[],
    bindAddress: values['bind_address'] as HostPort,
    publicUrl: values['url'] as string,
    peers: values['peers'] as string[],
    peerLimit: values['peer_limit'] as number,
    esploraUrl: values['esplora'] as string,
    esploraRequestsPerHour: values['esplora_requests_per_hour'] as number,
    esploraBurst: values['esplora_burst'] as number,
    esploraMaxConcurrent: values['esplora_max_concurrent'] as number,
    esploraTimeoutMs: values['esplora_timeout_ms'] as number,
    dbPath: values['db_path'] as string,
    dataDir: values['data_dir'] as string,
    gossipPrivateKey: values['gossip_private_key'] as Uint8Array | null,
    apiToken: values['api_token'] as string | null,
    blockCheckIntervalS: values['block_check_interval_s'] as number,
    peerSyncIntervalS: values['peer_sync_interval_s'] as number,
    startHeight: values['start_height'] as number | null,
    chainMode: values['chain_mode'] as 'light' | 'blocks',
    maxPendingCalls: values['max_pending_calls'] as number,
    workers: { poolSize: (values['workers.pool_size'] as number) || availableParallelism(), queueLimit: values['workers.queue_limit'] as number },
    gossip: {
      heartbeatIntervalS: values['gossip.heartbeat_interval_s'] as number,
      peerExpiryS: values['gossip.peer_expiry_s'] as number,
      maxPeers: values['gossip.max_peers'] as number,
      inboundRatePerS: values['gossip.inbound_rate_per_s'] as number,
      inboundQueue: values['gossip.inbound_queue'] as number,
      globalRatePerS: values['gossip.global_rate_per_s'] as number,
      sendConcurrency: values['gossip.send_concurrency'] as number,
      batchMax: values['gossip.batch_max'] as number,
      batchDelayMs: values['gossip.batch_delay_ms'] as number,
      seenCapacity: values['gossip.seen_capacity'] as number,
      syncConcurrency: values['gossip.sync_concurrency'] as number,
      requestTimeoutS: values['gossip.request_timeout_s'] as number,
    },
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

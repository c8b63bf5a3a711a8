/**
 * Esplora HTTP client (API-NOTES.md in test/fixtures/esplora): the endpoints the node
 * needs, with timeouts, retries with exponential backoff (network errors, 429, 5xx;
 * Retry-After honoured), a request budget (src/chain/budget.ts: every attempt spends a
 * token, by priority), validation of every answer and a bounded cache of immutable data.
 *
 * Priorities: every request states one (`RequestOptions.priority`): `tip` for following
 * the chain, `intake` for a submission's anchor, `deferred` for off-path checks. The
 * default is `deferred`, the one that can never take the reserve the other two rely on,
 * so a call site that forgets to say is slow rather than harmful.
 *
 * Transport: node:http / node:https over one keep-alive agent per client, at most as many
 * sockets as requests may be in flight (`budget.maxConcurrent`), so connections are
 * reused instead of opened per request. Intake sends one request per call; undici's
 * `fetch`, used before, cost ~3.5x the CPU per request of node:http on the same endpoint
 * (400 vs 115 us, measured against the devnet; docs/PERFORMANCE.md "Intake").
 *
 * Time bounds: every attempt is bounded by `timeoutMs` (headers and body). A caller may
 * also give a time budget for the whole request (`budgetMs`: the wait for a token and slot,
 * every attempt and every backoff together); intake does, so a hanging endpoint costs a
 * submission at most that long (config `esplora_timeout_ms`).
 *
 * Error contract:
 * - `NodeError('not_found')`: a final 404 (unknown block/tx, height above the tip).
 * - `NodeError('chain_unavailable')`: the endpoint could not be reached, kept failing
 *   (429/5xx/timeouts) after the retries, or kept answering something malformed,
 *   truncated or inconsistent. `detail.reason` says which.
 * - `NodeError('bad_request')`: only from `broadcast`, when the server refuses the
 *   transaction (400); `detail.server_message` carries its text.
 * The 200 answers Esplora gives for unknown items (`{"confirmed":false}`,
 * `{"spent":false}`, `in_best_chain:false`) are returned as such: they never prove that
 * the item exists.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Transaction } from 'bitcoinjs-lib';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../log.js';
import { parseRetryAfter } from '@svc-node/client/http';
import { BoundedCache } from './cache.js';
import { DEFAULT_BUDGET, LimiterStopped, LimiterTimeout, RequestBudget, moreUrgent, type BudgetStatus, type Priority, type Ticket } from './budget.js';
import { merkleRootOfTxids, parseHeaderBytes, parseRawBlock, parseTxHex, type ParsedBlock, type ParsedHeader } from '@svc-node/protocol/bitcoin';
import { HEX32 } from '@svc-node/protocol/identifiers';

export interface EsploraClientOptions {
  /** Base URL including any `/api` prefix, e.g. `https://blockstream.info/api`. */
  baseUrl: string;
  /** Per-attempt timeout covering headers and body (config `esplora_timeout_ms`). Default 10 s. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 4 (5 attempts, ~0.5+1+2+4 s of backoff). */
  retries?: number;
  /** First backoff delay; doubles per retry, with jitter in [50 %, 100 %]. Default 500 ms. */
  backoffBaseMs?: number;
  /** Cap of one backoff delay. Default 30 s. */
  backoffMaxMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails at once. Default 60 s. */
  maxRetryAfterMs?: number;
  /**
   * The request budget (src/chain/budget.ts). Default: the config defaults (600 requests
   * an hour, burst 8, 4 connections: DEFAULT_BUDGET says why). `false` disables it (tests).
   */
  budget?: { requestsPerHour: number; burst: number; maxConcurrent: number } | false;
  /** Cache bound: entries. Default 2,000. */
  cacheEntries?: number;
  /**
   * Cache bound: bytes (a parsed block counts PARSED_BLOCK_HEAP_PER_RAW_BYTE times its raw
   * size, a transaction its hex's). Default 64 MiB: about 4 full mainnet blocks.
   */
  cacheBytes?: number;
  /** Largest answer read; a longer one is an invalid answer. Default 16 MiB (a raw block is at most 4 MB). */
  maxResponseBytes?: number;
  /**
   * Told of every attempt (one HTTP exchange): the route (the path with ids and numbers
   * replaced, so label values stay few), the outcome (`ok`, `http_<status>` for a final
   * answer, or the retry reason) and its duration. For /metrics (issue 20).
   */
  observe?: (route: string, outcome: string, seconds: number) => void;
}

const log = logger('chain');

/**
 * At most one log line per this long for 429s (noteThrottled); the others are counted and
 * the next line says how many. Ten minutes: a throttled start or a client's burst on the
 * address is one line, and a budget above the endpoint's terms still says so a few times
 * an hour, not once per 429.
 */
const THROTTLE_LOG_INTERVAL_MS = 10 * 60_000;

/** Requests that do not say whose they are wait like off-path checks (see the header comment). */
const DEFAULT_PRIORITY: Priority = 'deferred';

/**
 * `/tx/<txid>/hex` -> `/tx/:id/hex`, `/block-height/812345` -> `/block-height/:n`,
 * `/address/<address>/utxo` -> `/address/:addr/utxo` (a wallet's reads, counted by the devnet).
 */
export function routeOf(path: string): string {
  return path
    .replace(/^\/address\/[^/]+/, '/address/:addr')
    .replace(/\/[0-9a-f]{64}(?=\/|$)/g, '/:id')
    .replace(/\/\d+(?=\/|$)/g, '/:n');
}

/** Per-call options of every endpoint. */
export interface RequestOptions {
  /** Whose request this is, for the budget (src/chain/budget.ts). Default `deferred`. */
  priority?: Priority;
  /**
   * Bound on the whole request in milliseconds: queueing for a slot, every attempt and
   * every backoff. When it runs out the call fails with chain_unavailable (reason `timeout`
   * unless an earlier failure says more). Default: none (attempts and retries only).
   */
  budgetMs?: number;
}

/** `/block/:hash` JSON, field names as Esplora spells them. */
export interface EsploraBlock {
  id: string;
  height: number;
  version: number;
  timestamp: number;
  tx_count: number;
  size: number;
  weight: number;
  merkle_root: string;
  previousblockhash: string | null;
  mediantime: number;
  nonce: number;
  bits: number;
  difficulty: number;
}

export interface BlockStatus {
  in_best_chain: boolean;
  height: number | null;
  next_best: string | null;
}

export type TxStatus =
  | { confirmed: true; block_height: number; block_hash: string; block_time: number }
  | { confirmed: false };

export type Outspend = { spent: false } | { spent: true; txid: string; vin: number; status: TxStatus };

/** The subset of the client the block watcher uses (so tests can wrap or fake it). */
export interface ChainSource {
  tipHeight(opts?: RequestOptions): Promise<number>;
  tipHash(opts?: RequestOptions): Promise<string>;
  blockHashAt(height: number, opts?: RequestOptions): Promise<string>;
  rawBlock(hash: string, opts?: RequestOptions): Promise<ParsedBlock>;
}

/** One item of `GET /blocks[/:start_height]`: a best-chain header whose bytes hash to `hash`. */
export interface ChainHeader {
  height: number;
  hash: string;
  /** The 80 header bytes rebuilt from the block JSON. */
  header: Buffer;
  /** Display hex; 64 zeros for the genesis block. */
  prevHash: string;
}

/**
 * `GET /tx/:txid/merkle-proof` (electrum style): `merkle` is display hex, leaf level
 * first; `pos` the transaction's index in its block. Shape-checked only: folding it to a
 * header's merkle root is the caller's (packages/protocol/src/merkle-branch.ts).
 */
export interface MerkleProof {
  block_height: number;
  merkle: string[];
  pos: number;
}

/** Blocks in one `GET /blocks` page (electrs's BLOCK_LIMIT; mempool/electrs's default too). */
export const BLOCKS_PER_PAGE = 10;
/** Deepest merkle branch accepted: a 4 MB block holds fewer than 2^17 transactions; 24 leaves headroom. */
const MAX_MERKLE_DEPTH = 24;

class InvalidAnswer extends Error {}

/**
 * Heap a parsed block takes per byte of its raw form: bitcoinjs holds every script,
 * witness item and hash as its own Uint8Array. Measured: a 1.33 MB devnet block of 3,000
 * transactions holds 14.4 MB of heap. Counted at its raw size, a catch-up filled the
 * 64 MiB cache with ~48 such blocks, about 700 MB.
 */
const PARSED_BLOCK_HEAP_PER_RAW_BYTE = 11;

type Kind = 'text' | 'json' | 'bytes';

type Outcome =
  | { type: 'ok'; value: string | unknown | Uint8Array }
  | { type: 'final'; status: number; text: string }
  | { type: 'retry'; reason: string; message: string; retryAfterMs: number | null }
  | { type: 'stopped' };

const isU32 = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0xffffffff;
const isNat = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isHash = (x: unknown): x is string => typeof x === 'string' && HEX32.test(x);
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new InvalidAnswer(what);
}

function requireHash(h: string, what: string): void {
  if (!isHash(h)) throw new NodeError('bad_request', `${what} must be 64 lowercase hex characters`);
}

function requireNat(n: number, what: string): void {
  if (!isNat(n)) throw new NodeError('bad_request', `${what} must be a non-negative integer`);
}

/** Waits `ms`, or less when `signal` is aborted first (the client closing). */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((r) => {
    if (signal.aborted) return r();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      r();
    }, ms);
    const done = (): void => {
      clearTimeout(timer);
      r();
    };
    signal.addEventListener('abort', done, { once: true });
  });

/** Retry-After's one reader, shared with the svc client (packages/client/src/http.ts). */
export { parseRetryAfter };

export function validateTxStatus(x: unknown): TxStatus {
  check(isObj(x) && typeof x.confirmed === 'boolean', 'tx status shape');
  if (x.confirmed === false) return { confirmed: false };
  check(isNat(x.block_height) && isHash(x.block_hash) && isNat(x.block_time), 'confirmed tx status fields');
  return { confirmed: true, block_height: x.block_height, block_hash: x.block_hash, block_time: x.block_time };
}

export function validateOutspend(x: unknown): Outspend {
  check(isObj(x) && typeof x.spent === 'boolean', 'outspend shape');
  if (x.spent === false) return { spent: false };
  check(isHash(x.txid) && isNat(x.vin), 'outspend spender fields');
  return { spent: true, txid: x.txid, vin: x.vin, status: validateTxStatus(x.status) };
}

export function validateBlockStatus(x: unknown): BlockStatus {
  check(isObj(x) && typeof x.in_best_chain === 'boolean', 'block status shape');
  check(x.height === null || isNat(x.height), 'block status height');
  check(x.next_best === null || isHash(x.next_best), 'block status next_best');
  check(!x.in_best_chain || x.height !== null, 'best-chain block without height');
  return { in_best_chain: x.in_best_chain, height: x.height as number | null, next_best: x.next_best as string | null };
}

export function validateBlockJson(x: unknown, hash?: string): EsploraBlock {
  check(isObj(x), 'block object');
  check(isHash(x.id) && (hash === undefined || x.id === hash), 'block id');
  check(isNat(x.height) && isU32(x.version) && isU32(x.timestamp) && isNat(x.tx_count) && x.tx_count > 0, 'block numbers');
  check(isNat(x.size) && isNat(x.weight) && isU32(x.mediantime) && isU32(x.nonce) && isU32(x.bits), 'block sizes');
  check(isHash(x.merkle_root), 'block merkle_root');
  check(x.previousblockhash === null ? x.height === 0 : isHash(x.previousblockhash), 'block previousblockhash');
  check(typeof x.difficulty === 'number' && Number.isFinite(x.difficulty), 'block difficulty');
  const b = {
    id: x.id,
    height: x.height,
    version: x.version,
    timestamp: x.timestamp,
    tx_count: x.tx_count,
    size: x.size,
    weight: x.weight,
    merkle_root: x.merkle_root,
    previousblockhash: x.previousblockhash as string | null,
    mediantime: x.mediantime,
    nonce: x.nonce,
    bits: x.bits,
    difficulty: x.difficulty,
  };
  // The JSON's header fields must hash back to its id (README "Verification").
  check(parseHeaderBytes(headerOfBlockJson(b)).hash === b.id, 'block fields do not hash to id');
  return b;
}

/** The 80-byte header a block JSON describes (version, previousblockhash, merkle_root, timestamp, bits, nonce). */
export function headerOfBlockJson(b: EsploraBlock): Buffer {
  const h = Buffer.alloc(80);
  h.writeUInt32LE(b.version, 0);
  Buffer.from(b.previousblockhash === null ? ZERO_HASH : b.previousblockhash, 'hex').reverse().copy(h, 4);
  Buffer.from(b.merkle_root, 'hex').reverse().copy(h, 36);
  h.writeUInt32LE(b.timestamp, 68);
  h.writeUInt32LE(b.bits, 72);
  h.writeUInt32LE(b.nonce, 76);
  return h;
}

const ZERO_HASH = '00'.repeat(32);

/**
 * A `/blocks[/:start_height]` page: 1..10 block objects, newest first, each checked (its
 * fields hash to its id), heights descending by one from `startHeight` when given, and
 * as many as the endpoint gives above genesis (10, or height + 1 near genesis).
 */
export function validateBlocksPage(x: unknown, startHeight?: number): ChainHeader[] {
  check(Array.isArray(x) && x.length >= 1 && x.length <= BLOCKS_PER_PAGE, 'blocks page is not a list of 1..10 blocks');
  const out = x.map((item) => {
    const b = validateBlockJson(item);
    return { height: b.height, hash: b.id, header: headerOfBlockJson(b), prevHash: b.previousblockhash ?? ZERO_HASH };
  });
  const top = out[0]!.height;
  check(startHeight === undefined || top === startHeight, 'blocks page does not start at the requested height');
  check(out.every((h, i) => h.height === top - i), 'blocks page heights do not descend by one');
  check(out.length === Math.min(BLOCKS_PER_PAGE, top + 1), 'blocks page is cut short');
  return out;
}

export function validateMerkleProof(x: unknown): MerkleProof {
  check(isObj(x) && isNat(x.block_height) && isNat(x.pos), 'merkle proof fields');
  check(Array.isArray(x.merkle) && x.merkle.length <= MAX_MERKLE_DEPTH && x.merkle.every(isHash), 'merkle proof branch');
  check(x.pos < 2 ** x.merkle.length, 'merkle proof position beyond its branch');
  return { block_height: x.block_height, merkle: (x.merkle as string[]).slice(), pos: x.pos };
}

export class EsploraClient implements ChainSource {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly budget: RequestBudget | null;
  private readonly agent: HttpAgent;
  private readonly send: typeof httpRequest;
  private readonly maxResponseBytes: number;
  private readonly blockCache: BoundedCache<ParsedBlock>;
  private readonly txHexes: BoundedCache<string>;
  private readonly inflight = new Map<string, { promise: Promise<unknown>; ticket: Ticket }>();
  /**
   * Aborted by close(): a request waiting out a backoff (up to a minute with Retry-After)
   * ends at once instead of holding a stopping node past its stop timeout.
   */
  private readonly closing = new AbortController();
  /** Requests sent (attempts), for tests and metrics. */
  requestCount = 0;
  /**
   * Whether the last attempt got an answer from the endpoint (any final HTTP answer
   * counts: a 404 is the endpoint working), null before the first. Follows the endpoint
   * attempt by attempt, not only when a whole request (with its retries) ends.
   */
  lastAttemptOk: boolean | null = null;
  /** Why the last attempt failed, while it did. */
  lastAttemptError: string | null = null;
  /** When a 429 was last logged (performance.now()), and the 429s since (noteThrottled). */
  private throttleSaidAt = -Infinity;
  private throttledUnsaid = 0;
  private readonly observe: ((route: string, outcome: string, seconds: number) => void) | null;

  constructor(opts: EsploraClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.retries = opts.retries ?? 4;
    this.backoffBaseMs = opts.backoffBaseMs ?? 500;
    this.backoffMaxMs = opts.backoffMaxMs ?? 30_000;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
    this.observe = opts.observe ?? null;
    const b = opts.budget === undefined ? DEFAULT_BUDGET : opts.budget;
    this.budget = b === false ? null : new RequestBudget(b);
    const https = new URL(this.baseUrl).protocol === 'https:';
    // One socket per request the budget lets through (public Esplora allows 10 connections
    // per IP; the default limit is 4). Without a budget (tests) 64 keeps a local endpoint
    // busy. Idle sockets are closed after 30 s, or earlier when the server's Keep-Alive
    // hint asks (node:http honours it), so a reused socket is rarely one the server closed.
    const agentOpts = { keepAlive: true, maxSockets: b === false ? 64 : b.maxConcurrent, maxFreeSockets: b === false ? 64 : b.maxConcurrent, timeout: 30_000 };
    this.agent = https ? new HttpsAgent(agentOpts) : new HttpAgent(agentOpts);
    this.send = https ? (httpsRequest as unknown as typeof httpRequest) : httpRequest;
    this.maxResponseBytes = opts.maxResponseBytes ?? 16 * 1024 * 1024;
    const entries = opts.cacheEntries ?? 2000;
    const bytes = opts.cacheBytes ?? 64 * 1024 * 1024;
    this.blockCache = new BoundedCache(entries, bytes);
    this.txHexes = new BoundedCache(entries, bytes);
  }

  // ---- endpoints ---------------------------------------------------------------------

  /** The budget's state for node_status and /metrics; null without a budget (tests). */
  budgetStatus(): BudgetStatus | null {
    return this.budget?.status() ?? null;
  }

  /** GET /blocks/tip/height */
  async tipHeight(opts: RequestOptions = {}): Promise<number> {
    return this.get('/blocks/tip/height', 'text', opts, (t: string) => {
      check(/^(0|[1-9]\d{0,9})$/.test(t), 'tip height is not a decimal');
      return Number(t);
    });
  }

  /** GET /blocks/tip/hash */
  async tipHash(opts: RequestOptions = {}): Promise<string> {
    return this.get('/blocks/tip/hash', 'text', opts, (t: string) => {
      check(isHash(t), 'tip hash is not 64 hex');
      return t;
    });
  }

  /** GET /block-height/:height → hash of the best-chain block there (not_found above the tip). */
  async blockHashAt(height: number, opts: RequestOptions = {}): Promise<string> {
    requireNat(height, 'height');
    return this.get(`/block-height/${height}`, 'text', opts, (t: string) => {
      check(isHash(t), 'block hash is not 64 hex');
      return t;
    });
  }

  /**
   * GET /blocks[/:start_height] → up to 10 best-chain headers, newest first, from
   * `startHeight` (default: the tip) down. Each is rebuilt from its block JSON and must
   * hash to its id; heights descend by one; not_found above the tip. Linkage and proof
   * of work are the header chain's checks (packages/protocol/src/headers.ts), not this answer's.
   */
  async blocks(startHeight?: number, opts: RequestOptions = {}): Promise<ChainHeader[]> {
    if (startHeight !== undefined) requireNat(startHeight, 'start height');
    const path = startHeight === undefined ? '/blocks' : `/blocks/${startHeight}`;
    return this.get(path, 'json', opts, (j: unknown) => validateBlocksPage(j, startHeight));
  }

  /** GET /block/:hash → the block JSON, checked: its header fields hash to `hash`. */
  async block(hash: string, opts: RequestOptions = {}): Promise<EsploraBlock> {
    requireHash(hash, 'block hash');
    return this.get(`/block/${hash}`, 'json', opts, (j: unknown) => validateBlockJson(j, hash));
  }

  /** GET /block/:hash/header → the 80 header bytes, checked to hash to `hash`. */
  async header(hash: string, opts: RequestOptions = {}): Promise<Buffer> {
    requireHash(hash, 'block hash');
    const cached = this.blockCache.get(hash);
    if (cached) return Buffer.from(cached.header.hex, 'hex');
    return this.get(`/block/${hash}/header`, 'text', opts, (t: string) => {
      check(/^[0-9a-f]{160}$/.test(t), 'header is not 160 hex');
      const bytes = Buffer.from(t, 'hex');
      check(parseHeaderBytes(bytes).hash === hash, 'header does not hash to the requested hash');
      return bytes;
    });
  }

  /** `header(hash)` parsed. */
  async blockHeader(hash: string, opts: RequestOptions = {}): Promise<ParsedHeader> {
    requireHash(hash, 'block hash');
    const cached = this.blockCache.get(hash);
    if (cached) return cached.header;
    return parseHeaderBytes(await this.header(hash, opts));
  }

  /** GET /block/:hash/status. Unknown hashes answer in_best_chain:false (not an error). */
  async blockStatus(hash: string, opts: RequestOptions = {}): Promise<BlockStatus> {
    requireHash(hash, 'block hash');
    return this.get(`/block/${hash}/status`, 'json', opts, validateBlockStatus);
  }

  /**
   * GET /block/:hash/txids. Answers for stale blocks too. When the block's header is
   * cached (or `verifyWith` is given) the list must fold to its merkle root.
   */
  async blockTxids(hash: string, verifyWith?: ParsedHeader, opts: RequestOptions = {}): Promise<string[]> {
    requireHash(hash, 'block hash');
    const cached = this.blockCache.get(hash);
    if (cached) return cached.txids.slice();
    return this.get(`/block/${hash}/txids`, 'json', opts, (j: unknown) => {
      check(Array.isArray(j) && j.length > 0 && j.every(isHash), 'txids list');
      check(new Set(j).size === j.length, 'txids list has duplicates');
      if (verifyWith) check(merkleRootOfTxids(j as string[]) === verifyWith.merkleRoot, 'txids do not match the merkle root');
      return j as string[];
    });
  }

  /** GET /block/:hash/txid/:index */
  async blockTxid(hash: string, index: number, opts: RequestOptions = {}): Promise<string> {
    requireHash(hash, 'block hash');
    requireNat(index, 'index');
    const cached = this.blockCache.get(hash);
    if (cached) {
      const t = cached.txids[index];
      if (t === undefined) throw new NodeError('not_found', 'tx index out of range');
      return t;
    }
    return this.get(`/block/${hash}/txid/${index}`, 'text', opts, (t: string) => {
      check(isHash(t), 'txid is not 64 hex');
      return t;
    });
  }

  /**
   * GET /block/:hash/raw → the parsed block, fully checked (hash, merkle root, witness
   * commitment). One request per block; cached (immutable: the hash commits to it).
   */
  async rawBlock(hash: string, opts: RequestOptions = {}): Promise<ParsedBlock> {
    requireHash(hash, 'block hash');
    const cached = this.blockCache.get(hash);
    if (cached) return cached;
    return this.shared(`raw:${hash}`, `/block/${hash}/raw`, opts, async (ticket, deadline) => {
      const b = await this.request(
        `/block/${hash}/raw`,
        'bytes',
        (bytes: Uint8Array) => {
          try {
            return parseRawBlock(bytes, hash);
          } catch (e) {
            throw new InvalidAnswer((e as Error).message);
          }
        },
        { ticket, deadline },
      );
      this.blockCache.set(hash, b, b.size * PARSED_BLOCK_HEAP_PER_RAW_BYTE);
      return b;
    });
  }

  /**
   * GET /tx/:txid/hex → full serialization (with witness), checked to hash to `txid`;
   * cached. Concurrent asks for one txid share one request (at the most urgent asker's
   * priority); each asker's `budgetMs` still bounds its own wait.
   */
  async txHex(txid: string, opts: RequestOptions = {}): Promise<string> {
    return (await this.txWithHex(txid, opts)).hex;
  }

  /**
   * `txHex` and the transaction parsed from it: the check that the hex hashes to `txid`
   * parses it anyway, so a caller that needs both (intake's binding check) parses once.
   */
  async txWithHex(txid: string, opts: RequestOptions = {}): Promise<{ hex: string; tx: Transaction }> {
    requireHash(txid, 'txid');
    const cached = this.txHexes.get(txid);
    if (cached !== undefined) return { hex: cached, tx: parseTxHex(cached, txid) };
    return this.shared(`hex:${txid}`, `/tx/${txid}/hex`, opts, async (ticket, deadline) => {
      const got = await this.request(
        `/tx/${txid}/hex`,
        'text',
        (hex: string) => {
          try {
            return { hex, tx: parseTxHex(hex, txid) };
          } catch (e) {
            throw new InvalidAnswer((e as Error).message);
          }
        },
        { ticket, deadline },
      );
      this.txHexes.set(txid, got.hex, got.hex.length / 2);
      return got;
    });
  }

  /** The transaction `txid` parsed (from `txHex`). */
  async tx(txid: string, opts: RequestOptions = {}): Promise<Transaction> {
    return (await this.txWithHex(txid, opts)).tx;
  }

  /** GET /tx/:txid/status. Unknown txids answer {confirmed:false}: not proof of existence. */
  async txStatus(txid: string, opts: RequestOptions = {}): Promise<TxStatus> {
    requireHash(txid, 'txid');
    return this.get(`/tx/${txid}/status`, 'json', opts, validateTxStatus);
  }

  /**
   * GET /tx/:txid/merkle-proof → the confirmed transaction's height, position and branch
   * (shape-checked; see MerkleProof). not_found while unconfirmed or unknown.
   */
  async merkleProof(txid: string, opts: RequestOptions = {}): Promise<MerkleProof> {
    requireHash(txid, 'txid');
    return this.get(`/tx/${txid}/merkle-proof`, 'json', opts, validateMerkleProof);
  }

  /**
   * The protocol position of a confirmed transaction: (block height, index in the block),
   * from /tx/:txid/status, then /block/:hash/header and /block/:hash/txids (checked
   * against the header's merkle root). null while unconfirmed or unknown.
   */
  async txPosition(txid: string, opts: RequestOptions = {}): Promise<{ height: number; blockHash: string; index: number } | null> {
    const st = await this.txStatus(txid, opts);
    if (!st.confirmed) return null;
    const header = await this.blockHeader(st.block_hash, opts);
    const txids = await this.blockTxids(st.block_hash, header, opts);
    const index = txids.indexOf(txid);
    if (index < 0) {
      throw new NodeError('chain_unavailable', 'chain endpoint is inconsistent: tx not in its confirming block', {
        reason: 'invalid_answer',
        txid,
        block_hash: st.block_hash,
      });
    }
    return { height: st.block_height, blockHash: st.block_hash, index };
  }

  /** GET /tx/:txid/outspend/:vout. Unknown outputs answer {spent:false}. */
  async outspend(txid: string, vout: number, opts: RequestOptions = {}): Promise<Outspend> {
    requireHash(txid, 'txid');
    requireNat(vout, 'vout');
    return this.get(`/tx/${txid}/outspend/${vout}`, 'json', opts, validateOutspend);
  }

  /** GET /tx/:txid/outspends: one entry per output (not_found for unknown txids). */
  async outspends(txid: string, opts: RequestOptions = {}): Promise<Outspend[]> {
    requireHash(txid, 'txid');
    return this.get(`/tx/${txid}/outspends`, 'json', opts, (j: unknown) => {
      check(Array.isArray(j), 'outspends list');
      return j.map(validateOutspend);
    });
  }

  /**
   * POST /tx with the hex as text/plain → the txid, checked against the hex. A refusal
   * (400) is `bad_request` with the server's text in `detail.server_message`.
   */
  async broadcast(hex: string, opts: RequestOptions = {}): Promise<string> {
    const txid = parseTxHex(hex).getId();
    return this.request(
      '/tx',
      'text',
      (t: string) => {
        check(t.trim() === txid, 'broadcast answered a different txid');
        return txid;
      },
      { postBody: hex, ticket: { priority: opts.priority ?? DEFAULT_PRIORITY } },
    );
  }

  /**
   * Drops queued requests, the cache and every connection: requests in flight or waiting
   * for a retry fail at once with chain_unavailable (reason `closed`).
   */
  async close(): Promise<void> {
    this.closing.abort();
    this.blockCache.clear();
    this.txHexes.clear();
    this.budget?.stop();
    this.agent.destroy();
  }

  // ---- transport ---------------------------------------------------------------------

  /** One GET at `opts.priority`, bounded as a whole by `opts.budgetMs` when given. */
  private get<T>(path: string, kind: 'text' | 'json', opts: RequestOptions, parse: (x: any) => T): Promise<T> {
    const deadline = opts.budgetMs === undefined ? Infinity : performance.now() + opts.budgetMs;
    const got = this.request(path, kind as 'json', parse, { deadline, ticket: { priority: opts.priority ?? DEFAULT_PRIORITY } });
    return deadline === Infinity ? got : this.withinDeadline(got, deadline, path, opts.budgetMs!);
  }

  /**
   * Concurrent asks for one item share one request. A more urgent asker raises the shared
   * request's priority (moving it up the budget's queues while it waits); each asker's
   * `budgetMs` bounds its own wait.
   */
  private shared<T>(key: string, path: string, opts: RequestOptions, run: (ticket: Ticket, deadline: number) => Promise<T>): Promise<T> {
    const deadline = opts.budgetMs === undefined ? Infinity : performance.now() + opts.budgetMs;
    const priority = opts.priority ?? DEFAULT_PRIORITY;
    let entry = this.inflight.get(key);
    if (entry) {
      const raised = moreUrgent(entry.ticket.priority, priority);
      if (raised !== entry.ticket.priority) {
        entry.ticket.priority = raised;
        entry.ticket.requeue?.();
      }
    } else {
      const ticket: Ticket = { priority };
      const promise = run(ticket, deadline).finally(() => this.inflight.delete(key));
      entry = { promise, ticket };
      this.inflight.set(key, entry);
    }
    const p = entry.promise as Promise<T>;
    return deadline === Infinity ? p : this.withinDeadline(p, deadline, path, opts.budgetMs!);
  }

  /** `p`, or chain_unavailable (timeout) when `deadline` passes first. */
  private withinDeadline<T>(p: Promise<T>, deadline: number, path: string, budgetMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new NodeError('chain_unavailable', 'chain endpoint unavailable: timeout', { path, reason: 'timeout', message: `no answer within the ${budgetMs} ms budget` })),
        Math.max(0, deadline - performance.now()),
      );
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt);
    return Math.round(base * (0.5 + Math.random() * 0.5));
  }

  private async request<T>(path: string, kind: 'text', parse: (t: string) => T, o: { postBody?: string; deadline?: number; ticket: Ticket }): Promise<T>;
  private async request<T>(path: string, kind: 'json', parse: (j: unknown) => T, o: { deadline?: number; ticket: Ticket }): Promise<T>;
  private async request<T>(path: string, kind: 'bytes', parse: (b: Uint8Array) => T, o: { deadline?: number; ticket: Ticket }): Promise<T>;
  private async request<T>(path: string, kind: Kind, parse: (x: any) => T, o: { postBody?: string; deadline?: number; ticket: Ticket }): Promise<T> {
    const url = this.baseUrl + path;
    const postBody = o.postBody;
    const deadline = o.deadline ?? Infinity;
    let lastReason = 'unreachable';
    let lastMessage = '';
    for (let attempt = 0; ; attempt++) {
      if (this.closing.signal.aborted) {
        lastReason = 'closed';
        lastMessage = 'the chain client is closed';
        break;
      }
      let waitMs = this.backoff(attempt);
      const left = deadline - performance.now();
      if (left <= 0) {
        if (lastReason === 'unreachable') {
          lastReason = 'timeout';
          lastMessage = 'no time left in the request budget';
        }
        break;
      }
      const outcome = await this.attempt(url, kind, postBody, Math.min(this.timeoutMs, Math.ceil(left)), deadline, o.ticket);
      if (outcome.type === 'ok') {
        try {
          return parse(outcome.value);
        } catch (e) {
          if (e instanceof NodeError) throw e;
          // Any failure to read the answer (a validator's verdict or a parser's exception)
          // is the server's fault: retried, then chain_unavailable. Never a crash.
          lastReason = 'invalid_answer';
          lastMessage = e instanceof Error ? e.message : String(e);
        }
      } else if (outcome.type === 'final') {
        if (outcome.status === 404) throw new NodeError('not_found', outcome.text || 'not found', { path, status: 404 });
        if (postBody !== undefined && outcome.status === 400) {
          throw new NodeError('bad_request', 'transaction refused by the chain endpoint', { server_message: outcome.text.slice(0, 500) });
        }
        throw new NodeError('chain_unavailable', `chain endpoint answered ${outcome.status}`, {
          path,
          status: outcome.status,
          reason: 'http_error',
          server_message: outcome.text.slice(0, 200),
        });
      } else if (outcome.type === 'stopped') {
        lastReason = 'closed';
        lastMessage = 'the chain client is closed';
        break;
      } else {
        lastReason = outcome.reason;
        lastMessage = outcome.message;
        if (outcome.retryAfterMs !== null) {
          if (outcome.retryAfterMs > this.maxRetryAfterMs) break;
          waitMs = Math.max(waitMs, outcome.retryAfterMs);
        }
      }
      if (attempt >= this.retries) break;
      // A retry that could only start after the budget ran out is not worth waiting for.
      if (performance.now() + waitMs >= deadline) break;
      await sleep(waitMs, this.closing.signal);
    }
    throw new NodeError('chain_unavailable', `chain endpoint unavailable: ${lastReason}`, { path, reason: lastReason, message: lastMessage });
  }

  /** One attempt, with a token of the budget; `deadline` bounds the wait for it. */
  private async attempt(url: string, kind: Kind, postBody: string | undefined, timeoutMs: number, deadline: number, ticket: Ticket): Promise<Outcome> {
    if (!this.budget) return this.exchange(url, kind, postBody, timeoutMs);
    try {
      return await this.budget.schedule(() => this.exchange(url, kind, postBody, Math.min(timeoutMs, Math.ceil(deadline - performance.now()))), ticket, deadline);
    } catch (e) {
      if (e instanceof LimiterTimeout) return { type: 'retry', reason: 'timeout', message: 'no request slot free within the request budget', retryAfterMs: null };
      if (e instanceof LimiterStopped) return { type: 'stopped' };
      throw e;
    }
  }

  /**
   * One HTTP exchange. A keep-alive socket the server closed just as it was reused fails
   * before any answer (ECONNRESET/EPIPE on a reused socket): a GET is sent once more on a
   * fresh socket at once, as the same attempt. A POST (broadcast) is not: it may have
   * reached the server; it takes the normal retry path.
   */
  private async exchange(url: string, kind: Kind, postBody: string | undefined, timeoutMs: number): Promise<Outcome> {
    const t0 = performance.now();
    for (let resend = 0; ; resend++) {
      const r = await this.exchangeOnce(url, kind, postBody, Math.max(1, timeoutMs - (performance.now() - t0)));
      if (r.type === 'stale' && resend === 0 && postBody === undefined) continue;
      const o: Outcome = r.type === 'stale' ? { type: 'retry', reason: 'network_error', message: r.message, retryAfterMs: null } : r;
      this.noteAttempt(url, o, (performance.now() - t0) / 1000);
      return o;
    }
  }

  /** Endpoint health and metrics from one attempt's outcome. */
  private noteAttempt(url: string, o: Outcome, seconds: number): void {
    if (o.type === 'stopped') return;
    // A 5xx or 429 is retried ('retry'); any other status is the endpoint answering.
    const answered = o.type === 'ok' || o.type === 'final';
    this.lastAttemptOk = answered;
    this.lastAttemptError = o.type === 'retry' ? `${o.reason}: ${o.message}`.slice(0, 300) : null;
    const route = routeOf(new URL(url).pathname.slice(new URL(this.baseUrl).pathname.replace(/\/$/, '').length));
    // A 429 pauses every start of the budget; any other answer ends a run of them.
    if (o.type === 'retry' && o.reason === 'http_429') this.noteThrottled(route, o.retryAfterMs);
    else if (answered) this.budget?.noteAnswered();
    if (this.observe) {
      const outcome = o.type === 'ok' ? 'ok' : o.type === 'final' ? `http_${o.status}` : o.reason;
      this.observe(route, outcome, seconds);
    }
  }

  /**
   * A 429: the budget pauses every start (Retry-After, else its backoff), the status names
   * the wait (`lastAttemptError`), and the log says it once a spell: a line at most every
   * THROTTLE_LOG_INTERVAL_MS, the others only counted (node_status.chain.budget.throttled_total,
   * svc_chain_budget_throttled_total) until the next line says how many.
   */
  private noteThrottled(route: string, retryAfterMs: number | null): void {
    const waitMs = this.budget?.noteThrottled(retryAfterMs) ?? retryAfterMs;
    const waiting = waitMs === null ? 'the request is retried with backoff' : `every request waits ${waitMs} ms${retryAfterMs === null ? ' (no Retry-After: backoff)' : ' (its Retry-After)'}`;
    this.lastAttemptError = `http_429: the chain endpoint answered 429 Too Many Requests to ${route}; ${waiting}`;
    const now = performance.now();
    this.throttledUnsaid++;
    if (now - this.throttleSaidAt < THROTTLE_LOG_INTERVAL_MS) return;
    const tooLong = retryAfterMs !== null && retryAfterMs > this.maxRetryAfterMs;
    log.warn('chain endpoint answered 429 Too Many Requests: requests to it wait, then resume', {
      route,
      retry_after_ms: retryAfterMs,
      wait_ms: waitMs,
      // this one and those since the last such line
      throttled: this.throttledUnsaid,
      throttled_total: this.budget?.status().throttled_total ?? null,
      then: `${tooLong ? `a Retry-After above ${this.maxRetryAfterMs} ms fails the request at once (retried at the next poll)` : 'the request is sent again after the wait'}; more 429s within ${THROTTLE_LOG_INTERVAL_MS / 60_000} min are only counted (node_status.chain.budget.throttled_total)`,
      hint: 'another client on this address shares its allowance, or esplora_burst / esplora_requests_per_hour are above the endpoint\'s terms (docs/OPERATING.md, "The endpoint answers 429")',
    });
    this.throttleSaidAt = now;
    this.throttledUnsaid = 0;
  }

  private exchangeOnce(url: string, kind: Kind, postBody: string | undefined, timeoutMs: number): Promise<Outcome | { type: 'stale'; message: string }> {
    this.requestCount++;
    return new Promise((resolve) => {
      let settled = false;
      let req: ClientRequest | null = null;
      const finish = (o: Outcome | { type: 'stale'; message: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
      const timer = setTimeout(() => {
        finish({ type: 'retry', reason: 'timeout', message: `no answer within ${timeoutMs} ms`, retryAfterMs: null });
        req?.destroy();
      }, timeoutMs);
      const onResponse = (res: IncomingMessage): void => {
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > this.maxResponseBytes) {
          finish({ type: 'retry', reason: 'invalid_answer', message: `answer larger than ${this.maxResponseBytes} bytes`, retryAfterMs: null });
          res.destroy();
          return;
        }
        const parts: Buffer[] = [];
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
          if (n > this.maxResponseBytes) {
            finish({ type: 'retry', reason: 'invalid_answer', message: `answer larger than ${this.maxResponseBytes} bytes`, retryAfterMs: null });
            res.destroy();
            return;
          }
          parts.push(c);
        });
        res.on('error', (e: Error) => finish({ type: 'retry', reason: 'network_error', message: e.message, retryAfterMs: null }));
        res.on('aborted', () => finish({ type: 'retry', reason: 'network_error', message: 'answer cut short', retryAfterMs: null }));
        res.on('end', () => {
          const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
          finish(this.outcomeOf(status, res.headers['retry-after'], buf, kind));
        });
      };
      try {
        req = this.send(url, {
          method: postBody === undefined ? 'GET' : 'POST',
          agent: this.agent,
          headers: postBody === undefined ? {} : { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(postBody) },
        }, onResponse);
      } catch (e) {
        return finish({ type: 'retry', reason: 'network_error', message: String((e as Error)?.message ?? e), retryAfterMs: null });
      }
      req.on('error', (e: NodeJS.ErrnoException) => {
        const stale = req!.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        finish(stale ? { type: 'stale', message: e.message } : { type: 'retry', reason: 'network_error', message: e.message, retryAfterMs: null });
      });
      req.end(postBody);
    });
  }

  private outcomeOf(status: number, retryAfter: string | string[] | undefined, buf: Buffer, kind: Kind): Outcome {
    if (status === 429 || status >= 500) {
      return {
        type: 'retry',
        reason: `http_${status}`,
        message: buf.subarray(0, 200).toString('utf8'),
        retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null),
      };
    }
    if (status !== 200) return { type: 'final', status, text: buf.toString('utf8') };
    if (kind === 'bytes') return { type: 'ok', value: new Uint8Array(buf) };
    const text = buf.toString('utf8');
    if (kind === 'text') return { type: 'ok', value: text.trim() };
    try {
      return { type: 'ok', value: JSON.parse(text) as unknown };
    } catch {
      return { type: 'retry', reason: 'invalid_answer', message: 'body is not JSON', retryAfterMs: null };
    }
  }
}

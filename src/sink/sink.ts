/**
 * `svc sink postgres` (docs/INDEXING.md): follows the node's live feed (docs/STREAM.md)
 * and writes blocks, events and call statuses of the followed contracts into PostgreSQL,
 * exactly once and reorg-safe.
 *
 * Exactly once: what is in the database is described by heights stored with it
 * (`sink_meta.blocks_through`, `contracts.through_height`): every block, event and decided
 * call up to them, and nothing above. Rows reach the database only in a transaction that
 * also moves those heights, and only for whole blocks every subscription has finished
 * (the feed's `progress` marks). A crash at any point leaves the last committed
 * transaction; a restart subscribes again from the stored heights (contracts with the
 * stored cursor, which names its branch) and drops whatever it held in memory.
 *
 * Reorg-safe: a `rollback` (live, or on resume from a cursor a reorg retracted while the
 * sink was away) deletes the events and blocks from the fork up and turns calls decided
 * there back to `pending`, in one transaction that lowers the stored heights; then the
 * sink subscribes again from there. At connect the sink also checks its newest stored
 * block against the node (the blocks subscription resumes by height).
 */
import pg from 'pg';
import type { ContractsAnswer, StateRootAnswer } from '@svc-node/client/answers';
import { ClientError } from '@svc-node/client/errors';
import { blockTag, decodeCursor, encodeCursor, endOf, locatorHeights } from '@svc-node/protocol/cursor';
import type { CallMessage, FeedMessage } from '@svc-node/protocol/feed';
import { stream, type StreamSubscription } from '@svc-node/client/stream';
import { arrayLiteral, byteaHex, copyRows, insertSql, sqlLiteral } from './copy.js';
import { createViews, ensureSchema, q, snake } from './schema.js';
import { HEX32 } from '@svc-node/protocol/identifiers';

export interface SinkOptions {
  nodeUrl: string;
  /** postgres:// URL; unset: node-postgres's PG* environment variables. */
  databaseUrl?: string;
  schema: string;
  /** Contracts to follow (alias optional), or every contract the node holds. */
  contracts: { alias: string | null; id: string }[] | 'all';
  /** One line per notable event (connections, commits every few seconds, retries, rollbacks). */
  log: (line: string) => void;
  signal?: AbortSignal;
  /** Called after every commit with the height the database is complete through (tests, bench). */
  onCommit?: (through: number, rows: number) => void;
}

/** The parts of GET /contracts/{id} the sink reads: the ABI its views are made from, the name it records. */
interface ContractInfo {
  abi: unknown[];
  metadata?: { name?: unknown } | null;
}

/** First retry delay after a database or node failure; doubles up to RETRY_MAX_MS. */
const RETRY_MS = 250;
/** Longest wait between retries: a restarted database or node is picked up within this. */
const RETRY_MAX_MS = 10_000;
/** Buffered rows (not yet committed) past which the feed is read no further until the commit in flight takes them, bounding memory. */
const ROWS_HIGH = 200_000;
/**
 * Rows (blocks, events, calls) one transaction holds at most, in whole blocks (a larger
 * block alone). A long catch-up then commits every 10,000 rows, a fraction of a second of
 * COPY: a crash loses at most that, `through_height` on the primary and its replicas moves
 * steadily, and a transaction's memory and WAL stay bounded. The fixed cost per
 * transaction (four round trips) is well under 1% of its rows' COPY (bench/sink.bench.ts
 * measures the catch-up with it against one COPY of all rows).
 */
export const TXN_ROWS = 10_000;
/**
 * A transaction with fewer events than this sends them as INSERT literals in its first
 * statement text; more go by COPY, which costs two more round trips (the COPY itself, then
 * the heights in a text of their own) but writes rows about twice as fast (bench/sink.bench.ts:
 * multi-row INSERT runs at about 0.45 of COPY). A live block is usually far below it (two
 * round trips: the text, then COMMIT); a catch-up's transactions of up to TXN_ROWS far above.
 */
const COPY_MIN_EVENTS = 200;
/**
 * Stored block hashes kept in memory below the newest: cursors carry a locator reaching
 * 256 blocks down (LOCATOR_OFFSETS), so a commit or rollback near the top builds its
 * cursor without a query; a contract far behind the top reads its locator from the table.
 */
const HASHES_KEPT = 320;
/**
 * How often (--all) the node's contract list is checked for new contracts, on a timer of
 * its own (a quiet chain sends nothing to wake the sink): half the 10 s docs/INDEXING.md
 * promises, so the reconnect and the new views fit within it.
 */
const CONTRACTS_POLL_MS = 5_000;
/** A progress line at most this often. */
const LOG_EVERY_MS = 10_000;

interface Followed {
  id: string;
  alias: string;
  through: number;
  cursor: string | null;
}

interface EventRow {
  contract: string;
  height: number;
  row: (string | null)[];
}

interface CallRow {
  contract: string;
  height: number;
  row: unknown[];
}

interface Block {
  height: number;
  block_hash: string;
  state_root: string;
}

/** A failure that retrying cannot fix: the sink stops with its message. */
class Fatal extends ClientError {}

const ALIAS = /^[a-z_][a-z0-9_]{0,39}$/;

export function parseContractArg(text: string): { alias: string | null; id: string } {
  const i = text.indexOf('=');
  const alias = i < 0 ? null : text.slice(0, i);
  const id = i < 0 ? text : text.slice(i + 1);
  if (!HEX32.test(id)) throw new ClientError('bad_argument', `--contract ${text}: the contract id must be 64 lowercase hex characters`);
  if (alias !== null && !ALIAS.test(alias)) throw new ClientError('bad_argument', `--contract ${text}: the alias must be 1 to 40 of a-z 0-9 _ (not starting with a digit)`);
  return { alias, id };
}

export class PostgresSink {
  private db: pg.Client | null = null;
  /** The current connection reported an error or ended (the database restarted or went away). */
  private dbBroken = false;
  private followed = new Map<string, Followed>();
  private blocksThrough = -1;
  private readonly s: string;
  private stopped = false;
  private lastLog = 0;
  private committedRows = 0;
  private contractsCheckedAt = 0;
  /** Hashes (hex) of the stored blocks from `hashesFrom` up: every stored block there is here. */
  private hashes = new Map<number, string>();
  private hashesFrom = 0;

  constructor(private readonly o: SinkOptions) {
    this.s = q(o.schema);
  }

  /** Runs until the signal aborts (resolves) or a failure retrying cannot fix (rejects). */
  async run(): Promise<void> {
    let delay = RETRY_MS;
    const onAbort = (): void => {
      this.stopped = true;
      this.wake?.();
    };
    this.o.signal?.addEventListener('abort', onAbort);
    try {
      while (!this.stopped) {
        try {
          await this.connectDb();
          await this.load();
          await this.checkBlocks();
          delay = RETRY_MS;
          await this.follow();
        } catch (e) {
          if (e instanceof Fatal || (e instanceof ClientError && e.code === 'bad_argument') || this.stopped) throw e;
          if (e instanceof ClientError && (e.code === 'schema_version' || e.code === 'schema_conflict')) throw e;
          // The database gone mid-stream (a restart, a dropped connection) reads as at start.
          const what = !(e instanceof ClientError) && this.dbLost(e) ? `postgres unavailable (${describe(e)})` : describe(e);
          this.o.log(`svc sink: ${what}; retrying in ${(delay / 1000).toFixed(delay < 1000 ? 2 : 0)}s`);
          await this.closeDb();
          await this.sleep(delay);
          delay = Math.min(delay * 2, RETRY_MAX_MS);
        }
      }
    } finally {
      this.o.signal?.removeEventListener('abort', onAbort);
      await this.closeDb();
    }
  }

  private wake: (() => void) | null = null;

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async connectDb(): Promise<void> {
    if (this.db) return;
    const db = new pg.Client(this.o.databaseUrl ? { connectionString: this.o.databaseUrl } : {});
    this.dbBroken = false;
    // A broken connection also fails the query in flight; this keeps the event from throwing
    // and remembers that the connection, not the statement, failed.
    db.on('error', () => {
      if (this.db === db) this.dbBroken = true;
    });
    db.on('end', () => {
      if (this.db === db) this.dbBroken = true;
    });
    try {
      await db.connect();
    } catch (e) {
      await db.end().catch(() => undefined);
      throw new ClientError('unreachable', `postgres unavailable (${describe(e)})`);
    }
    this.db = db;
    await ensureSchema(db, this.o.schema);
  }

  /** Whether `e` came from losing the database (the connection, or the server shutting down), not from a statement. */
  private dbLost(e: unknown): boolean {
    const code = String((e as { code?: unknown })?.code ?? '');
    // SQLSTATE class 08: connection exception; 57P01-57P03: shutdown, crash, cannot connect now.
    return this.dbBroken || code.startsWith('08') || /^57P0[123]$/.test(code) || /^E(CONN|PIPE|TIMEDOUT|HOSTUNREACH)/.test(code);
  }

  private async closeDb(): Promise<void> {
    const db = this.db;
    this.db = null;
    await db?.end().catch(() => undefined);
  }

  // ---------------------------------------------------------------- node reads

  /** A GET of the node's JSON answer of type T (the node's documented shape, not checked here). */
  private async nodeJson<T>(path: string): Promise<{ status: number; body: T }> {
    let r: Response;
    try {
      r = await fetch(`${this.o.nodeUrl.replace(/\/+$/, '')}${path}`);
    } catch (e) {
      throw new ClientError('unreachable', `node ${this.o.nodeUrl} unreachable (${describe(e)})`);
    }
    const body = (await r.json().catch(() => null)) as (T & { error?: { code?: string } }) | null;
    if (r.status >= 500) throw new ClientError('node_error', `node answered ${r.status} to GET ${path}${body?.error ? `: ${body.error.code}` : ''}`);
    return { status: r.status, body: body as T };
  }

  /** The stored state, the contracts to follow (new ones registered, views made). */
  private async load(): Promise<void> {
    const db = this.db!;
    const meta = await db.query(`SELECT value FROM ${this.s}.sink_meta WHERE key = 'blocks_through'`);
    this.blocksThrough = Number(meta.rows[0].value);
    this.hashesFrom = this.blocksThrough - HASHES_KEPT;
    this.hashes = new Map();
    for (const r of (await db.query(`SELECT height, encode(block_hash, 'hex') AS hash FROM ${this.s}.blocks WHERE height >= $1`, [this.hashesFrom])).rows) this.hashes.set(Number(r.height), r.hash);
    const stored = new Map<string, Followed>();
    for (const r of (await db.query(`SELECT encode(contract_id, 'hex') AS id, alias, through_height, cursor FROM ${this.s}.contracts`)).rows) {
      stored.set(r.id, { id: r.id, alias: r.alias, through: Number(r.through_height), cursor: r.cursor });
    }
    let wanted: { alias: string | null; id: string }[];
    if (this.o.contracts === 'all') {
      const list = await this.nodeJson<ContractsAnswer>('/contracts');
      wanted = list.body.contract_ids.map((id) => ({ alias: null, id }));
      this.contractsCheckedAt = Date.now();
    } else wanted = this.o.contracts;
    const taken = new Map([...stored.values()].map((f) => [f.alias, f.id]));
    this.followed = new Map();
    for (const w of wanted) {
      const have = stored.get(w.id);
      if (have) {
        if (w.alias !== null && w.alias !== have.alias) throw new Fatal('bad_argument', `contract ${w.id} is followed as ${have.alias} in schema ${this.o.schema}; its alias cannot change (views are named by it)`);
        this.followed.set(w.id, have);
        continue;
      }
      const info = await this.nodeJson<ContractInfo>(`/contracts/${w.id}`);
      if (info.status === 404) throw new Fatal('not_found', `the node holds no contract ${w.id}`);
      if (info.status !== 200) throw new Fatal('node_error', `GET /contracts/${w.id} answered ${info.status}`);
      const name = typeof info.body.metadata?.name === 'string' ? info.body.metadata.name : null;
      let alias = w.alias;
      if (alias !== null) {
        if (taken.has(alias) && taken.get(alias) !== w.id) throw new Fatal('bad_argument', `alias ${alias} is taken by contract ${taken.get(alias)}; choose another (--contract ALIAS=ID)`);
      } else {
        const base = name ? snake(name).replace(/[^a-z0-9_]/g, '_').slice(0, 30) : 'c';
        alias = taken.has(base) || !ALIAS.test(base) ? `${base}_${w.id.slice(0, 8)}` : base;
      }
      taken.set(alias, w.id);
      await db.query('BEGIN');
      try {
        await createViews(db, this.o.schema, w.id, alias, info.body.abi);
        await db.query(`INSERT INTO ${this.s}.contracts (contract_id, alias, name, abi) VALUES ($1, $2, $3, $4)`, [Buffer.from(w.id, 'hex'), alias, name, JSON.stringify(info.body.abi)]);
        await db.query('COMMIT');
      } catch (e) {
        await db.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
      this.o.log(`svc sink: following contract ${w.id} as ${alias}`);
      this.followed.set(w.id, { id: w.id, alias, through: -1, cursor: null });
    }
    if (this.followed.size === 0 && this.o.contracts !== 'all') throw new Fatal('bad_argument', 'no contract to follow');
  }

  /**
   * The newest stored block must still be the node's, with the node's state root:
   * otherwise a reorg happened while the sink was away, or the node re-derived its state
   * (a release whose state roots are of a new version, docs/STATE.md "Root version", which
   * may also decide calls otherwise), and the fork is found by walking down the stored
   * blocks: every row from it on is written again from the node's answers.
   */
  private async checkBlocks(): Promise<void> {
    const db = this.db!;
    let fork: number | null = null;
    let rootsDiffer = false;
    const PAGE = 64;
    let below = Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = (await db.query(`SELECT height, encode(block_hash, 'hex') AS hash, encode(state_root, 'hex') AS root FROM ${this.s}.blocks WHERE height < $1 ORDER BY height DESC LIMIT ${PAGE}`, [below])).rows as { height: string; hash: string; root: string }[];
      if (rows.length === 0) break;
      let matched = false;
      for (const r of rows) {
        const h = Number(r.height);
        const node = await this.nodeJson<StateRootAnswer>(`/v2/state_root/${h}`);
        if (node.status === 200 && node.body.block_hash === r.hash && node.body.state_root === r.root) {
          matched = true;
          break;
        }
        if (node.status === 200 && node.body.block_hash === r.hash) rootsDiffer = true;
        // The node is behind the sink (restored, or resyncing): nothing to compare yet.
        if (node.status === 404 && fork === null && h === Number(rows[0]!.height) && below === Number.MAX_SAFE_INTEGER) {
          matched = true;
          break;
        }
        fork = h;
      }
      if (matched) break;
      below = Number(rows[rows.length - 1]!.height);
    }
    if (fork !== null) {
      this.o.log(rootsDiffer
        ? `svc sink: stored blocks from ${fork} on hold state roots the node no longer publishes (it re-derived its state); rolling back to ${fork}`
        : `svc sink: stored block ${fork} is no longer on the node's chain; rolling back to it`);
      await this.rollback(fork);
    }
  }

  // ---------------------------------------------------------------- the feed

  /**
   * Follows the feed through the SDK's reader (src/client/stream.ts) until it closes
   * (resolves or rejects unreachable: the caller reads its position back from the
   * database and follows again), a rollback is applied (resolves) or a commit fails
   * (rejects). The reader reconnects by itself; the sink instead leaves at the first close,
   * since what it resumes from is what it committed, not what it was sent.
   */
  private async follow(): Promise<void> {
    const leave = new AbortController();
    const signal = this.o.signal ? AbortSignal.any([this.o.signal, leave.signal]) : leave.signal;

    // Subscriptions: blocks from the next height; per contract, events and calls after its cursor.
    const subs = new Map<string, { kind: 'blocks' | 'events' | 'calls'; contract: string | null; progress: number }>();
    const subscriptions: StreamSubscription[] = [{ kind: 'blocks', id: 'b', fromHeight: this.blocksThrough + 1 }];
    subs.set('b', { kind: 'blocks', contract: null, progress: this.blocksThrough });
    let n = 0;
    const subOf = new Map<string, string>();
    for (const f of this.followed.values()) {
      const start = f.cursor !== null ? { cursor: f.cursor } : { fromHeight: f.through + 1 };
      for (const kind of ['events', 'calls'] as const) {
        const id = `${kind[0]}${n}`;
        subs.set(id, { kind, contract: f.id, progress: f.through });
        subOf.set(id, f.id);
        subscriptions.push({ kind, id, contractId: f.id, progress: true, ...start });
      }
      n++;
    }
    let closed: { code: number; reason: string } | null = null;
    const feed = stream(this.o.nodeUrl, {
      subscriptions,
      signal,
      maxAttempts: 1,
      onReconnect: (code, reason) => {
        closed = { code, reason };
        leave.abort();
      },
    });
    this.o.log(`svc sink: following ${this.followed.size} contract(s) from height ${Math.min(this.blocksThrough, ...[...this.followed.values()].map((f) => f.through)) + 1}`);

    let blocks: Block[] = [];
    let events: EventRow[] = [];
    let calls: CallRow[] = [];
    let committing: Promise<void> | null = null;
    let failure: unknown = null;
    // Set once the feed is being left (a rollback, a new contract, a close or a stop): no
    // new transaction starts, so the connection is free for what follows.
    let leaving = false;
    /** Waits for the transaction in flight; none starts after it (one transaction at a time on the connection). */
    const settle = async (): Promise<void> => {
      leaving = true;
      while (committing) await committing;
    };
    const frontier = (): number => {
      let min = Infinity;
      for (const x of subs.values()) if (x.progress < min) min = x.progress;
      return min;
    };
    const committedThrough = (): number => {
      let min = this.blocksThrough;
      for (const f of this.followed.values()) if (f.through < min) min = f.through;
      return min;
    };

    const kickCommit = (): void => {
      if (committing || failure || leaving) return;
      const done = committedThrough();
      const ready = frontier();
      if (ready <= done) return;
      const target = commitTarget(done, ready, [blocks, events, calls]);
      const bs = blocks.filter((b) => b.height <= target);
      const es = events.filter((e) => e.height <= target);
      const cs = calls.filter((c) => c.height <= target);
      blocks = blocks.filter((b) => b.height > target);
      events = events.filter((e) => e.height > target);
      calls = calls.filter((c) => c.height > target);
      committing = this.commit(target, bs, es, cs).then(
        () => {
          committing = null;
          kickCommit();
        },
        (e) => {
          committing = null;
          failure = e;
          leave.abort();
        },
      );
    };

    // --all: wake to look for new contracts even when the feed is quiet (no block).
    let next: Promise<IteratorResult<FeedMessage, void>> | null = null;
    const nextOrPoll = async (): Promise<IteratorResult<FeedMessage, void> | null> => {
      next ??= feed.next();
      if (this.o.contracts !== 'all') return next;
      let timer: NodeJS.Timeout | undefined;
      const poll = new Promise<null>((r) => (timer = setTimeout(() => r(null), CONTRACTS_POLL_MS)));
      try {
        return await Promise.race([next, poll]);
      } finally {
        clearTimeout(timer);
      }
    };

    try {
      for (;;) {
        const r = await nextOrPoll();
        if (failure) throw failure;
        if (r !== null) {
          next = null;
          if (r.done) {
            await settle();
            if (failure) throw failure;
            if (this.stopped) return;
            const c = closed as { code: number; reason: string } | null;
            throw new ClientError('unreachable', `the node closed the feed (${c?.code}${c?.reason ? ` ${c.reason}` : ''})`);
          }
          const m = r.value;
          const sub = m.sub === undefined ? undefined : subs.get(m.sub);
          switch (m.type) {
            case 'block':
              blocks.push({ height: m.height, block_hash: m.block_hash, state_root: m.state_root });
              sub!.progress = Math.max(sub!.progress, m.height);
              break;
            case 'event': {
              const contract = subOf.get(m.sub)!;
              const params = m.params;
              const values: string[] = [];
              for (const k in params) values.push(String(params[k]));
              events.push({
                contract,
                height: m.block_height,
                row: [byteaHex(contract), String(m.block_height), String(m.tx_index), String(m.log_index), m.name, JSON.stringify(params), arrayLiteral(values), byteaHex(m.txid), m.cursor],
              });
              sub!.progress = Math.max(sub!.progress, m.block_height - 1);
              break;
            }
            case 'call': {
              // Decided calls come from the call log with a cursor; the `pending` messages of a
              // rollback carry none (the rollback itself already made them pending here). The
              // cursor's height is the block that decided the call: a dropped call has no
              // block_height, and is listed at the block whose transaction spent its outpoint.
              if (typeof m.cursor !== 'string' || m.status === 'pending') break;
              const height = decodeCursor(m.cursor).pos[0];
              calls.push({ contract: m.contract_id, height, row: callRow(m, height) });
              sub!.progress = Math.max(sub!.progress, height - 1);
              break;
            }
            case 'progress':
            case 'synced':
              if (typeof m.height === 'number') sub!.progress = Math.max(sub!.progress, m.height);
              break;
            case 'rollback': {
              // Retracted: everything from the fork up, in one transaction; then subscribe again.
              await settle();
              if (failure) throw failure;
              const fork = m.fork_height;
              this.o.log(`svc sink: rollback to height ${fork} (${m.sub})`);
              await this.rollback(fork);
              return;
            }
            case 'error':
              if (m.code === 'not_found') throw new Fatal('not_found', `the node holds no contract ${m.sub ? subOf.get(m.sub) ?? '' : ''}: ${m.message}`);
              throw new Fatal(m.code, `the node refused a subscription: ${m.message}`);
            default:
              break; // subscribed, unsubscribed
          }
          kickCommit();
          // Rows past the high-water mark: the commit in flight takes them before the feed is
          // read on (the reader's socket stops reading behind its own bound).
          while (events.length >= ROWS_HIGH && committing && !failure) await committing;
        }
        if (this.o.contracts === 'all' && Date.now() - this.contractsCheckedAt >= CONTRACTS_POLL_MS) {
          this.contractsCheckedAt = Date.now();
          const list = await this.nodeJson<ContractsAnswer>('/contracts').catch(() => null);
          if (list && list.body.contract_ids.some((id) => !this.followed.has(id))) {
            // A new contract: subscribe again with it (from its first block).
            await settle();
            return;
          }
        }
      }
    } finally {
      leave.abort();
      // A read still in flight (the --all poll won its race) ends with the abort: its
      // outcome is of no use now, but it must not go unhandled.
      if (next) await (next as Promise<unknown>).catch(() => undefined);
      // Ends the reader (its socket closed).
      await feed.return(undefined);
    }
  }

  // ---------------------------------------------------------------- transactions

  /**
   * The cursor at the end of block `height`, its locator from the stored blocks (those
   * below `height` that the transaction about to commit does not change): from memory near
   * the top, else one query.
   */
  private async cursorAt(db: pg.ClientBase, height: number): Promise<string | null> {
    if (height < 0) return null;
    const hs = locatorHeights(height, 0);
    let by: Map<number, string> = this.hashes;
    if (hs[hs.length - 1]! < this.hashesFrom) {
      const rows = (await db.query(`SELECT height, encode(block_hash, 'hex') AS hash FROM ${this.s}.blocks WHERE height = ANY($1)`, [hs])).rows as { height: string; hash: string }[];
      by = new Map(rows.map((r) => [Number(r.height), r.hash]));
    }
    const tags: Buffer[] = [];
    for (const h of hs) {
      const hash = by.get(h);
      if (hash === undefined) break;
      tags.push(blockTag(hash));
    }
    return tags.length === 0 ? null : encodeCursor(endOf(height), tags);
  }

  /** Keeps the in-memory hashes to the HASHES_KEPT below the newest stored block. */
  private pruneHashes(): void {
    const from = this.blocksThrough - HASHES_KEPT;
    if (from <= this.hashesFrom) return;
    for (const h of this.hashes.keys()) if (h < from) this.hashes.delete(h);
    this.hashesFrom = from;
  }

  /**
   * One transaction: the rows of every whole block up to `target`, and the heights moved to
   * it. Its statements go as few texts, each one round trip: BEGIN with the blocks and calls
   * (and the events as INSERT when they are few, and the heights); when the events are many,
   * their COPY, then the heights. COMMIT is always a message of its own, so a sink killed
   * while a text runs never has that transaction committed.
   */
  private async commit(target: number, blocks: Block[], events: EventRow[], calls: CallRow[]): Promise<void> {
    const db = this.db!;
    const moving = [...this.followed.values()].filter((f) => f.through < target);
    const mine = new Set(moving.map((f) => f.id));
    const through = new Map(moving.map((f) => [f.id, f.through]));
    const newBlocks = blocks.filter((b) => b.height > this.blocksThrough);
    const es = events.filter((e) => mine.has(e.contract) && e.height > through.get(e.contract)!);
    const cs = calls.filter((c) => mine.has(c.contract) && c.height > through.get(c.contract)!);
    // The locator of `target` names the blocks below it: those stored, and those this transaction adds.
    for (const b of newBlocks) this.hashes.set(b.height, b.block_hash);
    let cursor: string | null = null;
    try {
      cursor = await this.cursorAt(db, target);
      const rows = ['BEGIN'];
      if (newBlocks.length > 0) rows.push(insertSql(`${this.s}.blocks`, ['height', 'block_hash', 'state_root'], newBlocks.map((b) => [b.height, Buffer.from(b.block_hash, 'hex'), Buffer.from(b.state_root, 'hex')])));
      // A call is decided once per branch; a later message for the same txid (a new branch) wins.
      const last = new Map(cs.map((c) => [(c.row[0] as Buffer).toString('hex'), c.row]));
      if (last.size > 0) rows.push(insertSql(`${this.s}.calls`, CALL_COLUMNS, [...last.values()], `ON CONFLICT (txid) DO UPDATE SET ${CALL_COLUMNS.slice(1).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`));
      const byCopy = es.length >= COPY_MIN_EVENTS;
      // Event fields are in COPY's text form, which a string literal of each column's type also reads.
      if (!byCopy && es.length > 0) rows.push(insertSql(`${this.s}.events`, EVENT_COLUMNS, es.map((e) => e.row)));
      const heights: string[] = [];
      if (target > this.blocksThrough) heights.push(`UPDATE ${this.s}.sink_meta SET value = ${sqlLiteral(String(target))} WHERE key = 'blocks_through'`);
      if (moving.length > 0) heights.push(`UPDATE ${this.s}.contracts SET through_height = ${sqlLiteral(target)}, cursor = ${sqlLiteral(cursor)} WHERE contract_id IN (${moving.map((f) => sqlLiteral(Buffer.from(f.id, 'hex'))).join(', ')})`);
      if (byCopy) {
        await db.query(rows.join(';\n'));
        await copyRows(db, `${this.s}.events`, EVENT_COLUMNS, es.map((e) => e.row));
        if (heights.length > 0) await db.query(heights.join(';\n'));
      } else await db.query([...rows, ...heights].join(';\n'));
      await db.query('COMMIT');
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      for (const b of newBlocks) this.hashes.delete(b.height);
      throw e;
    }
    this.blocksThrough = Math.max(this.blocksThrough, target);
    this.pruneHashes();
    for (const f of moving) {
      f.through = target;
      f.cursor = cursor;
    }
    this.committedRows += es.length + cs.length;
    this.o.onCommit?.(target, es.length + cs.length);
    if (Date.now() - this.lastLog >= LOG_EVERY_MS) {
      this.lastLog = Date.now();
      this.o.log(`svc sink: committed through height ${target} (${this.committedRows} rows since start)`);
    }
  }

  /**
   * Retracts everything from `fork` up, in one transaction with the lowered heights: its
   * statements in one text (one round trip), then COMMIT.
   */
  private async rollback(fork: number): Promise<void> {
    const db = this.db!;
    const ids = [...this.followed.keys()].map((id) => sqlLiteral(Buffer.from(id, 'hex'))).join(', ');
    const at = sqlLiteral(fork);
    const cursor = await this.cursorAt(db, fork - 1);
    try {
      await db.query(
        [
          'BEGIN',
          `DELETE FROM ${this.s}.blocks WHERE height >= ${at}`,
          ...(ids ? [
            `DELETE FROM ${this.s}.events WHERE block_height >= ${at} AND contract_id IN (${ids})`,
            `UPDATE ${this.s}.calls SET status = 'pending', block_height = NULL, tx_index = NULL, result = NULL, error_code = NULL, error_message = NULL, decided_height = NULL WHERE decided_height >= ${at} AND contract_id IN (${ids})`,
          ] : []),
          `UPDATE ${this.s}.sink_meta SET value = ${sqlLiteral(String(fork - 1))} WHERE key = 'blocks_through' AND value::bigint >= ${at}`,
          ...(ids ? [`UPDATE ${this.s}.contracts SET through_height = ${sqlLiteral(fork - 1)}, cursor = ${sqlLiteral(cursor)} WHERE through_height >= ${at} AND contract_id IN (${ids})`] : []),
        ].join(';\n'),
      );
      await db.query('COMMIT');
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
    this.blocksThrough = Math.min(this.blocksThrough, fork - 1);
    for (const h of this.hashes.keys()) if (h >= fork) this.hashes.delete(h);
    for (const f of this.followed.values()) {
      if (f.through >= fork) {
        f.through = fork - 1;
        f.cursor = cursor;
      }
    }
  }
}

/**
 * The height the next transaction commits through: blocks above `done` up to `ready` (every
 * subscription finished them), cut after the last whole block that keeps the transaction
 * within TXN_ROWS rows, and at least one block however large.
 */
export function commitTarget(done: number, ready: number, buffers: readonly (readonly { height: number }[])[]): number {
  const perHeight = new Map<number, number>();
  for (const rows of buffers) {
    for (const r of rows) if (r.height > done && r.height <= ready) perHeight.set(r.height, (perHeight.get(r.height) ?? 0) + 1);
  }
  let rows = 0;
  let through = done;
  for (const h of [...perHeight.keys()].sort((a, b) => a - b)) {
    rows += perHeight.get(h)!;
    if (rows > TXN_ROWS && through > done) return through;
    through = h;
  }
  return ready;
}

const EVENT_COLUMNS = ['contract_id', 'block_height', 'tx_index', 'log_index', 'name', 'params', 'param_values', 'txid', 'cursor'];
const CALL_COLUMNS = ['txid', 'contract_id', 'envelope_hash', 'function', 'caller', 'call_id', 'status', 'block_height', 'tx_index', 'result', 'error_code', 'error_message', 'decided_height'];

function callRow(m: CallMessage, decidedHeight: number): unknown[] {
  return [
    Buffer.from(m.txid, 'hex'),
    Buffer.from(m.contract_id, 'hex'),
    Buffer.from(m.envelope_hash, 'hex'),
    m.function,
    Buffer.from(m.caller, 'hex'),
    String(m.call_id),
    m.status,
    m.block_height,
    m.tx_index,
    m.result === null || m.result === undefined ? null : JSON.stringify(m.result),
    m.error?.code ?? null,
    m.error?.message ?? null,
    decidedHeight,
  ];
}

function describe(e: unknown): string {
  const err = e as { code?: string; message?: string; errors?: { message: string }[] };
  if (err?.errors?.length) return err.errors.map((x) => x.message).join('; ');
  return (err?.message || err?.code || String(e)).replace(/\s+/g, ' ').trim();
}

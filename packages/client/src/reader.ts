/**
 * Reading at volume: what an indexer reads from a node, verified unless it says not to.
 *
 * - `readField`: a field or map entry with its proof, checked against the contract's ABI
 *   (asked once per contract) before it is returned (verifyFieldAnswer).
 * - `callStatus`: a call's record with its call proof, checked (verifyCallProof): every
 *   header's work against the network's proof-of-work limit, even without a trusted hash.
 * - `eventPages` / `events`: GET /events paged by cursor as async iterators, a page whose
 *   cursor a reorg retracted handed to `onRollback` first; `callPages` over the operator's
 *   confirmed-call log.
 * - `follow`: the live feed as an async iterator of data messages (event, call, block)
 *   that starts from a stored position (a CursorStore), hands every rollback to
 *   `onRollback` (awaited) before going on, stores each position once the consumer has
 *   taken the message, and reconnects with backoff (src/client/stream.ts), resuming from
 *   the last position: applied in order, nothing is missed and nothing applied twice,
 *   across reconnects and restarts of the consumer alike.
 */
import { ClientError } from './errors.js';
import { NodeClient, verifyCallProof, type CallProofOptions, type CallStatus, type EventsAnswer, type EventsQuery, type FieldAnswer, type ProofNetwork, type ProvenCallStatus, type ProvenFieldAnswer, type VerifiedCall } from './node.js';
import { findField, encodeFieldArg } from './abi.js';
import { stream, type StreamOptions, type StreamSubscription } from './stream.js';
import type { HttpOptions } from './http.js';
import type { CallsPage } from './answers.js';
import type { BlockMessage, CallMessage, EventMessage, RollbackMessage } from '@svc-node/protocol/feed';
import type { ValueType } from '@svc-node/protocol/value';

export interface ReaderOptions {
  nodeUrl: string;
  /** The network whose proof-of-work limit every header of a call proof must meet. */
  network: ProofNetwork;
  /** Verify proofs (default true); false reads the plain answers. */
  verify?: boolean;
  trustedBlockHash?: CallProofOptions['trustedBlockHash'];
  trustedStateRoot?: CallProofOptions['trustedStateRoot'];
  http?: HttpOptions;
}

/** A field read: the value as the node answered it, `proven` when its proof was checked. */
export interface FieldRead extends FieldAnswer {
  proven: boolean;
}

/** Where each subscription of `follow` resumes: kept by the consumer (a file, a table beside its data, localStorage). */
export interface CursorStore {
  load(subscriptionId: string): string | null | Promise<string | null>;
  save(subscriptionId: string, position: string): void | Promise<void>;
}

/** A CursorStore in memory (one process's life). */
export function memoryCursorStore(initial: Record<string, string> = {}): CursorStore & { positions: Map<string, string> } {
  const positions = new Map(Object.entries(initial));
  return { positions, load: (id) => positions.get(id) ?? null, save: (id, p) => void positions.set(id, p) };
}

export interface FollowOptions {
  subscriptions: StreamSubscription[];
  /** Where each subscription resumes; its stored position wins over the subscription's own cursor / fromHeight. */
  store?: CursorStore;
  /** Told (and awaited) for every rollback before any message after it: drop what it retracts. */
  onRollback?: (m: RollbackMessage) => void | Promise<void>;
  signal?: AbortSignal;
  reconnectDelayMs?: number;
  maxAttempts?: number;
  onReconnect?: StreamOptions['onReconnect'];
}

/** The data messages `follow` yields. */
export type FollowMessage = EventMessage | CallMessage | BlockMessage;

export class SvcReader {
  readonly node: NodeClient;
  private readonly abis = new Map<string, Promise<readonly unknown[]>>();

  constructor(readonly o: ReaderOptions) {
    this.node = new NodeClient(o.nodeUrl, o.http);
  }

  private verifying(v: boolean | undefined): boolean {
    return v ?? this.o.verify ?? true;
  }

  /** The contract's ABI as the node serves it, asked once. */
  abi(contractId: string): Promise<readonly unknown[]> {
    let p = this.abis.get(contractId);
    if (!p) {
      p = this.node.abi(contractId).then((a) => a ?? Promise.reject(new ClientError('bad_argument', `the node does not serve the ABI of ${contractId}`)));
      this.abis.set(contractId, p);
      p.catch(() => this.abis.delete(contractId));
    }
    return p;
  }

  /** A field (`key` omitted) or a map entry (`key` as text, `u64:5`, or bare): proof checked against the ABI unless `verify: false`. */
  async readField(contractId: string, field: string, key?: string, o: { verify?: boolean } = {}): Promise<FieldRead> {
    const abi = await this.abi(contractId);
    const f = findField(abi, field);
    if ((f.key === null) !== (key === undefined)) throw new ClientError('bad_argument', f.key === null ? `field ${field} is not a map: give no key` : `field ${field} is a map: give its key (${f.key})`);
    const arg = key === undefined ? undefined : encodeFieldArg(f.key as ValueType, key);
    if (!this.verifying(o.verify)) return { ...(await this.node.readField(contractId, field, arg)), proven: false };
    const a: ProvenFieldAnswer = await this.node.readFieldProven(contractId, field, arg, { abi });
    return { ...a, proven: true };
  }

  /** A call's record; with its proof checked (the answer's `proven`) unless `verify: false`. */
  async callStatus(txid: string, o: { verify?: boolean } = {}): Promise<CallStatus & { proven?: VerifiedCall; proof?: ProvenCallStatus['proof'] }> {
    if (!this.verifying(o.verify)) return this.node.callStatus(txid);
    return this.node.callStatusProven(txid, { network: this.o.network, trustedBlockHash: this.o.trustedBlockHash, trustedStateRoot: this.o.trustedStateRoot });
  }

  /** Verifies a record carrying its proof (e.g. kept from earlier) with this reader's network and trust. */
  verifyCall(status: ProvenCallStatus): Promise<VerifiedCall> {
    return verifyCallProof(status, status.proof, { network: this.o.network, trustedBlockHash: this.o.trustedBlockHash, trustedStateRoot: this.o.trustedStateRoot });
  }

  /**
   * GET /events pages from `q.cursor` (else the start), each after the last, until a page
   * comes back empty (caught up). A page answering that its cursor was retracted is handed
   * to `onRollback` (awaited) before it is yielded. Resume later from the last page's `next_cursor`.
   */
  async *eventPages(contractId: string, q: Omit<EventsQuery, 'offset'> = {}, o: { onRollback?: (r: NonNullable<EventsAnswer['rollback']>) => void | Promise<void> } = {}): AsyncGenerator<EventsAnswer, void, undefined> {
    let cursor = q.cursor;
    for (;;) {
      const page = await this.node.events(contractId, { ...q, ...(cursor === undefined ? {} : { cursor }) });
      if (page.rollback) await o.onRollback?.(page.rollback);
      if (page.events.length === 0) return;
      yield page;
      if (page.next_cursor === null || page.next_cursor === cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** The events of `eventPages` one by one. */
  async *events(contractId: string, q: Omit<EventsQuery, 'offset'> = {}, o: { onRollback?: (r: NonNullable<EventsAnswer['rollback']>) => void | Promise<void> } = {}): AsyncGenerator<EventsAnswer['events'][number], void, undefined> {
    for await (const page of this.eventPages(contractId, q, o)) yield* page.events;
  }

  /** The operator's confirmed-call log (GET /calls/{id}, the node's api_token), page by page from `offset` to its end. */
  async *callPages(contractId: string, token: string, o: { limit?: number; offset?: number } = {}): AsyncGenerator<CallsPage, void, undefined> {
    let offset = o.offset ?? 0;
    for (;;) {
      const page = await this.node.calls(contractId, { limit: o.limit, offset }, token);
      if (page.calls.length === 0) return;
      yield page;
      offset += page.calls.length;
      if (offset >= page.total) return;
    }
  }

  /** The live feed from stored positions: see the file's header. */
  follow(o: FollowOptions): AsyncGenerator<FollowMessage, void, undefined> {
    return follow(this.o.nodeUrl, o);
  }
}

/** How a subscription's position is stored: a cursor (events, a contract's calls) or the next block height (blocks). */
function positionOf(sub: StreamSubscription, m: RollbackMessage | FollowMessage | { type: 'synced'; height: number | null; cursor?: string }): string | null {
  if (sub.kind === 'blocks') {
    if (m.type === 'block') return String(m.height + 1);
    if (m.type === 'rollback') return String(m.fork_height);
    if (m.type === 'synced' && typeof m.height === 'number') return String(m.height + 1);
    return null;
  }
  if (sub.kind === 'calls' && sub.txids) return null; // statuses are states, asked afresh
  if ('cursor' in m && typeof m.cursor === 'string') return m.cursor;
  if (m.type === 'rollback') return `@${m.fork_height}`;
  return null;
}

/** The subscription as it resumes from a stored position. */
function resumed(sub: StreamSubscription, position: string | null): StreamSubscription {
  if (position === null || (sub.kind === 'calls' && sub.txids)) return sub;
  if (sub.kind === 'blocks') return { ...sub, fromHeight: Number(position) };
  // A rollback below everything the node holds stores its fork height: start over there.
  if (position.startsWith('@')) {
    const { cursor: _c, ...rest } = sub;
    return { ...rest, fromHeight: Number(position.slice(1)) } as StreamSubscription;
  }
  return { ...sub, cursor: position };
}

/** The feed reader of SvcReader.follow, for a node URL. */
export async function* follow(nodeUrl: string, o: FollowOptions): AsyncGenerator<FollowMessage, void, undefined> {
  const subs = new Map<string, StreamSubscription>();
  for (const s of o.subscriptions) subs.set(s.id, resumed(s, o.store ? await o.store.load(s.id) : null));
  const save = async (id: string | undefined, m: Parameters<typeof positionOf>[1]): Promise<void> => {
    const sub = id === undefined ? undefined : subs.get(id);
    if (!sub || !o.store) return;
    const p = positionOf(sub, m);
    if (p !== null) await o.store.save(sub.id, p);
  };
  const feed = stream(nodeUrl, { subscriptions: [...subs.values()], signal: o.signal, reconnectDelayMs: o.reconnectDelayMs, maxAttempts: o.maxAttempts, onReconnect: o.onReconnect });
  for await (const m of feed) {
    switch (m.type) {
      case 'event':
      case 'call':
      case 'block':
        yield m;
        // Stored only once the consumer came back for the next one: it has taken this one.
        await save(m.sub, m);
        break;
      case 'rollback':
        await o.onRollback?.(m);
        await save(m.sub, m);
        break;
      case 'synced':
        await save(m.sub, m);
        break;
      case 'error':
        throw new ClientError(m.code, `live feed: ${m.message}${m.sub === undefined ? '' : ` (subscription ${m.sub})`}`);
      default:
        break;
    }
  }
}

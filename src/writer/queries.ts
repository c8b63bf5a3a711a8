/**
 * Reads the writer serves to the REST front (issue 7): field reads with proofs, event
 * pages, the confirmed-call log, simulation snapshots, the state version the REST read
 * cache is keyed on, and the writer's metrics.
 *
 * Atomicity: reads that combine hot state with the processed height or state root run
 * through `writer.serial`, i.e. between two writer jobs, never in the middle of a block
 * (applyBlock mutates memory across awaits). So value, proof, height and state_root of
 * one answer always belong to the same processed block.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { toHex } from '@svc-node/protocol/hash';
import { valueFromJson, valueToJson, type Value, type ValueType } from '@svc-node/protocol/value';
import { decodeStorageValue, defaultValue, fieldEntry, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import type { TrieProof } from '@svc-node/protocol/state/trie';
import type { AbiEntry } from '@svc-node/protocol/vm/types';
import type { Writer } from './writer.js';
import { statusBody } from '../records.js';
import { callDecisions, storage } from './store/index.js';
import { cursorFork, locatorsAt } from './stream-queries.js';
import { endOf } from '@svc-node/protocol/cursor';
export { statusBody };
import {
  BLOCK_APPLY_BUCKETS,
  type CallsPage,
  type EventsPage,
  type EventsParams,
  type FieldReadBody,
  type FieldReadParams,
  type ProofJson,
  type SimContract,
  type SimSnapshot,
  type StateVersion,
  type WriterMetrics,
} from '../messages.js';
import { HEX32, isName } from '@svc-node/protocol/identifiers';


export function proofToJson(p: TrieProof): ProofJson {
  return { siblings: p.siblings.map(toHex), leaf: p.leaf === null ? null : { path: toHex(p.leaf.path), value: toHex(p.leaf.value) } };
}

/**
 * A field-read path argument decoded by the field's key type (PROTOCOL section 6):
 * integers in decimal, bytes/key in lowercase hex, string as is (already percent-decoded),
 * bool as true/false. Throws bad_request naming `arg`.
 */
export function decodeFieldArg(type: ValueType, arg: string): Value {
  if (type === 'bool') {
    if (arg === 'true') return { type, value: true };
    if (arg === 'false') return { type, value: false };
    throw new NodeError('bad_request', 'arg: a bool key is true or false', { field: 'arg' });
  }
  return valueFromJson(type, arg, 'arg');
}


export class WriterQueries {
  private blocksApplied = 0;
  private applySum = 0;
  private readonly applyBuckets = BLOCK_APPLY_BUCKETS.map(() => 0);
  private readonly reorgs: Record<string, number> = {};
  private statusCache: { at: string; counts: Record<string, number> } | null = null;

  constructor(
    private readonly writer: Writer,
    /** Called synchronously each time the processed state (height, root) is set. */
    private readonly onState: (v: StateVersion) => void = () => undefined,
  ) {
    this.writer.ledger.observe({
      blockApplied: (_height, seconds, replay) => this.blockApplied(seconds, replay),
      rewound: (depth, dropJournal) => {
        if (dropJournal) this.reorgs[String(depth)] = (this.reorgs[String(depth)] ?? 0) + 1;
      },
      stateChanged: () => this.onState(this.stateVersion()),
    });
  }

  /**
   * A block the chain brought counts and is timed; a journal entry applied again (a late
   * payload's replay, a re-derivation) is not a block applied.
   */
  private blockApplied(seconds: number, replay: boolean): void {
    if (replay) return;
    this.blocksApplied++;
    this.applySum += seconds;
    BLOCK_APPLY_BUCKETS.forEach((b, i) => {
      if (seconds <= b) this.applyBuckets[i]!++;
    });
  }

  stateVersion(): StateVersion {
    const l = this.writer.ledger;
    return { height: l.tip?.height ?? null, state_root: l.stateRoot, block_hash: l.tip?.hash ?? null };
  }

  contractIds(): string[] {
    return this.writer.ledger.contractIds();
  }

  private known(id: string): void {
    if (!this.writer.ledger.contract(id)) throw new NodeError('not_found', `no contract ${id}`);
  }

  readField(p: FieldReadParams): Promise<FieldReadBody> {
    return this.writer.serial(() => {
      const l = this.writer.ledger;
      const rec = l.contract(p.contract_id);
      if (!rec) throw new NodeError('not_found', `no contract ${p.contract_id}`);
      if (rec.status !== 'active') throw new NodeError('not_found', `contract ${p.contract_id} is registered but its deploy is not confirmed yet`);
      if (!isName(p.field)) throw new NodeError('bad_request', 'field: a field name is an identifier', { field: 'field' });
      const abi = rec.artifact.abi as AbiEntry[];
      const f = fieldEntry(abi, p.field);
      if (!f) throw new NodeError('not_found', `contract ${p.contract_id} has no field ${p.field}`);
      let keyValue: Value | null = null;
      if (f.key === null) {
        if (p.arg !== null) throw new NodeError('bad_request', `arg: field ${p.field} is a scalar; read it at /v2/{contract_id}/${p.field}`, { field: 'arg' });
      } else {
        if (p.arg === null) throw new NodeError('bad_request', `arg: field ${p.field} is a map keyed by ${f.key}; the path needs /{arg}`, { field: 'arg' });
        keyValue = decodeFieldArg(f.key, p.arg);
      }
      let storageKey: Uint8Array;
      try {
        storageKey = fieldKey(abi, p.field, keyValue);
      } catch (e) {
        throw new NodeError('bad_request', `arg: ${(e as Error).message}`, { field: 'arg' });
      }
      const raw = l.storageGet(p.contract_id, storageKey);
      const value = raw === undefined ? defaultValue(f.value) : decodeStorageValue(f.value, raw);
      const body: FieldReadBody = {
        contract_id: p.contract_id,
        field: p.field,
        key: keyValue === null ? null : valueToJson(keyValue),
        value: valueToJson(value),
        exists: raw !== undefined,
        height: l.tip?.height ?? null,
        state_root: l.stateRoot ?? '',
      };
      if (p.proof) {
        const proof = l.prove(p.contract_id, storageKey);
        body.block_hash = l.tip?.hash ?? null;
        body.proof = { storage_key: toHex(storageKey), contracts_root: l.memory.root(), decisions_root: l.decisionsRoot, contract: proofToJson(proof.contract), storage: proofToJson(proof.storage) };
      }
      return body;
    });
  }

  events(p: EventsParams): Promise<EventsPage> {
    return this.writer.serial(async () => {
      this.known(p.contract_id);
      let after = p.after;
      // A cursor whose block left the chain: the page starts after the fork instead (stream-queries.ts).
      const fork = after ? await cursorFork(this.writer.ledger, after, p.tags) : null;
      const rollback = fork === null ? undefined : { fork_height: fork, after: fork > 0 ? endOf(fork - 1) : null, locator: '' };
      if (rollback) after = rollback.after;
      const cursorPos = after;
      if (after && after[0] < p.from_block) after = null; // the cursor is before the range
      const page = (after && after[0] > p.to_block) || p.from_block > p.to_block ? [] : await this.writer.ledger.events(p.contract_id, p.from_block, p.to_block, after, p.offset + p.limit + 1, p.event_name);
      const rows = page.slice(p.offset, p.offset + p.limit);
      const last = rows.length > 0 ? rows[rows.length - 1]!.block_height : cursorPos?.[0];
      const locs = await locatorsAt(this.writer.ledger, [last, rollback?.after?.[0]].filter((h): h is number => h !== undefined));
      if (rollback?.after) rollback.locator = locs[rollback.after[0]] ?? '';
      return {
        contract_id: p.contract_id,
        events: rows.map((e) => ({ name: e.name, params: e.params, txid: e.txid, block_height: e.block_height, tx_index: e.tx_index, log_index: e.log_index })),
        more: page.length > p.offset + p.limit,
        ...(rollback ? { rollback } : {}),
        ...(last === undefined ? {} : { locator: locs[last] ?? '' }),
      };
    });
  }

  calls(p: { contract_id: string; limit: number; offset: number }): Promise<CallsPage> {
    return this.writer.serial(async () => {
      this.known(p.contract_id);
      const l = this.writer.ledger;
      const total = l.callCount(p.contract_id);
      const recs = p.offset >= total ? [] : await l.callsOf(p.contract_id, p.offset, p.limit);
      const tip = l.tip?.height ?? null;
      return { contract_id: p.contract_id, total, limit: p.limit, offset: p.offset, calls: recs.map((r) => statusBody(r, tip)) };
    });
  }

  simSnapshot(p: { ids: string[] }): Promise<SimSnapshot> {
    return this.writer.serial(async () => {
      const l = this.writer.ledger;
      const contracts: SimContract[] = [];
      const missing: string[] = [];
      for (const id of new Set(p.ids)) {
        const program = HEX32.test(id) ? l.program(id) : null;
        if (!program) {
          missing.push(id);
          continue;
        }
        const entries: [Uint8Array, Uint8Array][] = [];
        let size = 0;
        for (const r of await l.db.rangeOf(storage.ofContract(Buffer.from(id, 'hex')))) {
          const k = new Uint8Array(storage.fieldOf(r.key));
          entries.push([k, new Uint8Array(r.value)]);
          size += k.length + r.value.length;
        }
        contracts.push({ id, program, storage: entries, size });
      }
      const v = this.stateVersion();
      return { height: v.height, state_root: v.state_root, contracts, missing };
    });
  }

  /** Calls by status: pending from memory, the rest by one scan of the decisions, cached until the state or the pending set changes. */
  private async callsByStatus(): Promise<Record<string, number>> {
    const l = this.writer.ledger;
    const at = `${l.tip?.height}:${l.stateRoot}:${l.pendingCount}`;
    if (this.statusCache?.at === at) return this.statusCache.counts;
    const counts: Record<string, number> = { pending: l.pendingCount, executed: 0, failed: 0, invalid: 0, dropped: 0 };
    const all = callDecisions.all();
    let from = all.gte;
    for (;;) {
      const rows = await l.db.range(from, all.lt, { limit: 1000 });
      for (const r of rows) {
        const status = callDecisions.statusOf(r.value);
        counts[status] = (counts[status] ?? 0) + 1;
      }
      if (rows.length < 1000) break;
      from = Buffer.concat([rows[rows.length - 1]!.key, Buffer.of(0)]);
    }
    this.statusCache = { at, counts };
    return counts;
  }

  async readMetrics(): Promise<WriterMetrics> {
    const l = this.writer.ledger;
    return {
      processed_height: l.tip?.height ?? null,
      undo_depth: l.tip ? l.tip.height - l.undoFloor : 0,
      blocks_applied: this.blocksApplied,
      block_apply_seconds: { sum: this.applySum, count: this.blocksApplied, buckets: [...this.applyBuckets] },
      reorgs_by_depth: { ...this.reorgs },
      calls_by_status: await this.callsByStatus(),
      contracts: l.contractCount,
      pending_calls: l.pendingCount,
      halted: l.halted,
    };
  }
}

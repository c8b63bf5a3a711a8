/**
 * Read-only questions to the ledger that reach RocksDB: call records and payloads, state
 * roots by height, call logs and event pages. They change nothing, in memory or on disk.
 */
import type { Db } from '../db.js';
import type { CallRecord, EventRecord } from '../../records.js';
import { blockDecisions, callBodies, callDecisions, callIds, calls, contractCalls, evidence as evidenceStore, events, payloads, stateRoots, type StateRootAt } from '../store/index.js';
import { proveDecision } from '@svc-node/protocol/state/decisions';
import { toHex } from '@svc-node/protocol/hash';
import type { DecisionProofJson } from '@svc-node/protocol/evidence';
import { bytesOf } from './bytes.js';
import type { LedgerMemory } from './memory.js';
import type { HeldPayload } from '@svc-node/protocol/rules';

/** Block records (event runs or call-log entries of one contract) read per page of a scan at most: bounds memory. */
const EVENT_PAGE = 64;
const CALL_LOG_PAGE = 64;

/**
 * The lowest block a replay is owed from: a stored payload (pending call or deploy) whose
 * stamp is still an orphan was accepted late and its replay never finished (the node
 * stopped between the durable accept and the end of the replay; a replay rewinds the
 * orphan away). Null when nothing is owed.
 */
export function owedReplayHeight(m: LedgerMemory): number | null {
  let from: number | null = null;
  let deployTxids: Set<string> | null = null;
  for (const o of m.orphans.values()) {
    let owed: boolean;
    if (o.kind === 'call') owed = m.pending.has(o.txid);
    else {
      deployTxids ??= new Set([...m.pendingContracts.values()].map((r) => r.txid));
      owed = deployTxids.has(o.txid);
    }
    if (owed && (from === null || o.block_height < from)) from = o.block_height;
  }
  return from;
}

export async function readCall(db: Db, m: LedgerMemory, txid: string): Promise<CallRecord | null> {
  const p = m.pending.get(txid);
  if (p) return p.rec;
  const t = bytesOf(txid);
  const [fixed, decision] = await db.getMany([calls.key(t), callDecisions.key(t)]);
  return fixed ? calls.decode(fixed, decision) : null;
}

/** Calls by txid (null where not held), their stored records read in one getMany. */
export async function readCalls(db: Db, m: LedgerMemory, txids: readonly string[]): Promise<(CallRecord | null)[]> {
  const stored = txids.filter((t) => !m.pending.has(t));
  const values = stored.length > 0 ? await db.getMany(stored.flatMap((t) => [calls.key(bytesOf(t)), callDecisions.key(bytesOf(t))])) : [];
  const byTxid = new Map<string, CallRecord | null>();
  stored.forEach((t, i) => {
    const fixed = values[2 * i];
    byTxid.set(t, fixed ? calls.decode(fixed, values[2 * i + 1]) : null);
  });
  return txids.map((t) => m.pending.get(t)?.rec ?? byTxid.get(t) ?? null);
}

/** A call's payload (borsh envelope bytes) as received, or null. */
export async function readCallPayload(db: Db, txid: string): Promise<Uint8Array | null> {
  const v = await db.get(callBodies.key(bytesOf(txid)));
  return v ? callBodies.decode(v) : null;
}

/** What the node holds for a txid: a deploy (contract id) or a call. */
export async function readPayloadAt(db: Db, txid: string): Promise<HeldPayload | null> {
  const v = await db.get(payloads.keyOf(txid));
  return v ? payloads.decode(v) : null;
}

/**
 * What serving a payload to a peer reads of its txid: the holding, a call's body and
 * its position (the block and index that confirmed it; nulls while pending or dropped),
 * the stored evidence (raw). Not the call's record: nothing of it is sent.
 */
export interface PeerPayloadRead {
  at: HeldPayload | null;
  body: Uint8Array | null;
  position: Pick<CallRecord, 'block_height' | 'tx_index'>;
  evidence: Buffer | undefined;
}

/** Keys read per txid by `readForPeers`, in its order. */
const PEER_READ_KEYS = 4;

const UNDECIDED: Pick<CallRecord, 'block_height' | 'tx_index'> = { block_height: null, tx_index: null };

/**
 * `PeerPayloadRead`s of many txids in one RocksDB multi-get (a GetPayloads answer of 32
 * payloads read them one get at a time: 160 reads of the thread pool per answer).
 */
export async function readForPeers(db: Db, m: LedgerMemory, txids: readonly string[]): Promise<PeerPayloadRead[]> {
  const got = await db.getMany(
    txids.flatMap((t) => {
      const b = bytesOf(t);
      return [payloads.key(b), callBodies.key(b), callDecisions.key(b), evidenceStore.key(b)];
    }),
  );
  return txids.map((t, i) => {
    const [at, body, decision, evidence] = got.slice(PEER_READ_KEYS * i, PEER_READ_KEYS * (i + 1));
    const position = m.pending.has(t) || !decision ? UNDECIDED : callDecisions.positionOf(decision);
    return { at: at ? payloads.decode(at) : null, body: body ? callBodies.decode(body) : null, position, evidence };
  });
}

export async function readStateRootAt(db: Db, height: number): Promise<StateRootAt | null> {
  const v = await db.get(stateRoots.key(height));
  return v ? stateRoots.decode(v) : null;
}

/** The branch of `txid`'s decision in block `height` (Ledger.decisionProof). */
export async function readDecisionProof(db: Db, height: number, txid: string): Promise<DecisionProofJson | null> {
  const [rootRaw, leavesRaw] = await db.getMany([stateRoots.key(height), blockDecisions.key(height)]);
  if (!rootRaw) return null;
  const at = stateRoots.decode(rootRaw);
  if (at.decisions_root === undefined || at.contracts_root === undefined) return null;
  const p = proveDecision(leavesRaw ? blockDecisions.decode(leavesRaw) : [], bytesOf(txid));
  return {
    height,
    block_hash: at.block_hash,
    state_root: at.state_root,
    contracts_root: at.contracts_root,
    decisions_root: at.decisions_root,
    siblings: p.siblings.map(toHex),
    leaf: p.leaf === null ? null : { path: toHex(p.leaf.path), value: toHex(p.leaf.value) },
  };
}

export async function readCallIdUsed(db: Db, caller: Uint8Array, callId: bigint): Promise<boolean> {
  return (await db.get(callIds.key(caller, callId))) !== undefined;
}

/** The contract's call log from `offset`: txids in (height, tx_index) order. */
export async function readCallTxids(db: Db, contractId: string, offset: number, limit: number): Promise<string[]> {
  const log = contractCalls.ofContract(bytesOf(contractId));
  const out: string[] = [];
  let skipped = 0;
  // One record per block; read in bounded pages so a deep offset costs time, not memory.
  for await (const r of scan(db, log.gte, log.lt, CALL_LOG_PAGE)) {
    for (const txid of contractCalls.decode(r.value)) {
      if (skipped < offset) skipped++;
      else out.push(txid);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

export async function readCallsOf(db: Db, m: LedgerMemory, contractId: string, offset: number, limit: number): Promise<CallRecord[]> {
  const out: CallRecord[] = [];
  for (const t of await readCallTxids(db, contractId, offset, limit)) {
    const c = await readCall(db, m, t);
    if (c) out.push(c);
  }
  return out;
}

export async function readEvents(db: Db, m: LedgerMemory, contractId: string, fromHeight: number, toHeight: number, after: [number, number, number] | null, limit: number, name: string | null): Promise<EventRecord[]> {
  const id = bytesOf(contractId);
  const hi = toHeight >= 0xffffffff ? events.end(id) : events.fromHeight(id, toHeight + 1);
  let lo = events.fromHeight(id, after ? after[0] : fromHeight);
  if (after) {
    // The run holding the cursor starts at or before it: the last run key <= the cursor's.
    const atCursor = events.justAfter(id, after[0], after[1], after[2]);
    const [run] = await db.range(lo, atCursor, { limit: 1, reverse: true });
    if (run) lo = run.key;
  }
  // Enough runs for the page in one read when no name filter skips events.
  const page = Math.min(EVENT_PAGE, Math.ceil(limit / events.EVENT_CHUNK) + 1);
  const eventParams = m.contracts.get(contractId)?.eventParams;
  const names = (event: string): readonly string[] | undefined => eventParams?.get(event);
  const out: EventRecord[] = [];
  for await (const r of scan(db, lo, hi, page)) {
    for (const e of events.decode(contractId, events.heightOf(r.key), r.value, names)) {
      if (after && (e.block_height === after[0] && (e.tx_index < after[1] || (e.tx_index === after[1] && e.log_index <= after[2])))) continue;
      if (name === null || e.name === name) out.push(e);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Entries in [gte, lt) in key order, read `page` at a time. */
async function* scan(db: Db, gte: Buffer, lt: Buffer, page: number): AsyncGenerator<{ key: Buffer; value: Buffer }> {
  let from = gte;
  for (;;) {
    const rows = await db.range(from, lt, { limit: page });
    yield* rows;
    if (rows.length < page) return;
    from = Buffer.concat([rows[rows.length - 1]!.key, Buffer.of(0)]);
  }
}

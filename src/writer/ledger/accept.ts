/**
 * Acceptance: verified payloads (deploys and calls) stored durably, calls in one synced
 * batch per group. A payload whose stamp a processed block already holds is answered with
 * the block to replay from; a call whose outpoint a processed block already spent is
 * stored decided `dropped`, recorded in that block's journal entry and undo log
 * (PROTOCOL section 5).
 */
import { createHash } from 'node:crypto';
import type { BatchOp } from '../db.js';
import { NodeError } from '../../errors.js';
import { decodeEnvelope } from '../../protocol/envelope.js';
import { dropsCall, repeatOrConflict, type HeldPayload } from '../../protocol/rules.js';
import type { OutpointCheck } from '../../messages.js';
import type { CallRecord, ContractRecord } from '../records.js';
import { callBodies, callDecisions, callIds, calls, contracts, journal, payloads, pendingCalls, undo } from '../store/index.js';
import { DROPPED, bytesOf } from './bytes.js';
import type { Ledger } from './index.js';

export type AcceptedCall = { ok: true; created: boolean; record: CallRecord; replayFrom: number | null } | { ok: false; error: NodeError };

/** Stores a verified deploy registration durably; `created` is false when it was already known. */
export async function acceptDeploy(l: Ledger, rec: ContractRecord): Promise<{ created: boolean; record: ContractRecord; replayFrom: number | null }> {
  await l.flushBlocks();
  l.refuseWhileHalted();
  if (repeatOrConflict(await l.payloadAt(rec.txid), rec.txid, 'deploy', rec.body_hash) === 'repeat') {
    return { created: false, record: l.contract(rec.contract_id)!, replayFrom: null };
  }
  const ops: BatchOp[] = [
    { type: 'put', key: contracts.keyOf(rec.contract_id), value: contracts.encode(rec) },
    { type: 'put', key: payloads.keyOf(rec.txid), value: payloads.encode({ kind: 'deploy', contract_id: rec.contract_id, body_hash: rec.body_hash }) },
  ];
  await l.writeOrHalt(ops);
  l.memory.pendingContracts.set(rec.contract_id, rec);
  const orphan = l.memory.orphans.get(rec.txid);
  return { created: true, record: rec, replayFrom: orphan ? orphan.block_height : null };
}

/**
 * Where a call accepted now was already dropped (PROTOCOL section 5): the height of the
 * processed block in which a transaction other than its anchor spent its outpoint, or
 * null when no processed block did (a block applied later drops it while it is
 * pending). `check` is what intake learned from the chain endpoint; the blocks applied
 * since intake's look-up are checked from memory (recent spends). Without a check (the
 * node's own tests and tools) nothing is looked for. Throws a retryable refusal when
 * the window since the look-up is not covered.
 */
function droppedAt(l: Ledger, rec: CallRecord, check: OutpointCheck | undefined): number | null {
  const tip = l.tip;
  if (!check || !tip) return null;
  const s = check.spentBy;
  if (s && s.height <= tip.height) {
    if (s.height <= l.anchor!.height) {
      throw new NodeError('anchor_mismatch', `anchor mismatch: the outpoint ${rec.outpoint} was spent by ${s.txid} at height ${s.height}, before this node's journal begins; the anchoring transaction can never confirm`);
    }
    // On another branch than the endpoint's (a reorg in flight): the block that confirms
    // the spend on this node's chain drops the call, which is pending by then.
    return l.memory.recentHashes.get(s.height) === s.blockHash ? s.height : null;
  }
  if (s) return null;
  // Blocks applied since the look-up, on whatever branch: above the lower of the height
  // looked up at and every fork since.
  let from = l.anchor!.height + 1;
  const at = check.lookedUpAt;
  if (at) {
    from = at.height + 1;
    if (at.epoch < l.chainEpoch) {
      const since = l.reorgForks.filter((r) => r.epoch > at.epoch);
      if (since.length < l.chainEpoch - at.epoch) from = l.anchor!.height + 1; // forgotten: everything
      for (const r of since) from = Math.min(from, r.fork + 1);
    }
  }
  for (let h = from; h <= tip.height; h++) {
    const spends = l.memory.spendsAt(h);
    if (!spends) throw new NodeError('chain_unavailable', `the node applied blocks ${from}..${tip.height} while this call was being checked; send it again`, { reason: 'chain_moved' });
    for (const [outpoint, spender] of spends) if (outpoint === rec.outpoint && dropsCall(spender, rec.txid)) return h;
  }
  return null;
}

/**
 * Stores verified calls durably in one synced batch (group commit): one outcome per
 * record, in the given order, each exactly what `acceptCall` alone would give in that
 * order (a txid repeated in the batch is a repeat or a conflict of the first). Nothing
 * is stored, and every record fails, when the batch cannot be written. A call whose
 * outpoint a processed block already spent (`droppedAt`) is stored decided, `dropped`,
 * and recorded in that block's journal entry and undo log: the same record, with the
 * same fate in a reorg, as on a node that held it before the block.
 */
export async function acceptCalls(l: Ledger, recs: readonly CallRecord[], outpoints: readonly (OutpointCheck | undefined)[]): Promise<AcceptedCall[]> {
  await l.flushBlocks();
  l.refuseWhileHalted();
  // With each payload key, its (caller, call_id) key: whether the pair is already used is
  // then known before the confirming block, which need not read it (claimUsed).
  // Intake verified every payload, so each decodes. From a Uint8Array of its own: the
  // decoder then copies each field, so a pending call holds no slice of a pool slab.
  const envelopes = recs.map((r) => decodeEnvelope(new Uint8Array(Buffer.from(r.payload ?? '', 'base64'))));
  const claimKeys = envelopes.map((e) => callIds.key(e.caller, e.callId));
  const read = await l.db.getMany([...recs.map((r) => payloads.keyOf(r.txid)), ...claimKeys]);
  const stored = read.slice(0, recs.length);
  const inBatch = new Map<string, HeldPayload>();
  const ops: BatchOp[] = [];
  /** Journal entries gaining dropped calls: height -> txids. */
  const drops = new Map<number, string[]>();
  const out: ({ ok: true; created: boolean; record: CallRecord | null; replayFrom: number | null } | { ok: false; error: NodeError })[] = [];
  recs.forEach((rec, i) => {
    const payload = rec.payload ?? '';
    const bodyHash = createHash('sha256').update(rec.contract_id).update(payload).digest('hex');
    const v = stored[i];
    let dropAt: number | null;
    try {
      if (repeatOrConflict(inBatch.get(rec.txid) ?? (v ? payloads.decode(v) : null), rec.txid, 'call', bodyHash) === 'repeat') {
        out.push({ ok: true, created: false, record: null, replayFrom: null });
        return;
      }
      dropAt = droppedAt(l, rec, outpoints[i]);
    } catch (e) {
      out.push({ ok: false, error: e as NodeError });
      return;
    }
    const txid = bytesOf(rec.txid);
    const claim: HeldPayload = { kind: 'call', contract_id: rec.contract_id, body_hash: bodyHash };
    const body = Buffer.from(payload, 'base64');
    ops.push(
      { type: 'put', key: calls.key(txid), value: calls.encode(rec) },
      { type: 'put', key: callBodies.key(txid), value: callBodies.encode(body) },
      { type: 'put', key: payloads.key(txid), value: payloads.encode(claim) },
      // Dropped already: decided now, as block `dropAt` decided it on nodes that held it.
      dropAt === null ? { type: 'put', key: pendingCalls.key(txid), value: pendingCalls.VALUE } : { type: 'put', key: callDecisions.key(txid), value: callDecisions.encode(DROPPED) },
    );
    if (dropAt !== null) drops.set(dropAt, [...(drops.get(dropAt) ?? []), rec.txid]);
    inBatch.set(rec.txid, claim);
    out.push({ ok: true, created: true, record: dropAt === null ? rec : { ...rec, status: 'dropped' }, replayFrom: null });
  });
  // A drop changes no state (no writes, events or claims): it is recorded in block
  // `dropAt`'s journal entry (what re-derivations replay) and undo log (a reorg that
  // removes the block makes the call pending again), in the same batch as the call, so
  // no replay is needed and a stop cannot leave it half done.
  for (const [height, txids] of drops) {
    const [raw, undoLog] = await l.db.getMany([journal.key(height), undo.key(height)]);
    if (!raw) throw new NodeError('internal', `block journal entry ${height} is missing`);
    const entry = journal.decode(raw);
    entry.dropped = [...entry.dropped, ...txids.filter((t) => !entry.dropped.includes(t))];
    ops.push({ type: 'put', key: journal.key(height), value: journal.encode(entry) });
    if (undoLog) {
      const more = new undo.UndoLog();
      for (const t of txids) {
        more.add(callDecisions.key(bytesOf(t)), null);
        more.add(pendingCalls.key(bytesOf(t)), pendingCalls.VALUE);
      }
      ops.push({ type: 'put', key: undo.key(height), value: undo.append(undoLog, more) });
    }
  }
  if (ops.length > 0) await l.writeOrHalt(ops);
  const memory = l.memory;
  out.forEach((r, i) => {
    if (!r.ok || !r.created) return;
    const rec = r.record!;
    if (rec.status === 'dropped') return;
    memory.trackPending(rec, envelopes[i]!, read[recs.length + i] !== undefined, claimKeys[i]);
    r.replayFrom = memory.orphans.get(rec.txid)?.block_height ?? null;
  });
  // Repeats are answered with the record as stored (a pending one from memory).
  return Promise.all(
    recs.map(async (rec, i) => {
      const r = out[i]!;
      return r.ok && r.record === null ? { ...r, record: (await l.call(rec.txid))! } : (r as typeof r & { record: CallRecord });
    }),
  );
}

/**
 * Acceptance: verified payloads (deploys and calls) stored durably, calls in one synced
 * batch per group. A payload whose stamp a processed block already holds is answered with
 * the block to replay from; a call whose outpoint a processed block already spent is
 * stored decided `dropped`, recorded in that block's journal entry and undo log
 * (PROTOCOL section 5). Every payload comes with its Bitcoin evidence (ledger/evidence.ts):
 * kept with it, and where it places the anchor or a spend in a processed block, the late
 * payload replays from there or the call is stored dropped. A payload the node already
 * holds may bring evidence it lacked: a pending one is then placed or dropped the same way.
 */
import { createHash } from 'node:crypto';
import type { BatchOp } from '../db.js';
import { NodeError } from '@svc-node/protocol/errors';
import { decodeEnvelope } from '@svc-node/protocol/envelope';
import { dropsCall, repeatOrConflict, type HeldPayload } from '@svc-node/protocol/rules';
import type { OutpointCheck } from '../../messages.js';
import type { CallRecord, ContractRecord } from '../../records.js';
import type { Evidence, FoldedRoots } from '@svc-node/protocol/evidence';
import { JournalAmendments, type EvidenceEffect } from './evidence.js';
import { callBodies, callDecisions, callIds, calls, contracts, payloads, pendingCalls } from '../store/index.js';
import { DROPPED, bytesOf } from './bytes.js';
import type { Ledger } from './index.js';

/** `held`: the payload claim stored for a call created here (what the peer index adds), null otherwise. */
export type AcceptedCall = { ok: true; created: boolean; record: CallRecord; replayFrom: number | null; held: HeldPayload | null } | { ok: false; error: NodeError };

/** Evidence that did not hold against the node's chain refuses a payload it came with (retryable: an honest copy may follow). */
function evidenceRefusal(txid: string, e: EvidenceEffect): NodeError {
  return new NodeError('bad_evidence', `the evidence sent with ${txid} does not hold against this node's chain: ${e.refused.join('; ')}`);
}

/**
 * Stores a verified deploy registration durably with its evidence; `created` is false
 * when it was already known (evidence it brings for a deploy still pending is kept and
 * placed all the same).
 */
export async function acceptDeploy(l: Ledger, rec: ContractRecord, ev?: Evidence, folded?: FoldedRoots): Promise<{ created: boolean; record: ContractRecord; replayFrom: number | null }> {
  await l.flushBlocks();
  l.refuseWhileHalted();
  const repeat = repeatOrConflict(await l.payloadAt(rec.txid), rec.txid, 'deploy', rec.body_hash) === 'repeat';
  const pendingRepeat = repeat && l.memory.pendingContracts.has(rec.contract_id);
  if (repeat && (!ev || !pendingRepeat)) return { created: false, record: l.contract(rec.contract_id)!, replayFrom: null };
  const effect = ev ? await l.evidenceEffect(rec.txid, 'deploy', null, ev, undefined, folded) : null;
  if (effect && effect.refused.length > 0 && !repeat) throw evidenceRefusal(rec.txid, effect);
  const ops: BatchOp[] = repeat
    ? []
    : [
        { type: 'put', key: contracts.keyOf(rec.contract_id), value: contracts.encode(rec) },
        { type: 'put', key: payloads.keyOf(rec.txid), value: payloads.encode({ kind: 'deploy', contract_id: rec.contract_id, body_hash: rec.body_hash }) },
      ];
  const amend = new JournalAmendments();
  if (effect) {
    ops.push(...effect.ops);
    if (effect.place) amend.place(effect.place.height, 'deploy', effect.place.tx);
  }
  const journalOps = await amend.ops(l);
  await l.writeOrHalt([...ops, ...journalOps.ops]);
  if (journalOps.ops.length > 0) l.journalAmendments++;
  for (const o of journalOps.orphans) l.memory.orphans.set(o.txid, o);
  if (!repeat) l.memory.pendingContracts.set(rec.contract_id, rec);
  const orphan = l.memory.orphans.get(rec.txid);
  return { created: !repeat, record: repeat ? l.contract(rec.contract_id)! : rec, replayFrom: orphan ? orphan.block_height : null };
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
  if (check.memoryOnly) {
    // No look-up at intake (docs/ARCHITECTURE.md, "Deferred checks"): what the node
    // remembers of recent blocks' spends decides it now; anything older is found later.
    for (const [h, spender] of l.memory.spentRecently(rec.outpoint)) if (h <= tip.height && dropsCall(spender, rec.txid)) return h;
    return null;
  }
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
 * outpoint a processed block already spent (`droppedAt`, or its evidence) is stored
 * decided, `dropped`, and recorded in that block's journal entry and undo log: the same
 * record, with the same fate in a reorg, as on a node that held it before the block.
 * Each call's evidence is kept with it (ledger/evidence.ts); a repeat of a pending call
 * may bring evidence the node lacked, which places or drops it the same way. `folded`:
 * the roots intake folded each evidence's branches to (FoldedRoots), not folded again.
 */
export async function acceptCalls(
  l: Ledger,
  recs: readonly CallRecord[],
  outpoints: readonly (OutpointCheck | undefined)[],
  evidences: readonly (Evidence | undefined)[] = [],
  folded: readonly (FoldedRoots | undefined)[] = [],
): Promise<AcceptedCall[]> {
  await l.flushBlocks();
  l.refuseWhileHalted();
  // With each payload key, its (caller, call_id) key: whether the pair is already used is
  // then known before the confirming block, which need not read it (claimUsed).
  // Intake verified every payload, so each decodes. From a Uint8Array of its own: the
  // decoder then copies each field, so a pending call holds no slice of a pool slab.
  const envelopes = recs.map((r) => decodeEnvelope(new Uint8Array(Buffer.from(r.payload ?? '', 'base64'))));
  const claimKeys = envelopes.map((e) => callIds.key(e.caller, e.callId));
  const [read, evidenceReads] = await Promise.all([
    l.db.getMany([...recs.map((r) => payloads.keyOf(r.txid)), ...claimKeys]),
    l.readForEvidence(recs.map((r, i) => ({ txid: r.txid, ev: evidences[i] }))),
  ]);
  const stored = read.slice(0, recs.length);
  const inBatch = new Map<string, HeldPayload>();
  const ops: BatchOp[] = [];
  const amend = new JournalAmendments();
  /** Pending calls the node held that evidence now drops (decided in this batch). */
  const heldDropped: string[] = [];
  /** Pending calls the node held that evidence now places in a processed block (they replay from it). */
  const placedRepeats = new Set<string>();
  const out: ({ ok: true; created: boolean; record: CallRecord | null; replayFrom: number | null; held: HeldPayload | null } | { ok: false; error: NodeError })[] = [];
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i]!;
    const payload = rec.payload ?? '';
    const bodyHash = createHash('sha256').update(rec.contract_id).update(payload).digest('hex');
    const v = stored[i];
    const ev = evidences[i];
    let dropAt: number | null;
    let effect: EvidenceEffect | null = null;
    try {
      if (repeatOrConflict(inBatch.get(rec.txid) ?? (v ? payloads.decode(v) : null), rec.txid, 'call', bodyHash) === 'repeat') {
        // A pending call the node holds, with evidence: kept, and it may place or drop the call.
        if (ev && !inBatch.has(rec.txid) && l.memory.pending.has(rec.txid)) {
          effect = await l.evidenceEffect(rec.txid, 'call', rec.outpoint, ev, evidenceReads, folded[i]);
          ops.push(...effect.ops);
          if (effect.droppedAt !== null) {
            amend.drop(effect.droppedAt, rec.txid, rec.contract_id);
            heldDropped.push(rec.txid);
            ops.push({ type: 'put', key: callDecisions.key(bytesOf(rec.txid)), value: callDecisions.encode(DROPPED) }, { type: 'del', key: pendingCalls.key(bytesOf(rec.txid)) });
          } else if (effect.place) {
            amend.place(effect.place.height, 'call', effect.place.tx);
            placedRepeats.add(rec.txid);
          }
        }
        out.push({ ok: true, created: false, record: null, replayFrom: null, held: null });
        continue;
      }
      if (ev) {
        effect = await l.evidenceEffect(rec.txid, 'call', rec.outpoint, ev, evidenceReads, folded[i]);
        if (effect.refused.length > 0) throw evidenceRefusal(rec.txid, effect);
      }
      dropAt = effect?.droppedAt ?? droppedAt(l, rec, outpoints[i]);
    } catch (e) {
      out.push({ ok: false, error: e as NodeError });
      continue;
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
    if (effect) {
      ops.push(...effect.ops);
      if (dropAt === null && effect.place) amend.place(effect.place.height, 'call', effect.place.tx);
    }
    if (dropAt !== null) amend.drop(dropAt, rec.txid, rec.contract_id);
    inBatch.set(rec.txid, claim);
    out.push({ ok: true, created: true, record: dropAt === null ? rec : { ...rec, status: 'dropped' }, replayFrom: null, held: claim });
  }
  // A drop changes no state (no writes, events or claims): it is recorded in block
  // `dropAt`'s journal entry (what re-derivations replay) and undo log (a reorg that
  // removes the block makes the call pending again), in the same batch as the call, so
  // no replay is needed and a stop cannot leave it half done. An anchor placed in a
  // processed block is added to its entry with an orphan stamp: the replay starts there.
  const journalOps = amend.empty ? { ops: [], orphans: [] } : await amend.ops(l);
  ops.push(...journalOps.ops);
  if (ops.length > 0) await l.writeOrHalt(ops);
  if (journalOps.ops.length > 0) l.journalAmendments++;
  const memory = l.memory;
  for (const o of journalOps.orphans) memory.orphans.set(o.txid, o);
  for (const t of heldDropped) memory.untrackPending(t);
  out.forEach((r, i) => {
    if (!r.ok) return;
    const rec = recs[i]!;
    if (!r.created) {
      // A repeat whose evidence placed the pending call in a processed block: replay from there.
      if (placedRepeats.has(rec.txid)) r.replayFrom = memory.orphans.get(rec.txid)?.block_height ?? null;
      return;
    }
    if (r.record!.status === 'dropped') return;
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

/**
 * Block application (PROTOCOL sections 4 and 5): drops, activations and call decisions
 * in the chain's (height, transaction index) order, then the state root; all in one
 * atomic batch with the block's undo log. Within a call the VM orders writes.
 */
import { Transaction } from 'bitcoinjs-lib';
import { NodeError } from '@svc-node/protocol/errors';
import { findStamp, type StampResult } from '@svc-node/protocol/stamp';
import { checkCallBindingWithStamp } from '@svc-node/protocol/binding';
import { callVerdict, dropsCall } from '@svc-node/protocol/rules';
import { contractId as deriveContractId } from '@svc-node/protocol/contract';
import { execute } from '../../vm/execute.js';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import type { BlockInput, BlockRecord, CallOutcome, ContractRecord, OrphanStamp, TxParts } from '../../records.js';
import { blockDecisions, callCounts, headers, callDecisions, contractCalls, contractDrops, contracts, events, journal, meta, orphanStamps, pendingCalls, stateRoots, storage, undo } from '../store/index.js';
import { decisionsRoot, encodeDecision, stateRootOf, type DecidedStatus, type DecisionEvent } from '@svc-node/protocol/state/decisions';
import { DROPPED, bufferView, bytesOf, hexOf } from './bytes.js';
import type { LedgerMemory, PendingCall } from './memory.js';
import { JOURNAL_WINDOW, REPLAY_WINDOW } from './stored.js';
import { UndoBatch } from './undo-log.js';
import type { Ledger } from './index.js';

/** A block as the chain brings it (spends, txids) or as the journal replays it (dropped, unstamped). */
export type ApplicableBlock = BlockInput & { dropped?: string[]; unstamped?: [number, string][] };

/** A call a block dropped: the outpoint it named and the transaction of the block that spent it. */
export interface BlockDrop {
  txid: string;
  outpoint: string;
  spender: string;
}

/**
 * Applies one block on top of the tip. The batch is handed to RocksDB once the previous
 * block is durable; the caller may compute the next block meanwhile (Ledger.flushBlocks).
 * `batched` (a header-only block of a chain update): the complete batch joins the
 * update's run instead (Ledger.addToRun), written with the run's other blocks at once;
 * what is written is the same, key for key and byte for byte.
 */
export async function applyBlock(l: Ledger, b: ApplicableBlock, opts: { sync?: boolean; batched?: boolean }): Promise<BlockRecord & { drops: BlockDrop[] }> {
  l.refuseWhileHalted();
  const prevTip = l.tip;
  if (!prevTip) throw new NodeError('internal', 'block before the journal is anchored');
  if (b.height !== prevTip.height + 1) throw new NodeError('internal', `block ${b.height} does not follow tip ${prevTip.height}`);
  if (b.prevHash !== prevTip.hash) throw new NodeError('internal', `block ${b.height} does not link to tip ${prevTip.hash}`);
  // Only a load replaces memory, and none runs while a block is applied (the writer's
  // queue; a failed write halts and throws before anything below runs).
  const m = l.memory;
  const batch = new UndoBatch(l.db.newBatch());
  const height = b.height;

  // 1. Calls whose named outpoint another confirmed transaction spends are dropped.
  const dropped: string[] = [];
  const drops: BlockDrop[] = [];
  if (b.spends) {
    for (const [outpoint, spender] of b.spends) {
      for (const txid of [...m.pendingByOutpoint.get(outpoint)].sort()) {
        if (!dropsCall(spender, txid)) continue;
        dropped.push(txid);
        drops.push({ txid, outpoint, spender });
      }
    }
  } else if (b.dropped) dropped.push(...b.dropped);
  for (const txid of dropped) {
    const p = m.pending.get(txid);
    if (!p) continue;
    finishCall(m, batch, p, DROPPED);
    batch.putNew(contractDrops.key(p.envelope.contractId, height, bytesOf(txid)), contractDrops.VALUE);
  }

  // 2. Everything positioned in this block, in transaction order.
  type Item = { txIndex: number; txid: string; hex: string | null; parts?: TxParts };
  const items: Item[] = b.txs.map((t) => ({ txIndex: t.txIndex, txid: t.txid, hex: t.hex, parts: t.parts }));
  const unstamped: [number, string][] = [];
  if (b.txids) {
    const withSvc = new Set(b.txs.map((t) => t.txid));
    b.txids.forEach((txid, i) => {
      if (!withSvc.has(txid) && m.pending.has(txid)) unstamped.push([i, txid]);
    });
  } else if (b.unstamped) unstamped.push(...b.unstamped);
  for (const [txIndex, txid] of unstamped) items.push({ txIndex, txid, hex: null });
  items.sort((x, y) => x.txIndex - y.txIndex);

  // Whether each call's (caller, call_id) is taken is known since its acceptance for most
  // calls (claimUsed); the rest are read in one batch (not one awaited get per call). The
  // previous blocks may still be on their way to the disk (the batch in flight, the
  // update's run): their claims come from memory.
  const pend = items.map((it) => m.pending.get(it.txid));
  const unknown = pend.filter((p): p is PendingCall => p !== undefined && p.claimUsed === null);
  const reading = l.db.getManyNow(unknown.map((p) => p.claimKey));
  // While RocksDB reads: the transactions and their stamps, which depend on nothing stored.
  const parsed = items.map((it) => {
    // The core's parts, or the transaction parsed here: the binding check and the context take either.
    const tx: TxParts | null = it.parts ?? (it.hex ? Transaction.fromBuffer(Buffer.from(it.hex, 'hex')) : null);
    return { tx, stamp: it.parts?.stamp ?? (tx ? findStamp(tx) : null) };
  });
  const found = await reading;
  if (unknown.length > 0) {
    const unwritten = l.claimsUnwritten();
    found.forEach((v, i) => {
      const p = unknown[i]!;
      p.claimUsed = v !== undefined || unwritten(p.claimId);
    });
  }
  for (let n = 0; n < items.length; n++) {
    const it = items[n]!;
    const { tx, stamp } = parsed[n]!;
    if (stamp?.ok && stamp.stamp.kind === 'deploy') onDeployStamp(m, batch, it.txid, stamp.stamp.codeHash, height, it.txIndex);
    const p = pend[n];
    if (p) {
      decideCall(m, batch, p, tx, stamp, height, it.txIndex);
    } else if (stamp?.ok && stamp.stamp.kind === 'call' && !(await l.payloadAt(it.txid))) {
      putOrphan(m, batch, { txid: it.txid, kind: 'call', block_height: height, tx_index: it.txIndex });
    }
  }

  // 3. The state root (the contracts and this block's decisions) and the journal.
  batch.flushStorage();
  const contractsRoot = m.state.root();
  const decided = decisionsRoot(batch.decisions);
  const root = hexOf(stateRootOf(contractsRoot, decided));
  const record: BlockRecord = { height, hash: b.hash, prevHash: b.prevHash, txs: b.txs.map((t) => ({ txIndex: t.txIndex, txid: t.txid, hex: t.hex, branch: t.branch ?? null })), dropped, unstamped, state_root: root };
  batch.put(stateRoots.key(height), stateRoots.encode({ height, block_hash: b.hash, state_root: root, contracts_root: hexOf(contractsRoot), decisions_root: hexOf(decided) }), null);
  if (batch.decisions.length > 0) batch.putNew(blockDecisions.key(height), blockDecisions.encode(batch.decisions));
  batch.put(meta.tip.key, meta.tip.encode({ height, hash: b.hash }), meta.tip.encode(prevTip));
  batch.raw({ type: 'put', key: journal.key(height), value: journal.encode(record) });
  // The header chain is not undone by a rewind: the new branch's blocks replace it.
  if (b.header) batch.raw({ type: 'put', key: headers.key(height), value: headers.encode(b.header) });
  for (const cid of [...batch.perContract.keys()].sort()) {
    const c = batch.perContract.get(cid)!;
    for (let i = 0; i < c.events.length; i += events.EVENT_CHUNK) {
      const run = c.events.slice(i, i + events.EVENT_CHUNK);
      batch.putNew(events.key(c.id, height, run[0]![0], run[0]![1]), events.encode(run));
    }
    if (c.calls.length > 0) batch.putNew(contractCalls.key(c.id, height), contractCalls.encode(c.calls));
  }
  // Calls decided per contract in this block: the length of its call-log entry.
  for (const cid of [...batch.perContract.keys()].sort()) {
    const decided = batch.perContract.get(cid)!.calls.length;
    if (decided === 0) continue;
    const before = m.callCounts.get(cid) ?? 0;
    const after = before + decided;
    batch.put(callCounts.keyOf(cid), callCounts.encode(after), before ? callCounts.encode(before) : null);
    m.callCounts.set(cid, after);
  }
  batch.raw({ type: 'put', key: undo.key(height), value: batch.undo.bytes() });
  if (height - REPLAY_WINDOW > 0) batch.raw({ type: 'del', key: undo.key(height - REPLAY_WINDOW) });
  l.undoLow = Math.max(Math.min(l.undoLow, height), height - REPLAY_WINDOW + 1);
  if (opts.batched) {
    await l.addToRun(batch.out, batch.claims);
  } else {
    // Hand the batch over once the previous block is durable, and go on: the caller may
    // compute the next block while RocksDB writes this one (flushBlocks waits for it).
    await l.flushBlocks();
    const done = l.db.commit(batch.out, opts.sync ?? true).then(
      () => null,
      (e: Error) => e,
    );
    l.inflight = { done, claims: batch.claims };
  }
  m.recentHashes.set(height, b.hash);
  m.recentHashes.delete(height - 2 * JOURNAL_WINDOW - 1);
  // A reorg's rewind forgets its blocks' spends; replays bring none (the journal keeps the verdicts).
  if (b.spends) m.rememberSpends(height, b.spends);
  if (b.header && (!l.headerTip || height >= l.headerTip.height)) l.headerTip = { height, hash: b.hash };
  l.setProcessed({ height, hash: b.hash }, root, hexOf(decided));
  l.lastBlockAt = new Date().toISOString();
  return { ...record, drops };
}

function onDeployStamp(m: LedgerMemory, batch: UndoBatch, txid: string, codeHash: Uint8Array, height: number, txIndex: number): void {
  const id = hexOf(deriveContractId(bytesOf(txid), codeHash));
  const rec = m.pendingContracts.get(id);
  if (!rec) {
    if (!m.contracts.has(id)) putOrphan(m, batch, { txid, kind: 'deploy', block_height: height, tx_index: txIndex });
    return;
  }
  const prev = contracts.encode(rec);
  const active: ContractRecord = { ...rec, status: 'active', block_height: height, tx_index: txIndex };
  batch.put(contracts.keyOf(id), contracts.encode(active), prev);
  const v = verifyArtifact(active.artifact);
  if (!v.ok) throw new Error(`registered contract ${id} does not verify: ${v.reason}`);
  m.activate(active, codeHash, v.program);
}

function putOrphan(m: LedgerMemory, batch: UndoBatch, o: OrphanStamp): void {
  const prev = m.orphans.get(o.txid);
  batch.put(orphanStamps.keyOf(o.txid), orphanStamps.encode(o), prev ? orphanStamps.encode(prev) : null);
  m.orphans.set(o.txid, o);
}

function finishCall(m: LedgerMemory, batch: UndoBatch, p: PendingCall, upd: CallOutcome, events: readonly DecisionEvent[] = []): void {
  const txid = p.txid;
  // A pending call has no decision record: this block creates it (its undo deletes it).
  batch.putNew(callDecisions.key(txid), callDecisions.encode(upd));
  // Its leaf in the block's decisions, which the state root commits to. A drop or an
  // invalid call has none: whether a node holds its payload is intake policy, not the
  // chain, and it changes nothing (state/decisions.ts).
  if (upd.status === 'executed' || upd.status === 'failed') batch.decisions.push([txid, encodeDecision({ status: upd.status as DecidedStatus, txIndex: upd.tx_index!, result: upd.result, errorCode: upd.error?.code ?? null, events })]);
  batch.delOnce(pendingCalls.key(txid), pendingCalls.VALUE);
  m.untrackPending(p.rec.txid, p);
  if (m.orphans.has(p.rec.txid)) {
    batch.del(orphanStamps.key(txid), orphanStamps.encode(m.orphans.get(p.rec.txid)!));
    m.orphans.delete(p.rec.txid);
  }
  if (upd.block_height !== null && upd.tx_index !== null) batch.contractLog(p.rec.contract_id, p.envelope.contractId).calls.push(txid);
}

/** Synchronous: a block's calls are decided without a promise and a microtask per call. */
function decideCall(m: LedgerMemory, batch: UndoBatch, p: PendingCall, tx: TxParts | null, stamp: StampResult | null, height: number, txIndex: number): void {
  const e = p.envelope;
  const invalid = (code: string, message: string): void =>
    finishCall(m, batch, p, { status: 'invalid', block_height: height, tx_index: txIndex, result: null, error: { code, message }, instructions: null });

  // PROTOCOL section 4 (packages/protocol/src/rules.ts): the binding again, against the
  // transaction as confirmed (consensus-critical), the contract active before the call,
  // and the (caller, call_id) pair not taken by a call decided earlier on the chain.
  const live = m.contracts.get(p.rec.contract_id);
  const verdict = callVerdict({
    binding: tx && stamp ? checkCallBindingWithStamp(tx, stamp, e, p.envelopeHash) : null,
    deployAt: live ? { height: live.rec.block_height!, txIndex: live.rec.tx_index! } : null,
    at: { height, txIndex },
    claimTaken: p.claimUsed === true,
  });
  if (!verdict.execute) return invalid(verdict.code, verdict.message);
  const anchorTx = tx!; // a binding was checked, so the transaction is there
  const callIdHex = p.claimId;

  const out = execute({
    contractId: e.contractId,
    function: e.function,
    args: e.args,
    context: {
      height,
      txid: p.txid,
      inputs: anchorTx.inputs ?? anchorTx.ins.map((i) => ({ txid: Uint8Array.from(i.hash).reverse(), vout: i.index })),
      // bitcoinjs and the core's parts both carry u64 values as bigint and scripts as bytes;
      // the VM never changes a value it reads (byte values it stores are copied).
      outputs: anchorTx.outs,
      caller: e.caller,
      callId: e.callId,
    },
    host: m.vmHost,
  });
  batch.claims.push(callIdHex);
  batch.putNew(p.claimKey, p.txid);
  // Other pending calls with this pair can no longer execute: known without a read.
  const sharing = m.pendingByClaim.raw(callIdHex);
  if (typeof sharing === 'string') m.pending.get(sharing)!.claimUsed = true;
  else if (sharing !== undefined) for (const t of sharing) m.pending.get(t)!.claimUsed = true;
  if (out.status === 'failed') {
    finishCall(m, batch, p, { status: 'failed', block_height: height, tx_index: txIndex, result: null, error: { code: out.code, message: out.message }, instructions: out.instructions });
    return;
  }
  // Writes come sorted by contract: the size bookkeeping is per run of one contract.
  let cid = '';
  let cidBytes: Uint8Array | null = null;
  let size = 0;
  for (const w of out.writes) {
    if (w.contractId !== cidBytes) {
      if (cidBytes) m.storageSize.set(cid, size);
      cidBytes = w.contractId;
      cid = contractHex(w.contractId, p);
      size = m.storageSize.get(cid) ?? 0;
    }
    // Buffer views, not copies (RocksDB copies into its batch, the undo log copies again),
    // made once: the tree keeps them, so a value is already a Buffer when it is replaced.
    const value = w.value ? bufferView(w.value) : null;
    const prev = m.state.setStorage(w.contractId, w.key, value);
    size += (value ? w.key.length + value.length : 0) - (prev ? w.key.length + prev.length : 0);
    batch.storageWrite(storage.key(w.contractId, w.key), value, prev ? bufferView(prev) : null);
  }
  if (cidBytes) m.storageSize.set(cid, size);
  out.events.forEach((ev, logIndex) => {
    batch.contractLog(contractHex(ev.contractId, p), ev.contractId).events.push([txIndex, logIndex, ev.name, ev.params, p.txid]);
  });
  finishCall(
    m,
    batch,
    p,
    {
      status: 'executed',
      block_height: height,
      tx_index: txIndex,
      result: out.result,
      error: null,
      instructions: out.instructions,
    },
    out.events,
  );
}

/** Hex of a contract id the call touched: the called contract's without converting (nearly always). */
function contractHex(id: Uint8Array, p: PendingCall): string {
  const own = p.envelope.contractId;
  if (id.length === own.length) {
    let i = 0;
    while (i < id.length && id[i] === own[i]) i++;
    if (i === id.length) return p.rec.contract_id;
  }
  return hexOf(id);
}

/**
 * Intake of deploys and calls (PROTOCOL sections 2, 3 and 6): cheap checks first, then
 * the pool (decode, signature, bytecode), then the anchoring transaction and its Bitcoin
 * evidence, then the writer, which stores the payload with its evidence durably before
 * the answer goes out. REST and gossip submissions and PreparePayload share the same
 * vetting.
 *
 * The chain-data endpoint is asked at most once per payload, and only when the payload
 * comes without its anchoring transaction (`anchor_tx` over REST, the evidence of a
 * peer's payload): the anchor is otherwise checked from the bytes sent, which hash to
 * the txid. Whether the outpoint a call names is already spent is not asked here: the
 * writer's memory of recent blocks answers what it can, and deferred checks
 * (src/core/deferred/) the rest, off the hot path and within the budget.
 */
import { createHash } from 'node:crypto';
import type { Transaction } from 'bitcoinjs-lib';
import { NodeError } from '@svc-node/protocol/errors';
import { checkCallBinding, checkDeployBinding, bindingError } from '@svc-node/protocol/binding';
import { callProofJson, checkEvidence, evidenceError, type CallProofJson, type Evidence, type FoldedRoots } from '@svc-node/protocol/evidence';
import { contractIdHex } from '@svc-node/protocol/contract';
import type { CallEnvelope } from '@svc-node/protocol/envelope';
import type { RpcClient } from '../ipc/rpc.js';
import type { WorkPool } from '../pool/pool.js';
import type { CheckedDeploy } from '@svc-node/protocol/vm/deploy-check';
import type { EsploraClient } from '../chain/esplora-client.js';
import type { CallAnswer, CallSubmission, DeployAnswer, DeployExtras } from '../messages/core.js';
import type { CallStatusBody } from '../records.js';
import type { OutpointCheck, WriterApi } from '../messages/writer.js';
import { repeatOrConflict, type HeldPayload } from '@svc-node/protocol/rules';
import type { CallRecord, ContractRecord } from '../records.js';
import { pendingCallRecord, statusBody } from '../records.js';
import type { CheckedCoin, CoinEvidence } from '@svc-node/protocol/coin';
import { canonicalize } from '@svc-node/protocol/canonical-json';
import { ensureHex32 } from '@svc-node/protocol/fields';

export interface IntakeDeps {
  writer: RpcClient<WriterApi>;
  pool: WorkPool;
  chain: EsploraClient;
  /** Cached halt flag, so a halted node refuses before doing any work. */
  halted: () => string | null;
  tipHeight: () => number | null;
  /**
   * The most a submission waits on the chain-data endpoint in all (config
   * `esplora_timeout_ms`): past it the anchor fetch fails with 503 chain_unavailable.
   */
  chainBudgetMs: number;
  /**
   * Config max_pending_calls. Intake refuses a new call early, before the pool and the
   * chain, once the writer's last reported pending count is at it (see `refuseWhenFull`);
   * the writer's own check at the group commit stays the authoritative one.
   */
  maxPendingCalls: number;
  /** A payload newly stored pending, with the evidence stored with it (deferred checks). */
  onPending?: (txid: string, kind: 'call' | 'deploy', outpoint: string | null, evidence: Evidence | null) => void;
}

/** The outcome of vetting: the node already holds exactly this payload, or a new record to store. */
type Vetted<R, X = object> = { repeat: true; contractId: string } | ({ repeat: false; record: R } & X);

export class Intake {
  /**
   * The writer's pending-call count as last heard: from every accepted call's answer and
   * every writer status the core receives (block application, node_status, clear_halt),
   * all on the one writer port. Below the bound it only decides that no check is needed
   * (calls accepted concurrently and not yet in it are caught by the writer's own check).
   * At the bound it may be stale-high (a replay or a block confirmed calls since), so a
   * refusal is decided on a fresh count (`refuseWhenFull`), never on this one.
   */
  private pendingKnown = 0;

  constructor(private readonly d: IntakeDeps) {}

  /** Records the writer's pending count (see `pendingKnown`). */
  notePending(n: number): void {
    this.pendingKnown = n;
  }

  private refuseWhenHalted(): void {
    const reason = this.d.halted();
    if (reason !== null) throw new NodeError('halted', `node is halted: ${reason}`);
  }

  /** The anchoring transaction's bytes from the chain-data endpoint (mempool or confirmed): one request. */
  private async fetchAnchor(txid: string): Promise<Uint8Array> {
    try {
      return Buffer.from((await this.d.chain.txWithHex(txid, { budgetMs: this.d.chainBudgetMs, priority: 'intake' })).hex, 'hex');
    } catch (e) {
      if (e instanceof NodeError && e.code === 'not_found') throw new NodeError('anchor_not_found', `anchoring transaction ${txid} is not known to the chain-data endpoint`);
      throw e;
    }
  }

  /**
   * The payload's evidence as checked without the chain (evidence.ts, checkEvidence):
   * what the submission brought, else its anchor fetched (the one endpoint request a
   * payload may cost). A REST client's `anchor_tx` that is not the txid's transaction is
   * its own mistake (400 bad_request, PROTOCOL section 6); a peer's evidence that does
   * not hold is `bad_evidence`.
   */
  private async evidenceOf(txid: string, outpoint: { txid: string; vout: number } | null, sent: { anchorTx?: Uint8Array; evidence?: Evidence; coin?: CoinEvidence }): Promise<{ evidence: Evidence; anchor: Transaction; folded: FoldedRoots }> {
    const evidence: Evidence = sent.evidence ?? { anchorTx: sent.anchorTx ?? (await this.fetchAnchor(txid)), confirmed: null, spentBy: null, ...(sent.coin ? { coin: sent.coin } : {}) };
    const checked = checkEvidence(txid, outpoint, evidence);
    if (!checked.ok) {
      if (!sent.evidence && sent.anchorTx) throw new NodeError('bad_request', `anchor_tx is not the anchoring transaction ${txid}: ${checked.reason}`, { field: 'anchor_tx' });
      throw evidenceError(checked);
    }
    // What proves nothing (a 64-byte spender without its block's txids) is left out: the node's deferred check reads the block.
    return { evidence: checked.proven, anchor: checked.anchor, folded: { confirmed: checked.confirmedRoot, spender: checked.spenderRoot } };
  }

  /**
   * The coin behind a payload whose evidence does not place its anchor in a block
   * (packages/protocol/src/coin.ts): checked in the pool (one signature verify), where intake's
   * other signature work runs. Null when there is nothing to check: the anchor's
   * confirmation pays instead, or no coin came (the writer then refuses coin_missing
   * unless it saw the anchor confirmed itself). `outpoint` null: a deploy's anchor's
   * first input.
   */
  private async coinOf(evidence: Evidence, outpoint: { txid: string; vout: number } | null): Promise<CheckedCoin | null> {
    if (evidence.confirmed || !evidence.coin) return null;
    return this.d.pool.run<CheckedCoin>({ kind: 'checkCoin', anchorTx: evidence.anchorTx, outpoint, coin: evidence.coin });
  }

  /**
   * Early max_pending_calls refusal: at the bound a call that brings no coin evidence
   * and no confirmation (nothing that could outbid a waiting call: docs/STATE.md,
   * "Coin evidence") answers 503 overloaded before the signature check, the other writer
   * look-ups and the anchor fetch. Decided on the writer's current count and holdings
   * (one round trip, both questions in one port message, paid only at the bound): a txid
   * the node already holds goes on (its repeat answers 200, a different payload 409), and
   * room made since the last count heard lets the call through. A call with a coin goes
   * on: the writer decides by fee rate whether it takes the place of a waiting one.
   */
  private async refuseWhenFull(s: CallSubmission): Promise<void> {
    if (this.pendingKnown < this.d.maxPendingCalls) return;
    if ((s.coin ?? s.evidence?.coin) || s.evidence?.confirmed) return;
    const txid = s.txid;
    const [held, st] = await Promise.all([this.d.writer.call('payloadAt', { txid }), this.d.writer.call('status', {})]);
    this.pendingKnown = st.pendingCalls;
    if (held || st.pendingCalls < this.d.maxPendingCalls) return;
    throw new NodeError('overloaded', `the node holds ${st.pendingCalls} pending calls, its max_pending_calls; retry once blocks have confirmed some`);
  }

  /** A repeat of what the node holds for `txid` (its contract id), null when it holds nothing; throws on a conflict. */
  private repeatOf(held: HeldPayload | null, txid: string, kind: 'call' | 'deploy', bodyHash: string): { contractId: string } | null {
    return repeatOrConflict(held, txid, kind, bodyHash) === 'repeat' ? { contractId: held!.contract_id } : null;
  }

  /**
   * Every check of a call short of storing it (docs/ARCHITECTURE.md, "Intake refusals"):
   * only what is wrong with the payload itself (shape, signature, the binding to its
   * anchor) or not checkable yet (the anchor not visible, the contract's deploy payload
   * not held) is refused. A claimed call id, a deploy later on the chain or a spent
   * outpoint are decided when the call's block is applied, so the outcome never depends
   * on arrival order. `toStore`: the call is to be stored (submitCall), so a node at
   * max_pending_calls refuses it first; PreparePayload stores nothing and is not bounded.
   */
  private async vetCall(s: CallSubmission, toStore: boolean): Promise<Vetted<CallRecord, { outpoint: OutpointCheck; evidence: Evidence; folded: FoldedRoots; coin: CheckedCoin | null }>> {
    this.refuseWhenHalted();
    if (toStore) await this.refuseWhenFull(s);
    const opened = await this.d.pool.openCall(s.payload);
    if (opened.contractId !== s.contract_id) {
      throw new NodeError('bad_request', `contract_id ${s.contract_id} does not match the envelope's contract ${opened.contractId}`, { field: 'contract_id' });
    }
    const payloadB64 = Buffer.from(s.payload).toString('base64');
    const bodyHash = createHash('sha256').update(s.contract_id).update(payloadB64).digest('hex');
    // One writer round trip: a repeat (or conflict) first, then the contract.
    const look = await this.d.writer.call('callLookup', { txid: s.txid, contractId: s.contract_id });
    const repeat = this.repeatOf(look.known, s.txid, 'call', bodyHash);
    // A repeat is answered as such, unless it brings evidence placing or dropping it (a peer's).
    if (repeat && !(s.evidence?.confirmed || s.evidence?.spentBy)) return { repeat: true, contractId: repeat.contractId };
    if (!look.contractKnown) {
      // Retryable: the deploy payload has not reached this node yet (sync brings deploys first).
      throw new NodeError('unknown_contract', `contract ${s.contract_id} is not known to this node (its deploy payload has not reached it yet)`);
    }
    const [otxid, ovout] = opened.outpoint.split(':') as [string, string];
    const named = { txid: otxid, vout: Number(ovout) };
    const { evidence, anchor, folded } = await this.evidenceOf(s.txid, named, { anchorTx: s.anchor_tx, evidence: s.evidence, coin: s.coin });
    // The binding check reads only these fields of the envelope.
    const bindingView = {
      contractId: Buffer.from(opened.contractId, 'hex'),
      outpointTxid: Buffer.from(otxid, 'hex'),
      outpointVout: Number(ovout),
    } as unknown as CallEnvelope;
    const binding = checkCallBinding(anchor, bindingView, Buffer.from(opened.envelopeHash, 'hex'));
    if (!binding.ok) throw bindingError(binding.reason);
    const coin = await this.coinOf(evidence, named);
    return {
      repeat: false,
      evidence,
      folded,
      coin,
      outpoint: { lookedUpAt: look.lookedUpAt, spentBy: null, memoryOnly: true },
      record: pendingCallRecord(s.txid, opened, payloadB64),
    };
  }

  /** Every check of a deploy registration short of storing it. */
  private async vetDeploy(body: Record<string, unknown>, extras: DeployExtras = {}): Promise<Vetted<ContractRecord, { evidence: Evidence; folded: FoldedRoots; coin: CheckedCoin | null }>> {
    this.refuseWhenHalted();
    const txid = ensureHex32('txid', body['txid']);
    const metadata = body['metadata'] ?? {};
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new NodeError('bad_request', 'metadata must be a JSON object when present', { field: 'metadata' });
    const checked = await this.d.pool.run<CheckedDeploy>({ kind: 'checkDeploy', body });
    const bodyHash = createHash('sha256').update(canonicalize({ ...checked.core, metadata }) ?? '').digest('hex');
    const repeat = this.repeatOf(await this.d.writer.call('payloadAt', { txid }), txid, 'deploy', bodyHash);
    if (repeat && !extras.evidence?.confirmed) return { repeat: true, contractId: repeat.contractId };
    const { evidence, anchor, folded } = await this.evidenceOf(txid, null, { anchorTx: extras.anchor_tx, evidence: extras.evidence, coin: extras.coin });
    const binding = checkDeployBinding(anchor, Buffer.from(checked.codeHash, 'hex'));
    if (!binding.ok) throw bindingError(binding.reason);
    const coin = await this.coinOf(evidence, null);
    return {
      repeat: false,
      evidence,
      folded,
      coin,
      record: {
        contract_id: contractIdHex(Buffer.from(txid, 'hex'), Buffer.from(checked.codeHash, 'hex')),
        txid,
        code_hash: checked.codeHash,
        status: 'pending',
        block_height: null,
        tx_index: null,
        artifact: { ...checked.core, metadata: metadata as Record<string, unknown> },
        body_hash: bodyHash,
      },
    };
  }

  async submitCall(s: CallSubmission): Promise<CallAnswer> {
    try {
      return await this.submitCallOnce(s);
    } catch (e) {
      // The writer applied more blocks than it remembers the spends of while the outpoint
      // was being checked (a fast catch-up): check again, once, against the new tip.
      if (e instanceof NodeError && e.detail?.['reason'] === 'chain_moved') return this.submitCallOnce(s);
      throw e;
    }
  }

  private async submitCallOnce(s: CallSubmission): Promise<CallAnswer> {
    const v = await this.vetCall(s, true);
    const answer = (rec: CallRecord, created: boolean): CallAnswer => ({
      created,
      body: { txid: rec.txid, contract_id: rec.contract_id, envelope_hash: rec.envelope_hash, status: rec.status },
    });
    if (v.repeat) return answer((await this.d.writer.call('call', { txid: s.txid }))!, false);
    const r = await this.d.writer.call('acceptCall', { record: v.record, outpoint: v.outpoint, evidence: v.evidence, folded: v.folded, coin: v.coin });
    this.pendingKnown = r.pendingCalls;
    if (r.created && r.record.status === 'pending') this.d.onPending?.(r.record.txid, 'call', r.record.outpoint, v.evidence);
    return { ...answer(r.record, r.created), evidence: v.evidence };
  }

  async submitDeploy(body: Record<string, unknown>, extras: DeployExtras = {}): Promise<DeployAnswer> {
    const v = await this.vetDeploy(body, extras);
    const answer = (rec: ContractRecord, created: boolean): DeployAnswer => ({
      created,
      body: { contract_id: rec.contract_id, txid: rec.txid, code_hash: rec.code_hash, status: rec.status },
    });
    if (v.repeat) return answer((await this.d.writer.call('contract', { id: v.contractId }))!, false);
    const r = await this.d.writer.call('acceptDeploy', { record: v.record, evidence: v.evidence, folded: v.folded, coin: v.coin });
    if (r.created && r.record.status === 'pending') this.d.onPending?.(r.record.txid, 'deploy', null, v.evidence);
    return { ...answer(r.record, r.created), evidence: v.evidence };
  }

  async callStatus(txid: string, proof = false): Promise<CallStatusBody & { proof?: CallProofJson }> {
    const rec = await this.d.writer.call('call', { txid });
    if (!rec) throw new NodeError('not_found', `no call with txid ${txid}`);
    const body = statusBody(rec, this.d.tipHeight());
    if (!proof) return body;
    const p = await this.d.writer.call('callProof', { txid });
    if (!p) throw new NodeError('not_found', `no call with txid ${txid}`);
    return { ...body, proof: callProofJson(p.evidence, p.payload, p.headers, p.decision) };
  }


  /** PreparePayload (gossip): the intake checks, storing nothing. */
  async preparePayload(p: { kind: 'call'; submission: CallSubmission } | { kind: 'deploy'; body: Record<string, unknown>; extras?: DeployExtras }): Promise<{ valid: true }> {
    if (p.kind === 'call') await this.vetCall(p.submission, false);
    else await this.vetDeploy(p.body, p.extras);
    return { valid: true };
  }
}

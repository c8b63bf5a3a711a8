/**
 * Intake of deploys and calls (PROTOCOL sections 2, 3 and 6): cheap checks first, then
 * the pool (decode, signature, bytecode), then the chain (the anchoring transaction),
 * then the writer, which stores the payload durably before the answer goes out.
 */
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { NodeError } from '../errors.js';
import { checkCallBinding, checkDeployBinding, bindingError } from '../protocol/binding.js';
import { contractIdHex } from '../protocol/contract.js';
import type { CallEnvelope } from '../protocol/envelope.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { WorkPool } from '../pool/pool.js';
import type { OpenedCall, CheckedDeploy } from '../pool/tasks.js';
import type { EsploraClient } from '../chain/esplora-client.js';
import type { CallAnswer, CallStatusBody, CallSubmission, DeployAnswer, WriterApi } from '../messages.js';
import type { CallRecord, ContractRecord } from '../writer/records.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;
const HEX32 = /^[0-9a-f]{64}$/;

export interface IntakeDeps {
  writer: RpcClient<WriterApi>;
  pool: WorkPool;
  chain: EsploraClient;
  /** Cached halt flag, so a halted node refuses before doing any work. */
  halted: () => string | null;
  tipHeight: () => number | null;
}

export class Intake {
  constructor(private readonly d: IntakeDeps) {}

  private refuseWhenHalted(): void {
    const reason = this.d.halted();
    if (reason !== null) throw new NodeError('halted', `node is halted: ${reason}`);
  }

  /** The anchoring transaction's hex from the chain-data endpoint (mempool or confirmed). */
  private async anchorHex(txid: string): Promise<string> {
    try {
      return await this.d.chain.txHex(txid);
    } catch (e) {
      if (e instanceof NodeError && e.code === 'not_found') throw new NodeError('anchor_not_found', `anchoring transaction ${txid} is not known to the chain-data endpoint`);
      throw e;
    }
  }

  async submitCall(s: CallSubmission): Promise<CallAnswer> {
    this.refuseWhenHalted();
    const opened = await this.d.pool.run<OpenedCall>({ kind: 'openCall', payload: s.payload });
    if (opened.contractId !== s.contract_id) {
      throw new NodeError('bad_request', `contract_id ${s.contract_id} does not match the envelope's contract ${opened.contractId}`, { field: 'contract_id' });
    }
    const payloadB64 = Buffer.from(s.payload).toString('base64');
    const bodyHash = createHash('sha256').update(s.contract_id).update(payloadB64).digest('hex');
    const known = await this.d.writer.call('payloadAt', { txid: s.txid });
    if (known) {
      if (known.kind === 'call' && known.body_hash === bodyHash) {
        const rec = (await this.d.writer.call('call', { txid: s.txid }))!;
        return { created: false, body: { txid: rec.txid, contract_id: rec.contract_id, envelope_hash: rec.envelope_hash, status: rec.status } };
      }
      throw new NodeError('conflict', `txid ${s.txid} is already known with a different ${known.kind === 'call' ? 'payload' : 'artifact'}`);
    }
    if (!(await this.d.writer.call('contract', { id: s.contract_id }))) {
      throw new NodeError('unknown_contract', `contract ${s.contract_id} is not known to this node`);
    }
    if (await this.d.writer.call('isCallIdUsed', { caller: opened.caller, callId: opened.callId })) {
      throw new NodeError('duplicate_call_id', `call_id ${opened.callId} of caller ${opened.caller} already belongs to an executed or failed call`);
    }
    const hex = await this.anchorHex(s.txid);
    const [otxid, ovout] = opened.outpoint.split(':') as [string, string];
    const bindingView = {
      contractId: Buffer.from(opened.contractId, 'hex'),
      outpointTxid: Buffer.from(otxid, 'hex'),
      outpointVout: Number(ovout),
    } as unknown as CallEnvelope;
    const binding = checkCallBinding(hex, bindingView, Buffer.from(opened.envelopeHash, 'hex'));
    if (!binding.ok) throw bindingError(binding.reason);

    const record: CallRecord = {
      txid: s.txid,
      contract_id: s.contract_id,
      envelope_hash: opened.envelopeHash,
      function: opened.function,
      caller: opened.caller,
      call_id: opened.callId,
      status: 'pending',
      block_height: null,
      tx_index: null,
      result: null,
      error: null,
      payload: payloadB64,
      outpoint: opened.outpoint,
      instructions: null,
    };
    const r = await this.d.writer.call('acceptCall', { record });
    return { created: r.created, body: { txid: r.record.txid, contract_id: r.record.contract_id, envelope_hash: r.record.envelope_hash, status: r.record.status } };
  }

  async submitDeploy(body: Record<string, unknown>): Promise<DeployAnswer> {
    this.refuseWhenHalted();
    const txid = body['txid'];
    if (typeof txid !== 'string' || !HEX32.test(txid)) throw new NodeError('bad_request', 'txid must be 64 lowercase hex characters', { field: 'txid' });
    const metadata = body['metadata'] ?? {};
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new NodeError('bad_request', 'metadata must be a JSON object when present', { field: 'metadata' });
    const checked = await this.d.pool.run<CheckedDeploy>({ kind: 'checkDeploy', body });
    const bodyHash = createHash('sha256').update(canonicalize({ ...checked.core, metadata }) ?? '').digest('hex');
    const id = contractIdHex(Buffer.from(txid, 'hex'), Buffer.from(checked.codeHash, 'hex'));
    const answer = (rec: ContractRecord, created: boolean): DeployAnswer => ({
      created,
      body: { contract_id: rec.contract_id, txid: rec.txid, code_hash: rec.code_hash, status: rec.status },
    });
    const known = await this.d.writer.call('payloadAt', { txid });
    if (known) {
      if (known.kind === 'deploy' && known.body_hash === bodyHash) return answer((await this.d.writer.call('contract', { id: known.contract_id }))!, false);
      throw new NodeError('conflict', `txid ${txid} is already known with a different ${known.kind === 'deploy' ? 'artifact' : 'payload'}`);
    }
    const hex = await this.anchorHex(txid);
    const binding = checkDeployBinding(hex, Buffer.from(checked.codeHash, 'hex'));
    if (!binding.ok) throw bindingError(binding.reason);
    const record: ContractRecord = {
      contract_id: id,
      txid,
      code_hash: checked.codeHash,
      status: 'pending',
      block_height: null,
      tx_index: null,
      artifact: { ...checked.core, metadata: metadata as Record<string, unknown> },
      body_hash: bodyHash,
    };
    const r = await this.d.writer.call('acceptDeploy', { record });
    return answer(r.record, r.created);
  }

  async callStatus(txid: string): Promise<CallStatusBody> {
    const rec = await this.d.writer.call('call', { txid });
    if (!rec) throw new NodeError('not_found', `no call with txid ${txid}`);
    const tip = this.d.tipHeight();
    return {
      txid: rec.txid,
      contract_id: rec.contract_id,
      envelope_hash: rec.envelope_hash,
      function: rec.function,
      caller: rec.caller,
      call_id: rec.call_id,
      status: rec.status,
      block_height: rec.block_height,
      tx_index: rec.tx_index,
      result: rec.result,
      error: rec.error,
      confirmations: rec.block_height !== null && tip !== null ? tip - rec.block_height + 1 : null,
    };
  }
  /**
   * PreparePayload (issue 8): every check of submitCall or submitDeploy, in the same order
   * and with the same error codes, without storing anything. A payload the node already
   * holds with the same body is valid; with another body it is a conflict.
   */
  async preparePayload(p: { kind: 'call'; submission: CallSubmission } | { kind: 'deploy'; body: Record<string, unknown> }): Promise<{ valid: true }> {
    this.refuseWhenHalted();
    if (p.kind === 'call') {
      const s = p.submission;
      const opened = await this.d.pool.run<OpenedCall>({ kind: 'openCall', payload: s.payload });
      if (opened.contractId !== s.contract_id) {
        throw new NodeError('bad_request', `contract_id ${s.contract_id} does not match the envelope's contract ${opened.contractId}`, { field: 'contract_id' });
      }
      const bodyHash = createHash('sha256').update(s.contract_id).update(Buffer.from(s.payload).toString('base64')).digest('hex');
      const known = await this.d.writer.call('payloadAt', { txid: s.txid });
      if (known) {
        if (known.kind === 'call' && known.body_hash === bodyHash) return { valid: true };
        throw new NodeError('conflict', `txid ${s.txid} is already known with a different ${known.kind === 'call' ? 'payload' : 'artifact'}`);
      }
      if (!(await this.d.writer.call('contract', { id: s.contract_id }))) {
        throw new NodeError('unknown_contract', `contract ${s.contract_id} is not known to this node`);
      }
      if (await this.d.writer.call('isCallIdUsed', { caller: opened.caller, callId: opened.callId })) {
        throw new NodeError('duplicate_call_id', `call_id ${opened.callId} of caller ${opened.caller} already belongs to an executed or failed call`);
      }
      const hex = await this.anchorHex(s.txid);
      const [otxid, ovout] = opened.outpoint.split(':') as [string, string];
      const bindingView = {
        contractId: Buffer.from(opened.contractId, 'hex'),
        outpointTxid: Buffer.from(otxid, 'hex'),
        outpointVout: Number(ovout),
      } as unknown as CallEnvelope;
      const binding = checkCallBinding(hex, bindingView, Buffer.from(opened.envelopeHash, 'hex'));
      if (!binding.ok) throw bindingError(binding.reason);
      return { valid: true };
    }
    const body = p.body;
    const txid = body['txid'];
    if (typeof txid !== 'string' || !HEX32.test(txid)) throw new NodeError('bad_request', 'txid must be 64 lowercase hex characters', { field: 'txid' });
    const metadata = body['metadata'] ?? {};
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw new NodeError('bad_request', 'metadata must be a JSON object when present', { field: 'metadata' });
    const checked = await this.d.pool.run<CheckedDeploy>({ kind: 'checkDeploy', body });
    const bodyHash = createHash('sha256').update(canonicalize({ ...checked.core, metadata }) ?? '').digest('hex');
    const known = await this.d.writer.call('payloadAt', { txid });
    if (known) {
      if (known.kind === 'deploy' && known.body_hash === bodyHash) return { valid: true };
      throw new NodeError('conflict', `txid ${txid} is already known with a different ${known.kind === 'deploy' ? 'artifact' : 'payload'}`);
    }
    const hex = await this.anchorHex(txid);
    const binding = checkDeployBinding(hex, Buffer.from(checked.codeHash, 'hex'));
    if (!binding.ok) throw bindingError(binding.reason);
    return { valid: true };
  }
}

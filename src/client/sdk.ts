/**
 * Client SDK: deploy and call workflows of SERVICE-SPEC section 1 on top of the protocol
 * codec. Pure builders (no network) first, then SvcClient, which adds the chain-data
 * endpoint (UTXOs, broadcast) and the node (register, submit, poll).
 */
import { randomBytes } from 'node:crypto';
import type { Artifact } from '../protocol/contract.js';
import { contractId as computeContractId, extractCore } from '../protocol/contract.js';
import { deployStampScript, callStampScript } from '../protocol/stamp.js';
import { type CallEnvelope, encodeEnvelope, envelopeHash, signEnvelope, encodePayload } from '../protocol/envelope.js';
import { checkCallBinding, checkDeployBinding, bindingError } from '../protocol/binding.js';
import { toHex, parseHex } from '../protocol/hash.js';
import type { Value } from '../protocol/value.js';
import { xOnlyPublicKey } from '../protocol/schnorr.js';
import { NodeError } from '../errors.js';
import { ClientError } from './errors.js';
import { argsFromText, checkArgs, findFunction } from './abi.js';
import { buildAnchorTx, type AnchorTx, type Payment, type Utxo } from './anchor.js';
import { runTask } from '../pool/tasks.js';
import type { Wallet } from './wallet.js';
import { EsploraClient } from './esplora.js';
import { NodeClient, type CallAnswer, type CallStatus, type ContractInfoAnswer, type DeployAnswer, type DeployBody, type WaitOptions } from './node.js';
import type { HttpOptions } from './http.js';

/** Default fee rate, sat/vB: enough for regtest/signet; pass feeRate for mainnet conditions. */
export const DEFAULT_FEE_RATE = 2;

export function randomCallId(): bigint {
  return randomBytes(8).readBigUInt64LE(0);
}

function contractIdBytes(id: string | Uint8Array): Uint8Array {
  if (id instanceof Uint8Array) {
    if (id.length !== 32) throw new ClientError('bad_argument', 'contract id must be 32 bytes');
    return id;
  }
  const b = parseHex(id.toLowerCase(), 32);
  if (!b) throw new ClientError('bad_argument', `contract id must be 64 hex characters, got "${id}"`);
  return b;
}

/** The envelope's named outpoint: the wallet's largest confirmed UTXO (else largest). */
export function chooseOutpoint(utxos: readonly Utxo[]): Utxo {
  const sorted = [...utxos].sort(
    (a, b) => Number(b.status?.confirmed ?? true) - Number(a.status?.confirmed ?? true) || b.value - a.value,
  );
  const u = sorted[0];
  if (!u) throw new ClientError('insufficient_funds', 'insufficient funds: the wallet has no UTXOs to anchor with');
  return u;
}

export interface BuildCallParams {
  contractId: string | Uint8Array;
  function: string;
  /** Values, or command-line texts (`u64:5`) read with the ABI. */
  args: readonly Value[] | readonly string[];
  /** Contract ABI; when given, the function and arguments are checked against it. */
  abi?: readonly unknown[];
  callerSecret: Uint8Array;
  outpoint: { txid: string; vout: number };
  callId?: bigint;
  auxRand?: Uint8Array;
}

export interface BuiltCall {
  envelope: CallEnvelope;
  bytes: Uint8Array;
  payload: string;
  envelopeHash: Uint8Array;
}

/** Builds and signs a call envelope (no network). */
export function buildCall(p: BuildCallParams): BuiltCall {
  let args: Value[];
  const texts = p.args.length > 0 && typeof p.args[0] === 'string';
  if (p.abi) {
    const f = findFunction(p.abi, p.function);
    if (texts) args = argsFromText(f, p.args as string[]);
    else {
      args = [...(p.args as Value[])];
      checkArgs(f, args);
    }
  } else {
    if (texts) throw new ClientError('bad_argument', 'text arguments need the contract ABI');
    args = [...(p.args as Value[])];
  }
  let caller: Uint8Array;
  try {
    caller = xOnlyPublicKey(p.callerSecret);
  } catch {
    throw new ClientError('bad_key', 'caller key is not a valid secp256k1 secret key');
  }
  const outpointTxid = parseHex(p.outpoint.txid, 32);
  if (!outpointTxid) throw new ClientError('bad_argument', `outpoint txid must be 64 lowercase hex characters`);
  try {
    const envelope = signEnvelope(
      {
        version: 1,
        contractId: contractIdBytes(p.contractId),
        function: p.function,
        args,
        caller,
        callId: p.callId ?? randomCallId(),
        outpointTxid,
        outpointVout: p.outpoint.vout,
      },
      p.callerSecret,
      p.auxRand,
    );
    const bytes = encodeEnvelope(envelope);
    return { envelope, bytes, payload: encodePayload(bytes), envelopeHash: envelopeHash(bytes) };
  } catch (e) {
    if (e instanceof NodeError) throw new ClientError('bad_argument', e.message);
    throw e;
  }
}

/**
 * Anchoring transaction of a call: spends the envelope's outpoint and carries its stamp;
 * `payments` become vouts 1..n (so a contract can credit them), change comes last. Checked
 * with the codec.
 */
export function buildCallAnchor(wallet: Wallet, utxos: readonly Utxo[], call: BuiltCall, feeRate: number, payments: readonly Payment[] = []): AnchorTx {
  const e = call.envelope;
  const anchor = buildAnchorTx({
    wallet,
    utxos,
    feeRate,
    stampScript: callStampScript(e.contractId, call.envelopeHash),
    mustSpend: { txid: toHex(e.outpointTxid), vout: e.outpointVout },
    payments,
  });
  const r = checkCallBinding(anchor.hex, e, call.envelopeHash);
  if (!r.ok) throw bindingError(r.reason); // a bug in this SDK, never expected
  return anchor;
}

export interface BuiltDeploy {
  codeHash: Uint8Array;
  anchor: AnchorTx;
  contractId: string;
  body: DeployBody;
}

/**
 * The largest registration body the node reads (its MAX_BODY_BYTES, src/rest/http.ts; not
 * imported because that module loads the HTTP server's native addon).
 */
export const MAX_DEPLOY_BODY_BYTES = 65_536;

/**
 * The node's own registration checks, run here before anything is built or broadcast so a
 * refused artifact costs nothing: the same code the node runs (the worker task checkDeploy:
 * artifact shape, bytecode verifier, code hash), the metadata shape and the body size.
 * Throws ClientError with the code the node would answer (invalid_bytecode, bad_request,
 * payload_too_large).
 */
export function checkArtifact(artifact: unknown): Uint8Array {
  const refuse = (code: string, message: string): never => {
    throw new ClientError(code, `the node would refuse this artifact (nothing was broadcast): ${message}`);
  };
  const r = runTask({ kind: 'checkDeploy', body: artifact as Record<string, unknown> });
  if (!r.ok) refuse(r.error.code, r.error.message);
  const metadata = (artifact as { metadata?: unknown }).metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) refuse('bad_request', 'metadata must be a JSON object when present');
  // the body as it will be posted (any txid has the same length)
  const size = Buffer.byteLength(JSON.stringify(deployBody(artifact, '0'.repeat(64))));
  if (size > MAX_DEPLOY_BODY_BYTES) refuse('payload_too_large', `the registration body would be ${size} bytes, the node reads at most ${MAX_DEPLOY_BODY_BYTES}`);
  return parseHex((r as { value: { codeHash: string } }).value.codeHash, 32)!;
}

/** The registration body of an artifact anchored by `txid`. */
export function deployBody(artifact: Artifact | unknown, txid: string): DeployBody {
  const core = extractCore(artifact);
  const a = artifact as Artifact;
  const body: DeployBody = { txid, ...core };
  if (a.metadata !== undefined) body.metadata = a.metadata;
  return body;
}

/** Deploy anchoring transaction + the registration body (no network); checks the artifact first (checkArtifact). */
export function buildDeploy(wallet: Wallet, utxos: readonly Utxo[], artifact: Artifact | unknown, feeRate: number): BuiltDeploy {
  const ch = checkArtifact(artifact);
  const anchor = buildAnchorTx({ wallet, utxos, feeRate, stampScript: deployStampScript(ch) });
  const r = checkDeployBinding(anchor.hex, ch);
  if (!r.ok) throw bindingError(r.reason);
  const contractId = toHex(computeContractId(parseHex(anchor.txid, 32)!, ch));
  return { codeHash: ch, anchor, contractId, body: deployBody(artifact, anchor.txid) };
}

/**
 * An error after the anchoring transaction was broadcast: its fee is spent, so the error
 * keeps the original code and names the txid (in the message and as `txid`), with what to do next.
 */
export function afterBroadcast(e: unknown, txid: string, next: string): ClientError {
  if (e instanceof ClientError && e.txid) return e;
  const code = e instanceof ClientError || e instanceof NodeError ? e.code : 'internal';
  const status = e instanceof ClientError ? e.status : undefined;
  return new ClientError(code, `${(e as Error)?.message ?? String(e)} (anchoring transaction ${txid} is broadcast; ${next})`, status, txid);
}

export interface SvcClientOptions {
  nodeUrl: string;
  esploraUrl: string;
  wallet?: Wallet;
  /** Caller secret for envelopes; defaults to the wallet's secret. */
  callerSecret?: Uint8Array;
  feeRate?: number;
  http?: HttpOptions;
}

export interface DeployResult extends BuiltDeploy {
  answer: DeployAnswer;
  /** The contract once active, when deploy was asked to wait. */
  active?: ContractInfoAnswer;
}

export interface CallResult {
  call: BuiltCall;
  anchor: AnchorTx;
  answer: CallAnswer;
  status?: CallStatus;
}

export class SvcClient {
  readonly node: NodeClient;
  readonly esplora: EsploraClient;
  constructor(readonly o: SvcClientOptions) {
    this.node = new NodeClient(o.nodeUrl, o.http);
    this.esplora = new EsploraClient(o.esploraUrl, o.http);
  }

  private wallet(): Wallet {
    if (!this.o.wallet) throw new ClientError('bad_key', 'no wallet key (flag --wallet-key or SVC_WALLET_KEY)');
    return this.o.wallet;
  }

  private async broadcast(anchor: AnchorTx): Promise<void> {
    const txid = await this.esplora.broadcast(anchor.hex);
    if (txid !== anchor.txid) {
      throw new ClientError('chain_error', `chain-data endpoint answered txid ${txid}, expected ${anchor.txid}`);
    }
  }

  /**
   * Check the artifact as the node will (nothing is spent when it would be refused), anchor
   * the deploy stamp, broadcast, register with the node; with `wait`, poll until active.
   */
  async deploy(artifact: unknown, o: { feeRate?: number; wait?: boolean | WaitOptions<ContractInfoAnswer> } = {}): Promise<DeployResult> {
    checkArtifact(artifact);
    const wallet = this.wallet();
    const utxos = await this.esplora.utxos(wallet.address);
    const built = buildDeploy(wallet, utxos, artifact, o.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE);
    await this.broadcast(built.anchor);
    const txid = built.anchor.txid;
    try {
      const answer = await this.node.deployContract(built.body);
      const result: DeployResult = { ...built, answer };
      if (o.wait) result.active = await this.node.waitForContract(built.contractId, o.wait === true ? {} : o.wait);
      return result;
    } catch (e) {
      throw afterBroadcast(e, txid, `register it again without paying: svc deploy ARTIFACT --txid ${txid}`);
    }
  }

  /** Register an artifact whose deploy stamp `txid` is already broadcast (a retry after a failed registration); spends nothing. */
  async register(artifact: unknown, txid: string, o: { wait?: boolean | WaitOptions<ContractInfoAnswer> } = {}): Promise<{ contractId: string; answer: DeployAnswer; active?: ContractInfoAnswer }> {
    const ch = checkArtifact(artifact);
    if (!/^[0-9a-f]{64}$/.test(txid)) throw new ClientError('bad_argument', `txid must be 64 lowercase hex characters, got "${txid}"`);
    const contractId = toHex(computeContractId(parseHex(txid, 32)!, ch));
    const answer = await this.node.deployContract(deployBody(artifact, txid));
    const active = o.wait ? await this.node.waitForContract(contractId, o.wait === true ? {} : o.wait) : undefined;
    return { contractId, answer, ...(active ? { active } : {}) };
  }

  /** Resolve the ABI from the node, else from the given fallback. */
  async abiFor(contractId: string, fallback?: readonly unknown[]): Promise<readonly unknown[]> {
    let served: unknown[] | null = null;
    try {
      served = await this.node.abi(contractId);
    } catch (e) {
      if (!fallback) throw e;
    }
    if (served) return served;
    if (fallback) return fallback;
    throw new ClientError('bad_argument', `the node does not serve the ABI of ${contractId}; pass --abi ARTIFACT.json`);
  }

  /** Build + sign the envelope on a wallet UTXO, anchor it, broadcast, submit; optionally wait until final. */
  async call(p: {
    contractId: string;
    function: string;
    args: readonly Value[] | readonly string[];
    abi?: readonly unknown[];
    callId?: bigint;
    feeRate?: number;
    /** Extra outputs of the anchoring transaction, at vouts 1..n in this order (change after them). */
    pay?: readonly Payment[];
    /** The wallet UTXO the envelope names (e.g. the outpoint holding a token balance); default: chooseOutpoint. */
    outpoint?: { txid: string; vout: number };
    wait?: boolean | WaitOptions<CallStatus>;
  }): Promise<CallResult> {
    const wallet = this.wallet();
    const utxos = await this.esplora.utxos(wallet.address);
    let outpoint = chooseOutpoint(utxos);
    if (p.outpoint) {
      const named = utxos.find((u) => u.txid === p.outpoint!.txid && u.vout === p.outpoint!.vout);
      if (!named) throw new ClientError('bad_argument', `outpoint ${p.outpoint.txid}:${p.outpoint.vout} is not among the wallet's UTXOs (${wallet.address})`);
      outpoint = named;
    }
    const call = buildCall({
      contractId: p.contractId,
      function: p.function,
      args: p.args,
      abi: p.abi,
      callerSecret: this.o.callerSecret ?? wallet.secret,
      outpoint,
      callId: p.callId,
    });
    const anchor = buildCallAnchor(wallet, utxos, call, p.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE, p.pay ?? []);
    await this.broadcast(anchor);
    let answer: CallAnswer;
    try {
      answer = await this.node.submitCall({ txid: anchor.txid, contract_id: toHex(call.envelope.contractId), payload: call.payload });
    } catch (e) {
      throw afterBroadcast(e, anchor.txid, `the node has not accepted the call; its payload is ${call.payload}`);
    }
    const result: CallResult = { call, anchor, answer };
    try {
      if (p.wait) result.status = await this.node.waitForCall(anchor.txid, p.wait === true ? {} : p.wait);
    } catch (e) {
      throw afterBroadcast(e, anchor.txid, `the node accepted the call; follow it with: svc status ${anchor.txid} --wait`);
    }
    return result;
  }
}

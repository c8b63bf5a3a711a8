/**
 * Client SDK: deploy and call workflows of SERVICE-SPEC section 1 on top of the protocol
 * codec. Pure builders (no network) first, then SvcClient, which adds the chain-data
 * endpoint (UTXOs, broadcast) and the node (register, submit, poll).
 */
import { randomBytes } from 'node:crypto';
import type { Artifact } from '../protocol/contract.js';
import { codeHash as computeCodeHash, contractId as computeContractId, extractCore } from '../protocol/contract.js';
import { deployStampScript, callStampScript } from '../protocol/stamp.js';
import { type CallEnvelope, encodeEnvelope, envelopeHash, signEnvelope, encodePayload } from '../protocol/envelope.js';
import { checkCallBinding, checkDeployBinding, bindingError } from '../protocol/binding.js';
import { toHex, parseHex } from '../protocol/hash.js';
import type { Value } from '../protocol/value.js';
import { xOnlyPublicKey } from '../protocol/schnorr.js';
import { NodeError } from '../errors.js';
import { ClientError } from './errors.js';
import { argsFromText, checkArgs, findFunction } from './abi.js';
import { buildAnchorTx, type AnchorTx, type Utxo } from './anchor.js';
import type { Wallet } from './wallet.js';
import { EsploraClient } from './esplora.js';
import { NodeClient, type CallAnswer, type CallStatus, type DeployAnswer, type DeployBody } from './node.js';
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

/** Anchoring transaction of a call: spends the envelope's outpoint and carries its stamp; checked with the codec. */
export function buildCallAnchor(wallet: Wallet, utxos: readonly Utxo[], call: BuiltCall, feeRate: number): AnchorTx {
  const e = call.envelope;
  const anchor = buildAnchorTx({
    wallet,
    utxos,
    feeRate,
    stampScript: callStampScript(e.contractId, call.envelopeHash),
    mustSpend: { txid: toHex(e.outpointTxid), vout: e.outpointVout },
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

/** Deploy anchoring transaction + the registration body (no network). */
export function buildDeploy(wallet: Wallet, utxos: readonly Utxo[], artifact: Artifact | unknown, feeRate: number): BuiltDeploy {
  let core;
  try {
    core = extractCore(artifact);
  } catch (e) {
    if (e instanceof NodeError) throw new ClientError('bad_argument', e.message);
    throw e;
  }
  const ch = computeCodeHash(core);
  const anchor = buildAnchorTx({ wallet, utxos, feeRate, stampScript: deployStampScript(ch) });
  const r = checkDeployBinding(anchor.hex, ch);
  if (!r.ok) throw bindingError(r.reason);
  const contractId = toHex(computeContractId(parseHex(anchor.txid, 32)!, ch));
  const a = artifact as Artifact;
  const body: DeployBody = { txid: anchor.txid, ...core };
  if (a.metadata !== undefined) body.metadata = a.metadata;
  return { codeHash: ch, anchor, contractId, body };
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

  /** Anchor the deploy stamp, broadcast, register with the node. */
  async deploy(artifact: unknown, o: { feeRate?: number } = {}): Promise<DeployResult> {
    const wallet = this.wallet();
    const utxos = await this.esplora.utxos(wallet.address);
    const built = buildDeploy(wallet, utxos, artifact, o.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE);
    await this.broadcast(built.anchor);
    const answer = await this.node.deployContract(built.body);
    return { ...built, answer };
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
    wait?: boolean | { intervalMs?: number; timeoutMs?: number; onStatus?: (s: CallStatus) => void };
  }): Promise<CallResult> {
    const wallet = this.wallet();
    const utxos = await this.esplora.utxos(wallet.address);
    const outpoint = chooseOutpoint(utxos);
    const call = buildCall({
      contractId: p.contractId,
      function: p.function,
      args: p.args,
      abi: p.abi,
      callerSecret: this.o.callerSecret ?? wallet.secret,
      outpoint,
      callId: p.callId,
    });
    const anchor = buildCallAnchor(wallet, utxos, call, p.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE);
    await this.broadcast(anchor);
    const answer = await this.node.submitCall({ txid: anchor.txid, contract_id: toHex(call.envelope.contractId), payload: call.payload });
    const result: CallResult = { call, anchor, answer };
    if (p.wait) result.status = await this.node.waitForCall(anchor.txid, p.wait === true ? {} : p.wait);
    return result;
  }
}

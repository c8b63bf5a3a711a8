/**
 * Client SDK: deploy and call workflows of SERVICE-SPEC section 1 on top of the protocol
 * codec. Pure builders (no network) first, then SvcClient, which adds the chain-data
 * endpoint (UTXOs, broadcast) and the node (register, submit, poll).
 */
import type { Artifact } from '@svc-node/protocol/contract';
import { contractId as computeContractId, registrationBody } from '@svc-node/protocol/contract';
import { deployStampScript, callStampScript } from '@svc-node/protocol/stamp';
import { type CallEnvelope, envelopeHash, signAndEncodeEnvelope, encodePayload, MAX_BODY_BYTES, postedBytes } from '@svc-node/protocol/envelope';
import { checkCallBinding, checkDeployBinding, bindingError, txidOf } from '@svc-node/protocol/binding';
import { toHex, parseHex } from '@svc-node/protocol/hash';
import type { Value } from '@svc-node/protocol/value';
import { randomBytesPooled, xOnlyPublicKey } from '@svc-node/protocol/schnorr';
import { NodeError, asNodeError } from '@svc-node/protocol/errors';
import { ClientError } from './errors.js';
import { argsFromText, checkArgs, findFunction } from './abi.js';
import { buildAnchorTx, type AnchorTx, type Payment, type Utxo } from './anchor.js';
import { checkDeploy, type CheckedDeploy } from '@svc-node/protocol/vm/deploy-check';
import type { Wallet } from './wallet.js';
import { EsploraClient } from './esplora.js';
import { gatherCoin } from './coin.js';
import type { CoinEvidence, CoinJson } from '@svc-node/protocol/coin';
import { NodeClient, type CallAnswer, type CallBody, type CallStatus, type ContractInfoAnswer, type DeployAnswer, type DeployBody, type WaitOptions } from './node.js';
import { checkFee, checkFeeRate, type FeeEstimates } from './fees.js';
import type { HttpOptions } from './http.js';
import { HEX32 } from '@svc-node/protocol/identifiers';

/**
 * How long deploy and call wait, before broadcasting, for the node to hold the block of a
 * coin the client's endpoint already shows confirmed: a few of the node's block checks.
 */
const COIN_BLOCK_WAIT_MS = 20_000;

/** Default fee rate, sat/vB: enough for regtest/signet; pass feeRate for mainnet conditions. */
export const DEFAULT_FEE_RATE = 2;

export function randomCallId(): bigint {
  const b = randomBytesPooled(8);
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
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
    const { envelope, bytes } = signAndEncodeEnvelope(
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
    return { envelope, bytes, payload: encodePayload(bytes), envelopeHash: envelopeHash(bytes) };
  } catch (e) {
    if (e instanceof NodeError && e.code === 'payload_too_large') throw refusal('call', 'payload_too_large', `${e.message} (PROTOCOL section 3): shorten the arguments`);
    if (e instanceof NodeError) throw new ClientError('bad_argument', e.message);
    throw e;
  }
}

/** The node would refuse this `what` whatever was paid: said before anything is built or broadcast. */
function refusal(what: 'artifact' | 'call', code: string, message: string): ClientError {
  return new ClientError(code, `the node would refuse this ${what} (nothing was broadcast): ${message}`);
}

/**
 * The one size check of a POST body (deploy and call share it): the body exactly as it will
 * be posted, anchor_tx included, against the node's MAX_BODY_BYTES. Throws
 * payload_too_large, saying what takes the room.
 */
export function checkBodySize(body: DeployBody | CallBody): void {
  const size = postedBytes(body);
  if (size <= MAX_BODY_BYTES) return;
  const anchor = body.anchor_tx ? `, the anchoring transaction's hex ${body.anchor_tx.length}` : '';
  if ('payload' in body) {
    const envelope = Math.floor((body.payload.length * 3) / 4) - (body.payload.endsWith('==') ? 2 : body.payload.endsWith('=') ? 1 : 0);
    throw refusal('call', 'payload_too_large', `its submission body would be ${size} bytes, the node reads at most ${MAX_BODY_BYTES} (the ${envelope}-byte envelope takes ${body.payload.length} of them as base64${anchor}): shorten the arguments`);
  }
  throw refusal('artifact', 'payload_too_large', `its registration body would be ${size} bytes, the node reads at most ${MAX_BODY_BYTES} (the bytecode takes ${body.bytecode.length} of them as hex${anchor})`);
}

/**
 * The body of POST /contract_call for a built call and its anchoring transaction (with
 * the coin it spends: docs/STATE.md, "Coin evidence"), checked by checkBodySize.
 */
export function callSubmission(call: BuiltCall, anchor: AnchorTx, coin?: CoinJson): CallBody {
  const body: CallBody = { txid: anchor.txid, contract_id: toHex(call.envelope.contractId), payload: call.payload, anchor_tx: anchor.hex };
  if (coin) body.coin = coin;
  checkBodySize(body);
  return body;
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
 * The node's own registration checks, run here before anything is built or broadcast so a
 * refused artifact costs nothing: the same code the node runs (packages/protocol/src/vm/deploy-check.ts:
 * artifact shape, bytecode verifier, code hash), the metadata shape and the body size (as
 * posted with any txid; buildDeploy checks it again with the anchoring transaction).
 * Throws ClientError with the code the node would answer (invalid_bytecode, bad_request,
 * payload_too_large).
 */
export function checkArtifact(artifact: unknown): Uint8Array {
  let checked: CheckedDeploy;
  try {
    checked = checkDeploy(artifact as Record<string, unknown>);
  } catch (e) {
    const n = asNodeError(e);
    throw refusal('artifact', n.code, n.message);
  }
  const metadata = (artifact as { metadata?: unknown }).metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) throw refusal('artifact', 'bad_request', 'metadata must be a JSON object when present');
  checkBodySize(deployBody(artifact, '0'.repeat(64)));
  return parseHex(checked.codeHash, 32)!;
}

/** The registration body of an artifact anchored by `txid` (with the anchoring transaction's hex when given). */
export function deployBody(artifact: Artifact | unknown, txid: string, anchorTx?: string): DeployBody {
  return registrationBody(artifact, txid, anchorTx);
}

/** Deploy anchoring transaction + the registration body (no network); checks the artifact first (checkArtifact). */
export function buildDeploy(wallet: Wallet, utxos: readonly Utxo[], artifact: Artifact | unknown, feeRate: number): BuiltDeploy {
  const ch = checkArtifact(artifact);
  const anchor = buildAnchorTx({ wallet, utxos, feeRate, stampScript: deployStampScript(ch) });
  const r = checkDeployBinding(anchor.hex, ch);
  if (!r.ok) throw bindingError(r.reason);
  const contractId = toHex(computeContractId(parseHex(anchor.txid, 32)!, ch));
  const body = deployBody(artifact, anchor.txid, anchor.hex);
  checkBodySize(body);
  return { codeHash: ch, anchor, contractId, body };
}

/**
 * The node's refusal of a submission posted before its anchor is broadcast: nothing is
 * paid, so the error keeps the node's code and status and says so.
 */
export function beforeBroadcast(e: unknown): unknown {
  if (!(e instanceof ClientError || e instanceof NodeError)) return e;
  if (e.message.includes('nothing was broadcast')) return e;
  return new ClientError(e.code, `${e.message} (nothing was broadcast)`, e instanceof ClientError ? e.status : undefined);
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
  /** Pay a fee rate or fee above the sanity bound (fees.ts checkFee); default false. */
  allowHighFee?: boolean;
  http?: HttpOptions;
  /**
   * Told as an anchoring transaction goes out, after the node accepted its submission:
   * `sending` just before POST /tx (from then on it may be broadcast), `sent` once the
   * endpoint took it, `refused` when it answered a refusal (nothing went out); with a
   * call's submission. The CLI names them when interrupted (src/cli/svc.ts).
   */
  onBroadcast?: (txid: string, state: 'sending' | 'sent' | 'refused', submission?: CallBody) => void;
}

export interface DeployResult extends BuiltDeploy {
  answer: DeployAnswer;
  /** The contract once active, when deploy was asked to wait. */
  active?: ContractInfoAnswer;
}

export interface CallResult {
  call: BuiltCall;
  anchor: AnchorTx;
  /** The body posted to POST /contract_call (anchor_tx included). */
  body: CallBody;
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

  /**
   * POST /tx, once the node accepted the submission (`what`, followed by `follow` once
   * the anchor is out). A refusal (a 4xx answer, 429 included) broadcast nothing: its
   * error says nothing is paid and that the node drops what it took, its anchor never
   * appearing (docs/STATE.md, "Expiry"). Any other failure (no answer, a timeout, a 5xx,
   * an answer that is not the txid) may have left the transaction with the endpoint: the
   * error names the txid and says to look it up before paying again.
   */
  private async broadcast(anchor: AnchorTx, what: 'call' | 'deploy', follow: string, submission?: CallBody): Promise<void> {
    let txid: string;
    this.o.onBroadcast?.(anchor.txid, 'sending', submission);
    try {
      txid = await this.esplora.broadcast(anchor.hex);
    } catch (e) {
      if (e instanceof ClientError && e.status !== undefined && e.status >= 400 && e.status < 500) {
        this.o.onBroadcast?.(anchor.txid, 'refused', submission);
        throw new ClientError(e.code, `${e.message} (nothing was broadcast, nothing is paid: the node took the ${what} and drops it, its anchor ${anchor.txid} never appearing)`, e.status);
      }
      const code = e instanceof ClientError ? e.code : 'internal';
      const err = new ClientError(code, `${(e as Error)?.message ?? String(e)} (anchoring transaction ${anchor.txid} may have been broadcast: look it up, GET /tx/${anchor.txid}, before paying again; the node holds the ${what}: if the transaction is there, ${follow}; if not, nothing is paid and the node drops the ${what})`, e instanceof ClientError ? e.status : undefined, anchor.txid);
      err.submission = submission;
      throw err;
    }
    if (txid !== anchor.txid) {
      throw new ClientError('chain_error', `chain-data endpoint answered txid ${txid}, expected ${anchor.txid}`);
    }
    this.o.onBroadcast?.(anchor.txid, 'sent', submission);
  }

  /**
   * What the node would refuse whatever is paid, asked before anything is built: it does
   * not answer, it is halted, or (for a call) it does not know the contract. (The
   * submitter, src/client/submitter.ts, asks it once per contract.)
   */
  async checkNodeAccepts(what: 'artifact' | 'call', contractId?: string): Promise<void> {
    const [status, known] = await Promise.all([
      this.node.nodeStatus() as Promise<{ halted?: boolean; halt_reason?: string | null }>,
      contractId === undefined ? null : this.node.contractInfo(contractId).then(() => true, (e: unknown) => (e instanceof ClientError && e.status === 404 ? false : Promise.reject(e))),
    ]);
    if (status.halted) throw refusal(what, 'halted', `the node is halted (${status.halt_reason ?? 'no reason given'}) and refuses submissions until its operator clears the halt`);
    if (known === false) throw refusal(what, 'unknown_contract', `the node does not know contract ${contractId} (not deployed, or its deploy has not reached this node yet)`);
  }

  /**
   * Waits (up to COIN_BLOCK_WAIT_MS) until the node holds the block of every coin the
   * evidence places, so a coin just confirmed is not refused `coin_unproven` after the
   * anchor is paid for (the node follows the chain a little behind the client's
   * endpoint); refuses before anything is broadcast when it does not catch up.
   */
  async awaitCoinBlocks(what: 'artifact' | 'call', coin: CoinEvidence): Promise<void> {
    const need = Math.max(-1, ...coin.prevTxs.map((p) => p.at?.height ?? -1));
    if (need < 0) return;
    const deadline = Date.now() + COIN_BLOCK_WAIT_MS;
    for (;;) {
      const s = (await this.node.nodeStatus()) as { processed_height?: number | null; chain?: { header_height?: number | null } };
      const held = Math.max(s.processed_height ?? -1, s.chain?.header_height ?? -1);
      if (held >= need) return;
      if (Date.now() >= deadline) throw refusal(what, 'coin_unproven', `the coin it spends is confirmed in block ${need}, and the node holds blocks up to ${held} only: try again once it has caught up`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The endpoint's fee estimates for the sanity bound (null when it offers none). */
  feeEstimates(): Promise<FeeEstimates | null> {
    return this.o.allowHighFee ? Promise.resolve(null) : this.esplora.feeEstimates();
  }

  /**
   * Check the artifact as the node will (nothing is spent when it would be refused), anchor
   * the deploy stamp, check the fee, register with the node (anchor_tx and coin included)
   * and only once it accepted broadcast, so a registration the node refuses pays nothing;
   * with `wait`, poll until active. `retry(txid)` says what to do when the wait fails after
   * the broadcast (default: SvcClient.register, which registers again paying nothing).
   */
  async deploy(artifact: unknown, o: { feeRate?: number; wait?: boolean | WaitOptions<ContractInfoAnswer>; retry?: (txid: string) => string } = {}): Promise<DeployResult> {
    checkArtifact(artifact);
    const wallet = this.wallet();
    const [utxos, estimates] = await Promise.all([this.esplora.utxos(wallet.address), this.feeEstimates(), this.checkNodeAccepts('artifact')]);
    const feeRate = o.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE;
    checkFeeRate(feeRate, estimates, this.o.allowHighFee);
    const built = buildDeploy(wallet, utxos, artifact, feeRate);
    checkFee(built.anchor, feeRate, this.o.allowHighFee);
    // The coin's evidence is gathered and checked as the node will before anything is paid.
    const gathered = await gatherCoin(this.esplora, built.anchor.hex, null, utxos);
    built.body.coin = gathered.json;
    checkBodySize(built.body);
    await this.awaitCoinBlocks('artifact', gathered.coin);
    const answer = await this.node.deployContract(built.body).catch((e: unknown) => Promise.reject(beforeBroadcast(e)));
    const txid = built.anchor.txid;
    await this.broadcast(built.anchor, 'deploy', `it activates once mined (GET /contracts/${built.contractId})`);
    const result: DeployResult = { ...built, answer };
    try {
      if (o.wait) result.active = await this.node.waitForContract(built.contractId, o.wait === true ? {} : o.wait);
      return result;
    } catch (e) {
      throw afterBroadcast(e, txid, o.retry?.(txid) ?? `register it again without paying: SvcClient.register(artifact, "${txid}")`);
    }
  }

  /**
   * Register an artifact whose deploy stamp `txid` is already broadcast (a retry after a
   * failed registration); spends nothing. The anchoring transaction (`anchorTx`, else read
   * from the chain-data endpoint) must carry the artifact's deploy stamp; it goes in the body.
   */
  async register(artifact: unknown, txid: string, o: { wait?: boolean | WaitOptions<ContractInfoAnswer>; anchorTx?: string } = {}): Promise<{ contractId: string; answer: DeployAnswer; active?: ContractInfoAnswer }> {
    const ch = checkArtifact(artifact);
    if (!HEX32.test(txid)) throw new ClientError('bad_argument', `txid must be 64 lowercase hex characters, got "${txid}"`);
    const contractId = toHex(computeContractId(parseHex(txid, 32)!, ch));
    const anchorTx = o.anchorTx ?? (await this.esplora.txHex(txid));
    let anchorTxid: string;
    try {
      anchorTxid = txidOf(anchorTx);
    } catch {
      throw refusal('artifact', 'bad_request', `the anchoring transaction given for ${txid} is not a transaction`);
    }
    if (anchorTxid !== txid) throw refusal('artifact', 'bad_request', `the anchoring transaction given is ${anchorTxid}, not ${txid}`);
    const bound = checkDeployBinding(anchorTx, ch);
    if (!bound.ok) {
      const e = bindingError(bound.reason);
      throw refusal('artifact', e.code, `transaction ${txid} does not anchor this artifact: ${e.message}`);
    }
    const body = deployBody(artifact, txid, anchorTx);
    body.coin = (await gatherCoin(this.esplora, anchorTx, null)).json;
    checkBodySize(body);
    const answer = await this.node.deployContract(body);
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

  /**
   * Checks everything the node would refuse (node halted, contract unknown, arguments
   * against the ABI, the envelope and body sizes with anchor_tx) and the fee, then
   * submits (anchor_tx and coin included) and only once the node accepted broadcasts the
   * anchor, so a call the node refuses (`coin_in_use`, `overloaded`, ...) pays nothing;
   * optionally waits until final.
   */
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
    const contractHex = toHex(contractIdBytes(p.contractId));
    const [utxos, estimates] = await Promise.all([this.esplora.utxos(wallet.address), this.feeEstimates(), this.checkNodeAccepts('call', contractHex)]);
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
    const feeRate = p.feeRate ?? this.o.feeRate ?? DEFAULT_FEE_RATE;
    checkFeeRate(feeRate, estimates, this.o.allowHighFee);
    const anchor = buildCallAnchor(wallet, utxos, call, feeRate, p.pay ?? []);
    checkFee(anchor, feeRate, this.o.allowHighFee);
    // The coin's evidence is gathered and checked as the node will before anything is paid.
    const gathered = await gatherCoin(this.esplora, anchor.hex, outpoint, utxos);
    const body = callSubmission(call, anchor, gathered.json);
    await this.awaitCoinBlocks('call', gathered.coin);
    const answer: CallAnswer = await this.node.submitCall(body).catch((e: unknown) => Promise.reject(beforeBroadcast(e)));
    await this.broadcast(anchor, 'call', `follow it with: svc status ${anchor.txid} --wait`, body);
    const result: CallResult = { call, anchor, body, answer };
    try {
      if (p.wait) result.status = await this.node.waitForCall(anchor.txid, p.wait === true ? {} : p.wait);
    } catch (e) {
      throw afterBroadcast(e, anchor.txid, `the node accepted the call; follow it with: svc status ${anchor.txid} --wait`);
    }
    return result;
  }
}

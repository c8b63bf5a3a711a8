/** REST client of a validator node (PROTOCOL.md section 6 shapes). */
import type { CoinJson } from '@svc-node/protocol/coin';
import { ClientError } from './errors.js';
import { stream, type StreamMessage, type StreamOptions } from './stream.js';
import { request, joinUrl, parseJson, oneLine, parseRetryAfter, type HttpOptions } from './http.js';
import { verifyFieldProof, type FieldProof } from '@svc-node/protocol/state/state-tree';
import type { TrieProof } from '@svc-node/protocol/state/trie';
import { checkRootParts, verifyDecisionProof, type Decision } from '@svc-node/protocol/state/decisions';
import { decodeStorageValue, defaultValue, fieldEntry, fieldKey } from '@svc-node/protocol/vm/storage-layout';
import { valueToJson } from '@svc-node/protocol/value';
import type { AbiEntry } from '@svc-node/protocol/vm/types';
import type { RegistrationBody } from '@svc-node/protocol/contract';
import { checkEvidence, inclusionMatchesHeader, parseCallProof, type CallProofJson, type Inclusion } from '@svc-node/protocol/evidence';
import { decodeEnvelope, envelopeHash, verifyEnvelopeSignature } from '@svc-node/protocol/envelope';
import { checkCallBinding } from '@svc-node/protocol/binding';
import { toHex } from '@svc-node/protocol/hash';
import { checkProofOfWork } from '@svc-node/protocol/headers';
import { ACTIVATIONS, REGTEST_POW } from '@svc-node/protocol/activation';
import { HEX32 } from '@svc-node/protocol/identifiers';
import type { AbiAnswer, CallsPage, ClearHaltAnswer, ContractsAnswer, HealthAnswer, NodeStatusAnswer, Readiness, StateRootAnswer } from './answers.js';

/** The body of POST /deploy_contract (src/protocol/contract.ts registrationBody). */
export type DeployBody = RegistrationBody;
export interface DeployAnswer {
  contract_id: string;
  txid: string;
  code_hash: string;
  status: string;
}
export interface ContractInfoAnswer {
  contract_id: string;
  txid: string;
  code_hash: string;
  status: 'pending' | 'active' | string;
  block_height: number | null;
  tx_index: number | null;
  abi: unknown[];
  metadata: Record<string, unknown>;
}
export interface SimulateRequest {
  function: string;
  /** Typed JSON values {type, value} (typedValueToJson). */
  args: { type: string; value: unknown }[];
  caller?: string | null;
  inputs?: { txid: string; vout: number }[];
  outputs?: { value: string; script: string }[];
}
export interface SimulateAnswer {
  contract_id: string;
  function: string;
  height: number;
  state_root: string | null;
  status: 'executed' | 'failed';
  result: unknown;
  error: { code: string; message: string } | null;
  events: { contract_id: string; name: string; params: Record<string, unknown> }[];
  instructions: number;
}
export interface CallBody {
  txid: string;
  contract_id: string;
  payload: string;
  /** The anchoring transaction as broadcast, lowercase hex (PROTOCOL section 6; optional, svc always sends it). */
  anchor_tx?: string;
  /** The coin the anchor spends (docs/STATE.md, "Coin evidence"); svc always sends it. */
  coin?: CoinJson;
}
export interface CallAnswer {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  status: string;
}
export interface CallStatus {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  function: string;
  caller: string;
  call_id: string;
  status: 'pending' | 'executed' | 'failed' | 'invalid' | 'dropped' | string;
  block_height: number | null;
  tx_index: number | null;
  result: unknown;
  error: { code: string; message: string } | null;
  /** Blocks on the best chain from block_height to the tip (1 in the anchor's block); null while undecided or dropped. */
  confirmations: number | null;
}
export interface FieldAnswer {
  contract_id: string;
  field: string;
  key: unknown;
  value: unknown;
  exists: boolean;
  height: number;
  /** The state root at `height`. */
  state_root: string;
}
/** JSON of one Merkle trie proof (docs/STATE.md, "Proofs over REST"). */
export interface ProofJson {
  siblings: string[];
  leaf: { path: string; value: string } | null;
}
export interface ProvenFieldAnswer extends FieldAnswer {
  state_root: string;
  block_hash: string | null;
  /**
   * `contracts_root` and `decisions_root` are the two parts `state_root` folds
   * (docs/STATE.md, "The state root"); `decisions_root` is null at the journal's anchor.
   */
  proof: { storage_key: string; contracts_root: string; decisions_root: string | null; contract: ProofJson; storage: ProofJson };
}

const HEX = /^(?:[0-9a-f]{2})*$/;

function proofFromJson(p: unknown, what: string): TrieProof {
  const bad = (why: string): never => {
    throw new ClientError('bad_proof', `${what}: ${why}`);
  };
  const hex = (s: unknown, n?: number): Uint8Array => {
    if (typeof s !== 'string' || !HEX.test(s) || (n !== undefined && s.length !== 2 * n)) bad('malformed hex');
    return new Uint8Array(Buffer.from(s as string, 'hex'));
  };
  if (p === null || typeof p !== 'object') bad('not an object');
  const o = p as ProofJson;
  // A path has 256 bits: no honest proof is deeper.
  if (!Array.isArray(o.siblings) || o.siblings.length > 256) bad('malformed siblings');
  if (o.leaf !== null && (typeof o.leaf !== 'object' || Array.isArray(o.leaf))) bad('malformed leaf');
  return {
    siblings: o.siblings.map((s) => hex(s, 32)),
    leaf: o.leaf === null ? null : { path: hex(o.leaf.path, 32), value: hex(o.leaf.value) },
  };
}

/**
 * Verifies a `?proof=true` field answer offline: the proof must lead to `state_root`
 * (and `state_root` must equal `trustedRoot` when given, e.g. the root several nodes agree
 * on for that height); with the contract's ABI the storage key is recomputed from the
 * field and key, and the value (or its absence and the default) checked against the
 * proven bytes. Throws ClientError('bad_proof') when anything does not hold.
 */
export function verifyFieldAnswer(a: ProvenFieldAnswer, opts: { abi?: readonly unknown[]; trustedRoot?: string } = {}): { exists: boolean; value: unknown } {
  if (typeof a.state_root !== 'string' || !HEX32.test(a.state_root) || !a.proof) throw new ClientError('bad_proof', 'answer carries no state_root or proof');
  if (opts.trustedRoot !== undefined && opts.trustedRoot !== a.state_root) throw new ClientError('bad_proof', `state_root ${a.state_root} is not the trusted root ${opts.trustedRoot}`);
  if (typeof a.proof.storage_key !== 'string' || !HEX.test(a.proof.storage_key)) throw new ClientError('bad_proof', 'malformed storage_key');
  const proof: FieldProof = { contract: proofFromJson(a.proof.contract, 'contract proof'), storage: proofFromJson(a.proof.storage, 'storage proof') };
  const storageKey = new Uint8Array(Buffer.from(a.proof.storage_key, 'hex'));
  const { contracts_root: contractsRoot, decisions_root: decisions } = a.proof;
  if (typeof contractsRoot !== 'string' || !HEX32.test(contractsRoot) || (decisions !== null && (typeof decisions !== 'string' || !HEX32.test(decisions)))) throw new ClientError('bad_proof', 'malformed contracts_root or decisions_root');
  let proven: Uint8Array | null;
  try {
    const contracts = new Uint8Array(Buffer.from(contractsRoot, 'hex'));
    checkRootParts(new Uint8Array(Buffer.from(a.state_root, 'hex')), contracts, decisions === null ? null : new Uint8Array(Buffer.from(decisions, 'hex')));
    proven = verifyFieldProof(contracts, new Uint8Array(Buffer.from(a.contract_id, 'hex')), storageKey, proof);
  } catch (e) {
    throw new ClientError('bad_proof', (e as Error).message);
  }
  if ((proven !== null) !== a.exists) throw new ClientError('bad_proof', `answer says exists=${a.exists} but the proof shows the entry ${proven ? 'present' : 'absent'}`);
  if (opts.abi) {
    const abi = opts.abi as AbiEntry[];
    const f = fieldEntry(abi, a.field);
    if (!f) throw new ClientError('bad_proof', `the ABI has no field ${a.field}`);
    let expectKey: Uint8Array;
    try {
      expectKey = f.key === null ? fieldKey(abi, a.field, null) : fieldKey(abi, a.field, decodeStorageValue(f.key, keyBytes(f.key, a.key)));
    } catch (e) {
      throw new ClientError('bad_proof', `answer key does not fit the ABI: ${(e as Error).message}`);
    }
    if (Buffer.compare(Buffer.from(expectKey), Buffer.from(storageKey)) !== 0) throw new ClientError('bad_proof', 'the proof is for another storage key than the field and key asked');
    const value = proven === null ? defaultValue(f.value) : decodeStorageValue(f.value, proven);
    if (valueToJson(value) !== a.value) throw new ClientError('bad_proof', 'the answer value differs from the proven value');
  }
  return { exists: proven !== null, value: a.value };
}

/** GET /contract_call/{txid}/status?proof=true: the status record and its call proof (docs/STATE.md, "Call proofs"). */
export interface ProvenCallStatus extends CallStatus {
  proof: CallProofJson;
}

/** Where a proven transaction sits: checked against its header and, when asked, a trusted block hash. */
export interface ProvenPosition {
  blockHash: string;
  height: number;
  txIndex: number;
}

/** An event of a call as its decision commits it (parameters typed, in declaration order). */
export interface ProvenEvent {
  contract_id: string;
  name: string;
  params: { type: string; value: unknown }[];
}

/**
 * A decided call's outcome (docs/STATE.md, "Call proofs"). Executed, failed, invalid: as
 * the state root of its anchor's block commits it; the record's status, position, result
 * and error code were checked against it, the events are read from it. Dropped: the
 * spender's proven block, no position, result, error or events (drops are committed by
 * no root: a drop depends on the payloads a node holds, the spend is a chain fact).
 */
export interface ProvenOutcome {
  /** The deciding block: the anchor's, or for a drop the spender's. */
  height: number;
  blockHash: string;
  /** The block's state root the outcome is committed by: compare it with other nodes' (GET /v2/state_root/{height}); null for a drop. */
  stateRoot: string | null;
  status: string;
  /** The anchor's index in the block (null for a drop). */
  txIndex: number | null;
  /** The result as the record shows it (JSON form), null when none. */
  result: unknown;
  /** The error code of a failed or invalid call (its message is not committed). */
  errorCode: string | null;
  events: ProvenEvent[];
}

/** What verifyCallProof proved. */
export interface VerifiedCall {
  txid: string;
  status: string;
  /** The anchor's position (executed, failed, invalid; a pending call's when the proof carries one). */
  confirmed: ProvenPosition | null;
  /** A dropped call's conflicting spend: the spender's txid and position. */
  spentBy: (ProvenPosition & { txid: string }) | null;
  /** The outcome: committed by its anchor's block's state root, or a drop proven by its spender; null for a pending call. */
  outcome: ProvenOutcome | null;
}

/** The Bitcoin networks whose proof-of-work limit a call proof's headers can be held to (`testnet`: testnet3; `mainnet`: bitcoin). */
export type ProofNetwork = 'bitcoin' | 'mainnet' | 'testnet' | 'testnet3' | 'testnet4' | 'signet' | 'regtest';

interface CallProofTrust {
  /**
   * The block hash the client trusts at a height (its own Bitcoin node, an explorer it
   * trusts, several nodes agreeing). Without it the proof shows a block with real proof
   * of work holding the transaction, not that the block is on the best chain.
   */
  trustedBlockHash?: (height: number) => string | Promise<string>;
  /**
   * The state root the client trusts at a height (the same root from several nodes at
   * GET /v2/state_root/{height}). Without it the outcome is proven committed by the root
   * the answer names (`outcome.stateRoot`), which the client may compare later.
   */
  trustedStateRoot?: (height: number) => string | Promise<string>;
  /**
   * The network whose proof-of-work limit each header's bits must meet (Bitcoin Core's
   * powLimit: `bitcoin` and the testnets 0x1d00ffff, signet 0x1e0377ae, regtest
   * 0x207fffff). Required unless `trustedBlockHash` is given: without either, a header
   * would be held to no real network's limit, and a node could show a block mined at
   * regtest's easy target as a mainnet one. With only `trustedBlockHash`, regtest's limit.
   */
  network?: ProofNetwork;
}

/**
 * How a call proof is checked: `network` (each header's work against its limit),
 * `trustedBlockHash` (the block itself), or both; a compile error with neither.
 */
export type CallProofOptions = CallProofTrust & ({ network: ProofNetwork } | { trustedBlockHash: NonNullable<CallProofTrust['trustedBlockHash']> });

/** The powLimit of a network by name (src/protocol/activation.ts, the node's own rules). */
function powLimitOf(network: ProofNetwork | undefined): bigint {
  if (network === undefined || network === 'regtest') return REGTEST_POW.powLimit;
  const name = network === 'mainnet' ? 'bitcoin' : network === 'testnet' ? 'testnet3' : network;
  for (const p of ACTIVATIONS.values()) if (p.network === name) return p.pow.powLimit;
  throw new ClientError('bad_argument', `unknown network ${JSON.stringify(network)} (bitcoin, testnet, testnet4, signet, regtest)`);
}

const STATUSES_AT_BLOCK: ReadonlySet<string> = new Set(['executed', 'failed', 'invalid']);

/**
 * Verifies a call's status record against its call proof offline (docs/STATE.md, "Call
 * proofs"). `status` is the record GET /contract_call/{txid}/status?proof=true answers;
 * `proof` defaults to its `proof` member. Checked: the anchor's bytes hash to the txid;
 * the payload decodes to an envelope whose fields and hash are the record's and whose
 * signature verifies; the anchor binds it (stamp naming the contract and envelope hash,
 * an input spending the named outpoint); each inclusion's header hashes to its
 * block_hash, passes the node's proof-of-work check against `opts.network`'s limit, and
 * commits to the root the branch folds to; the anchor's (height, index) is the record's;
 * a dropped call's spender spends the named outpoint and is not the anchor, and its proof
 * carries no decision (drops are committed by no root); an executed, failed or invalid
 * call's decision lies under the state root of its anchor's block, and its status,
 * position, result and error code are the record's. With `trustedBlockHash` /
 * `trustedStateRoot`, each block / the anchor's block's root must be the trusted one at
 * its height. Returns what was proven, the outcome with its events; throws
 * ClientError('bad_proof') when anything does not hold.
 */
export async function verifyCallProof(status: CallStatus & { proof?: unknown }, proof: unknown = status?.proof, opts: CallProofOptions): Promise<VerifiedCall> {
  const bad = (why: string): never => {
    throw new ClientError('bad_proof', `call ${String(status?.txid)}: ${why}`);
  };
  // JavaScript callers, and TypeScript's casts, get past the type: refuse before any check.
  if (opts?.network === undefined && typeof opts?.trustedBlockHash !== 'function') {
    throw new ClientError('bad_argument', 'a call proof needs the network its headers must meet (network) or a trusted block hash (trustedBlockHash)');
  }
  if (!status || typeof status.txid !== 'string' || !HEX32.test(status.txid)) bad('the status record carries no txid');
  const powLimit = powLimitOf(opts.network);
  let parsed: ReturnType<typeof parseCallProof>;
  try {
    parsed = parseCallProof(proof);
  } catch (e) {
    return bad((e as Error).message);
  }
  const { evidence, payload, headers } = parsed!;
  let envelope: ReturnType<typeof decodeEnvelope>;
  try {
    envelope = decodeEnvelope(payload);
  } catch (e) {
    return bad(`the proof's payload is not an envelope: ${(e as Error).message}`);
  }
  const hash = envelopeHash(payload);
  const fields: [string, string, unknown][] = [
    ['contract_id', toHex(envelope!.contractId), status.contract_id],
    ['envelope_hash', toHex(hash), status.envelope_hash],
    ['function', envelope!.function, status.function],
    ['caller', toHex(envelope!.caller), status.caller],
    ['call_id', envelope!.callId.toString(), status.call_id],
  ];
  for (const [name, proven, said] of fields) if (proven !== said) bad(`the record's ${name} ${JSON.stringify(said)} is not the proven envelope's ${JSON.stringify(proven)}`);
  if (!verifyEnvelopeSignature(envelope!)) bad("the envelope's signature does not verify under its caller");
  const outpoint = { txid: toHex(envelope!.outpointTxid), vout: envelope!.outpointVout };
  const checked = checkEvidence(status.txid, outpoint, evidence);
  if (!checked.ok) return bad(`${checked.field}: ${checked.reason}`);
  if (checked.spenderUnproven) bad("spent_by: the spender is 64 bytes without its witness, which no branch can place: the proof must list its block's txids (block_txids)");
  const binding = checkCallBinding(checked.anchor, envelope!, hash);
  if (!binding.ok) bad(`the anchoring transaction does not bind the envelope (${binding.reason})`);

  const place = async (inc: Inclusion, root: Buffer, header: Uint8Array | null, what: string): Promise<ProvenPosition> => {
    const matches = inclusionMatchesHeader(inc, root, header!);
    if (matches !== true) bad(`${what}: ${matches}`);
    // The node's own check (Bitcoin Core's CheckProofOfWork): bits that decode to a
    // positive target no easier than the network's limit, and a hash that meets it.
    const work = checkProofOfWork(inc.blockHash, Buffer.from(header!).readUInt32LE(72), powLimit);
    if (work !== true) bad(`${what}: block ${inc.blockHash} fails its proof of work: ${work}`);
    if (opts.trustedBlockHash) {
      const trusted = await opts.trustedBlockHash(inc.height);
      if (trusted !== inc.blockHash) bad(`${what}: block ${inc.blockHash} is not the trusted block ${String(trusted)} at height ${inc.height}`);
    }
    return { blockHash: inc.blockHash, height: inc.height, txIndex: inc.txIndex };
  };

  let confirmed: ProvenPosition | null = null;
  let spentBy: VerifiedCall['spentBy'] = null;
  if (STATUSES_AT_BLOCK.has(status.status)) {
    if (!evidence.confirmed) bad(`a ${status.status} call's proof carries no confirmation`);
    if (evidence.spentBy) bad(`a ${status.status} call's proof carries a conflicting spend`);
    if (evidence.confirmed!.height !== status.block_height || evidence.confirmed!.txIndex !== status.tx_index) {
      bad(`the record's position (${status.block_height}, ${status.tx_index}) is not the proven (${evidence.confirmed!.height}, ${evidence.confirmed!.txIndex})`);
    }
  } else if (status.status === 'dropped') {
    if (!evidence.spentBy) bad("a dropped call's proof carries no conflicting spend");
    if (evidence.confirmed) bad("a dropped call's proof carries a confirmation of its anchor");
  } else if (status.status === 'pending') {
    if (evidence.spentBy) bad("a pending call's proof carries a conflicting spend");
  } else {
    bad(`unknown status ${JSON.stringify(status.status)}`);
  }
  if (evidence.confirmed) confirmed = await place(evidence.confirmed, checked.confirmedRoot!, headers.confirmed, 'confirmed');
  if (evidence.spentBy) spentBy = { txid: checked.spenderTxid!, ...(await place(evidence.spentBy.at, checked.spenderRoot!, headers.spentBy, 'spent_by')) };
  const decision = (proof as { decision?: unknown }).decision ?? null;
  if (status.status === 'pending') {
    if (decision !== null) bad("a pending call's proof carries a decision");
    return { txid: status.txid, status: status.status, confirmed, spentBy, outcome: null };
  }
  if (status.status === 'dropped') {
    // A drop is proven by its spender's inclusion alone: no root commits to it, so no decision can belong here.
    if (decision !== null) bad("a dropped call's proof carries a decision (drops are committed by no state root)");
    const outcome: ProvenOutcome = { height: spentBy!.height, blockHash: spentBy!.blockHash, stateRoot: null, status: 'dropped', txIndex: null, result: null, errorCode: null, events: [] };
    return { txid: status.txid, status: status.status, confirmed, spentBy, outcome };
  }
  const outcome = await checkOutcome(status, decision, confirmed!, opts, bad);
  return { txid: status.txid, status: status.status, confirmed, spentBy, outcome };
}

/**
 * The outcome part of verifyCallProof for a call its anchor's block decided: the
 * decision's branch folds to that block's state root, and the leaf says what the record
 * says: status, position, result and error code.
 */
async function checkOutcome(status: CallStatus, j: unknown, block: ProvenPosition, opts: CallProofOptions, bad: (why: string) => never): Promise<ProvenOutcome> {
  if (j === null || typeof j !== 'object' || Array.isArray(j)) return bad(`a ${status.status} call's proof carries no decision`);
  const o = j as Record<string, unknown>;
  const hex32 = (k: string): Uint8Array => {
    const v = o[k];
    if (typeof v !== 'string' || !HEX32.test(v)) bad(`decision.${k} is not 64 lowercase hex`);
    return new Uint8Array(Buffer.from(v as string, 'hex'));
  };
  const stateRoot = hex32('state_root');
  const contracts = hex32('contracts_root');
  const decisions = hex32('decisions_root');
  if (o['height'] !== block.height || o['block_hash'] !== block.blockHash) bad(`the decision is of block ${String(o['block_hash'])} at ${String(o['height'])}, not the proven block ${block.blockHash} at ${block.height}`);
  const trie = proofFromJson({ siblings: o['siblings'], leaf: o['leaf'] }, 'decision proof');
  let d: Decision | null;
  try {
    d = verifyDecisionProof(stateRoot, contracts, decisions, new Uint8Array(Buffer.from(status.txid, 'hex')), trie);
  } catch (e) {
    return bad(`decision: ${(e as Error).message}`);
  }
  const rootHex = o['state_root'] as string;
  if (opts.trustedStateRoot) {
    const trusted = await opts.trustedStateRoot(block.height);
    if (trusted !== rootHex) bad(`decision: state root ${rootHex} is not the trusted root ${String(trusted)} at height ${block.height}`);
  }
  // An invalid call is committed by no root (it changes nothing, and whether a node holds
  // its payload is intake policy): its proof is that the block's root commits no decision
  // for it, so a call the block executed or failed cannot be passed off as invalid.
  if (status.status === 'invalid') {
    if (d !== null) bad(`the state root of block ${block.height} commits a ${d.status} decision for this call, not invalid`);
    if (status.tx_index !== block.txIndex) bad(`the record's tx_index ${JSON.stringify(status.tx_index)} is not the proven ${block.txIndex}`);
    return { height: block.height, blockHash: block.blockHash, stateRoot: rootHex, status: 'invalid', txIndex: block.txIndex, result: null, errorCode: null, events: [] };
  }
  if (d === null) return bad(`the state root of block ${block.height} commits to no decision for this call`);
  const result = d!.result === null ? null : valueToJson(d!.result);
  const said: [string, unknown, unknown][] = [
    ['status', d!.status, status.status],
    ['tx_index', d!.txIndex, status.tx_index],
    ['result', result, status.result ?? null],
    ['error code', d!.errorCode, status.error?.code ?? null],
  ];
  for (const [name, proven, record] of said) if (proven !== record) bad(`the record's ${name} ${JSON.stringify(record)} is not the committed ${JSON.stringify(proven)}`);
  const events = d!.events.map((e) => ({ contract_id: toHex(e.contractId), name: e.name, params: e.params.map((p) => ({ type: p.type, value: valueToJson(p) as unknown })) }));
  return { height: block.height, blockHash: block.blockHash, stateRoot: rootHex, status: d!.status, txIndex: d!.txIndex, result, errorCode: d!.errorCode, events };
}

/** Storage bytes of a field key from its JSON form (the answer's `key`). */
function keyBytes(type: string, k: unknown): Uint8Array {
  switch (type) {
    case 'u64':
    case 'i64':
    case 'u128': {
      const n = BigInt(String(k));
      const len = type === 'u128' ? 16 : 8;
      const out = new Uint8Array(len);
      let x = BigInt.asUintN(len * 8, n);
      for (let i = len - 1; i >= 0; i--) {
        out[i] = Number(x & 0xffn);
        x >>= 8n;
      }
      return out;
    }
    case 'bool':
      return Uint8Array.of(k === true ? 1 : 0);
    case 'string':
      return new TextEncoder().encode(String(k));
    default:
      return new Uint8Array(Buffer.from(String(k), 'hex'));
  }
}

export interface EventsQuery {
  name?: string;
  from?: number;
  to?: number;
  limit?: number;
  offset?: number;
  cursor?: string;
}
export interface EventsAnswer {
  contract_id: string;
  events: { name: string; params: Record<string, unknown>; txid: string; block_height: number; tx_index: number; log_index: number }[];
  next_offset: number | null;
  next_cursor: string | null;
  /** Set when the cursor given names a block a reorg retracted: drop what you hold after `cursor` (null: everything); this page continues on the best chain. */
  rollback: { fork_height: number; cursor: string | null } | null;
}

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['executed', 'failed', 'invalid', 'dropped']);

export interface WaitOptions<T> {
  intervalMs?: number;
  timeoutMs?: number;
  onStatus?: (s: T) => void;
  /**
   * Also read GET /node_status at each poll and give up (ClientError chain_unavailable)
   * once the node has reported its chain-data endpoint failing CHAIN_DOWN_POLLS polls in a
   * row: nothing confirms without it, so waiting on is waiting for nothing. Default true.
   */
  chainWatch?: boolean;
}

/**
 * Polls in a row with the node's chain-data endpoint failing before a wait gives up: 15
 * polls are 30 s at the default 2-s interval, past a restart or a short outage of the
 * endpoint, far short of the 30-minute default timeout.
 */
export const CHAIN_DOWN_POLLS = 15;

/**
 * 404 answers in a row after which a wait gives up: a payload reaches a node by gossip in
 * seconds, so 60 s of `not_found` at the default 2-s interval is a txid or id this node
 * will not know (a typo, another network), not one still on its way.
 */
export const NOT_FOUND_POLLS = 30;

/** Asks until `done`; a 404 (not yet known to this node, e.g. still gossiping) is asked again, NOT_FOUND_POLLS times in a row at most. */
async function poll<T>(ask: () => Promise<T>, done: (t: T) => boolean, notYet: string, o: WaitOptions<T>, chainDown: () => Promise<string | null>): Promise<T> {
  const interval = o.intervalMs ?? 2_000;
  const timeout = o.timeoutMs ?? 30 * 60_000; // blocks take ~10 min; allow a few
  const deadline = Date.now() + timeout;
  let down = 0;
  let missing = 0;
  for (;;) {
    try {
      const t = await ask();
      missing = 0;
      o.onStatus?.(t);
      if (done(t)) return t;
    } catch (e) {
      if (!(e instanceof ClientError && e.status === 404)) throw e;
      if (++missing >= NOT_FOUND_POLLS) throw new ClientError(e.code, `${e.message} (still, after ${missing} polls: gave up waiting)`, e.status);
    }
    if (o.chainWatch !== false) {
      const why = await chainDown();
      down = why === null ? 0 : down + 1;
      if (down >= CHAIN_DOWN_POLLS) {
        throw new ClientError('chain_unavailable', `${notYet}: gave up waiting, the node's chain-data endpoint failed ${down} polls in a row (${oneLine(why!, 160)}) and nothing confirms without it`);
      }
    }
    if (Date.now() + interval > deadline) throw new ClientError('timeout', `${notYet} after ${Math.round(timeout / 1000)} s`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

export class NodeClient {
  constructor(
    readonly baseUrl: string,
    readonly opts: HttpOptions = {},
  ) {}

  private async json(path: string, init: { method?: string; body?: unknown; token?: string } = {}): Promise<unknown> {
    const a = await request(
      joinUrl(this.baseUrl, path),
      { method: init.method, body: init.body === undefined ? undefined : JSON.stringify(init.body), what: 'node', ...(init.token === undefined ? {} : { headers: { authorization: `Bearer ${init.token}` } }) },
      this.opts,
    );
    if (a.status >= 200 && a.status <= 299) return parseJson(a, 'node');
    let code = 'node_error';
    let message = `node ${init.method ?? 'GET'} ${path} answered ${a.status}`;
    try {
      const e = (JSON.parse(a.text) as { error?: { code?: unknown; message?: unknown } }).error;
      if (e && typeof e.code === 'string') {
        // the code travels as ClientError.code; printers show it once, before the message
        code = e.code;
        message = typeof e.message === 'string' && e.message ? e.message : `node ${init.method ?? 'GET'} ${path} answered ${a.status}`;
      }
    } catch {
      if (a.text) message += `: ${oneLine(a.text, 120)}`;
    }
    const err = new ClientError(code, oneLine(message), a.status);
    err.retryAfterMs = parseRetryAfter(a.retryAfter) ?? undefined;
    throw err;
  }

  deployContract(body: DeployBody): Promise<DeployAnswer> {
    return this.json('/deploy_contract', { method: 'POST', body }) as Promise<DeployAnswer>;
  }

  submitCall(body: CallBody): Promise<CallAnswer> {
    return this.json('/contract_call', { method: 'POST', body }) as Promise<CallAnswer>;
  }

  callStatus(txid: string): Promise<CallStatus> {
    return this.json(`/contract_call/${encodeURIComponent(txid)}/status`) as Promise<CallStatus>;
  }

  /**
   * GET /contract_call/{txid}/status?proof=true, verified offline (verifyCallProof) before
   * it is returned, with what the proof established.
   */
  async callStatusProven(txid: string, opts: CallProofOptions): Promise<ProvenCallStatus & { proven: VerifiedCall }> {
    const a = (await this.json(`/contract_call/${encodeURIComponent(txid)}/status?proof=true`)) as ProvenCallStatus;
    if (a?.txid !== txid) throw new ClientError('bad_proof', `asked for call ${txid}, the node answered ${String(a?.txid)}`);
    const proven = await verifyCallProof(a, a.proof, opts);
    return { ...a, proven };
  }

  /**
   * Polls GET /contract_call/{txid}/status until executed, failed, invalid or dropped.
   * A 404 (not yet known, e.g. still gossiping) is polled again. `onStatus` sees each answer.
   */
  waitForCall(txid: string, o: WaitOptions<CallStatus> = {}): Promise<CallStatus> {
    return poll(() => this.callStatus(txid), (s) => FINAL_STATUSES.has(s.status), `call ${txid} not final`, o, () => this.chainDown());
  }

  /** Why the node's chain-data endpoint is failing, from GET /node_status; null when it answers (or the node does not say). */
  private async chainDown(): Promise<string | null> {
    const s = (await this.nodeStatus()) as { chain?: { endpoint?: string; endpoint_ok?: boolean; last_error?: string | null } };
    if (s.chain?.endpoint_ok !== false) return null;
    return `${s.chain.endpoint ?? 'endpoint'}: ${s.chain.last_error ?? 'not answering'}`;
  }

  /** POST /v2/{id}/simulate: a call run against the node's state, nothing anchored or stored. */
  simulate(contractId: string, body: SimulateRequest): Promise<SimulateAnswer> {
    return this.json(`/v2/${encodeURIComponent(contractId)}/simulate`, { method: 'POST', body }) as Promise<SimulateAnswer>;
  }

  /** GET /contracts/{id}: status (pending until the deploy confirms, then active), position, ABI. */
  contractInfo(contractId: string): Promise<ContractInfoAnswer> {
    return this.json(`/contracts/${encodeURIComponent(contractId)}`) as Promise<ContractInfoAnswer>;
  }

  /** Polls GET /contracts/{id} until the deploy is active (its anchoring transaction confirmed); 404 is polled again. */
  waitForContract(contractId: string, o: WaitOptions<ContractInfoAnswer> = {}): Promise<ContractInfoAnswer> {
    return poll(() => this.contractInfo(contractId), (c) => c.status === 'active', `contract ${contractId} not active`, o, () => this.chainDown());
  }

  async contracts(): Promise<string[]> {
    return ((await this.json('/contracts')) as ContractsAnswer).contract_ids;
  }

  /**
   * The contract's ABI from GET /contracts/{id}/abi, when the node serves it (not part of
   * PROTOCOL.md section 6). Answers null on 404 / 405 so callers fall back to an artifact.
   */
  async abi(contractId: string): Promise<unknown[] | null> {
    try {
      const j = await this.json(`/contracts/${encodeURIComponent(contractId)}/abi`);
      if (Array.isArray(j)) return j;
      const inner = (j as { abi?: unknown }).abi;
      return Array.isArray(inner) ? inner : null;
    } catch (e) {
      if (e instanceof ClientError && (e.status === 404 || e.status === 405)) return null;
      throw e;
    }
  }

  /** GET /v2/{contract_id}/{field}[/{arg}]; `arg` already in its path form (see encodeFieldArg). */
  readField(contractId: string, field: string, arg?: string): Promise<FieldAnswer> {
    const tail = arg === undefined ? '' : `/${arg}`;
    return this.json(`/v2/${encodeURIComponent(contractId)}/${encodeURIComponent(field)}${tail}`) as Promise<FieldAnswer>;
  }

  /** GET /v2/... with ?proof=true, verified offline (verifyFieldAnswer) before it is returned. */
  async readFieldProven(contractId: string, field: string, arg: string | undefined, opts: { abi?: readonly unknown[]; trustedRoot?: string } = {}): Promise<ProvenFieldAnswer> {
    const tail = arg === undefined ? '' : `/${arg}`;
    const a = (await this.json(`/v2/${encodeURIComponent(contractId)}/${encodeURIComponent(field)}${tail}?proof=true`)) as ProvenFieldAnswer;
    verifyFieldAnswer(a, opts);
    return a;
  }

  /** The live feed (GET /v2/stream): an async iterator that reconnects and resumes by itself. */
  stream(opts: StreamOptions): AsyncGenerator<StreamMessage, void, undefined> {
    return stream(this.baseUrl, opts);
  }

  events(contractId: string, q: EventsQuery = {}): Promise<EventsAnswer> {
    const p = new URLSearchParams();
    if (q.name !== undefined) p.set('event_name', q.name);
    if (q.from !== undefined) p.set('from_block', String(q.from));
    if (q.to !== undefined) p.set('to_block', String(q.to));
    if (q.limit !== undefined) p.set('limit', String(q.limit));
    if (q.offset !== undefined) p.set('offset', String(q.offset));
    if (q.cursor !== undefined) p.set('cursor', q.cursor);
    const qs = p.toString();
    return this.json(`/events/${encodeURIComponent(contractId)}${qs ? `?${qs}` : ''}`) as Promise<EventsAnswer>;
  }

  health(): Promise<HealthAnswer> {
    return this.json('/health') as Promise<HealthAnswer>;
  }

  nodeStatus(): Promise<NodeStatusAnswer> {
    return this.json('/node_status') as Promise<NodeStatusAnswer>;
  }

  /** GET /ready: every part serves (a node not ready answers 503, thrown as ClientError not_ready). */
  ready(): Promise<Readiness> {
    return this.json('/ready') as Promise<Readiness>;
  }

  /** GET /metrics: Prometheus text. */
  async metrics(): Promise<string> {
    const a = await request(joinUrl(this.baseUrl, '/metrics'), { what: 'node' }, this.opts);
    if (a.status !== 200) throw new ClientError('node_error', `node GET /metrics answered ${a.status}`, a.status);
    return a.text;
  }

  /** GET /v2/state_root (the processed height's) or /v2/state_root/{height}. */
  stateRoot(height?: number): Promise<StateRootAnswer> {
    return this.json(height === undefined ? '/v2/state_root' : `/v2/state_root/${height}`) as Promise<StateRootAnswer>;
  }

  /** GET /contracts/{id}/abi as answered (`abi` answers the ABI alone, null when not served). */
  contractAbi(contractId: string): Promise<AbiAnswer> {
    return this.json(`/contracts/${encodeURIComponent(contractId)}/abi`) as Promise<AbiAnswer>;
  }

  /** GET /calls/{id} (operator: the node's api_token): the confirmed-call log, one page. */
  calls(contractId: string, q: { limit?: number; offset?: number }, token: string): Promise<CallsPage> {
    const p = new URLSearchParams();
    if (q.limit !== undefined) p.set('limit', String(q.limit));
    if (q.offset !== undefined) p.set('offset', String(q.offset));
    const qs = p.toString();
    return this.json(`/calls/${encodeURIComponent(contractId)}${qs ? `?${qs}` : ''}`, { token }) as Promise<CallsPage>;
  }

  /** POST /admin/clear_halt (operator: the node's api_token). */
  clearHalt(token: string): Promise<ClearHaltAnswer> {
    return this.json('/admin/clear_halt', { method: 'POST', token }) as Promise<ClearHaltAnswer>;
  }
}

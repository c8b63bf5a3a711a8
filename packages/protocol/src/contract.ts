/**
 * PROTOCOL.md section 2: artifact core, code_hash (RFC 8785 JCS), contract_id.
 */
import type { CoinJson } from './coin.js';
import canonicalizeModule from 'canonicalize';
import { NodeError } from './errors.js';
import { taggedHash, Tags, toHex } from './hash.js';
import { postedBytes } from './limits.js';
import type { ValueType } from './value.js';

/** The five keys hashed into code_hash, in no particular order (JCS sorts them). */
export const CORE_KEYS = ['bytecode', 'abi', 'function_offsets', 'function_offset_to_locals', 'constants'] as const;

/**
 * The core of an artifact as received (a deploy body, a stored registration): its JSON
 * types are checked (extractCore), its contents are what the verifier proves
 * (verifyArtifact in packages/protocol/src/vm/verifier.ts). Every CompiledCore is one.
 */
export interface ArtifactCore {
  bytecode: string;
  abi: unknown[];
  function_offsets: Record<string, unknown>;
  function_offset_to_locals: Record<string, unknown>;
  constants: unknown[];
}

/** An artifact as received: the core and, when given, its metadata (never hashed). */
export interface Artifact extends ArtifactCore {
  metadata?: Record<string, unknown>;
}

/** ABI entries of PROTOCOL section 2, as the compiler writes them and the verifier admits them. */
export type AbiParam = { name: string; type: ValueType };
export type AbiFunction = { type: 'function'; name: string; inputs: AbiParam[]; outputs: { type: ValueType }[]; readonly: boolean };
export type AbiEvent = { type: 'event'; name: string; inputs: AbiParam[] };
export type AbiField = { type: 'field'; name: string; key: ValueType | null; value: ValueType };
export type AbiEntry = AbiFunction | AbiEvent | AbiField;

/** Constant pool entry. Integers within +-(2^53-1) are JSON numbers, beyond that decimal strings. */
export type ConstantEntry =
  | { type: 'u64' | 'i64' | 'u128'; value: number | string }
  | { type: 'string'; value: string }
  | { type: 'bytes' | 'key'; value: string /* lowercase hex */ };

/** The core as the compiler writes it: the five keys with their entries typed. */
export interface CompiledCore extends ArtifactCore {
  abi: AbiEntry[];
  function_offsets: Record<string, number>;
  function_offset_to_locals: Record<string, number>;
  constants: ConstantEntry[];
}

/** What the compiler records beside the core (`metadata`, never hashed). */
export interface ArtifactMetadata { name: string; compiler_version: string; interfaces: string[]; code_hash: string }

/** An artifact as the compiler writes it (`compile FILE --json`). */
export interface CompiledArtifact extends CompiledCore { metadata: ArtifactMetadata }

// canonicalize is CommonJS (module.exports = fn) while its .d.ts declares an ES default
// export; under NodeNext the default import is module.exports itself at runtime.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

const HEX = /^(?:[0-9a-f]{2})*$/;

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

function bad(field: string, what: string): NodeError {
  return new NodeError('bad_request', `artifact ${field}: ${what}`, { field });
}

/** Refuses numbers JSON.parse could not have read exactly (integers beyond +-2^53 must be strings). */
function checkNumbers(x: unknown, path: string): void {
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) throw bad(path, 'number is not finite');
    if (Number.isInteger(x) && !Number.isSafeInteger(x)) {
      throw bad(path, 'integer beyond +-2^53 must be a decimal string');
    }
  } else if (Array.isArray(x)) {
    x.forEach((v, i) => checkNumbers(v, `${path}[${i}]`));
  } else if (isPlainObject(x)) {
    for (const [k, v] of Object.entries(x)) checkNumbers(v, `${path}.${k}`);
  }
}

/**
 * The core object of an artifact (or of a deploy request body, which holds the same keys
 * plus `txid` and `metadata`): exactly the five keys, values as given. Checks their JSON
 * types; throws NodeError bad_request naming the field.
 */
export function extractCore(artifact: unknown): ArtifactCore {
  if (!isPlainObject(artifact)) throw new NodeError('bad_request', 'artifact must be a JSON object');
  const a = artifact;
  if (typeof a.bytecode !== 'string' || !HEX.test(a.bytecode)) throw bad('bytecode', 'must be lowercase hex');
  if (!Array.isArray(a.abi)) throw bad('abi', 'must be an array');
  if (!isPlainObject(a.function_offsets)) throw bad('function_offsets', 'must be an object');
  if (!isPlainObject(a.function_offset_to_locals)) throw bad('function_offset_to_locals', 'must be an object');
  if (!Array.isArray(a.constants)) throw bad('constants', 'must be an array');
  const core: ArtifactCore = {
    bytecode: a.bytecode,
    abi: a.abi,
    function_offsets: a.function_offsets,
    function_offset_to_locals: a.function_offset_to_locals,
    constants: a.constants,
  };
  for (const k of CORE_KEYS) checkNumbers(core[k], k);
  return core;
}

/** UTF8(JCS(core)) as a string (RFC 8785). */
export function canonicalCore(core: ArtifactCore): string {
  const only: Record<string, unknown> = {};
  for (const k of CORE_KEYS) only[k] = core[k];
  const s = canonicalize(only);
  if (s === undefined) throw new NodeError('bad_request', 'artifact core cannot be canonicalized');
  return s;
}

/** code_hash = TH("SVC/code", UTF8(JCS(core))). Accepts a core or a whole artifact (extra keys ignored). */
export function codeHash(core: ArtifactCore | Artifact): Uint8Array {
  const c = extractCore(core);
  return taggedHash(Tags.code, new Uint8Array(Buffer.from(canonicalCore(c), 'utf8')));
}

/** contract_id = TH("SVC/contract", deploy_txid(32) || code_hash(32)); deploy_txid in display byte order. */
export function contractId(deployTxid: Uint8Array, codeHashBytes: Uint8Array): Uint8Array {
  if (deployTxid.length !== 32) throw new TypeError('deploy_txid must be 32 bytes');
  if (codeHashBytes.length !== 32) throw new TypeError('code_hash must be 32 bytes');
  return taggedHash(Tags.contract, deployTxid, codeHashBytes);
}

/** contract_id as its 64-character lowercase hex (the form used in REST paths and bodies). */
export function contractIdHex(deployTxid: Uint8Array, codeHashBytes: Uint8Array): string {
  return toHex(contractId(deployTxid, codeHashBytes));
}

/** The body of `POST /deploy_contract` (PROTOCOL section 6). */
export interface RegistrationBody extends ArtifactCore {
  txid: string;
  metadata?: Record<string, unknown>;
  /** The anchoring transaction as broadcast, lowercase hex (optional in the protocol; svc always sends it). */
  anchor_tx?: string;
  /** The coin the anchor spends (docs/STATE.md, "Coin evidence"); svc always sends it. */
  coin?: CoinJson;
}

/**
 * The registration body of an artifact anchored by `txid`: the txid, the five core keys,
 * the artifact's metadata when it has one, and the anchoring transaction's hex when given.
 */
export function registrationBody(artifact: unknown, txid: string, anchorTx?: string): RegistrationBody {
  const body: RegistrationBody = { txid, ...extractCore(artifact) };
  const metadata = (artifact as Artifact).metadata;
  if (metadata !== undefined) body.metadata = metadata;
  if (anchorTx !== undefined) body.anchor_tx = anchorTx;
  return body;
}

/**
 * Room a deployable artifact leaves in its registration body for `anchor_tx`: an anchoring
 * transaction of up to 1,024 bytes. A deploy anchor spending one wallet output is about
 * 240 bytes; 1,024 holds one spending six P2WPKH outputs (or eight P2TR ones). svc checks
 * the real body, with the real transaction, before it broadcasts anything.
 */
export const DEPLOY_ANCHOR_ROOM_BYTES = 1_024;

/**
 * Bytes of the artifact's registration body with a deploy txid and an anchoring
 * transaction of DEPLOY_ANCHOR_ROOM_BYTES: the compiler refuses an artifact for which this
 * is over MAX_BODY_BYTES, since no node could ever register it.
 */
export function deployableBodyBytes(artifact: unknown): number {
  return postedBytes(registrationBody(artifact, '0'.repeat(64), '00'.repeat(DEPLOY_ANCHOR_ROOM_BYTES)));
}

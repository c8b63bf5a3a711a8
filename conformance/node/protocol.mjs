/**
 * The runner's own small reading of ../shared/PROTOCOL.md sections 1 to 3: tagged hashes,
 * code hash, contract id, stamps and the call envelope's Borsh bytes. Written from the text,
 * not imported from the node under test, so the runner states its expectations by itself.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import * as ecc from 'tiny-secp256k1';

const sha256 = (b) => createHash('sha256').update(b).digest();

/** TH(tag, x): the BIP-340 tagged hash. */
export function taggedHash(tag, ...parts) {
  const t = sha256(Buffer.from(tag, 'utf8'));
  return sha256(Buffer.concat([t, t, ...parts]));
}

const CORE_KEYS = ['bytecode', 'abi', 'function_offsets', 'function_offset_to_locals', 'constants'];

/** code_hash = TH("SVC/code", UTF8(JCS(core))), core: the artifact's five core keys. */
export function codeHash(artifact) {
  const core = Object.fromEntries(CORE_KEYS.map((k) => [k, artifact[k]]));
  return taggedHash('SVC/code', Buffer.from(canonicalize(core), 'utf8'));
}

/** contract_id = hex(TH("SVC/contract", deploy_txid(32) || code_hash(32))), the txid as its display bytes. */
export function contractId(deployTxid, codeHashBytes) {
  return taggedHash('SVC/contract', Buffer.from(deployTxid, 'hex'), codeHashBytes).toString('hex');
}

/** OP_RETURN with one push of "SVC" || kind || body. */
function stampScript(kind, body) {
  const push = Buffer.concat([Buffer.from('SVC', 'ascii'), Buffer.from([kind]), body]);
  return Buffer.concat([Buffer.from([0x6a, push.length]), push]); // 36 and 68 bytes: direct pushes (< 76)
}
export const deployStamp = (codeHashBytes) => stampScript(0x01, codeHashBytes);
export const callStamp = (contractIdHex, envelopeHash) => stampScript(0x02, Buffer.concat([Buffer.from(contractIdHex, 'hex'), envelopeHash]));

const u32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64 = (n) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** A Value: only what the scenarios use (u64). */
function value(v) {
  if (v.type === 'u64') return Buffer.concat([Buffer.from([0]), u64(v.value)]);
  throw new Error(`the runner encodes no ${v.type} value`);
}

/**
 * A signed call envelope: its Borsh bytes (the REST payload's), its hash and the caller's
 * x-only key. `secret`: 32 bytes; `outpoint`: the coin the anchor must spend.
 */
export function signedEnvelope({ contractId: id, fn, args, secret, callId, outpoint }) {
  const caller = Buffer.from(ecc.xOnlyPointFromScalar(secret));
  const fnBytes = Buffer.from(fn, 'utf8');
  const unsigned = Buffer.concat([
    Buffer.from([1]),
    Buffer.from(id, 'hex'),
    u32(fnBytes.length),
    fnBytes,
    u32(args.length),
    ...args.map(value),
    caller,
    u64(callId),
    Buffer.from(outpoint.txid, 'hex'),
    u32(outpoint.vout),
  ]);
  const signature = Buffer.from(ecc.signSchnorr(taggedHash('SVC/call', unsigned), secret));
  const bytes = Buffer.concat([unsigned, signature]);
  return { bytes, hash: taggedHash('SVC/envelope', bytes), caller: caller.toString('hex') };
}

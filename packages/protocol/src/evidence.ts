/**
 * Bitcoin evidence of a payload (docs/STATE.md, "Bitcoin evidence"): the anchoring
 * transaction's bytes, and once confirmed, the block and merkle branch that place it at
 * (height, index); for a dropped call, the confirmed transaction that spent the named
 * outpoint, with its branch. Evidence travels with the payload (storage, gossip, sync,
 * REST proofs) and is checked by every receiver, never trusted.
 *
 * Checking is split in two:
 * - `checkEvidence` (here, pure): everything the bytes prove by themselves: the anchor
 *   parses completely and hashes to the claimed txid, each branch folds to a root, the
 *   spender spends the named outpoint and is not the anchor, no anchor is 64 bytes, and
 *   a 64-byte spender comes with its block's txids (else it is left out: `proven`). The
 *   binding (stamp and outpoint, packages/protocol/src/binding.ts) is read from the parsed anchor
 *   by the caller, which knows the payload.
 * - the chain part (the writer's, which holds the header chain): each root equals the
 *   merkle root of the node's header at `height`, whose hash is `blockHash`
 *   (`inclusionMatchesHeader`).
 *
 * Byte order: `blockHash` is display hex; branch hashes are internal order (the bytes as
 * hashed), leaf level first.
 */
import { Transaction } from 'bitcoinjs-lib';
import { NodeError } from './errors.js';
import { txidFromRaw } from './bitcoin.js';
import { HEADER_BYTES, headerHash } from './headers.js';
import { inputSpends } from './binding.js';
import { decodePayload, encodePayload } from './envelope.js';
import { parseHex, txidBytes } from './hash.js';
import { foldBranch, MAX_BRANCH_DEPTH, merkleBranch, merkleRoot } from './merkle-branch.js';
import { HEX32 } from './identifiers.js';
import { MAX_COIN_PREV_TXS, type CoinEvidence, type PrevTx } from './coin.js';
import { internalBytes, reversed } from './bytes.js';

/** Where a transaction sits on the chain, and the branch that proves it. */
export interface Inclusion {
  /** The block's hash, 64 hex, display order. */
  blockHash: string;
  height: number;
  /** The transaction's index in the block (0: the coinbase). */
  txIndex: number;
  /** Sibling hashes, internal order, leaf level first (merkleBranches). */
  branch: Uint8Array[];
}

/**
 * How a sender writes an inclusion's 32-byte hashes: `bytes` (the peer proto: bytes
 * fields, an empty list absent on the wire) or `hex` (REST JSON: 64 lowercase hex, every
 * member present).
 */
export type InclusionForm = 'bytes' | 'hex';

/** An inclusion's members that did not decode: the member (block_hash, height, tx_index, branch; '' the inclusion itself) and what it is not. */
export interface InclusionFault {
  member: '' | 'block_hash' | 'height' | 'tx_index' | 'branch';
  what: string;
}

/**
 * The one decoder of an inclusion as a sender writes it ({block_hash, height, tx_index,
 * branch}; the peer proto's Inclusion, a REST coin's `at`, a call proof's `confirmed` and
 * `spent_by`): the members checked in that order but the branch's length before the
 * numbers, and its hashes last. A fault names the member; each caller turns it into its
 * own error (code, field path and prefix its API documents). The binary storage form has
 * its own reader (EvidenceReader).
 */
export function decodeInclusion(v: unknown, form: InclusionForm): { ok: true; inclusion: Inclusion } | { ok: false; fault: InclusionFault } {
  const fault = (member: InclusionFault['member'], what: string): { ok: false; fault: InclusionFault } => ({ ok: false, fault: { member, what } });
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fault('', 'is not an object');
  const o = v as Record<string, unknown>;
  const hash = form === 'hex' ? (x: unknown): Uint8Array | null => (typeof x === 'string' ? parseHex(x, 32) : null) : (x: unknown): Uint8Array | null => (x instanceof Uint8Array && x.length === 32 ? new Uint8Array(x.buffer, x.byteOffset, 32) : null);
  const hashWhat = form === 'hex' ? 'is not 64 lowercase hex' : 'is not 32 bytes';
  const blockHash = hash(o['block_hash']);
  if (!blockHash) return fault('block_hash', hashWhat);
  const branch = form === 'bytes' && o['branch'] === undefined ? [] : o['branch'];
  if (!Array.isArray(branch) || branch.length > MAX_BRANCH_DEPTH) return fault('branch', `is not a list of at most ${MAX_BRANCH_DEPTH} hashes`);
  const height = o['height'];
  if (!isU32(height)) return fault('height', 'is not a 32-bit unsigned integer');
  const txIndex = o['tx_index'];
  if (!isU32(txIndex)) return fault('tx_index', 'is not a 32-bit unsigned integer');
  const hashes: Uint8Array[] = [];
  for (const h of branch as unknown[]) {
    const b = hash(h);
    if (!b) return fault('branch', `holds a hash that ${hashWhat}`);
    hashes.push(b);
  }
  return { ok: true, inclusion: { blockHash: Buffer.from(blockHash.buffer, blockHash.byteOffset, 32).toString('hex'), height, txIndex, branch: hashes } };
}

/** A chain-data endpoint's merkle proof of a transaction (Esplora's GET /tx/:txid/merkle-proof, shape-checked by its client). */
export interface EndpointMerkleProof {
  block_height: number;
  /** Sibling hashes in display hex, leaf level first. */
  merkle: readonly string[];
  pos: number;
}

/** The inclusion an endpoint's merkle proof gives, in the block `blockHash` (the proof does not name it: the caller's header or the transaction's status does). */
export function inclusionFromMerkleProof(proof: EndpointMerkleProof, blockHash: string): Inclusion {
  return { blockHash, height: proof.block_height, txIndex: proof.pos, branch: proof.merkle.map(internalBytes) };
}

/** The confirmed transaction that spent a call's named outpoint (its drop). */
export interface SpentBy {
  /** The raw spender, as broadcast, with or without its witness. */
  tx: Uint8Array;
  /** The input that spends the outpoint. */
  vin: number;
  at: Inclusion;
  /**
   * Every txid of the spender's block, in block order (internal byte order): what places
   * a spender of 64 bytes without its witness, which no branch can (INNER_NODE_BYTES).
   * Absent for any other spender (a branch is enough), and not sent to peers: a node
   * shown such a spend without it reads the block itself.
   */
  blockTxids?: Uint8Array[];
}

export interface Evidence {
  /** The raw anchoring transaction, as broadcast (with or without its witness). */
  anchorTx: Uint8Array;
  confirmed: Inclusion | null;
  spentBy: SpentBy | null;
  /**
   * What pays for the payload's wait while its anchor is unconfirmed: the transactions its
   * anchor spends (packages/protocol/src/coin.ts). Absent or null: none sent.
   */
  coin?: CoinEvidence | null;
}

/**
 * The lowest block whose application decides a payload by its evidence (the block that
 * confirms its anchor, or that confirms another spend of a call's outpoint); null when
 * the evidence places it nowhere. Until that block is applied the payload waits on it,
 * not on the chain-data endpoint (src/core/deferred/).
 */
export function settlesAt(ev: Pick<Evidence, 'confirmed' | 'spentBy'>): number | null {
  const heights = [ev.confirmed?.height, ev.spentBy?.at.height].filter((h): h is number => h !== undefined);
  return heights.length === 0 ? null : Math.min(...heights);
}

/**
 * The largest transaction evidence carries. A transaction's non-witness bytes weigh 4
 * units each and a block at most 4,000,000, so no transaction has more than 1,000,000 of
 * them; the witness is not needed by any check (a txid does not cover it), so a larger
 * transaction travels without it (`stripWitness`). Anything longer is no transaction.
 */
export const MAX_EVIDENCE_TX_BYTES = 1_000_000;

/**
 * The one transaction size no branch may place: 64 non-witness bytes are exactly
 * an inner merkle node (two 32-byte hashes). Were such bytes taken for a transaction, an
 * inner node presented as a leaf, with a shorter branch, would fold to the true root and
 * claim a transaction at an index that is not its own. Placing no transaction of 64
 * bytes by a branch closes that outright (an anchor of that size is refused; a spender
 * is placed by its block's whole txid list instead, `listedAt`), and is enough wherever
 * the block holds no 64-byte transaction: then every leaf of its tree sits at the one depth ceil(log2(n)), a branch
 * of another length cannot fold to the root, and a branch's length and bits fix the
 * index. The remaining case, a 64-byte transaction mined in the block whose halves a
 * forger reads as the inner node above a made-up leaf, is closed by the block's proven
 * depth (coinbaseDepth) and otherwise costs a miner's cooperation (such transactions are
 * non-standard) and a search of the order of 2^72 candidate transactions (docs/STATE.md,
 * "Bitcoin evidence"). Anchors always carry a stamp output, so they are never 64 bytes;
 * a 64-byte spender is not standard (Bitcoin Core relays nothing under 65 non-witness
 * bytes, and BIP54 makes them invalid) but may be mined: its drop is decided by its
 * block's txids (read by a node that holds the block as its header alone).
 */
export const INNER_NODE_BYTES = 64;

/** Which part of the evidence a refusal is about (also the field named to peers). */
export type EvidencePart = 'anchor_tx' | 'confirmed' | 'spent_by';

export type EvidenceCheck =
  | {
      ok: true;
      /** The parsed anchor (what checkCallBinding / checkDeployBinding and the execution context take). */
      anchor: Transaction;
      /** The merkle root (internal order) `confirmed` folds to; null without it. */
      confirmedRoot: Buffer | null;
      /** The merkle root (internal order) `spentBy.at` folds to; null without it. */
      spenderRoot: Buffer | null;
      /** The spender's txid (display hex); null without `spentBy`. */
      spenderTxid: string | null;
      /**
       * The evidence without what proves nothing: a spender of 64 bytes without its
       * witness and without its block's txids (its branch could be an inner node's).
       * Not false either: it is left out, and the node reads the block to decide.
       */
      proven: Evidence;
      /** Whether `spentBy` was left out of `proven` for that reason. */
      spenderUnproven: boolean;
    }
  | { ok: false; code: 'bad_evidence'; field: EvidencePart; reason: string };

/** A parsed transaction of a proof, or why its bytes are not one. */
export type Parsed = { ok: true; tx: Transaction; txid: string } | { ok: false; reason: string };

/**
 * Parses the bytes of a proven transaction strictly: one whole transaction (no trailing
 * bytes), in its canonical serialization (every length minimal, no empty witness
 * section: what Bitcoin Core would write), with inputs and outputs, not 64 bytes
 * without its witness (INNER_NODE_BYTES).
 */
export function parseProven(raw: Uint8Array, innerNodeSized: 'refuse' | 'allow' = 'refuse'): Parsed {
  if (!(raw instanceof Uint8Array) || raw.length === 0) return { ok: false, reason: 'is empty' };
  if (raw.length > MAX_EVIDENCE_TX_BYTES) return { ok: false, reason: `is ${raw.length} bytes, more than any transaction (${MAX_EVIDENCE_TX_BYTES})` };
  // A plain Uint8Array view: bitcoinjs then copies each field out rather than holding views of a pooled Buffer.
  const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  let tx: Transaction;
  try {
    tx = Transaction.fromBuffer(bytes);
  } catch (e) {
    return { ok: false, reason: `does not parse as one transaction: ${(e as Error).message}` };
  }
  if (tx.ins.length === 0 || tx.outs.length === 0) return { ok: false, reason: 'has no inputs or no outputs' };
  if (tx.byteLength(tx.hasWitnesses()) !== bytes.length) return { ok: false, reason: 'is not in canonical serialization' };
  if (innerNodeSized === 'refuse' && tx.byteLength(false) === INNER_NODE_BYTES) return { ok: false, reason: `is ${INNER_NODE_BYTES} bytes without its witness, the size of an inner merkle node` };
  return { ok: true, tx, txid: txidFromRaw(tx, bytes) };
}

const isU32 = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

/** The shape of an inclusion (hash, numbers, branch sizes); null when sound, else why not. */
export function inclusionShapeError(inc: Inclusion): string | null {
  if (!inc || typeof inc !== 'object') return 'is missing';
  if (typeof inc.blockHash !== 'string' || !HEX32.test(inc.blockHash)) return 'block hash is not 64 lowercase hex';
  if (!isU32(inc.height)) return 'height is not a 32-bit unsigned integer';
  if (!isU32(inc.txIndex)) return 'tx index is not a 32-bit unsigned integer';
  if (!Array.isArray(inc.branch)) return 'branch is not a list';
  if (inc.branch.length > MAX_BRANCH_DEPTH) return `branch has ${inc.branch.length} levels, more than any Bitcoin block (${MAX_BRANCH_DEPTH})`;
  for (const h of inc.branch) if (!(h instanceof Uint8Array) || h.length !== 32) return 'a branch hash is not 32 bytes';
  return null;
}

/** The root `inc` folds to from `txid` (display hex), or why not. */
export function foldInclusion(txid: string, inc: Inclusion): { ok: true; root: Buffer } | { ok: false; reason: string } {
  const shape = inclusionShapeError(inc);
  if (shape) return { ok: false, reason: shape };
  const f = foldBranch(reversed(txidBytes(txid)), inc.txIndex, inc.branch);
  if (!f.ok) return f;
  return { ok: true, root: Buffer.from(f.root.buffer, f.root.byteOffset, f.root.byteLength) };
}

/**
 * The stateless check of a payload's evidence (see the file header). `claimedTxid` is
 * the payload's txid (display hex); `outpoint` the outpoint a call's envelope names
 * (null for a deploy, which then may carry no `spentBy`).
 */
export function checkEvidence(claimedTxid: string, outpoint: { txid: string; vout: number } | null, ev: Evidence): EvidenceCheck {
  const refuse = (field: EvidencePart, reason: string): EvidenceCheck => ({ ok: false, code: 'bad_evidence', field, reason });
  if (!ev || typeof ev !== 'object') return refuse('anchor_tx', 'evidence is missing');
  const anchor = parseProven(ev.anchorTx);
  if (!anchor.ok) return refuse('anchor_tx', `the anchoring transaction ${anchor.reason}`);
  if (anchor.txid !== claimedTxid) return refuse('anchor_tx', `the anchoring transaction hashes to ${anchor.txid}, not ${claimedTxid}`);
  let confirmedRoot: Buffer | null = null;
  if (ev.confirmed) {
    const f = foldInclusion(anchor.txid, ev.confirmed);
    if (!f.ok) return refuse('confirmed', f.reason);
    confirmedRoot = f.root;
  }
  let spenderRoot: Buffer | null = null;
  let spenderTxid: string | null = null;
  if (ev.spentBy) {
    const s = ev.spentBy;
    if (!outpoint) return refuse('spent_by', 'only a call names an outpoint that can be spent');
    const spender = parseProven(s.tx, 'allow');
    if (!spender.ok) return refuse('spent_by', `the spender ${spender.reason}`);
    if (spender.txid === anchor.txid) return refuse('spent_by', 'the spender is the anchoring transaction itself, not a conflicting spend');
    const input = isU32(s.vin) ? spender.tx.ins[s.vin] : undefined;
    if (!input) return refuse('spent_by', `the spender has no input ${String(s.vin)}`);
    if (!inputSpends(input, txidBytes(outpoint.txid), outpoint.vout)) return refuse('spent_by', `the spender's input ${s.vin} does not spend ${outpoint.txid}:${outpoint.vout}`);
    const f = foldInclusion(spender.txid, s.at);
    if (!f.ok) return refuse('spent_by', f.reason);
    if (spender.tx.byteLength(false) === INNER_NODE_BYTES) {
      // Its branch proves nothing (an inner node's 64 bytes fold the same way): only the
      // block's whole txid list places it. Without the list it is left out, not refused:
      // an honest peer sends such a spend as it read it from the block.
      if (!s.blockTxids) return { ok: true, anchor: anchor.tx, confirmedRoot, spenderRoot: null, spenderTxid: null, proven: { ...ev, spentBy: null }, spenderUnproven: true };
      const listed = listedAt(spender.txid, s.at, s.blockTxids, f.root);
      if (listed !== null) return refuse('spent_by', listed);
    } else if (s.blockTxids) return refuse('spent_by', 'block txids come only with a spender of 64 bytes without its witness');
    spenderRoot = f.root;
    spenderTxid = spender.txid;
  }
  return { ok: true, anchor: anchor.tx, confirmedRoot, spenderRoot, spenderTxid, proven: ev, spenderUnproven: false };
}

/** Block txids a spend's evidence may list at most: a leaf for every index a branch can reach. */
export const MAX_BLOCK_TXIDS = 1 << MAX_BRANCH_DEPTH;

/**
 * Whether a block's whole txid list (internal order) places `txid` (display hex) at
 * `inc.txIndex` under the root `root` its branch folded to: the list folds to that root
 * with no duplicated pair (CVE-2012-2459), holds the txid at that index, and the branch
 * is the list's own (as long as the list's tree is deep). Null when it does, else why not.
 *
 * A list is the tree's leaf level, so a transaction in it is a leaf, never an inner node.
 * A forged list would have to be another level of the same tree (its inner nodes, every
 * one a double hash): a 64-byte "transaction" made of two of them would have to spend the
 * call's outpoint, which puts the 32 bytes of the outpoint's txid across a hash, out of
 * reach of any search.
 */
export function listedAt(txid: string, inc: Inclusion, blockTxids: readonly Uint8Array[], root: Uint8Array): string | null {
  if (!Array.isArray(blockTxids) || blockTxids.length === 0 || blockTxids.length > MAX_BLOCK_TXIDS) return `the block's txid list has ${blockTxids?.length ?? 0} entries, not 1 to ${MAX_BLOCK_TXIDS}`;
  for (const t of blockTxids) if (!(t instanceof Uint8Array) || t.length !== 32) return "a txid of the block's list is not 32 bytes";
  const listed = merkleRoot(blockTxids);
  if (listed.mutated) return "the block's txid list pairs two equal hashes (a mutated tree)";
  if (Buffer.compare(listed.root, root) !== 0) return "the block's txid list does not fold to the root the branch folds to";
  const own = blockTxids[inc.txIndex];
  if (!own || Buffer.compare(own, reversed(txidBytes(txid))) !== 0) return `the block's txid list does not hold ${txid} at index ${inc.txIndex}`;
  const branch = merkleBranch(blockTxids, inc.txIndex);
  if (branch.length !== inc.branch.length || branch.some((h, i) => Buffer.compare(h, inc.branch[i]!) !== 0)) return "the branch is not the block's txid list's branch";
  return null;
}

/**
 * The merkle roots checkEvidence folded an evidence's branches to (internal order):
 * intake passes them to the writer with the evidence, and the writer's acceptance
 * compares them with its headers instead of folding the same branches again (both
 * threads of one process; a branch is 2 x depth hashes). Without them the writer folds.
 */
export interface FoldedRoots {
  confirmed: Uint8Array | null;
  spender: Uint8Array | null;
}

/** A refusal of checkEvidence as the node's error (`bad_evidence`, naming the part). */
export function evidenceError(r: { field: EvidencePart; reason: string }): NodeError {
  return new NodeError('bad_evidence', `bad evidence (${r.field}): ${r.reason}`, { field: r.field });
}

/**
 * The chain part for one inclusion, given the root its branch folds to and the 80-byte
 * header the caller holds at `inclusion.height`: the header hashes to
 * `inclusion.blockHash` and commits to `root`. True, or why not.
 */
export function inclusionMatchesHeader(inclusion: Inclusion, root: Uint8Array, header80: Uint8Array): true | string {
  if (!(header80 instanceof Uint8Array) || header80.length !== HEADER_BYTES) return 'the header is not 80 bytes';
  const hash = headerHash(header80);
  if (hash !== inclusion.blockHash) return `the header at height ${inclusion.height} is block ${hash}, not ${inclusion.blockHash}`;
  if (Buffer.compare(header80.subarray(36, 68), root) !== 0) return `the branch does not lead to the merkle root of block ${hash}`;
  return true;
}

/**
 * The depth of a block's merkle tree, proven by its coinbase: the coinbase is leaf 0, so
 * its branch is as long as every branch of the block. `coinbaseTx` must parse strictly
 * as a coinbase (one input spending nothing), not be 64 bytes, and fold at index 0 to the
 * merkle root of `header80`. With the depth known, an inclusion of any other length is
 * refused, which closes the one weakness the 64-byte rule leaves open: a 64-byte
 * transaction mined in the block, whose halves a forger would pass off as the inner node
 * above a fake leaf one level deeper (docs/STATE.md, "Bitcoin evidence").
 */
export function coinbaseDepth(coinbaseTx: Uint8Array, branch: readonly Uint8Array[], header80: Uint8Array): { ok: true; depth: number } | { ok: false; reason: string } {
  const cb = parseProven(coinbaseTx);
  if (!cb.ok) return { ok: false, reason: `the coinbase ${cb.reason}` };
  if (!cb.tx.isCoinbase()) return { ok: false, reason: 'the transaction is not a coinbase' };
  const f = foldBranch(reversed(txidBytes(cb.txid)), 0, branch);
  if (!f.ok) return f;
  if (!(header80 instanceof Uint8Array) || header80.length !== HEADER_BYTES) return { ok: false, reason: 'the header is not 80 bytes' };
  if (Buffer.compare(header80.subarray(36, 68), f.root) !== 0) return { ok: false, reason: "the coinbase's branch does not lead to the header's merkle root" };
  return { ok: true, depth: branch.length };
}

/** The transaction without its witness (the bytes its txid hashes); the same bytes when it has none. Throws on bytes that are not one transaction. */
export function stripWitness(raw: Uint8Array): Uint8Array {
  const tx = Transaction.fromBuffer(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
  if (!tx.hasWitnesses()) return raw;
  for (let i = 0; i < tx.ins.length; i++) tx.setWitness(i, []);
  return new Uint8Array(tx.toBuffer());
}

// ------------------------------------------------------------------ binary codec (storage)

/**
 * Stored form, binary (the store keeps it beside the payload):
 *
 *   u8 format (1) | u32be len | anchor_tx | u8 parts (bit 0: confirmed, bit 1: spent_by,
 *   bit 2: coin) | [confirmed: inclusion] | [spent_by: u32be len | tx | u32be vin | inclusion] |
 *   [coin: u8 count | count x (u32be len | tx | u8 has_at | [inclusion])]
 *   inclusion = block_hash[32] (display order) | u32be height | u32be tx_index |
 *               u8 depth | depth x hash[32] (internal order, leaf level first)
 *
 * Decoding is strict: unknown format or part bits, empty or oversized transactions,
 * branches deeper than MAX_BRANCH_DEPTH, short input and trailing bytes are refused
 * (NodeError bad_request naming the field).
 */
const EVIDENCE_FORMAT = 1;
const PART_CONFIRMED = 1;
const PART_SPENT_BY = 2;
const PART_COIN = 4;
/** The spender's block txids (SpentBy.blockTxids): u32be count | count x hash[32]. */
const PART_SPENDER_BLOCK = 8;

function inclusionBytes(inc: Inclusion): number {
  return 32 + 4 + 4 + 1 + 32 * inc.branch.length;
}

function writeInclusion(out: Buffer, o: number, inc: Inclusion, field: string): number {
  const shape = inclusionShapeError(inc);
  if (shape) throw new NodeError('bad_request', `evidence ${field}: ${shape}`, { field });
  o += out.write(inc.blockHash, o, 32, 'hex');
  o = out.writeUInt32BE(inc.height, o);
  o = out.writeUInt32BE(inc.txIndex, o);
  o = out.writeUInt8(inc.branch.length, o);
  for (const h of inc.branch) {
    out.set(h, o);
    o += 32;
  }
  return o;
}

function checkTxBytes(b: Uint8Array, field: string): void {
  if (!(b instanceof Uint8Array) || b.length === 0 || b.length > MAX_EVIDENCE_TX_BYTES) {
    throw new NodeError('bad_request', `evidence ${field} must be 1 to ${MAX_EVIDENCE_TX_BYTES} bytes`, { field });
  }
}

export function encodeEvidence(ev: Evidence): Buffer {
  checkTxBytes(ev.anchorTx, 'anchor_tx');
  if (ev.spentBy) {
    checkTxBytes(ev.spentBy.tx, 'spent_by.tx');
    if (!isU32(ev.spentBy.vin)) throw new NodeError('bad_request', 'evidence spent_by.vin is not a 32-bit unsigned integer', { field: 'spent_by.vin' });
  }
  let len = 1 + 4 + ev.anchorTx.length + 1;
  if (ev.confirmed) len += inclusionBytes(ev.confirmed);
  if (ev.spentBy) len += 4 + ev.spentBy.tx.length + 4 + inclusionBytes(ev.spentBy.at);
  const listed = ev.spentBy?.blockTxids;
  if (listed) {
    if (listed.length === 0 || listed.length > MAX_BLOCK_TXIDS || listed.some((t) => t.length !== 32)) throw new NodeError('bad_request', `evidence spent_by.block_txids must be 1 to ${MAX_BLOCK_TXIDS} hashes of 32 bytes`, { field: 'spent_by.block_txids' });
    len += 4 + 32 * listed.length;
  }
  const coin = ev.coin?.prevTxs;
  if (coin) {
    if (coin.length === 0 || coin.length > MAX_COIN_PREV_TXS) throw new NodeError('bad_request', `evidence coin must hold 1 to ${MAX_COIN_PREV_TXS} prev txs`, { field: 'coin' });
    len += 1;
    for (const p of coin) {
      checkTxBytes(p.tx, 'coin.tx');
      len += 4 + p.tx.length + 1 + (p.at ? inclusionBytes(p.at) : 0);
    }
  }
  const out = Buffer.allocUnsafe(len);
  let o = out.writeUInt8(EVIDENCE_FORMAT, 0);
  o = out.writeUInt32BE(ev.anchorTx.length, o);
  out.set(ev.anchorTx, o);
  o += ev.anchorTx.length;
  o = out.writeUInt8((ev.confirmed ? PART_CONFIRMED : 0) | (ev.spentBy ? PART_SPENT_BY : 0) | (coin ? PART_COIN : 0) | (listed ? PART_SPENDER_BLOCK : 0), o);
  if (ev.confirmed) o = writeInclusion(out, o, ev.confirmed, 'confirmed');
  if (ev.spentBy) {
    o = out.writeUInt32BE(ev.spentBy.tx.length, o);
    out.set(ev.spentBy.tx, o);
    o += ev.spentBy.tx.length;
    o = out.writeUInt32BE(ev.spentBy.vin, o);
    o = writeInclusion(out, o, ev.spentBy.at, 'spent_by.at');
  }
  if (listed) {
    o = out.writeUInt32BE(listed.length, o);
    for (const t of listed) {
      out.set(t, o);
      o += 32;
    }
  }
  if (coin) {
    o = out.writeUInt8(coin.length, o);
    for (const p of coin) {
      o = out.writeUInt32BE(p.tx.length, o);
      out.set(p.tx, o);
      o += p.tx.length;
      o = out.writeUInt8(p.at ? 1 : 0, o);
      if (p.at) o = writeInclusion(out, o, p.at, 'coin.at');
    }
  }
  if (o !== len) throw new Error('evidence encoding: length mismatch');
  return out;
}

class EvidenceReader {
  pos = 0;
  constructor(
    private readonly b: Buffer,
    /** Byte fields as views into `b` instead of copies (decodeEvidence's `views`). */
    private readonly views = false,
  ) {}
  fail(field: string, what: string): never {
    throw new NodeError('bad_request', `evidence ${field} at offset ${this.pos}: ${what}`, { field, offset: this.pos });
  }
  need(n: number, field: string): void {
    if (this.b.length - this.pos < n) this.fail(field, `needs ${n} bytes, ${this.b.length - this.pos} left`);
  }
  u8(field: string): number {
    this.need(1, field);
    return this.b[this.pos++]!;
  }
  u32(field: string): number {
    this.need(4, field);
    const v = this.b.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  bytes(n: number, field: string): Uint8Array {
    this.need(n, field);
    const out = this.views ? new Uint8Array(this.b.buffer, this.b.byteOffset + this.pos, n) : new Uint8Array(this.b.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }
  tx(field: string): Uint8Array {
    const n = this.u32(field);
    if (n === 0 || n > MAX_EVIDENCE_TX_BYTES) this.fail(field, `length ${n} is not 1 to ${MAX_EVIDENCE_TX_BYTES}`);
    return this.bytes(n, field);
  }
  inclusion(field: string): Inclusion {
    this.need(32, `${field}.block_hash`);
    const blockHash = this.b.toString('hex', this.pos, this.pos + 32);
    this.pos += 32;
    const height = this.u32(`${field}.height`);
    const txIndex = this.u32(`${field}.tx_index`);
    const depth = this.u8(`${field}.branch`);
    if (depth > MAX_BRANCH_DEPTH) this.fail(`${field}.branch`, `${depth} levels, more than any Bitcoin block (${MAX_BRANCH_DEPTH})`);
    const branch: Uint8Array[] = [];
    for (let i = 0; i < depth; i++) branch.push(this.bytes(32, `${field}.branch`));
    return { blockHash, height, txIndex, branch };
  }
}

/**
 * The evidence `bytes` encode. Its byte fields are copies, or with `views` views into
 * `bytes` (a payload packed for another thread, src/packed-payload.ts: one buffer).
 */
export function decodeEvidence(bytes: Uint8Array, opts: { views?: boolean } = {}): Evidence {
  const r = new EvidenceReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), opts.views);
  const format = r.u8('format');
  if (format !== EVIDENCE_FORMAT) r.fail('format', `unknown format ${format}`);
  const anchorTx = r.tx('anchor_tx');
  const parts = r.u8('parts');
  if (parts & ~(PART_CONFIRMED | PART_SPENT_BY | PART_COIN | PART_SPENDER_BLOCK)) r.fail('parts', `unknown part bits 0x${parts.toString(16)}`);
  if (parts & PART_SPENDER_BLOCK && !(parts & PART_SPENT_BY)) r.fail('parts', 'block txids without a spender');
  const confirmed = parts & PART_CONFIRMED ? r.inclusion('confirmed') : null;
  let spentBy: SpentBy | null = null;
  if (parts & PART_SPENT_BY) {
    const tx = r.tx('spent_by.tx');
    const vin = r.u32('spent_by.vin');
    spentBy = { tx, vin, at: r.inclusion('spent_by.at') };
    if (parts & PART_SPENDER_BLOCK) {
      const n = r.u32('spent_by.block_txids');
      if (n === 0 || n > MAX_BLOCK_TXIDS) r.fail('spent_by.block_txids', `count ${n} is not 1 to ${MAX_BLOCK_TXIDS}`);
      spentBy.blockTxids = Array.from({ length: n }, () => r.bytes(32, 'spent_by.block_txids'));
    }
  }
  let coin: CoinEvidence | null = null;
  if (parts & PART_COIN) {
    const n = r.u8('coin');
    if (n === 0 || n > MAX_COIN_PREV_TXS) r.fail('coin', `${n} prev txs, not 1 to ${MAX_COIN_PREV_TXS}`);
    const prevTxs: PrevTx[] = [];
    for (let i = 0; i < n; i++) {
      const tx = r.tx('coin.tx');
      const has = r.u8('coin.at');
      if (has > 1) r.fail('coin.at', `flag ${has} is not 0 or 1`);
      prevTxs.push({ tx, at: has ? r.inclusion('coin.at') : null });
    }
    coin = { prevTxs };
  }
  if (r.pos !== bytes.length) r.fail('end', `${bytes.length - r.pos} trailing bytes`);
  return coin ? { anchorTx, confirmed, spentBy, coin } : { anchorTx, confirmed, spentBy };
}

// ------------------------------------------------------------------ JSON (REST call proofs)

/** An inclusion as served in a call proof (docs/STATE.md, "Call proofs"): hex, with the block's header. */
export interface InclusionJson {
  block_hash: string;
  height: number;
  tx_index: number;
  /** The block's 80-byte header, hex. */
  header: string;
  /** Sibling hashes, hex of their internal-order bytes, leaf level first. */
  branch: string[];
}
export interface SpentByJson extends InclusionJson {
  /** The spender, raw hex. */
  tx: string;
  vin: number;
  /** Only for a spender of 64 bytes without its witness: every txid of its block, hex of internal-order bytes, in block order. */
  block_txids?: string[];
}
/**
 * The branch of a call's decision under the state root of its anchor's block (a drop
 * has none: no root commits to it) (docs/STATE.md, "Call proofs"; the leaf's encoding and the roots are
 * packages/protocol/src/state/decisions.ts's): all hex, `siblings` and `leaf` as a field proof's trie part.
 */
export interface DecisionProofJson {
  height: number;
  block_hash: string;
  /** The block's state root: `stateRootOf(contracts_root, decisions_root)`. */
  state_root: string;
  contracts_root: string;
  decisions_root: string;
  /** The trie proof of key = txid under decisions_root. */
  siblings: string[];
  leaf: { path: string; value: string } | null;
}

/** The `proof` member of GET /contract_call/{txid}/status?proof=true. */
export interface CallProofJson {
  /** The anchoring transaction, raw hex. */
  anchor_tx: string;
  /** borsh(envelope), standard base64 with padding (as POSTed). */
  payload: string;
  confirmed: InclusionJson | null;
  spent_by: SpentByJson | null;
  /** The decision's branch, for an executed, failed or invalid call (null while pending and for a drop). */
  decision: DecisionProofJson | null;
}

/** The headers a call proof carries beside its evidence (80 bytes each). */
export interface ProofHeaders {
  confirmed: Uint8Array | null;
  spentBy: Uint8Array | null;
}

const toHexString = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function inclusionJson(inc: Inclusion, header: Uint8Array | null, field: string): InclusionJson {
  if (!header || header.length !== HEADER_BYTES) throw new NodeError('internal', `call proof: no 80-byte header for ${field} at height ${inc.height}`);
  return { block_hash: inc.blockHash, height: inc.height, tx_index: inc.txIndex, header: toHexString(header), branch: inc.branch.map(toHexString) };
}

/** The JSON proof of a call from its evidence, payload bytes and the headers of the blocks the evidence names (the node's side). */
export function callProofJson(ev: Evidence, payload: Uint8Array, headers: ProofHeaders, decision: DecisionProofJson | null = null): CallProofJson {
  return {
    anchor_tx: toHexString(ev.anchorTx),
    payload: encodePayload(payload),
    confirmed: ev.confirmed ? inclusionJson(ev.confirmed, headers.confirmed, 'confirmed') : null,
    spent_by: ev.spentBy
      ? { tx: toHexString(ev.spentBy.tx), vin: ev.spentBy.vin, ...inclusionJson(ev.spentBy.at, headers.spentBy, 'spent_by'), ...(ev.spentBy.blockTxids ? { block_txids: ev.spentBy.blockTxids.map(toHexString) } : {}) }
      : null,
    decision,
  };
}

/**
 * A call proof's JSON read back strictly (the client's side): every member present with
 * its type, hex lowercase, hashes 32 bytes, headers 80, branches at most
 * MAX_BRANCH_DEPTH. Throws NodeError bad_request naming the member.
 */
export function parseCallProof(j: unknown): { evidence: Evidence; payload: Uint8Array; headers: ProofHeaders } {
  const bad = (field: string, what: string): never => {
    throw new NodeError('bad_request', `call proof ${field} ${what}`, { field });
  };
  const obj = (v: unknown, field: string): Record<string, unknown> => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(field, 'is not an object');
    return v as Record<string, unknown>;
  };
  const hexBytes = (v: unknown, field: string, len?: number): Uint8Array => {
    const b = typeof v === 'string' ? parseHex(v, len) : null;
    if (!b || (len === undefined && b.length === 0)) bad(field, len ? `is not ${len} bytes of lowercase hex` : 'is not lowercase hex');
    return b!;
  };
  const u32 = (v: unknown, field: string): number => (isU32(v) ? v : bad(field, 'is not a 32-bit unsigned integer'));
  const inclusion = (v: unknown, field: string): { inc: Inclusion; header: Uint8Array } => {
    const d = decodeInclusion(v, 'hex');
    if (!d.ok) return bad(d.fault.member ? `${field}.${d.fault.member}` : field, d.fault.what);
    return { inc: d.inclusion, header: hexBytes((v as Record<string, unknown>)['header'], `${field}.header`, HEADER_BYTES) };
  };
  const p = obj(j, 'proof');
  const anchorTx = hexBytes(p['anchor_tx'], 'anchor_tx');
  if (anchorTx.length > MAX_EVIDENCE_TX_BYTES) bad('anchor_tx', `is more than ${MAX_EVIDENCE_TX_BYTES} bytes`);
  const payload = decodePayload(p['payload']);
  const confirmed = p['confirmed'] === null ? null : inclusion(p['confirmed'], 'confirmed');
  let spentBy: { s: SpentBy; header: Uint8Array } | null = null;
  if (p['spent_by'] !== null) {
    const at = inclusion(p['spent_by'], 'spent_by');
    const o = p['spent_by'] as Record<string, unknown>;
    const tx = hexBytes(o['tx'], 'spent_by.tx');
    if (tx.length > MAX_EVIDENCE_TX_BYTES) bad('spent_by.tx', `is more than ${MAX_EVIDENCE_TX_BYTES} bytes`);
    spentBy = { s: { tx, vin: u32(o['vin'], 'spent_by.vin'), at: at.inc }, header: at.header };
    if (o['block_txids'] !== undefined) {
      const list = o['block_txids'];
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BLOCK_TXIDS) bad('spent_by.block_txids', `is not a list of 1 to ${MAX_BLOCK_TXIDS} hashes`);
      spentBy.s.blockTxids = (list as unknown[]).map((h) => hexBytes(h, 'spent_by.block_txids', 32));
    }
  }
  return {
    evidence: { anchorTx, confirmed: confirmed?.inc ?? null, spentBy: spentBy?.s ?? null },
    payload,
    headers: { confirmed: confirmed?.header ?? null, spentBy: spentBy?.header ?? null },
  };
}

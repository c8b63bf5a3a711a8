/**
 * A block's decisions and the state root that commits to them (docs/STATE.md, "The
 * state root", "Decisions"): the one home of the decision leaf's encoding, of the
 * decisions root and of how it is folded with the contracts root into the state root.
 *
 * Every call the block executes or fails is one entry of
 * a Merkle trie (trie.ts) keyed by its txid: the trie's shape, and so its root, depends
 * on the set of decisions alone, never on the order the block (or a replay) made them.
 * Each leaf says where in the block the call was decided and what came of it; the status
 * record a node answers, and the events it emitted, are checked against it
 * (packages/client/src/node.ts, verifyCallProof). An invalid call has no leaf (whether a node
 * holds its payload is intake policy; it changes nothing), nor has a drop: it is known only to nodes
 * that hold the dropped call's payload, which is node policy, not chain, so committing it
 * would let honest nodes publish different roots for one block (a dropped call is proven
 * by its spender's inclusion alone).
 */
import { taggedHash } from '../hash.js';
import { readValue, valueBytes, writeValue, type Value } from '../value.js';
import { EMPTY_ROOT, MerkleTrie, verifyTrieProof, type TrieProof } from './trie.js';

/**
 * What a state root commits to. 1: the contracts trie alone. 2: the contracts trie and the
 * block's decisions, folded by `stateRootOf`. 3: the same parts, decided under this
 * release's execution rules (LOOP's counter incremented exactly past 2^53,
 * docs/LANGUAGE.md), which can decide a hand-written contract's call otherwise than version
 * 2's. Roots of different versions never compare equal (the version is hashed in), so a
 * node never takes another version's root for a divergence of state.
 */
export const STATE_ROOT_VERSION = 3;

/** A committed call's status as its leaf's first byte (none for a drop, above). */
export const DECISION_STATUS = { executed: 1, failed: 2, invalid: 3 } as const;
export type DecidedStatus = keyof typeof DECISION_STATUS;
const STATUS_OF_BYTE: readonly (DecidedStatus | undefined)[] = [undefined, 'executed', 'failed', 'invalid'];

/** One event of a call, as the VM emitted it (log index = its place in the list). */
export interface DecisionEvent {
  /** The emitting contract (32 bytes): a call's callees emit under their own id. */
  contractId: Uint8Array;
  name: string;
  params: readonly Value[];
}

/** What a block decided for one call whose anchor it confirms: the leaf's content. */
export interface Decision {
  status: DecidedStatus;
  /** The anchor's index in the block. */
  txIndex: number;
  /** Executed: the function's result (null when it returns nothing). */
  result: Value | null;
  /** Failed, invalid: the error code (its message is not committed). */
  errorCode: string | null;
  /** Executed: the events in log-index order; empty otherwise. */
  events: readonly DecisionEvent[];
}

/**
 * The leaf value of a decision (the trie's entry under key = txid, 32 bytes as its display
 * hex reads):
 *
 *   u8 status (1 executed, 2 failed, 3 invalid; any other byte is refused), then
 *   executed:        u32be tx_index | u8 has_result | [value] |
 *                    u32be event count | per event in log-index order:
 *                      contract_id[32] | u16be len(name) | name (UTF-8) |
 *                      u16be param count | params as values
 *   failed, invalid: u32be tx_index | u16be len(code) | code (UTF-8)
 *
 * A value is the binary typed value of packages/protocol/src/value.ts (u8 tag, integers
 * big-endian, string and bytes u32be length first).
 */
export function encodeDecision(d: Decision): Buffer {
  const statusByte: number | undefined = Object.hasOwn(DECISION_STATUS, d.status) ? DECISION_STATUS[d.status] : undefined;
  if (statusByte === undefined) throw new Error(`no decision leaf for status ${String(d.status)}`);
  let len = 1 + 4;
  if (d.status === 'executed') {
    len += 1 + (d.result ? valueBytes(d.result) : 0) + 4;
    for (const e of d.events) {
      len += 32 + 2 + Buffer.byteLength(e.name, 'utf8') + 2;
      for (const p of e.params) len += valueBytes(p);
    }
  } else len += 2 + Buffer.byteLength(d.errorCode ?? '', 'utf8');
  if (d.txIndex === null || d.txIndex === undefined) throw new Error(`a ${d.status} decision has no transaction index`);
  const out = Buffer.allocUnsafe(len);
  let o = out.writeUInt8(statusByte, 0);
  o = out.writeUInt32BE(d.txIndex, o);
  if (d.status === 'executed') {
    o = out.writeUInt8(d.result ? 1 : 0, o);
    if (d.result) o = writeValue(out, o, d.result);
    o = out.writeUInt32BE(d.events.length, o);
    for (const e of d.events) {
      if (e.contractId.length !== 32) throw new Error('an event\'s contract id is not 32 bytes');
      out.set(e.contractId, o);
      o += 32;
      const n = out.write(e.name, o + 2, 'utf8');
      out.writeUInt16BE(n, o);
      o += 2 + n;
      o = out.writeUInt16BE(e.params.length, o);
      for (const p of e.params) o = writeValue(out, o, p);
    }
  } else {
    const n = out.write(d.errorCode ?? '', o + 2, 'utf8');
    out.writeUInt16BE(n, o);
    o += 2 + n;
  }
  if (o !== len) throw new Error('decision encoding: length mismatch');
  return out;
}

/**
 * The decision a leaf value encodes. Strict: the bytes must be exactly what
 * encodeDecision writes for what they decode to (no trailing bytes, no unknown status or
 * value tag, canonical lengths). Throws Error naming what is wrong.
 */
export function decodeDecision(bytes: Uint8Array): Decision {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let d: Decision;
  try {
    let o = 0;
    const status = STATUS_OF_BYTE[b.readUInt8(o++)];
    if (status === undefined) throw new Error(`unknown status byte ${b[0]}`);
    const txIndex = b.readUInt32BE(o);
    o += 4;
    let result: Value | null = null;
    let errorCode: string | null = null;
    const events: DecisionEvent[] = [];
    if (status === 'executed') {
      if (b.readUInt8(o++) === 1) [result, o] = readValue(b, o);
      const count = b.readUInt32BE(o);
      o += 4;
      for (let i = 0; i < count; i++) {
        if (b.length - o < 34) throw new Error('truncated event');
        const contractId = new Uint8Array(b.subarray(o, o + 32));
        const n = b.readUInt16BE(o + 32);
        if (b.length - o - 34 < n) throw new Error('truncated event name');
        const name = b.toString('utf8', o + 34, o + 34 + n);
        o += 34 + n;
        const pc = b.readUInt16BE(o);
        o += 2;
        const params: Value[] = [];
        for (let j = 0; j < pc; j++) {
          let v: Value;
          [v, o] = readValue(b, o);
          params.push(v);
        }
        events.push({ contractId, name, params });
      }
    } else {
      const n = b.readUInt16BE(o);
      if (b.length - o - 2 < n) throw new Error('truncated error code');
      errorCode = b.toString('utf8', o + 2, o + 2 + n);
      o += 2 + n;
    }
    if (o > b.length) throw new Error('truncated');
    d = { status, txIndex, result, errorCode, events };
  } catch (e) {
    throw new Error(`decision leaf does not decode: ${(e as Error).message}`);
  }
  // Canonical: bytes that decode leniently (a bool of 2, invalid UTF-8, trailing bytes) differ from their re-encoding.
  if (!encodeDecision(d).equals(b)) throw new Error('decision leaf is not in its canonical encoding');
  return d;
}

/**
 * The decisions root of a block: the trie over (txid, leaf value); 32 zero bytes when it
 * decided nothing. (Built in one pass from sorted paths instead, it cost the same: the
 * hashes are the cost, 4 ms for a block of 1,000 one-event calls on a loaded machine.)
 */
export function decisionsRoot(leaves: Iterable<[Uint8Array, Uint8Array]>): Uint8Array {
  return new MerkleTrie(leaves).rootHash();
}

/** The proof of one call's leaf in a block's decisions (trie.ts's TrieProof). */
export function proveDecision(leaves: Iterable<[Uint8Array, Uint8Array]>, txid: Uint8Array): TrieProof {
  return new MerkleTrie(leaves).prove(txid);
}

const VERSION_BYTE = Uint8Array.of(STATE_ROOT_VERSION);

/**
 * The state root of a processed block (version 3): TH("SVC/root", u8 3 || contracts_root
 * || decisions_root). The journal's anchor, where no block was applied, keeps the empty
 * root (32 zero bytes).
 */
export function stateRootOf(contractsRoot: Uint8Array, decisions: Uint8Array): Uint8Array {
  if (contractsRoot.length !== 32 || decisions.length !== 32) throw new Error('state root: a part is not 32 bytes');
  return taggedHash('SVC/root', VERSION_BYTE, contractsRoot, decisions);
}

/**
 * Checks that a state root is made of these two parts: `stateRootOf(contracts,
 * decisions)`, or, with no decisions root (the journal's anchor), the contracts root
 * itself. Throws Error when it is not.
 */
export function checkRootParts(stateRoot: Uint8Array, contracts: Uint8Array, decisions: Uint8Array | null): void {
  const folded = decisions === null ? contracts : stateRootOf(contracts, decisions);
  if (Buffer.compare(Buffer.from(folded), Buffer.from(stateRoot)) !== 0) throw new Error('bad proof: contracts_root and decisions_root do not fold to the state root');
}

/**
 * Checks a decision proof: the leaf under `txid` folds to `decisions`, and `contracts`
 * with `decisions` fold to `stateRoot`. Returns the proven decision; null when the proof
 * shows the block decided nothing for the txid. Throws Error when the proof does not hold.
 */
export function verifyDecisionProof(stateRoot: Uint8Array, contracts: Uint8Array, decisions: Uint8Array, txid: Uint8Array, proof: TrieProof): Decision | null {
  checkRootParts(stateRoot, contracts, decisions);
  const leaf = verifyTrieProof(decisions, txid, proof);
  return leaf === null ? null : decodeDecision(leaf);
}

export { EMPTY_ROOT };

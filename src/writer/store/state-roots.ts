/**
 * Bucket `stateRoot`: the state root after each block, key u32be height, JSON
 * {height, block_hash, state_root, contracts_root, decisions_root} (hex; the two parts
 * of the root, packages/protocol/src/state/decisions.ts, absent for the journal's anchor, whose root is the
 * empty root). A re-derivation keeps only the anchor's.
 */
import { Bucket } from './buckets.js';
import { bucketRange, jsonValue, keyOfHeight, parseJson, type KeyRange } from './keys.js';

export interface StateRootAt {
  height: number;
  block_hash: string;
  state_root: string;
  /** The contracts trie's root after the block (the anchor's: its state_root). */
  contracts_root?: string;
  /** The root of the block's decisions (absent for the anchor). */
  decisions_root?: string;
}

export const key = (height: number): Buffer => keyOfHeight(Bucket.stateRoot, height);
export const all = (): KeyRange => bucketRange(Bucket.stateRoot);
/** Roots of heights [from, to]. */
export const heights = (from: number, to: number): KeyRange => ({ gte: key(from), lt: key(to + 1) });
export const heightOf = (k: Buffer): number => k.readUInt32BE(1);

export const encode = (r: StateRootAt): Buffer =>
  jsonValue(r.decisions_root === undefined ? { height: r.height, block_hash: r.block_hash, state_root: r.state_root } : { height: r.height, block_hash: r.block_hash, state_root: r.state_root, contracts_root: r.contracts_root, decisions_root: r.decisions_root });
/** The contracts trie's root a stored record names (the anchor's record names only its state root, which is that). */
export const contractsRootOf = (r: StateRootAt): string => r.contracts_root ?? r.state_root;
export const decode = (b: Buffer): StateRootAt => parseJson<StateRootAt>(b);

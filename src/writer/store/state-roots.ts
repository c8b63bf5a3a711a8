/**
 * Bucket `stateRoot`: the state root after each block, key u32be height, JSON
 * {height, block_hash, state_root} (hex). A re-derivation keeps only the anchor's.
 */
import { Bucket } from './buckets.js';
import { bucketRange, jsonValue, keyOfHeight, parseJson, type KeyRange } from './keys.js';

export interface StateRootAt {
  height: number;
  block_hash: string;
  state_root: string;
}

export const key = (height: number): Buffer => keyOfHeight(Bucket.stateRoot, height);
export const all = (): KeyRange => bucketRange(Bucket.stateRoot);
/** Roots of heights [from, to]. */
export const heights = (from: number, to: number): KeyRange => ({ gte: key(from), lt: key(to + 1) });
export const heightOf = (k: Buffer): number => k.readUInt32BE(1);

export const encode = (r: StateRootAt): Buffer => jsonValue({ height: r.height, block_hash: r.block_hash, state_root: r.state_root });
export const decode = (b: Buffer): StateRootAt => parseJson<StateRootAt>(b);

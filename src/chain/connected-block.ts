/**
 * A block read in full, as the writer is handed it (`BlockInput`): the stamped
 * transactions already parsed, with the merkle branch of each (the evidence the node
 * serves for them), every spend, and the header. Made on the core's main thread, so the
 * writer never parses a block.
 */
import type { Transaction } from 'bitcoinjs-lib';
import type { ConnectedBlock } from './watcher.js';
import { txPartsOf, type BlockInput } from '../records.js';
import type { StampResult } from '@svc-node/protocol/stamp';
import { merkleBranches } from '@svc-node/protocol/merkle-branch';
import { INNER_NODE_BYTES, type SpentBy } from '@svc-node/protocol/evidence';

export { connectedBlockOf } from './watcher.js';

export function blockInputOf(b: ConnectedBlock): BlockInput {
  // The watcher parsed every stamp once: the writer is handed its result, not the work.
  const stampAt = new Map<number, StampResult>([
    ...b.stamps.map((s): [number, StampResult] => [s.txIndex, { ok: true, stamp: s.stamp }]),
    ...b.rejectedStamps.map((s): [number, StampResult] => [s.txIndex, { ok: false, reason: s.reason }]),
  ]);
  const stamped = b.txs.filter((t) => stampAt.has(t.index));
  // One tree for the block gives every stamped transaction's branch (most blocks hold none).
  const branches = stamped.length > 0 ? merkleBranches(b.txs.map((t) => Buffer.from(t.txid, 'hex').reverse()), stamped.map((t) => t.index)) : [];
  const txs = stamped.map((t, i) => ({
    txIndex: t.index,
    txid: t.txid,
    hex: t.tx.toHex(),
    parts: txPartsOf(t.tx, stampAt.get(t.index)),
    branch: branches[i]!,
  }));
  const spends: [string, string][] = [];
  for (const t of b.txs) {
    if (t.index === 0) continue; // the coinbase spends nothing
    for (const i of t.tx.ins) spends.push([`${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`, t.txid]);
  }
  return { height: b.height, hash: b.hash, prevHash: b.prevHash, txs, txids: b.txs.map((t) => t.txid), spends, header: Buffer.from(b.header.hex, 'hex') };
}

/**
 * The spender evidence of a call a block read in full dropped (the writer's `drops`):
 * the transaction at `spender` spending `outpoint`, its input, its branch, and for a
 * spender of 64 bytes without its witness the block's txids (no branch places it). Null
 * when the block does not hold it so.
 */
export function spentByIn(block: { hash: string; height: number; txids: readonly string[]; txAt: (index: number) => Transaction }, outpoint: string, spender: string): SpentBy | null {
  const index = block.txids.indexOf(spender);
  if (index < 0) return null;
  const tx = block.txAt(index);
  const [otxid, vout] = outpoint.split(':') as [string, string];
  const vin = tx.ins.findIndex((i) => Buffer.from(i.hash).reverse().toString('hex') === otxid && i.index === Number(vout));
  if (vin < 0) return null;
  const leaves = block.txids.map((t) => Buffer.from(t, 'hex').reverse());
  const [branch] = merkleBranches(leaves, [index]);
  const listed = tx.byteLength(false) === INNER_NODE_BYTES ? { blockTxids: leaves } : {};
  return { tx: tx.toBuffer(), vin, at: { blockHash: block.hash, height: block.height, txIndex: index, branch: branch! }, ...listed };
}

/**
 * Lying peers of the convergence simulation: evidence and header runs forged from the
 * world's real ones, each with what a node must answer (issue 26, item 6). A forgery
 * the bytes alone disprove (`stateless`: an anchor that is not the payload's
 * transaction, a spender that does not spend the named outpoint, a branch no tree
 * has) is refused `bad_evidence` whatever the node holds; a 64-byte "spender" whose
 * branch alone proves nothing (`unproven`) is left out without blame and changes nothing; one that only the node's headers disprove (`chain`: another block's hash or
 * height, an altered branch or index) is refused `bad_evidence` where the node holds the
 * block it names, and otherwise waits for that block and never places anything there.
 */
import { Transaction } from 'bitcoinjs-lib';
import type { Evidence, Inclusion } from '@svc-node/protocol/evidence';
import { headerOf, outpointOf, type Payload, type Rng, type World } from '../../helpers/sim-world.js';

export interface EvidenceLie {
  label: string;
  evidence: Evidence;
  /**
   * `stateless`: checkEvidence refuses it; `chain`: only the node's headers can;
   * `unproven`: its bytes prove nothing either way (a 64-byte spender without its block's
   * txids, which an honest peer sends as it read it): left out, never refused, never
   * placing or dropping anything.
   */
  kind: 'stateless' | 'chain' | 'unproven';
  /** For a `chain` lie, the height of the block its forged claim names (its only claim). */
  namesHeight?: number;
}

const flip = (b: Uint8Array, at: number): Uint8Array => {
  const out = Uint8Array.from(b);
  out[at % out.length] ^= 0x01;
  return out;
};

/** A transaction of exactly 64 non-witness bytes spending the outpoint a call names (an inner merkle node's size). */
function sixtyFourByteSpender(outpointTxid: Uint8Array, vout: number): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  // As the world's own spends of it (sim-world's spendTx).
  tx.addInput(Buffer.from(outpointTxid).reverse(), vout);
  // 4 + 1 + 41 + 1 + 8 + 1 + 4 + 4 = 64 bytes with a 4-byte output script.
  tx.addOutput(Buffer.from([0x6a, 0x02, 0x00, 0x00]), 0n);
  if (tx.byteLength(false) !== 64) throw new Error(`sim: the 64-byte spender is ${tx.byteLength(false)} bytes`);
  return tx;
}

/** One forgery of `p`'s evidence, picked by `rng` among those its world evidence allows. */
export function forgeEvidence(world: World, p: Payload, rng: Rng): EvidenceLie {
  const honest = world.evidenceOf(p);
  const other = rng.pick(world.payloads.filter((q) => q.txid !== p.txid));
  const lies: (() => EvidenceLie)[] = [
    () => ({ label: 'another payload\'s anchor', kind: 'stateless', evidence: { ...honest, anchorTx: other.tx.toBuffer() } }),
    () => ({ label: 'a cut anchor', kind: 'stateless', evidence: { ...honest, anchorTx: honest.anchorTx.subarray(0, honest.anchorTx.length - 1) } }),
    () => ({ label: 'an anchor with trailing bytes', kind: 'stateless', evidence: { ...honest, anchorTx: Buffer.concat([honest.anchorTx, Buffer.of(0)]) } }),
  ];
  const c = honest.confirmed;
  // A chain lie carries its forged claim alone, so nothing true in it may place or drop the payload.
  const confirmedLie = (label: string, confirmed: Inclusion): EvidenceLie => ({ label, kind: 'chain', namesHeight: confirmed.height, evidence: { anchorTx: honest.anchorTx, confirmed, spentBy: null } });
  if (c) {
    lies.push(
      () => confirmedLie('an altered merkle branch', { ...c, branch: c.branch.map((h, i) => (i === c.branch.length - 1 ? flip(h, rng.int(32)) : h)) }),
      () => confirmedLie('the parent block\'s hash', { ...c, blockHash: world.chain[c.height - 1]!.hash }),
      () => confirmedLie('another height', { ...c, height: c.height + (rng.chance(50) ? 1 : -1) }),
      () => confirmedLie('another index, its branch unchanged', { ...c, txIndex: c.txIndex ^ 1 }),
      () => ({ label: 'a branch with a level too many', kind: 'stateless', evidence: { ...honest, confirmed: { ...c, txIndex: c.txIndex + (1 << (c.branch.length + 1)) } } }),
    );
    // A confirmation in a block of a gone branch at the same height: its own branch, another hash.
    const gone = world.stale.find((b) => b.height === c.height && b.hash !== c.blockHash);
    if (gone) lies.push(() => confirmedLie('a gone branch\'s block', { ...c, blockHash: gone.hash }));
  }
  if (p.kind === 'call') {
    const at = c ?? { blockHash: world.tip.hash, height: world.tip.height, txIndex: 1, branch: [new Uint8Array(32)] };
    lies.push(
      // Another payload's anchor where it really confirmed: only the outpoint check refuses it.
      () => ({ label: 'a spender that spends another outpoint', kind: 'stateless', evidence: { ...honest, spentBy: { tx: other.tx.toBuffer(), vin: 0, at: world.inclusionOf(other.txid) ?? at } } }),
      () => ({ label: 'the anchor as its own spender', kind: 'stateless', evidence: { ...honest, spentBy: { tx: p.tx.toBuffer(), vin: 0, at } } }),
      // Alone (nothing true beside it that could place the payload): it must change nothing.
      () => ({ label: 'a 64-byte spender', kind: 'unproven', evidence: { anchorTx: honest.anchorTx, confirmed: null, spentBy: { tx: sixtyFourByteSpender(p.envelope.outpointTxid, p.envelope.outpointVout).toBuffer(), vin: 0, at } } }),
      () => ({ label: 'a spender input that does not exist', kind: 'stateless', evidence: { ...honest, spentBy: { tx: (p.conflict ?? other.tx).toBuffer(), vin: 7, at } } }),
    );
    if (p.conflict) {
      const conflict = p.conflict;
      // The real conflicting spend, claimed in the tip block where it is not.
      const tip = world.tip;
      if (!tip.txids.includes(conflict.getId())) {
        lies.push(() => ({ label: 'the conflicting spend placed where it is not', kind: 'chain', namesHeight: tip.height, evidence: { anchorTx: honest.anchorTx, confirmed: null, spentBy: { tx: conflict.toBuffer(), vin: conflict.ins.findIndex((i) => outpointOf(i) === p.outpoint), at: { blockHash: tip.hash, height: tip.height, txIndex: 1, branch: tip.txids.length > 1 ? [Buffer.from(tip.txids[0]!, 'hex').reverse()] : [] } } } }));
      }
    }
  } else {
    lies.push(() => ({ label: 'a spender of a deploy', kind: 'stateless', evidence: { ...honest, spentBy: { tx: other.tx.toBuffer(), vin: 0, at: c ?? { blockHash: world.tip.hash, height: world.tip.height, txIndex: 0, branch: [] } } } }));
  }
  return rng.pick(lies)();
}

export interface HeaderLie {
  label: string;
  from: number;
  run: Uint8Array[];
}

/**
 * A run of headers a lying peer sends a node whose header chain ends at `base` (height
 * and hash, a block of the world's best chain or the journal's anchor): valid proof of
 * work and linked to `base`, but ending in a block the endpoint does not name at that
 * height; or proof of work that does not meet its target; or headers that do not link.
 * Null when the world's chain has no height above `base` to forge.
 */
export function forgeHeaders(world: World, base: { height: number; hash: string }, rng: Rng): HeaderLie | null {
  const room = world.tip.height - base.height;
  if (room < 1) return null;
  const n = 1 + rng.int(Math.min(room, 5));
  const run: Uint8Array[] = [];
  let prev = base.hash;
  for (let i = 0; i < n; i++) {
    // Another block at each height: a made-up transaction, so another merkle root and hash.
    const fake = headerOf(prev, [Buffer.from(`lie:${world.seed}:${base.height + 1 + i}:${rng.next()}`).toString('hex').padEnd(64, '0').slice(0, 64)], 1_296_688_602 + rng.int(1_000_000));
    run.push(fake.header);
    prev = fake.hash;
  }
  const kinds: (() => HeaderLie)[] = [() => ({ label: 'a run ending in a block the endpoint does not name', from: base.height + 1, run })];
  // The world's own headers above `base` with one changed, or out of order.
  const real = world.chain.slice(base.height + 1, base.height + 1 + n).map((b) => b.header);
  if (real.length > 0 && world.chain[base.height]!.hash === base.hash) {
    kinds.push(() => {
      const i = rng.int(real.length);
      const h = Buffer.from(real[i]!);
      h.writeUInt32LE(0x1d00ffff, 72); // mainnet's difficulty: the hash no longer meets its target
      return { label: 'a header whose hash does not meet its target', from: base.height + 1, run: real.map((x, j) => (j === i ? h : x)) };
    });
    if (real.length > 1) kinds.push(() => ({ label: 'headers that do not link', from: base.height + 1, run: [real[1]!, real[0]!, ...real.slice(2)] }));
  }
  return rng.pick(kinds)();
}

/**
 * Bitcoin evidence: merkle roots (the duplicated last node, a mutated list), branches
 * (depths, indexes, phantom positions), proven transactions (64 bytes, canonical form),
 * a payload's evidence (anchor, confirmation, conflicting spend) and the coinbase that
 * proves a block's depth. Every transaction is a real signed bitcoinjs-lib one, every
 * block a real txid list under a real 80-byte header.
 */
import { Transaction } from 'bitcoinjs-lib';
import { callStampScript } from '@svc-node/protocol/stamp';
import { merkleBranches, merkleRoot } from '@svc-node/protocol/merkle-branch';
import { headerHash } from '@svc-node/protocol/headers';
import { stripWitness } from '@svc-node/protocol/evidence';
import { sha256d } from '@svc-node/protocol/hash';
import { txidOf } from '@svc-node/protocol/binding';
import { spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type Area, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

const payer = wallet('conformance evidence payer');
const funding: Utxo = { txid: hex(seeded('conformance evidence funding')), vout: 1, value: 50_000n };
const change = (v: bigint) => ({ script: payer.script, value: v });

function coinbase(height: number): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.of(3, height & 0xff, (height >> 8) & 0xff, height >> 16));
  tx.addOutput(payer.script, 5_000_000_000n);
  return tx;
}

/** A transaction of exactly 64 bytes (no witness): one input with an empty script, one output with a 4-byte script. */
function sixtyFour(spends: Utxo): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(spends.txid, 'hex').reverse(), spends.vout, 0xffffffff, new Uint8Array(0));
  tx.addOutput(Uint8Array.of(0x6a, 0x02, 0xab, 0xcd), 0n);
  if (tx.byteLength(false) !== 64) throw new Error('evidence: the 64-byte transaction is not 64 bytes');
  return tx;
}

interface Block {
  txs: Uint8Array[];
  txidsInternal: Uint8Array[];
  header: Uint8Array;
  hash: string;
  height: number;
}

function block(height: number, txs: Uint8Array[]): Block {
  const txidsInternal = txs.map((t) => Uint8Array.from(Buffer.from(txidOf(t), 'hex')).reverse());
  const header = new Uint8Array(80);
  const v = Buffer.from(header.buffer);
  v.writeUInt32LE(0x20000000, 0);
  header.set(seeded(`prev ${height}`), 4);
  header.set(merkleRoot(txidsInternal).root, 36);
  v.writeUInt32LE(1_700_000_000 + height * 600, 68);
  v.writeUInt32LE(0x207fffff, 72);
  return { txs, txidsInternal, header, hash: headerHash(header), height };
}

function inclusion(b: Block, index: number) {
  return { block_hash: b.hash, height: b.height, tx_index: index, branch: merkleBranches(b.txidsInternal, [index])[0]!.map(hex) };
}

/** The world the cases share: an anchor confirmed in block 101; a conflicting spender, a 64-byte one, in block 102. */
function world() {
  const anchor = spend(payer, [funding], [{ script: callStampScript(seeded('ev contract'), seeded('ev envelope')), value: 0n }, change(49_000n)]);
  const others = [1, 2, 3].map((i) => spend(payer, [{ txid: hex(seeded(`other ${i}`)), vout: 0, value: 20_000n }], [change(19_000n)]).toBuffer());
  const b101 = block(101, [coinbase(101).toBuffer(), others[0]!, anchor.toBuffer(), others[1]!, others[2]!]);
  const spender = spend(payer, [{ txid: hex(seeded('fee input')), vout: 0, value: 10_000n }, funding], [change(59_000n)]);
  const tiny = sixtyFour(funding);
  const b102 = block(102, [coinbase(102).toBuffer(), spender.toBuffer(), tiny.toBuffer()]);
  return { anchor, b101, spender, tiny, b102 };
}

function merkleRootCases(): CaseInput[] {
  const t = (n: number) => Array.from({ length: n }, (_, i) => hex(seeded(`leaf ${i}`)));
  const c = (id: string, txids: string[], pins: string): CaseInput => ({ id, pins, input: { txids_internal: txids } });
  const three = t(3);
  return [
    c('one', t(1), 'one transaction: the root is its txid'),
    c('two', t(2), 'two: sha256d(left || right)'),
    c('three', three, 'an odd level pairs its last node with itself'),
    c('three-duplicated', [...three, three[2]!], 'the list with its last txid repeated folds to the same root and is flagged mutated (CVE-2012-2459)'),
    c('five', t(5), 'five: the duplication happens at two levels'),
    c('equal-pair-inside', [three[0]!, three[0]!, three[1]!, three[2]!], 'two equal paired leaves anywhere flag the list as mutated'),
  ];
}

function branchCases(): CaseInput[] {
  const { b101 } = world();
  const root = hex(merkleRoot(b101.txidsInternal).root);
  const leaf = (i: number) => hex(b101.txidsInternal[i]!);
  const branch = (i: number) => merkleBranches(b101.txidsInternal, [i])[0]!.map(hex);
  const c = (id: string, leafHex: string, index: number, br: string[], pins: string): CaseInput => ({ id, pins, input: { leaf_internal: leafHex, index, branch: br } });
  const deep = (n: number) => Array.from({ length: n }, (_, i) => hex(seeded(`level ${i}`)));
  const cases = [0, 1, 2, 3, 4].map((i) => c(`block-index-${i}`, leaf(i), i, branch(i), `index ${i} of a block of 5 folds to the block's merkle root ${root.slice(0, 16)}...`));
  return [
    ...cases,
    c('phantom-index-5', leaf(4), 5, branch(4), 'the duplicated last leaf at index 5 is a phantom position, refused'),
    c('index-past-depth', leaf(0), 8, branch(0), 'an index of 2^depth or more is refused (its high bits would be ignored)'),
    c('wrong-index', leaf(1), 2, branch(1), 'a branch folded with another index gives another root (the header check refuses it)'),
    c('single-transaction', leaf(0), 0, [], 'a branch of no levels: the root is the leaf'),
    c('single-transaction-index-1', leaf(0), 1, [], 'a branch of no levels fixes the index at 0'),
    c('depth-17', leaf(0), 131071, deep(17), 'a branch of 17 levels (the deepest accepted) folds'),
    c('depth-18', leaf(0), 0, deep(18), 'a branch of 18 levels is refused'),
    c('short-sibling', leaf(0), 0, [hex(seeded('s')).slice(0, 62)], 'a sibling of 31 bytes is refused'),
    c('short-leaf', leaf(0).slice(0, 62), 0, branch(0), 'a leaf of 31 bytes is refused'),
    ...forgeryCases(c),
  ];
}

/**
 * Phantom positions above the leaf level, and the two forgeries 64 bytes allow, as a
 * branch alone sees them: folding is not what refuses them (docs/STATE.md, "The weaknesses
 * of merkle proofs"): the 64-byte rule (evidence.proven-tx) and the block's depth
 * (evidence.coinbase-depth) do.
 */
function forgeryCases(c: (id: string, leafHex: string, index: number, br: string[], pins: string) => CaseInput): CaseInput[] {
  const { b101, b102, tiny } = world();
  const leaves = b101.txidsInternal;
  const br = (b: Block, i: number) => merkleBranches(b.txidsInternal, [i])[0]!.map(hex);
  // Block of 5: level 1 holds three nodes, the last paired with itself; its copy covers leaves 6 and 7.
  const phantom6 = [hex(leaves[4]!), ...br(b101, 4).slice(1)];
  // An inner node (leaves 0 and 1) presented as a leaf one level up: the same root.
  const inner = hex(Buffer.from(sha256d(Buffer.concat([leaves[0]!, leaves[1]!]))));
  // Block 102 holds a 64-byte transaction at index 2: its halves read as an inner node over two made-up leaves.
  const tinyBytes = tiny.toBuffer();
  const halves = [hex(tinyBytes.subarray(0, 32)), hex(tinyBytes.subarray(32))];
  return [
    c('phantom-index-6', hex(leaves[4]!), 6, phantom6, 'index 6 of a block of 5 sits under the duplicated node of level 1: refused at that level'),
    c('phantom-index-7', hex(leaves[4]!), 7, phantom6, 'index 7 of a block of 5: the leaf-level duplicate of a phantom, refused'),
    c('inner-node-as-leaf', inner, 0, br(b101, 0).slice(1), 'an inner node presented as a leaf with a branch one level short folds to the true root: only the 64-byte rule keeps it from being a transaction'),
    c('sixty-four-halves', halves[1]!, 5, [halves[0]!, ...br(b102, 2)], 'the second half of a mined 64-byte transaction as a leaf one level below it folds to the true root: a branch longer than the block\'s proven depth (coinbase-depth) is what shows it forged'),
  ];
}

function provenCases(): CaseInput[] {
  const { anchor, tiny } = world();
  const raw = anchor.toBuffer();
  const stripped = stripWitness(raw);
  const sixtyFive = sixtyFour(funding);
  sixtyFive.outs[0]!.script = Uint8Array.of(0x6a, 0x03, 0xab, 0xcd, 0xef);
  // The stripped anchor framed as segwit (marker, flag) with every witness empty: not what Bitcoin Core writes.
  const emptyWitness = new Uint8Array([...stripped.subarray(0, 4), 0, 1, ...stripped.subarray(4, stripped.length - 4), ...new Uint8Array(anchor.ins.length), ...stripped.subarray(stripped.length - 4)]);
  const noOutputs = new Transaction();
  noOutputs.addInput(new Uint8Array(32).fill(1), 0);
  const c = (id: string, b: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { tx_hex: hex(b) } });
  return [
    c('segwit', raw, 'a signed segwit transaction: its txid (display hex) hashes the bytes without the witness'),
    c('stripped', stripped, 'the same transaction without its witness has the same txid'),
    c('sixty-four-bytes', tiny.toBuffer(), 'a transaction of 64 bytes without its witness is refused (the size of an inner merkle node)'),
    c('sixty-five-bytes', sixtyFive.toBuffer(), 'a transaction of 65 bytes is accepted'),
    c('trailing-byte', Uint8Array.from([...raw, 0]), 'a byte after the transaction is refused'),
    c('empty', new Uint8Array(0), 'no bytes are refused'),
    c('empty-witnesses', emptyWitness, 'a segwit frame whose witnesses are all empty is not canonical, refused'),
    c('no-outputs', noOutputs.toBuffer(), 'a transaction with no outputs is refused'),
  ];
}

function checkCases(): CaseInput[] {
  const { anchor, b101, spender, tiny, b102 } = world();
  const outpoint = { txid: funding.txid, vout: funding.vout };
  const anchorHex = anchor.toHex();
  const base = { anchor_tx: anchorHex, confirmed: null, spent_by: null };
  const spentBy = { tx: spender.toHex(), vin: 1, at: inclusion(b102, 1) };
  const tinyBy = { tx: tiny.toHex(), vin: 0, at: inclusion(b102, 2) };
  const c = (id: string, evidence: Record<string, unknown>, pins: string, claimed = anchor.getId(), op: unknown = outpoint): CaseInput => ({ id, pins, input: { claimed_txid: claimed, outpoint: op, evidence } });
  const tooDeep = { ...inclusion(b101, 2), branch: Array.from({ length: 18 }, (_, i) => hex(seeded(`d${i}`))) };
  return [
    c('unconfirmed', base, 'an anchor alone (unconfirmed) is sound evidence'),
    c('stripped-anchor', { ...base, anchor_tx: hex(stripWitness(anchor.toBuffer())) }, 'the anchor may travel without its witness'),
    c('other-txid', base, 'an anchor that does not hash to the payload\'s txid is refused (anchor_tx)', hex(seeded('claimed'))),
    c('anchor-64-bytes', { ...base, anchor_tx: tiny.toHex() }, 'a 64-byte anchor is refused (anchor_tx)', tiny.getId()),
    c('confirmed', { ...base, confirmed: inclusion(b101, 2) }, 'a confirmation folds to the block\'s merkle root, returned for the header check'),
    c('confirmed-index-past-depth', { ...base, confirmed: { ...inclusion(b101, 2), tx_index: 8 } }, 'a confirmation whose index does not fit its branch is refused (confirmed)'),
    c('confirmed-too-deep', { ...base, confirmed: tooDeep }, 'a confirmation deeper than 17 levels is refused (confirmed)'),
    c('confirmed-bad-block-hash', { ...base, confirmed: { ...inclusion(b101, 2), block_hash: b101.hash.toUpperCase() } }, 'a block hash that is not lowercase hex is refused (confirmed)'),
    c('spent', { ...base, spent_by: spentBy }, 'a confirmed spender of the named outpoint: its txid and root are returned'),
    c('spent-deploy', { ...base, spent_by: spentBy }, 'a deploy names no outpoint: a spender is refused (spent_by)', anchor.getId(), null),
    c('spent-wrong-vin', { ...base, spent_by: { ...spentBy, vin: 0 } }, 'the named input must spend the outpoint (spent_by)'),
    c('spent-vin-missing', { ...base, spent_by: { ...spentBy, vin: 2 } }, 'an input the spender does not have is refused (spent_by)'),
    c('spent-by-anchor', { ...base, spent_by: { tx: anchorHex, vin: 0, at: inclusion(b101, 2) } }, 'the anchor is not its own conflicting spend (spent_by)'),
    c('spent-64-unlisted', { ...base, spent_by: tinyBy }, 'a 64-byte spender without its block\'s txids is left out, not refused (spender_unproven)'),
    c('spent-64-listed', { ...base, spent_by: { ...tinyBy, block_txids_internal: b102.txidsInternal.map(hex) } }, 'a 64-byte spender placed by its block\'s whole txid list is proven'),
    c('spent-64-list-wrong-index', { ...base, spent_by: { ...tinyBy, at: { ...inclusion(b102, 2), tx_index: 1, branch: inclusion(b102, 1).branch }, block_txids_internal: b102.txidsInternal.map(hex) } }, 'a branch of another index, whose root the list does not fold to, is refused (spent_by)'),
    c('spent-64-list-mutated', { ...base, spent_by: { ...tinyBy, block_txids_internal: [...b102.txidsInternal, b102.txidsInternal[2]!].map(hex) } }, 'a txid list with a duplicated pair is refused (spent_by)'),
    c('spent-list-not-64', { ...base, spent_by: { ...spentBy, block_txids_internal: b102.txidsInternal.map(hex) } }, 'a txid list comes only with a 64-byte spender (spent_by)'),
  ];
}

function coinbaseCases(): CaseInput[] {
  const { b101 } = world();
  const br = (i: number) => merkleBranches(b101.txidsInternal, [i])[0]!.map(hex);
  const c = (id: string, tx: Uint8Array, branch: string[], header: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { coinbase_tx: hex(tx), branch, header: hex(header) } });
  const otherHeader = Uint8Array.from(b101.header);
  otherHeader[40] ^= 1;
  return [
    c('depth-3', b101.txs[0]!, br(0), b101.header, 'the coinbase of a block of 5 folds at index 0 to the header\'s root: depth 3'),
    c('not-coinbase', b101.txs[1]!, br(1), b101.header, 'a transaction that is not a coinbase proves no depth'),
    c('other-header', b101.txs[0]!, br(0), otherHeader, 'a branch that does not reach the header\'s merkle root proves no depth'),
    c('short-header', b101.txs[0]!, br(0), b101.header.subarray(0, 79), 'a header of 79 bytes is refused'),
    c('short-branch', b101.txs[0]!, br(0).slice(0, 2), b101.header, 'a coinbase branch one level short does not reach the root'),
    ...sixtyFourDepthCases(c),
  ];
}

/** The depth of a block holding a 64-byte transaction: what shows the branch of evidence.branch-fold's sixty-four-halves one level too long. */
function sixtyFourDepthCases(c: (id: string, tx: Uint8Array, branch: string[], header: Uint8Array, pins: string) => CaseInput): CaseInput[] {
  const { b102 } = world();
  const br = merkleBranches(b102.txidsInternal, [0])[0]!.map(hex);
  return [
    c('depth-2-with-64-byte-tx', b102.txs[0]!, br, b102.header, 'a block of 3 holding a 64-byte transaction has depth 2: its leaves sit at level 2, so a branch of 3 levels (a forged leaf under the 64-byte transaction) is not one of its transactions'),
    c('coinbase-64-bytes', b102.txs[2]!, [hex(b102.txidsInternal[1]!)], b102.header, 'a 64-byte transaction proves no depth, even where its bytes fold'),
  ];
}

function headerMatchCases(): CaseInput[] {
  const { b101, b102 } = world();
  const root = hex(merkleRoot(b101.txidsInternal).root);
  const c = (id: string, inc: unknown, rootHex: string, header: Uint8Array, pins: string): CaseInput => ({ id, pins, input: { inclusion: inc, root_internal: rootHex, header: hex(header) } });
  return [
    c('matches', inclusion(b101, 2), root, b101.header, 'the header at the inclusion\'s height hashes to its block hash and commits to the folded root'),
    c('other-block', inclusion(b101, 2), root, b102.header, 'the node\'s header at that height is another block: refused'),
    c('other-root', inclusion(b101, 2), hex(merkleRoot(b102.txidsInternal).root), b101.header, 'a root the header does not commit to: refused'),
    c('short-header', inclusion(b101, 2), root, b101.header.subarray(0, 79), 'a header of 79 bytes: refused'),
  ];
}

export function evidenceArea(): Area {
  return {
    'evidence.merkle-root': merkleRootCases(),
    'evidence.branch-fold': branchCases(),
    'evidence.proven-tx': provenCases(),
    'evidence.check': checkCases(),
    'evidence.coinbase-depth': coinbaseCases(),
    'evidence.header-match': headerMatchCases(),
  };
}

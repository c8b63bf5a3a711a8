/**
 * Raw blocks at the edges of what a node reads (packages/protocol/src/bitcoin.ts,
 * parseRawBlock): the transaction count's CompactSize at its one-byte edge (252 and 253
 * transactions), and BIP-141's witness commitment: the commitment output is the last
 * coinbase output of at least 38 bytes starting 6a24aa21a9ed (a longer one commits with
 * bytes 6..38, a shorter one or one with another header byte is no commitment), and the
 * coinbase's witness is exactly one 32-byte reserved value, whatever its bytes. Blocks
 * whose coinbase is changed here get their merkle root recomputed and are mined again
 * (regtest proof of work), so only the rule under test refuses them.
 */
import type { Transaction } from 'bitcoinjs-lib';
import { Block } from 'bitcoinjs-lib';
import { hashMeetsTarget } from '@svc-node/protocol/bitcoin';
import { merkleRoot } from '@svc-node/protocol/merkle-branch';
import { sha256d } from '@svc-node/protocol/hash';
import { DevnetChain } from '../../src/devnet/chain.js';
import { wallet } from '../../test/helpers/txbuilder.js';
import { hex, type CaseInput } from './kit.js';

/** `txs` as a block on `like`'s header: merkle root recomputed, mined again at its bits. */
function reblock(like: Block, txs: Transaction[]): Buffer {
  const b = Block.fromBuffer(like.toBuffer());
  b.transactions = txs;
  b.merkleRoot = Buffer.from(merkleRoot(txs.map((t) => t.getHash())).root);
  for (b.nonce = 0; !hashMeetsTarget(b.getId(), b.bits); b.nonce++);
  return Buffer.from(b.toBuffer());
}

/** The BIP-141 commitment of a block's transactions (the coinbase's wtxid counted as zero) with `reserved`. */
function commitmentOf(txs: Transaction[], reserved: Uint8Array): Buffer {
  const wtxids = txs.map((t, i) => (i === 0 ? new Uint8Array(32) : t.getHash(true)));
  const buf = new Uint8Array(64);
  buf.set(merkleRoot(wtxids).root, 0);
  buf.set(reserved, 32);
  return Buffer.from(sha256d(buf));
}

const HEADER = Buffer.from('6a24aa21a9ed', 'hex');

/** A block with `count` transactions: its coinbase and count - 1 faucet payments, mined in one go. */
function blockWithCount(count: number): { raw: Uint8Array; hash: string } {
  const chain = new DevnetChain();
  chain.mine(101);
  const payee = wallet(`conformance block of ${count}`);
  for (let i = 1; i < count; i++) chain.faucet(payee.address, 1_000 + i);
  chain.mine(1);
  const b = chain.blockAt(102)!;
  if (b.txids.length !== count) throw new Error(`block-edges: mined ${b.txids.length} transactions, not ${count}`);
  return { raw: b.raw, hash: b.hash };
}

export function blockEdgeCases(): CaseInput[] {
  const c = (id: string, b: Uint8Array, pins: string, expectedHash: string | null = null): CaseInput => ({ id, pins, input: { block_hex: hex(b), expected_hash: expectedHash } });
  const b252 = blockWithCount(252);
  const b253 = blockWithCount(253);

  // A segwit block (coinbase, one witness payment) whose coinbase the cases below rebuild.
  const chain = new DevnetChain();
  chain.mine(101);
  chain.faucet(wallet('conformance commitment payee').address, 50_000);
  chain.mine(1);
  const segwit = Block.fromBuffer(Buffer.from(chain.blockAt(102)!.raw));
  const [cb0, ...rest] = segwit.transactions!;
  if (!cb0 || rest.length !== 1 || !rest[0]!.hasWitnesses()) throw new Error('block-edges: the segwit block is not coinbase and one witness payment');
  /** The segwit block with its coinbase's outputs after the payout replaced by `extra(commitment)` and its witness by `witness`. */
  const withCoinbase = (extra: (commit: Buffer) => Buffer[], witness: Uint8Array[] = [new Uint8Array(32)]): Buffer => {
    const cb = cb0.clone();
    const payout = cb.outs[0]!;
    cb.outs = [];
    cb.addOutput(payout.script, payout.value);
    // A reserved value that is not 32 bytes commits as the zero one would (it is refused before the hash).
    const reserved = witness[0]?.length === 32 ? witness[0] : new Uint8Array(32);
    for (const s of extra(commitmentOf([cb, ...rest], reserved))) cb.addOutput(s, 0n);
    cb.setWitness(0, witness);
    return reblock(segwit, [cb, ...rest]);
  };
  const commitScript = (commit: Buffer) => Buffer.concat([HEADER, commit]);
  const otherHeaderByte = (commit: Buffer, at: number) => {
    const s = commitScript(commit);
    s[at]! ^= 1;
    return s;
  };
  const wrong = Buffer.alloc(32, 0x77);
  const reserved7 = new Uint8Array(32).fill(7);

  // A block with no witness: its coinbase changed (no commitment to break), or moved after the payment.
  const plainChain = new DevnetChain();
  plainChain.mine(2);
  const plain = Block.fromBuffer(Buffer.from(plainChain.blockAt(2)!.raw));
  const plainCb = plain.transactions![0]!;
  const changedCb = plainCb.clone();
  changedCb.outs[0]!.value -= 1n;
  const unmined = Block.fromBuffer(plain.toBuffer());
  unmined.transactions = [changedCb];
  const stripped = rest[0]!.clone();
  for (let i = 0; i < stripped.ins.length; i++) stripped.setWitness(i, []);
  const cbNoCommit = cb0.clone();
  cbNoCommit.outs = [cbNoCommit.outs[0]!];
  cbNoCommit.setWitness(0, []);

  return [
    c('count-252', b252.raw, 'a block of 252 transactions: its count is one byte (below 0xfd), every txid read after it', b252.hash),
    c('count-253', b253.raw, 'a block of 253 transactions: its count is 0xfd and two bytes, every txid read after those three', b253.hash),
    c('commitment-then-other-header-byte', withCoinbase((k) => [commitScript(k), otherHeaderByte(k, 5)]), 'an output after the commitment whose sixth byte differs (6a24aa21a9ec) is no commitment: the block holds'),
    c('commitment-then-other-first-byte', withCoinbase((k) => [commitScript(k), otherHeaderByte(k, 0)]), 'an output after the commitment whose first byte is not OP_RETURN is no commitment: the block holds'),
    c('commitment-then-37-bytes', withCoinbase((k) => [commitScript(k), commitScript(wrong).subarray(0, 37)]), 'an output after the commitment with its header but 37 bytes long is no commitment (at least 38): the block holds'),
    c('commitment-longer', withCoinbase((k) => [Buffer.concat([commitScript(k), Buffer.of(0x51)])]), 'a commitment output longer than 38 bytes commits with its bytes 6 to 38: the block holds'),
    c('commitment-wrong-then-right', withCoinbase((k) => [commitScript(wrong), commitScript(k)]), 'of two commitment outputs the last counts: a wrong one before the right one, the block holds'),
    c('commitment-right-then-wrong', withCoinbase((k) => [commitScript(k), commitScript(wrong)]), 'of two commitment outputs the last counts: the right one before a wrong one, refused'),
    c('commitment-missing', withCoinbase(() => []), 'a block with a witness transaction and no commitment output is refused'),
    c('reserved-other-bytes', withCoinbase((k) => [commitScript(k)], [reserved7]), 'the witness reserved value is any 32 bytes, hashed after the witness root: the block holds'),
    c('reserved-two-items', withCoinbase((k) => [commitScript(k)], [new Uint8Array(32), Uint8Array.of(1)]), 'a coinbase witness of two items (the reserved value and one more) is refused'),
    c('reserved-33-bytes', withCoinbase((k) => [commitScript(k)], [new Uint8Array(33)]), 'a witness reserved value of 33 bytes is refused'),
    c('reserved-missing', withCoinbase((k) => [commitScript(k)], []), 'a segwit block whose coinbase has no witness is refused'),
    c('coinbase-changed-unmined', unmined.toBuffer(), 'a changed coinbase output in a block without witnesses breaks the merkle root: refused'),
    c('coinbase-second-root-recomputed', reblock(segwit, [stripped, cbNoCommit]), 'a block whose coinbase comes second is refused, even with its merkle root recomputed and no witness to commit to'),
    c('two-coinbases', reblock(segwit, [cbNoCommit, plainCb]), 'a second coinbase after the first is refused, with its merkle root recomputed'),
    c('no-transactions', Buffer.concat([plain.toBuffer().subarray(0, 80), Buffer.of(0)]), 'a header with a transaction count of 0 is refused'),
    c('header-alone', plain.toBuffer().subarray(0, 80), 'an 80-byte header with no transaction count is refused'),
  ];
}

/**
 * Raw blocks as a node reads them from the chain-data endpoint (packages/protocol/src/bitcoin.ts,
 * parseRawBlock): everything a server could get wrong or forge is refused. Real regtest
 * blocks mined by the project's devnet chain (deterministic: fixed keys and times).
 */
import { Block } from 'bitcoinjs-lib';
import { DevnetChain } from '../../src/devnet/chain.js';
import { spend, wallet } from '../../test/helpers/txbuilder.js';
import { hex, type Area, type CaseInput } from './kit.js';

export function blocksArea(): Area {
  const chain = new DevnetChain();
  chain.mine(101);
  const payer = wallet('conformance block payer');
  const coin = chain.faucet(payer.address, 100_000);
  chain.mine(1);
  const tx = spend(payer, [{ txid: coin.txid, vout: coin.vout, value: 100_000n }], [{ script: payer.script, value: 90_000n }]);
  chain.submitTx(tx.toHex());
  chain.mine(1);
  const segwit = chain.blockAt(103)!;
  const plain = chain.blockAt(1)!;
  const raw = Buffer.from(segwit.raw);
  const parsed = Block.fromBuffer(raw);
  const rebuilt = (txs: typeof parsed.transactions) => {
    const b = Block.fromBuffer(raw);
    b.transactions = txs;
    return Buffer.from(b.toBuffer());
  };
  const txs = parsed.transactions!;
  // A witness byte of the last transaction's signature: not in any txid, only in the witness commitment.
  const witnessFlip = Buffer.from(raw);
  const sigAt = witnessFlip.lastIndexOf(Buffer.from(tx.ins[0]!.witness[0]!)) + 10;
  witnessFlip[sigAt]! ^= 1;
  // The last byte of the payment's output value (the 8 bytes before its script's length byte).
  const valueFlip = Buffer.from(raw);
  valueFlip[valueFlip.lastIndexOf(Buffer.from(payer.script)) - 2]! ^= 1;
  const c = (id: string, b: Uint8Array, pins: string, expectedHash: string | null = null): CaseInput => ({ id, pins, input: { block_hex: hex(b), expected_hash: expectedHash } });
  if (txs.length < 2) throw new Error('blocks: the segwit block holds no transaction beside its coinbase');
  return {
    'blocks.parse': [
      c('segwit', raw, 'a block with segwit transactions: txids in order, the witness commitment holds', segwit.hash),
      c('coinbase-only', plain.raw, 'a block holding its coinbase alone', plain.hash),
      c('other-hash', raw, 'a block that does not hash to the one asked for is refused', plain.hash),
      c('trailing-byte', Buffer.concat([raw, Buffer.of(0)]), 'a byte after the last transaction is refused'),
      c('header-only', raw.subarray(0, 81), 'a header with a transaction count and no transactions is refused'),
      c('transaction-byte-changed', valueFlip, 'a changed output value of a transaction changes its txid and breaks the merkle root: refused'),
      c('coinbase-not-first', rebuilt([txs[1]!, txs[0]!, ...txs.slice(2)]), 'the coinbase must come first, and only first: refused'),
      c('duplicated-last', rebuilt([...txs, txs[txs.length - 1]!]), 'the last transaction repeated (same merkle root, CVE-2012-2459) is refused'),
      c('witness-changed', witnessFlip, 'a changed witness byte keeps every txid but breaks the witness commitment: refused'),
    ],
  };
}

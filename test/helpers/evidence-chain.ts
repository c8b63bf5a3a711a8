/**
 * Real evidence from a devnet chain driven in-process (src/devnet/chain.ts): a call
 * anchored and mined among other transactions, a call dropped by a conflicting spend of
 * its outpoint, and a 64-byte spend, each with the block that holds it.
 */
import { createHash } from 'node:crypto';
import * as bitcoin from 'bitcoinjs-lib';
import { DevnetChain, type BlockRecord } from '../../src/devnet/chain.js';
import { internalBytes } from '@svc-node/protocol/bitcoin';
import { merkleBranch } from '@svc-node/protocol/merkle-branch';
import { toHex } from '@svc-node/protocol/hash';
import type { Inclusion } from '@svc-node/protocol/evidence';
import type { CallStatus } from '@svc-node/client/node';
import { buildCall, buildCallAnchor, type BuiltCall } from '@svc-node/client/sdk';
import { walletFromSecret, type Wallet } from '@svc-node/client/wallet';
import type { AnchorTx, Utxo } from '@svc-node/client/anchor';
import { spend, wallet as txWallet } from './txbuilder.js';

const seed = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());

/** Where `txid` sits in `block`, with its branch. */
export function inclusionIn(block: BlockRecord, txid: string): Inclusion {
  const txIndex = block.txids.indexOf(txid);
  if (txIndex < 0) throw new Error(`${txid} is not in block ${block.height}`);
  return { blockHash: block.hash, height: block.height, txIndex, branch: merkleBranch(block.txids.map(internalBytes), txIndex) };
}

export const headerOf = (block: BlockRecord): Uint8Array => block.raw.subarray(0, 80);

export interface EvidenceWorld {
  chain: DevnetChain;
  wallet: Wallet;
  callerSecret: Uint8Array;
  contractId: Uint8Array;
  /** A call whose anchor confirmed in `block` (among 40 other transactions). */
  executed: { call: BuiltCall; anchor: AnchorTx; block: BlockRecord; status: CallStatus };
  /** A call whose anchor was never broadcast: its outpoint was spent by `spender` in `block`. */
  dropped: { call: BuiltCall; anchor: AnchorTx; spender: bitcoin.Transaction; vin: number; block: BlockRecord; status: CallStatus };
  /** A confirmed spend whose non-witness serialization is 64 bytes, of `outpoint`. */
  tiny: { tx: bitcoin.Transaction; outpoint: { txid: string; vout: number }; block: BlockRecord };
}

function statusOf(call: BuiltCall, txid: string, status: string, at: { height: number; index: number } | null): CallStatus {
  const e = call.envelope;
  return {
    txid,
    contract_id: toHex(e.contractId),
    envelope_hash: toHex(call.envelopeHash),
    function: e.function,
    caller: toHex(e.caller),
    call_id: e.callId.toString(),
    status,
    block_height: at?.height ?? null,
    tx_index: at?.index ?? null,
    result: null,
    error: null,
    confirmations: null,
  };
}

export function evidenceWorld(): EvidenceWorld {
  const chain = new DevnetChain();
  chain.mine(101);
  // The SDK's wallet and the test builder's share one key, so either can spend its coins.
  const w = walletFromSecret(seed('evidence/wallet'), 'p2wpkh', chain.network);
  const raw = txWallet('evidence/wallet');
  for (let i = 0; i < 3; i++) chain.faucet(w.address, 100_000);
  const others = bitcoin.payments.p2wpkh({ hash: new Uint8Array(20).fill(5), network: chain.network }).address!;
  chain.mine(1);
  const utxos = (): Utxo[] => chain.utxosOf(w.outputScript).map((u) => ({ txid: u.txid, vout: u.vout, value: Number(u.value), status: { confirmed: u.status.confirmed } }));
  const [u0, u1, u2] = utxos();
  const callerSecret = seed('evidence/caller');
  const contractId = seed('evidence/contract');

  // An executed call: anchored, mined among 40 faucet payments.
  const call = buildCall({ contractId, function: 'transfer', args: [{ type: 'u64', value: 7n }], callerSecret, outpoint: u0!, callId: 11n, auxRand: new Uint8Array(32) });
  const anchor = buildCallAnchor(w, [u0!], call, 2);
  for (let i = 0; i < 20; i++) chain.faucet(others, 10_000);
  chain.submitTx(anchor.hex);
  for (let i = 0; i < 20; i++) chain.faucet(others, 10_000);
  chain.mine(1);
  const block = chain.tip;
  const pos = chain.txPosition(anchor.txid)!;

  // A dropped call: its anchor is built but never broadcast; another spend of its outpoint confirms.
  const call2 = buildCall({ contractId, function: 'transfer', args: [{ type: 'u64', value: 8n }], callerSecret, outpoint: u1!, callId: 12n, auxRand: new Uint8Array(32) });
  const anchor2 = buildCallAnchor(w, [u1!], call2, 2);
  const spender = spend(raw, [{ txid: u1!.txid, vout: u1!.vout, value: BigInt(u1!.value) }], [{ script: w.outputScript, value: BigInt(u1!.value) - 500n }]);
  for (let i = 0; i < 5; i++) chain.faucet(others, 10_000);
  chain.submitTx(spender.toHex());
  chain.mine(1);
  const block2 = chain.tip;

  // A 64-byte spend: one input, one 4-byte OP_RETURN output (4+1+41+1+13+4 = 64 bytes without the witness).
  const tiny = spend(raw, [{ txid: u2!.txid, vout: u2!.vout, value: BigInt(u2!.value) }], [{ script: Uint8Array.of(0x6a, 0x02, 0xab, 0xcd), value: 0n }]);
  if (tiny.byteLength(false) !== 64) throw new Error(`the tiny spend is ${tiny.byteLength(false)} bytes`);
  chain.faucet(others, 10_000);
  chain.submitTx(tiny.toHex());
  chain.mine(1);

  return {
    chain,
    wallet: w,
    callerSecret,
    contractId,
    executed: { call, anchor, block, status: statusOf(call, anchor.txid, 'executed', pos) },
    dropped: { call: call2, anchor: anchor2, spender, vin: 0, block: block2, status: statusOf(call2, anchor2.txid, 'dropped', null) },
    tiny: { tx: tiny, outpoint: { txid: u2!.txid, vout: u2!.vout }, block: chain.tip },
  };
}

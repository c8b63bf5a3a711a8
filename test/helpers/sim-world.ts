/**
 * The simulated Bitcoin world of the convergence simulation: a seeded random number
 * generator, the payloads users make (deploys and calls with real envelopes, real
 * bitcoinjs anchoring transactions, duplicate (caller, call_id) pairs, outpoints a
 * conflicting transaction spends), a mempool, and a best chain that grows and reorganises.
 * It serves the node's own BlockWatcher as a ChainSource (what the chain-data endpoint
 * answers) and answers intake's chain questions (is the anchor visible, what spends an
 * outpoint) the way Esplora does, including Electrs' habit of still serving transactions
 * that left the mempool. It also answers a light node's header follower (`/blocks` pages of
 * ten) and gives the Bitcoin evidence of a payload (anchor bytes, merkle branches) as a
 * peer that read its blocks would.
 */
import { Transaction } from 'bitcoinjs-lib';
import { NodeError } from '@svc-node/protocol/errors';
import type { ChainSource } from '../../src/chain/esplora-client.js';
import { hashMeetsTarget, parseHeaderBytes, type ParsedBlock } from '@svc-node/protocol/bitcoin';
import { merkleBranches, merkleRootOf } from '@svc-node/protocol/merkle-branch';
import type { Evidence, Inclusion, SpentBy } from '@svc-node/protocol/evidence';
import type { HeaderRow, HeaderSource } from '../../src/chain/header-follower.js';
import type { CallEnvelope } from '@svc-node/protocol/envelope';
import { sha256, toHex } from '@svc-node/protocol/hash';
import { callStampScript, deployStampScript } from '@svc-node/protocol/stamp';
import { codeHash, contractId as deriveContractId } from '@svc-node/protocol/contract';
import type { Value } from '@svc-node/protocol/value';
import type { CallRecord, ContractRecord } from '../../src/records.js';
import { pendingCallRecord, unsignedCall } from './ledger-fixture.js';
import { wallet, type Wallet } from './txbuilder.js';
import * as bitcoin from 'bitcoinjs-lib';
import type { CoinEvidence } from '@svc-node/protocol/coin';

/** Bitcoin Core's regtest genesis: the devnet's too, so activation applies as on a devnet. */
export const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

/** splitmix32: small, fast and fully determined by the seed (no Math.random anywhere). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x9e3779b9) >>> 0;
    let z = this.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return this.next() % n;
  }
  chance(percent: number): boolean {
    return this.int(100) < percent;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

export interface Artifact {
  bytecode: string;
  abi: unknown[];
  function_offsets: Record<string, unknown>;
  function_offset_to_locals: Record<string, unknown>;
  constants: unknown[];
}

/**
 * `fund`: the transaction that created the coin the anchor spends (output 0, paying the
 * world's wallet): the coin a client shows the node (docs/STATE.md, "Coin evidence") is
 * real, and provable once `fund` confirms.
 */
export type Payload =
  | { kind: 'deploy'; txid: string; record: ContractRecord; tx: Transaction; fund: Transaction }
  | { kind: 'call'; txid: string; record: CallRecord; tx: Transaction; envelope: CallEnvelope; outpoint: string; conflict: Transaction | null; fund: Transaction };

export interface SimBlock {
  height: number;
  hash: string;
  prevHash: string;
  txs: Transaction[];
  txids: string[];
  /** The 80-byte header: real, so the node's header chain and merkle proofs hold as on Bitcoin. */
  header: Buffer;
}

/** Regtest's proof-of-work bits (about two nonce tries a block). */
const SIM_BITS = 0x207fffff;

/**
 * A real header over `txids`: version 2, linked to `prevHash`, their merkle root, a
 * timestamp that differs per branch (so a reorganised height gets another hash), regtest
 * bits and the first nonce meeting them.
 */
export function headerOf(prevHash: string, txids: string[], time: number): { header: Buffer; hash: string } {
  const root = merkleRootOf(txids.map((t) => Buffer.from(t, 'hex').reverse()));
  const h = Buffer.alloc(80);
  h.writeUInt32LE(2, 0);
  Buffer.from(prevHash, 'hex').reverse().copy(h, 4);
  Buffer.from(root).copy(h, 36);
  h.writeUInt32LE(time >>> 0, 68);
  h.writeUInt32LE(SIM_BITS, 72);
  for (let nonce = 0; ; nonce++) {
    h.writeUInt32LE(nonce, 76);
    const hash = Buffer.from(sha256(sha256(h))).reverse().toString('hex');
    if (hashMeetsTarget(hash, SIM_BITS)) return { header: h, hash };
  }
}

const id32 = (label: string, ...n: (number | string)[]): Uint8Array => sha256(Buffer.from(`${label}:${n.join(':')}`));

function spendTx(outpointTxid: Uint8Array, vout: number, script: Uint8Array, salt: number): Transaction {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(Buffer.from(outpointTxid).reverse(), vout);
  tx.addOutput(Buffer.from(script), 1000n);
  tx.locktime = salt; // distinct txids for otherwise equal transactions
  return tx;
}

/** What each coin of the world holds, sats (its anchor pays 99,000 of it as fee). */
const COIN_SATS = 100_000n;

/**
 * `spendTx` of the world wallet's coin `fund:vout`, signed as a P2WPKH wallet signs it.
 * `fee`: the stamp output carries nothing and the coin less `fee` returns to the wallet
 * (output 1: a coin the next anchor may spend, unconfirmed).
 */
function signedSpend(w: Wallet, fund: Transaction, script: Uint8Array, salt: number, vout = 0, fee?: bigint): Transaction {
  const tx = spendTx(Buffer.from(fund.getId(), 'hex'), vout, script, salt);
  const value = fund.outs[vout]!.value;
  if (fee !== undefined) {
    tx.outs[0]!.value = 0n;
    tx.addOutput(Buffer.from(w.script), value - fee);
  }
  const code = bitcoin.payments.p2pkh({ pubkey: w.key.publicKey }).output!;
  const h = tx.hashForWitnessV0(0, code, value, Transaction.SIGHASH_ALL);
  tx.setWitness(0, [bitcoin.script.signature.encode(w.key.sign(h), Transaction.SIGHASH_ALL), w.key.publicKey]);
  return tx;
}

/** A payment output script: what a conflicting, unstamped spend pays to. */
const PAY_SCRIPT = Buffer.concat([Buffer.of(0x00, 0x14), Buffer.alloc(20, 7)]);

export class World {
  readonly payloads: Payload[] = [];
  /** Every transaction ever broadcast (Electrs serves them even after they left the mempool). */
  readonly visible = new Map<string, Transaction>();
  /** Broadcast and not on the best chain, in broadcast order. */
  mempool: Transaction[] = [];
  readonly chain: SimBlock[];
  /** Blocks that left the best chain in reorganisations (what a peer on a gone branch still names). */
  readonly stale: SimBlock[] = [];
  private salt = 1;
  private branch = 0;
  /** The key of every coin the world's payloads spend. */
  private readonly wallet: Wallet;

  constructor(
    readonly rng: Rng,
    readonly seed: number,
  ) {
    // Block 0 stands for regtest's genesis (its hash names the network); no header of it is read.
    this.wallet = wallet(`sim-world:${seed}`);
    this.chain = [{ height: 0, hash: REGTEST_GENESIS, prevHash: '00'.repeat(32), txs: [this.coinbase(0)], txids: [], header: Buffer.alloc(80) }];
    this.chain[0]!.txids = [this.chain[0]!.txs[0]!.getId()];
  }

  get tip(): SimBlock {
    return this.chain[this.chain.length - 1]!;
  }

  private coinbase(height: number): Transaction {
    const tx = new Transaction();
    tx.version = 2;
    tx.addInput(Buffer.alloc(32), 0xffffffff, 0xffffffff, Buffer.from(`cb:${this.seed}:${height}:${this.branch}`));
    tx.addOutput(PAY_SCRIPT, 5_000_000_000n);
    return tx;
  }

  // ---------------------------------------------------------------- payloads

  /** A new coin of the world's wallet: its funding transaction (`Payload.fund`; the caller broadcasts it). */
  private newCoin(label: string): Transaction {
    const fund = new Transaction();
    fund.version = 2;
    fund.addInput(Buffer.from(id32(label, this.seed, this.salt)).reverse(), 0);
    fund.addOutput(Buffer.from(this.wallet.script), COIN_SATS);
    return fund;
  }

  deploy(artifact: Artifact): Payload & { kind: 'deploy' } {
    const ch = codeHash(artifact);
    const fund = this.newCoin('deploy-in');
    const tx = signedSpend(this.wallet, fund, deployStampScript(ch), this.salt++);
    const txid = tx.getId();
    const record: ContractRecord = {
      contract_id: toHex(deriveContractId(Buffer.from(txid, 'hex'), ch)),
      txid,
      code_hash: toHex(ch),
      status: 'pending',
      block_height: null,
      tx_index: null,
      artifact: { ...artifact, metadata: {} },
      body_hash: toHex(sha256(Buffer.from(`deploy-body:${txid}`))),
    };
    const p = { kind: 'deploy' as const, txid, record, tx, fund };
    this.payloads.push(p);
    return p;
  }

  /**
   * A call with a real envelope and its anchoring transaction. `doomed`: a second,
   * unstamped transaction spends the same outpoint; whichever confirms first decides
   * (the call executes, or it is dropped). The signature is zero: intake's signature
   * check is intrinsic and arrival-independent, and the ledger never re-checks it.
   */
  call(contractId: string, fn: string, args: Value[], caller: Uint8Array, callId: bigint, doomed: boolean, opts: { coin?: { tx: Transaction; vout: number }; fee?: bigint } = {}): Payload & { kind: 'call' } {
    // `opts.coin`: spend this coin (another payload's anchor's change, a coin already
    // spent by another anchor) instead of a new one; `opts.fee`: what the anchor pays.
    const fund = opts.coin?.tx ?? this.newCoin('utxo');
    const vout = opts.coin?.vout ?? 0;
    const outpointTxid = Buffer.from(fund.getId(), 'hex');
    const { envelope, bytes, envelopeHash: eh } = unsignedCall(contractId, fn, args, caller, callId, outpointTxid, vout);
    const tx = signedSpend(this.wallet, fund, callStampScript(envelope.contractId, eh), this.salt++, vout, opts.fee);
    const conflict = doomed ? spendTx(outpointTxid, 0, PAY_SCRIPT, this.salt++) : null;
    const txid = tx.getId();
    const record = pendingCallRecord(txid, contractId, envelope, bytes, eh);
    const p = { kind: 'call' as const, txid, record, tx, envelope, outpoint: record.outpoint, conflict, fund };
    this.payloads.push(p);
    return p;
  }

  // ---------------------------------------------------------------- chain

  broadcast(tx: Transaction): void {
    const txid = tx.getId();
    if (this.visible.has(txid)) return;
    this.visible.set(txid, tx);
    if (process.env['SIM_TRACE']) process.stderr.write(`sim: broadcast ${txid.slice(0, 8)}\n`);
    if (!this.confirmedAt(txid) && !this.conflictsWithChain(tx)) this.mempool.push(tx);
  }

  private spentOnChain(): Map<string, string> {
    const out = new Map<string, string>();
    for (const b of this.chain.slice(1)) for (const tx of b.txs.slice(1)) for (const i of tx.ins) out.set(outpointOf(i), tx.getId());
    return out;
  }

  private conflictsWithChain(tx: Transaction): boolean {
    const spent = this.spentOnChain();
    return tx.ins.some((i) => spent.has(outpointOf(i)));
  }

  /** Mines a block on the tip with up to `max` mempool transactions in random order (no double spends). */
  mine(max = 6): SimBlock {
    const chosen: Transaction[] = [];
    const used = new Set<string>();
    for (const tx of this.rng.shuffle(this.mempool)) {
      if (chosen.length >= max) break;
      if (tx.ins.some((i) => used.has(outpointOf(i)))) continue;
      for (const i of tx.ins) used.add(outpointOf(i));
      chosen.push(tx);
    }
    const height = this.tip.height + 1;
    const txs = [this.coinbase(height), ...chosen];
    const txids = txs.map((t) => t.getId());
    const { header, hash } = headerOf(this.tip.hash, txids, 1_296_688_602 + height * 600 + this.branch);
    const b: SimBlock = { height, hash, prevHash: this.tip.hash, txs, txids, header };
    this.chain.push(b);
    if (process.env['SIM_TRACE']) process.stderr.write(`sim: mined ${height}:${hash.slice(0, 8)} with ${chosen.map((t) => t.getId().slice(0, 8)).join(' ')}\n`);
    const gone = new Set(chosen.map((t) => t.getId()));
    // Mined, or now conflicting with what was mined: out of the mempool.
    this.mempool = this.mempool.filter((t) => !gone.has(t.getId()) && !t.ins.some((i) => used.has(outpointOf(i))));
    return b;
  }

  /** Replaces the top `depth` blocks with `newBlocks` others (their transactions back in the mempool first). */
  reorg(depth: number, newBlocks: number): void {
    const removed = this.chain.splice(this.chain.length - depth, depth);
    this.stale.push(...removed);
    if (process.env['SIM_TRACE']) process.stderr.write(`sim: reorg ${depth} deep, ${newBlocks} new blocks\n`);
    this.branch++;
    const back = removed.flatMap((b) => b.txs.slice(1));
    const known = new Set(this.mempool.map((t) => t.getId()));
    this.mempool = [...back.filter((t) => !known.has(t.getId())), ...this.mempool];
    // Conflicting spends of one outpoint may now both wait: mine() takes at most one.
    for (let i = 0; i < newBlocks; i++) this.mine();
  }

  confirmedAt(txid: string): SimBlock | null {
    for (const b of this.chain) if (b.txids.includes(txid)) return b;
    return null;
  }

  /** Esplora's /tx/:txid/outspend/:vout for a "txid:vout" on the best chain, or the mempool. */
  outspend(outpoint: string): { txid: string; confirmed: { height: number; hash: string } | null } | null {
    for (const b of this.chain.slice(1)) {
      for (const tx of b.txs.slice(1)) if (tx.ins.some((i) => outpointOf(i) === outpoint)) return { txid: tx.getId(), confirmed: { height: b.height, hash: b.hash } };
    }
    const m = this.mempool.find((tx) => tx.ins.some((i) => outpointOf(i) === outpoint));
    return m ? { txid: m.getId(), confirmed: null } : null;
  }

  /** Where `txid` sits on the best chain, with its merkle branch (Esplora's /tx/:txid/merkle-proof); null when unconfirmed. */
  inclusionOf(txid: string): Inclusion | null {
    const b = this.confirmedAt(txid);
    if (!b || b.height === 0) return null;
    return inclusionIn(b, b.txids.indexOf(txid));
  }

  /** The confirmed transaction of the best chain other than `p`'s anchor that spends the outpoint call `p` names, with its inclusion. */
  spenderOf(p: Payload & { kind: 'call' }): SpentBy | null {
    const s = this.outspend(p.outpoint);
    if (!s || !s.confirmed || s.txid === p.txid) return null;
    const b = this.chain[s.confirmed.height]!;
    const index = b.txids.indexOf(s.txid);
    const tx = b.txs[index]!;
    return { tx: tx.toBuffer(), vin: tx.ins.findIndex((i) => outpointOf(i) === p.outpoint), at: inclusionIn(b, index) };
  }

  /** The evidence a peer that read the best chain sends with `p`: its anchor, where it confirmed, what spent a call's outpoint. */
  evidenceOf(p: Payload): Evidence {
    return { anchorTx: p.tx.toBuffer(), confirmed: this.inclusionOf(p.txid), spentBy: p.kind === 'call' ? this.spenderOf(p) : null, coin: this.coinOf(p) };
  }

  /** The coin evidence a client gathers for `p` from the best chain: the funding transaction, with its inclusion once confirmed. */
  coinOf(p: Payload): CoinEvidence {
    return { prevTxs: [{ tx: p.fund.toBuffer(), at: this.inclusionOf(p.fund.getId()) }] };
  }

  /** The endpoint's `/blocks[/:top]` as the header follower reads it: ten blocks from `top` (the tip without it) down, newest first. */
  headerSource(): HeaderSource {
    const rows = async (top?: number): Promise<HeaderRow[]> => {
      const out: HeaderRow[] = [];
      // Block 0 stands for the genesis (no header of it is read): rows stop above it.
      for (let h = Math.min(top ?? this.tip.height, this.tip.height); h >= 1 && out.length < 10; h--) {
        const b = this.chain[h]!;
        out.push({ height: h, hash: b.hash, prevHash: b.prevHash, header: b.header });
      }
      return out;
    };
    const txBlock = async (txid: string): Promise<{ height: number; hash: string } | null> => {
      const b = this.confirmedAt(txid);
      return b ? { height: b.height, hash: b.hash } : null;
    };
    return { blocks: rows, rawBlock: (hash: string) => this.rawBlock(hash), txBlock };
  }

  private async rawBlock(hash: string): Promise<ParsedBlock> {
    const b = this.chain.find((x) => x.hash === hash);
    if (!b) throw new NodeError('not_found', `no block ${hash}`);
    return { hash: b.hash, header: parseHeaderBytes(b.header), txs: b.txs, txids: b.txids, size: 0, weight: 0 } as unknown as ParsedBlock;
  }

  /** The chain-data endpoint as the node's BlockWatcher sees it. */
  source(): ChainSource {
    return {
      tipHeight: async () => this.tip.height,
      tipHash: async () => this.tip.hash,
      blockHashAt: async (h: number) => {
        const b = this.chain[h];
        if (!b) throw new NodeError('not_found', `no block at ${h}`);
        return b.hash;
      },
      rawBlock: (hash: string) => this.rawBlock(hash),
    } as unknown as ChainSource;
  }
}

/** The inclusion of the transaction at `index` of block `b`. */
export function inclusionIn(b: SimBlock, index: number): Inclusion {
  const [branch] = merkleBranches(b.txids.map((t) => Buffer.from(t, 'hex').reverse()), [index]);
  return { blockHash: b.hash, height: b.height, txIndex: index, branch: branch! };
}

export function outpointOf(i: { hash: Uint8Array; index: number }): string {
  return `${toHex(Uint8Array.from(i.hash).reverse())}:${i.index}`;
}

/**
 * DevnetChain: a local regtest-style Bitcoin chain mined in memory with real blocks and
 * transactions (bitcoinjs-lib): BIP-34 coinbases, merkle roots, linked headers, regtest
 * difficulty 0x207fffff (about two nonce tries per block), segwit witness commitments
 * when a block holds witness transactions, a funded P2WPKH faucet, and a mempool that
 * rejects double spends, unknown or immature inputs, overspends and (for P2WPKH, P2PKH
 * and P2TR key-path inputs) bad signatures. Other input kinds are accepted unchecked.
 *
 * Deterministic: the faucet key derives from a fixed seed, block times from the height
 * (regtest genesis time + 600 s per block), coinbases from (height, reorg counter), and
 * ECDSA signatures are RFC 6979; two devnets driven alike produce identical hashes.
 *
 * Persistence (optional `dataFile`): JSON `{format, reorg_count, blocks: [raw hex from
 * height 1], mempool: [tx hex]}`, rewritten after every change and replayed at start.
 * Stale (reorged-out) blocks are not persisted.
 */
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { ECPairFactory, type ECPairInterface } from 'ecpair';
import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { displayHex, hashMeetsTarget, initEcc, merkleRoot, parseRawBlock, parseTxHex, sha256d, type ParsedHeader } from '@svc-node/protocol/bitcoin';
import type { TxStatus, Outspend } from '../chain/esplora-client.js';
import { scriptType } from './esplora-json.js';
import { BlockFiller, type FillTarget } from './block-fill.js';

initEcc();
const ECPair = ECPairFactory(ecc);

export const REGTEST = bitcoin.networks.regtest;
export const REGTEST_BITS = 0x207fffff;
/** Bitcoin Core's regtest genesis: mainnet's coinbase, time 1296688602, nonce 2. */
const GENESIS_COINBASE_HEX =
  '01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000';
export const REGTEST_GENESIS_HASH = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';
const GENESIS_TIME = 1296688602;
/** Seconds between devnet block timestamps (Bitcoin's target spacing). */
const BLOCK_SPACING = 600;
export const COINBASE_MATURITY = 100;
/** Regtest halves the subsidy every 150 blocks. */
const HALVING_INTERVAL = 150;
const DUST = 546n;
const FAUCET_SEED = 'svc-devnet/faucet/v1';
/**
 * Blocks one mine request may make: 100,000 nearly empty ones (a year of mainnet headers
 * is 52,560; measured ~0.3 ms and ~4 KB of memory each), or 200 filled ones (each ~1.5 MB
 * raw and ~26 MB held in memory with its parsed transactions and indexes).
 */
const MAX_MINE_BLOCKS = 100_000;
const MAX_FILL_BLOCKS = 200;
const FORMAT = 'svc-devnet-chain/1';

/** Mempool refusal, rendered by the server as bitcoind's RPC error inside Esplora's text. */
export class TxRejected extends Error {
  constructor(
    readonly rpcCode: number,
    readonly reason: string,
  ) {
    super(reason);
  }
  /** The text electrs answers with (400): `sendrawtransaction RPC error: {...}`. */
  get esploraText(): string {
    return `sendrawtransaction RPC error: ${JSON.stringify({ code: this.rpcCode, message: this.reason })}`;
  }
}

/** Bad control request (unknown txid, bad depth...). */
export class DevnetError extends Error {}

export interface BlockRecord {
  hash: string;
  height: number;
  header: ParsedHeader;
  raw: Uint8Array;
  txs: bitcoin.Transaction[];
  txids: string[];
  size: number;
  weight: number;
}

interface Coin {
  value: bigint;
  script: Uint8Array;
  /** Confirmation height; null for a mempool output. */
  height: number | null;
  coinbase: boolean;
}

interface MempoolEntry {
  tx: bitcoin.Transaction;
  txid: string;
  fee: bigint;
}

export interface MineResult {
  hashes: string[];
  height: number;
}

export interface ReorgOptions {
  /** How many blocks to replace (1 ≤ depth ≤ tip height). */
  depth: number;
  /** Length of the new branch; default depth + 1. */
  blocks?: number;
  /** Transactions of the removed blocks to leave out (they return to the mempool unless conflicted). */
  drop?: string[];
  /** When given, the first new block holds exactly these (removed or mempool) transactions, in order. */
  txids?: string[];
  /** Extension: raw transactions (hex) appended to the first new block, e.g. a conflicting spend. */
  txs?: string[];
}

const opKey = (txid: string, vout: number) => `${txid}:${vout}`;

function subsidy(height: number): bigint {
  const halvings = Math.floor(height / HALVING_INTERVAL);
  return halvings >= 64 ? 0n : 5_000_000_000n >> BigInt(halvings);
}

export class DevnetChain {
  readonly network = REGTEST;
  readonly faucetKey: ECPairInterface;
  readonly faucetAddress: string;
  readonly faucetScript: Uint8Array;

  private chain: BlockRecord[] = [];
  private readonly byHash = new Map<string, BlockRecord>();
  private readonly allTxs = new Map<string, bitcoin.Transaction>();
  private txLoc = new Map<string, { height: number; index: number }>();
  private utxo = new Map<string, Coin>();
  private spentBy = new Map<string, { txid: string; vin: number }>();
  private mempool = new Map<string, MempoolEntry>();
  private memSpentBy = new Map<string, { txid: string; vin: number }>();
  private reorgCount = 0;
  private readonly listeners = new Set<() => void>();
  private filler: BlockFiller | null = null;

  constructor(private readonly dataFile?: string) {
    this.faucetKey = ECPair.fromPrivateKey(new Uint8Array(createHash('sha256').update(FAUCET_SEED).digest()), { network: REGTEST });
    const pay = bitcoin.payments.p2wpkh({ pubkey: this.faucetKey.publicKey, network: REGTEST });
    this.faucetAddress = pay.address!;
    this.faucetScript = pay.output!;
    this.connect(this.genesis());
    if (dataFile && existsSync(dataFile)) this.load(dataFile);
  }

  // ---- reads ---------------------------------------------------------------------------

  get height(): number {
    return this.chain.length - 1;
  }

  get tip(): BlockRecord {
    return this.chain[this.chain.length - 1]!;
  }

  blockAt(height: number): BlockRecord | undefined {
    return this.chain[height];
  }

  /** Any block ever mined here, best chain or stale. */
  blockByHash(hash: string): BlockRecord | undefined {
    return this.byHash.get(hash);
  }

  inBestChain(hash: string): boolean {
    const b = this.byHash.get(hash);
    return !!b && this.chain[b.height] === b;
  }

  mediantime(height: number): number {
    const ts: number[] = [];
    for (let h = Math.max(0, height - 10); h <= height; h++) ts.push(this.chain[h]!.header.timestamp);
    ts.sort((a, b) => a - b);
    return ts[Math.floor(ts.length / 2)]!;
  }

  /** Every transaction known (best chain, mempool, or only in a stale block). */
  getTx(txid: string): bitcoin.Transaction | undefined {
    return this.allTxs.get(txid);
  }

  /** Known to the best chain or the mempool (Esplora answers 404 otherwise... except stale-only txs, see server). */
  txStatus(txid: string): TxStatus {
    const loc = this.txLoc.get(txid);
    if (!loc) return { confirmed: false };
    const b = this.chain[loc.height]!;
    return { confirmed: true, block_height: loc.height, block_hash: b.hash, block_time: b.header.timestamp };
  }

  txPosition(txid: string): { height: number; index: number } | undefined {
    return this.txLoc.get(txid);
  }

  inMempool(txid: string): boolean {
    return this.mempool.has(txid);
  }

  mempoolTxids(): string[] {
    return [...this.mempool.keys()];
  }

  outspend(txid: string, vout: number): Outspend {
    const k = opKey(txid, vout);
    const s = this.spentBy.get(k) ?? this.memSpentBy.get(k);
    if (!s) return { spent: false };
    return { spent: true, txid: s.txid, vin: s.vin, status: this.txStatus(s.txid) };
  }

  prevout(txid: string, vout: number): { script: Uint8Array; value: bigint } | undefined {
    return this.allTxs.get(txid)?.outs[vout];
  }

  /** Unspent outputs paying `script`: confirmed and mempool, minus those the mempool spends. */
  utxosOf(script: Uint8Array): { txid: string; vout: number; value: bigint; status: TxStatus }[] {
    const out: { txid: string; vout: number; value: bigint; status: TxStatus; h: number }[] = [];
    for (const [k, c] of this.utxo) {
      if (Buffer.compare(c.script, script) !== 0 || this.memSpentBy.has(k)) continue;
      const [txid, v] = k.split(':') as [string, string];
      out.push({ txid, vout: Number(v), value: c.value, status: this.txStatus(txid), h: c.height ?? Infinity });
    }
    let order = 0;
    for (const e of this.mempool.values()) {
      order++;
      e.tx.outs.forEach((o, vout) => {
        if (Buffer.compare(o.script, script) !== 0 || this.memSpentBy.has(opKey(e.txid, vout))) return;
        out.push({ txid: e.txid, vout, value: o.value, status: { confirmed: false }, h: 1e12 + order });
      });
    }
    out.sort((a, b) => a.h - b.h || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout));
    return out.map(({ h: _h, ...r }) => r);
  }

  /** Called after every change (mine, reorg, tx accepted). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Whether the output exists (confirmed, or of a mempool transaction) and nothing spends it yet. */
  spendable(txid: string, vout: number): boolean {
    return this.coinFor(txid, vout) !== undefined && !this.memSpentBy.has(opKey(txid, vout));
  }

  // ---- mempool -------------------------------------------------------------------------

  /** Accepts a raw transaction (hex) into the mempool; throws TxRejected. Returns the txid. */
  submitTx(hex: string): string {
    let tx: bitcoin.Transaction;
    try {
      tx = parseTxHex(hex.trim().toLowerCase());
    } catch {
      throw new TxRejected(-22, 'TX decode failed');
    }
    const txid = this.accept(tx, true);
    this.changed();
    return txid;
  }

  private coinFor(txid: string, vout: number): Coin | undefined {
    const c = this.utxo.get(opKey(txid, vout));
    if (c) return c;
    const m = this.mempool.get(txid);
    if (!m) return undefined;
    const o = m.tx.outs[vout];
    if (!o || (o.script.length > 0 && o.script[0] === 0x6a)) return undefined;
    return { value: o.value, script: o.script, height: null, coinbase: false };
  }

  private accept(tx: bitcoin.Transaction, checkSigs: boolean): string {
    const txid = tx.getId();
    if (tx.isCoinbase()) throw new TxRejected(-26, 'coinbase');
    if (tx.ins.length === 0) throw new TxRejected(-26, 'bad-txns-vin-empty');
    if (tx.outs.length === 0) throw new TxRejected(-26, 'bad-txns-vout-empty');
    if (this.mempool.has(txid)) throw new TxRejected(-27, 'txn-already-in-mempool');
    if (this.txLoc.has(txid)) throw new TxRejected(-27, 'Transaction already in block chain');
    const seen = new Set<string>();
    let inSum = 0n;
    const coins: Coin[] = [];
    tx.ins.forEach((inp) => {
      const ptxid = displayHex(inp.hash);
      const k = opKey(ptxid, inp.index);
      if (seen.has(k)) throw new TxRejected(-26, 'bad-txns-inputs-duplicate');
      seen.add(k);
      if (this.memSpentBy.has(k)) throw new TxRejected(-26, 'txn-mempool-conflict');
      const coin = this.coinFor(ptxid, inp.index);
      if (!coin) throw new TxRejected(-25, 'bad-txns-inputs-missingorspent');
      if (coin.coinbase && coin.height !== null && this.height + 1 - coin.height < COINBASE_MATURITY) {
        throw new TxRejected(-26, 'bad-txns-premature-spend-of-coinbase');
      }
      inSum += coin.value;
      coins.push(coin);
    });
    let outSum = 0n;
    for (const o of tx.outs) {
      if (o.value < 0n || o.value > 2_100_000_000_000_000n) throw new TxRejected(-26, 'bad-txns-vout-negative');
      outSum += o.value;
    }
    if (outSum > inSum) throw new TxRejected(-26, 'bad-txns-in-belowout');
    if (checkSigs) this.verifySignatures(tx, coins);
    this.mempool.set(txid, { tx, txid, fee: inSum - outSum });
    this.allTxs.set(txid, tx);
    tx.ins.forEach((inp, vin) => this.memSpentBy.set(opKey(displayHex(inp.hash), inp.index), { txid, vin }));
    return txid;
  }

  private verifySignatures(tx: bitcoin.Transaction, coins: Coin[]): void {
    const fail = () => new TxRejected(-26, 'mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)');
    coins.forEach((coin, i) => {
      const inp = tx.ins[i]!;
      const type = scriptType(coin.script);
      try {
        if (type === 'v0_p2wpkh') {
          if (inp.witness.length !== 2 || inp.script.length !== 0) throw fail();
          const [sigRaw, pub] = inp.witness as [Uint8Array, Uint8Array];
          if (pub.length !== 33 || Buffer.compare(bitcoin.crypto.hash160(pub), coin.script.subarray(2)) !== 0) throw fail();
          const sig = bitcoin.script.signature.decode(sigRaw);
          const scriptCode = bitcoin.payments.p2pkh({ pubkey: pub }).output!;
          const h = tx.hashForWitnessV0(i, scriptCode, coin.value, sig.hashType);
          if (!ecc.verify(h, pub, sig.signature)) throw fail();
        } else if (type === 'p2pkh') {
          const chunks = bitcoin.script.decompile(inp.script);
          if (!chunks || chunks.length !== 2 || typeof chunks[0] === 'number' || typeof chunks[1] === 'number') throw fail();
          const [sigRaw, pub] = chunks as [Uint8Array, Uint8Array];
          if (Buffer.compare(bitcoin.crypto.hash160(pub), coin.script.subarray(3, 23)) !== 0) throw fail();
          const sig = bitcoin.script.signature.decode(sigRaw);
          const h = tx.hashForSignature(i, coin.script, sig.hashType);
          if (!ecc.verify(h, pub, sig.signature)) throw fail();
        } else if (type === 'v1_p2tr') {
          const w = inp.witness;
          const hasAnnex = w.length >= 2 && w[w.length - 1]![0] === 0x50;
          const n = w.length - (hasAnnex ? 1 : 0);
          if (n !== 1) return; // script path: not checked here
          const sigRaw = w[0]!;
          if (sigRaw.length !== 64 && sigRaw.length !== 65) throw fail();
          const hashType = sigRaw.length === 65 ? sigRaw[64]! : bitcoin.Transaction.SIGHASH_DEFAULT;
          if (sigRaw.length === 65 && hashType === 0) throw fail();
          const h = tx.hashForWitnessV1(
            i,
            coins.map((c) => c.script),
            coins.map((c) => c.value),
            hashType,
            undefined,
            hasAnnex ? w[w.length - 1] : undefined,
          );
          if (!ecc.verifySchnorr(h, coin.script.subarray(2), sigRaw.subarray(0, 64))) throw fail();
        }
      } catch (e) {
        if (e instanceof TxRejected) throw e;
        throw fail();
      }
    });
  }

  /** Re-admits transactions in order without signature checks, dropping any now invalid. */
  private readmit(candidates: bitcoin.Transaction[]): void {
    for (const tx of candidates) {
      const id = tx.getId();
      if (this.txLoc.has(id) || this.mempool.has(id)) continue;
      try {
        this.accept(tx, false);
      } catch {
        // conflicted, already confirmed, or spends something that is gone: evicted
      }
    }
  }

  // ---- faucet --------------------------------------------------------------------------

  /** Pays `sats` to `address` from the faucet (unconfirmed until mined). */
  faucet(address: string, sats: number | bigint): { txid: string; vout: number } {
    let script: Uint8Array;
    try {
      script = bitcoin.address.toOutputScript(address, REGTEST);
    } catch {
      throw new DevnetError(`not a regtest address: ${address}`);
    }
    const amount = BigInt(sats);
    if (amount < DUST) throw new DevnetError(`amount must be at least ${DUST} sats`);
    const spendable = this.utxosOf(this.faucetScript).filter((u) => {
      const c = this.utxo.get(opKey(u.txid, u.vout));
      return !c || !c.coinbase || this.height + 1 - (c.height ?? 0) >= COINBASE_MATURITY;
    });
    const tx = new bitcoin.Transaction();
    tx.version = 2;
    const chosen: { txid: string; vout: number; value: bigint }[] = [];
    let total = 0n;
    // Fee: 2 sat/vB over a P2WPKH estimate (11 vB + 68 per input + 31 per output).
    const feeFor = (nIn: number) => BigInt(2 * (11 + 68 * nIn + 31 * 2));
    for (const u of spendable) {
      chosen.push(u);
      total += u.value;
      if (total >= amount + feeFor(chosen.length)) break;
    }
    const fee = feeFor(chosen.length);
    if (total < amount + fee) {
      // Mining helps only when immature coinbase coins would cover the amount once mature.
      const all = this.utxosOf(this.faucetScript).reduce((sum, u) => sum + u.value, 0n);
      const most = total - feeFor(chosen.length);
      const more = all - fee >= amount ? ` (immature coins would cover it: mine ${COINBASE_MATURITY} blocks, svc devnet mine ${COINBASE_MATURITY})` : '';
      throw new DevnetError(`the faucet can pay at most ${most > 0n ? most : 0n} sats now, not ${amount}${more}`);
    }
    for (const c of chosen) tx.addInput(Buffer.from(c.txid, 'hex').reverse(), c.vout, 0xfffffffd);
    tx.addOutput(script, amount);
    const change = total - amount - fee;
    if (change >= DUST) tx.addOutput(this.faucetScript, change);
    const scriptCode = bitcoin.payments.p2pkh({ pubkey: this.faucetKey.publicKey }).output!;
    chosen.forEach((c, i) => {
      const h = tx.hashForWitnessV0(i, scriptCode, c.value, bitcoin.Transaction.SIGHASH_ALL);
      const sig = bitcoin.script.signature.encode(this.faucetKey.sign(h), bitcoin.Transaction.SIGHASH_ALL);
      tx.setWitness(i, [sig, this.faucetKey.publicKey]);
    });
    const txid = this.accept(tx, true);
    this.changed();
    return { txid, vout: 0 };
  }

  // ---- mining --------------------------------------------------------------------------

  /**
   * Mines `n` blocks. The first holds exactly `txids` (mempool transactions, in that
   * order) when given, else the whole mempool in arrival order; the rest hold only a
   * coinbase. With `fill`, every block is then filled with signed payments up to the
   * target (src/devnet/block-fill.ts), after any funding they needed.
   */
  mine(n: number, txids?: string[], fill?: FillTarget): MineResult {
    const max = fill ? MAX_FILL_BLOCKS : MAX_MINE_BLOCKS;
    if (!Number.isInteger(n) || n < 1 || n > max) throw new DevnetError(`blocks must be an integer in 1..${max}${fill ? ' when filled' : ''}`);
    const first = txids ? this.selectFromMempool(txids) : [...this.mempool.values()].map((e) => e.tx);
    const hashes: string[] = [];
    for (let i = 0; i < n; i++) {
      const txs = i === 0 ? first : [];
      if (!fill) {
        hashes.push(this.mineBlock(txs).hash);
        continue;
      }
      // Header, coinbase (~200 bytes) and the count's varint, then what the block holds already.
      const have = { txs: 1 + txs.length, bytes: 80 + 5 + 200 + txs.reduce((a, t) => a + t.byteLength(), 0) };
      const before = new Set(this.mempool.keys());
      const paid = (this.filler ??= new BlockFiller(this.fillChain())).payments(fill, have);
      const funding = [...this.mempool.values()].filter((e) => !before.has(e.txid)).map((e) => e.tx);
      hashes.push(this.mineBlock([...txs, ...funding, ...paid.txs], paid.fees).hash);
    }
    this.changed();
    return { hashes, height: this.height };
  }

  /** What the block filler may do to this chain. */
  private fillChain(): ConstructorParameters<typeof BlockFiller>[0] {
    return {
      network: this.network,
      spendable: (txid, vout) => this.spendable(txid, vout),
      faucet: (address, sats) => this.faucet(address, sats),
      submitOwn: (tx) => void this.accept(tx, false),
    };
  }

  private selectFromMempool(txids: string[]): bitcoin.Transaction[] {
    if (!Array.isArray(txids) || new Set(txids).size !== txids.length) throw new DevnetError('txids must be distinct');
    const picked = new Set<string>();
    return txids.map((id) => {
      const e = this.mempool.get(id);
      if (!e) throw new DevnetError(`transaction not in the mempool: ${id}`);
      for (const inp of e.tx.ins) {
        const p = displayHex(inp.hash);
        if (this.mempool.has(p) && !picked.has(p)) throw new DevnetError(`${id} spends ${p}, which is not earlier in the block`);
      }
      picked.add(id);
      return e.tx;
    });
  }

  /**
   * Builds, "mines" and connects one block holding `txs`: valid mempool transactions, then
   * any the caller built itself (the filler's payments) whose fees are `otherFees`.
   */
  private mineBlock(txs: bitcoin.Transaction[], otherFees = 0n): BlockRecord {
    const height = this.height + 1;
    const fees = txs.reduce((a, t) => a + (this.mempool.get(t.getId())?.fee ?? 0n), otherFees);
    const segwit = txs.some((t) => t.hasWitnesses());
    const cb = new bitcoin.Transaction();
    cb.version = 2;
    // BIP-34 height, then a tag that differs per reorg so replacement branches get new hashes.
    const tag = Buffer.alloc(8);
    tag.writeUInt32LE(this.reorgCount, 0);
    tag.write('svc\0', 4, 'latin1');
    cb.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, bitcoin.script.compile([bitcoin.script.number.encode(height), tag]));
    cb.addOutput(this.faucetScript, subsidy(height) + fees);
    const all = [cb, ...txs];
    if (segwit) {
      const wtxids = all.map((t, i) => (i === 0 ? new Uint8Array(32) : t.getHash(true)));
      const reserved = new Uint8Array(32);
      const buf = new Uint8Array(64);
      buf.set(merkleRoot(wtxids).root, 0);
      buf.set(reserved, 32);
      const commit = sha256d(buf);
      cb.addOutput(bitcoin.script.compile([bitcoin.opcodes.OP_RETURN, Buffer.concat([Buffer.from('aa21a9ed', 'hex'), commit])]), 0n);
      cb.setWitness(0, [reserved]);
    }
    const block = new bitcoin.Block();
    block.version = 0x20000000;
    block.prevHash = Buffer.from(this.tip.hash, 'hex').reverse();
    block.merkleRoot = merkleRoot(all.map((t) => t.getHash())).root;
    block.timestamp = GENESIS_TIME + height * BLOCK_SPACING;
    block.bits = REGTEST_BITS;
    block.transactions = all;
    for (block.nonce = 0; !hashMeetsTarget(block.getId(), REGTEST_BITS); block.nonce++);
    const rec = this.record(block.toBuffer(), height);
    this.connect(rec);
    return rec;
  }

  private genesis(): BlockRecord {
    const block = new bitcoin.Block();
    block.version = 1;
    block.prevHash = new Uint8Array(32);
    const cb = bitcoin.Transaction.fromHex(GENESIS_COINBASE_HEX);
    block.merkleRoot = cb.getHash();
    block.timestamp = GENESIS_TIME;
    block.bits = REGTEST_BITS;
    block.nonce = 2;
    block.transactions = [cb];
    return this.record(block.toBuffer(), 0);
  }

  private record(raw: Uint8Array, height: number): BlockRecord {
    const p = parseRawBlock(raw);
    return { hash: p.hash, height, header: p.header, raw, txs: p.txs, txids: p.txids, size: p.size, weight: p.weight };
  }

  /** Appends a block to the best chain and updates the indexes and the mempool. */
  private connect(rec: BlockRecord): void {
    if (rec.height !== this.chain.length) throw new Error('connect out of order');
    this.chain.push(rec);
    this.byHash.set(rec.hash, rec);
    rec.txs.forEach((tx, index) => {
      const txid = rec.txids[index]!;
      this.allTxs.set(txid, tx);
      this.txLoc.set(txid, { height: rec.height, index });
      if (index > 0) {
        tx.ins.forEach((inp, vin) => {
          const k = opKey(displayHex(inp.hash), inp.index);
          this.utxo.delete(k);
          this.spentBy.set(k, { txid, vin });
        });
      }
      if (rec.height === 0) return; // the genesis coinbase is unspendable
      tx.outs.forEach((o, vout) => {
        if (o.script.length > 0 && o.script[0] === 0x6a) return;
        this.utxo.set(opKey(txid, vout), { value: o.value, script: o.script, height: rec.height, coinbase: index === 0 });
      });
    });
    if (this.mempool.size > 0) {
      const rest = [...this.mempool.values()].map((e) => e.tx);
      this.mempool = new Map();
      this.memSpentBy = new Map();
      this.readmit(rest);
    }
  }

  // ---- reorg ---------------------------------------------------------------------------

  /** Replaces the last `depth` blocks by a new branch (see ReorgOptions). Atomic: on error nothing changes. */
  reorg(opts: ReorgOptions): MineResult {
    const depth = opts.depth;
    const m = opts.blocks ?? depth + 1;
    if (!Number.isInteger(depth) || depth < 1 || depth > this.height) throw new DevnetError(`depth must be an integer in 1..${this.height}`);
    if (!Number.isInteger(m) || m < 0 || m > 10_000) throw new DevnetError('blocks must be an integer in 0..10000');
    const drop = new Set(opts.drop ?? []);
    const extra = (opts.txs ?? []).map((h) => {
      try {
        return parseTxHex(String(h).trim().toLowerCase());
      } catch {
        throw new DevnetError('txs: a transaction does not decode');
      }
    });
    const saved = { chain: this.chain.slice(), mempool: [...this.mempool.values()].map((e) => e.tx), reorgCount: this.reorgCount };
    const forkHeight = this.height - depth;
    const removed = this.chain.slice(forkHeight + 1);
    const removedTxs = removed.flatMap((b) => b.txs.slice(1));
    for (const id of drop) {
      if (!removedTxs.some((t) => t.getId() === id)) throw new DevnetError(`drop: ${id} is not in the replaced blocks`);
    }
    try {
      this.rewind(forkHeight);
      this.reorgCount++;
      const candidates = [...removedTxs, ...saved.mempool];
      const byId = new Map(candidates.map((t) => [t.getId(), t] as const));
      let first: bitcoin.Transaction[] = [];
      if (m > 0) {
        if (opts.txids) {
          for (const id of opts.txids) {
            const t = byId.get(id);
            if (!t) throw new DevnetError(`txids: ${id} is neither in the replaced blocks nor in the mempool`);
            try {
              this.accept(t, false);
            } catch (e) {
              throw new DevnetError(`txids: ${id} cannot be mined on the new branch: ${(e as Error).message}`);
            }
            first.push(t);
          }
        } else {
          for (const t of removedTxs) {
            if (drop.has(t.getId())) continue;
            try {
              this.accept(t, false);
              first.push(t);
            } catch {
              // spends something the new branch lacks: left out
            }
          }
        }
        for (const t of extra) {
          try {
            this.accept(t, true);
          } catch (e) {
            throw new DevnetError(`txs: ${t.getId()} refused: ${(e as Error).message}`);
          }
          first.push(t);
        }
      } else if (extra.length > 0) {
        throw new DevnetError('txs needs blocks >= 1');
      }
      const hashes: string[] = [];
      for (let i = 0; i < m; i++) hashes.push(this.mineBlock(i === 0 ? first : []).hash);
      this.readmit(candidates);
      this.changed();
      return { hashes, height: this.height };
    } catch (e) {
      // Restore the old best chain and mempool.
      this.rewind(-1, saved.chain);
      this.reorgCount = saved.reorgCount;
      this.readmit(saved.mempool);
      throw e;
    }
  }

  /** Truncates the best chain to `height` (or rebuilds it from `chain`), recomputing indexes from scratch. */
  private rewind(height: number, chain?: BlockRecord[]): void {
    const keep = chain ?? this.chain.slice(0, height + 1);
    this.chain = [];
    this.txLoc = new Map();
    this.utxo = new Map();
    this.spentBy = new Map();
    this.mempool = new Map();
    this.memSpentBy = new Map();
    for (const b of keep) this.connect(b);
  }

  // ---- persistence ---------------------------------------------------------------------

  private changed(): void {
    if (this.dataFile) this.save(this.dataFile);
    for (const l of this.listeners) l();
  }

  private save(file: string): void {
    const body = {
      format: FORMAT,
      reorg_count: this.reorgCount,
      blocks: this.chain.slice(1).map((b) => Buffer.from(b.raw).toString('hex')),
      mempool: [...this.mempool.values()].map((e) => e.tx.toHex()),
    };
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify(body));
    renameSync(tmp, file);
  }

  private load(file: string): void {
    const j = JSON.parse(readFileSync(file, 'utf8')) as { format?: string; reorg_count?: number; blocks?: string[]; mempool?: string[] };
    if (j.format !== FORMAT || !Array.isArray(j.blocks) || !Array.isArray(j.mempool)) throw new Error(`${file}: not a devnet chain file`);
    this.reorgCount = Number(j.reorg_count ?? 0);
    for (const hex of j.blocks) {
      const rec = this.record(Buffer.from(hex, 'hex'), this.height + 1);
      if (rec.header.prevHash !== this.tip.hash) throw new Error(`${file}: block ${rec.height} does not link`);
      this.connect(rec);
    }
    this.readmit(j.mempool.map((h) => parseTxHex(h)));
  }
}

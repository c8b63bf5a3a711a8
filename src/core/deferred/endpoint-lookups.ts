/**
 * What a deferred check (checks.ts) asks the chain-data endpoint, within the budget's
 * `deferred` share, and the evidence it finds, given to the writer as any evidence is
 * (Writer.takeEvidence): checked against the node's headers, never taken on the
 * endpoint's word alone.
 * - a call: `GET /tx/:o/outspend/:v` for the outpoint it names. Spent by its anchor and
 *   confirmed: the anchor's merkle proof (`/tx/:txid/merkle-proof`) places it. Spent by
 *   another transaction that confirmed: the spender and its proof drop it (a spender of
 *   64 bytes without its witness, which no branch can place: its block's txids,
 *   `/block/:hash/txids`, read once per block). Spent in the mempool: wait. Not spent:
 *   the anchor is neither in the endpoint's mempool nor on chain.
 * - a deploy: its anchor's merkle proof; without one, whether the endpoint knows the
 *   anchor at all (`/tx/:txid/hex`).
 */
import type { EsploraClient, TxStatus } from '../../chain/esplora-client.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { WriterApi } from '../../messages/writer.js';
import { inclusionFromMerkleProof, INNER_NODE_BYTES, type Inclusion, type SpentBy } from '@svc-node/protocol/evidence';
import { merkleBranch } from '@svc-node/protocol/merkle-branch';
import { NodeError } from '@svc-node/protocol/errors';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import { internalBytes } from '@svc-node/protocol/bytes';
import { BoundedMap } from '../../bounded.js';

/**
 * Txid lists of blocks holding a 64-byte spender kept (listedIn): such spenders are
 * non-standard and rare, and the calls naming outpoints one of them spent are checked
 * together, so a few lists (each at most ~17,000 x 32 bytes) cover them.
 */
const BLOCK_LISTS_KEPT = 4;

/** Evidence a lookup found and gave the writer: what it decides and the block it names. */
export interface Found {
  found: 'placed' | 'dropped';
  height: number;
}

/** What a lookup came to: evidence given, the anchor seen but not decided yet (`waiting`), or seen nowhere (`unseen`). */
export type LookupResult = Found | 'waiting' | 'unseen';

export class EndpointLookups {
  /** Recently read block txid lists (internal order), by block hash (listedIn): the reads, so checks in flight share one. */
  private readonly blockTxids = new BoundedMap<string, Promise<Uint8Array[]>>(BLOCK_LISTS_KEPT);

  constructor(
    private readonly chain: EsploraClient,
    private readonly writer: RpcClient<WriterApi>,
  ) {}

  /** An outpoint check: what the endpoint says spends the outpoint call `txid` names. */
  async call(txid: string, outpoint: string): Promise<LookupResult> {
    const [otxid, vout] = outpoint.split(':') as [string, string];
    const spend = await this.chain.outspend(otxid, Number(vout), { priority: 'deferred' });
    if (!spend.spent) return 'unseen';
    if (!spend.status.confirmed) return 'waiting';
    if (spend.txid === txid) return (await this.place(txid)) ?? 'waiting';
    // Another transaction confirmed spending it: the call is dropped at its block.
    const spender = await this.chain.txWithHex(spend.txid, { priority: 'deferred' });
    const listed = spender.tx.byteLength(false) === INNER_NODE_BYTES ? await this.listedIn(spend.txid, spend.status) : null;
    const at = listed ? listed.at : await this.inclusionOf(spend.txid);
    if (!at) return 'waiting';
    const ev = await this.writer.call('payloadEvidence', { txid });
    if (!ev) return 'waiting';
    const spentBy: SpentBy = { tx: Buffer.from(spender.hex, 'hex'), vin: spend.vin, at, ...(listed ? { blockTxids: listed.txids } : {}) };
    const taken = await this.writer.call('takeEvidence', { txid, evidence: { ...ev, spentBy } });
    return taken ? { found: 'dropped', height: at.height } : 'waiting';
  }

  /** A deploy's check: its anchor's placement, else whether the endpoint knows the anchor. */
  async deploy(txid: string): Promise<LookupResult> {
    const placed = await this.place(txid);
    if (placed) return placed;
    try {
      await this.chain.txWithHex(txid, { priority: 'deferred' });
      return 'waiting';
    } catch (err) {
      if (err instanceof NodeError && err.code === 'not_found') return 'unseen';
      throw err;
    }
  }

  /**
   * A spender of 64 bytes without its witness, which no merkle branch can place
   * (INNER_NODE_BYTES): its block's whole txid list instead (`GET /block/:hash/txids`,
   * one request, kept for a few blocks: several calls naming outpoints one such block
   * spends read it once), folded to the merkle root of the node's own header at that
   * height. Null when unconfirmed, above the node's headers, or not in that block.
   */
  private async listedIn(txid: string, status: TxStatus): Promise<{ at: Inclusion; txids: Uint8Array[] } | null> {
    if (!status.confirmed) return null;
    const [raw] = await this.writer.call('headers', { from: status.block_height, count: 1 });
    if (!raw) return null;
    const header = parseHeaderBytes(raw);
    if (header.hash !== status.block_hash) return null;
    let reading = this.blockTxids.get(header.hash);
    if (!reading) {
      // Shared by the checks in flight; the client checks the list against the header's merkle root.
      reading = this.chain.blockTxids(header.hash, header, { priority: 'deferred' }).then((list) => list.map(internalBytes));
      this.blockTxids.set(header.hash, reading);
      reading.catch(() => this.blockTxids.delete(header.hash));
    }
    const txids = await reading;
    const leaf = internalBytes(txid);
    const index = txids.findIndex((t) => Buffer.compare(t, leaf) === 0);
    if (index < 0) return null;
    return { at: { blockHash: header.hash, height: status.block_height, txIndex: index, branch: merkleBranch(txids, index) }, txids };
  }

  /** The anchor's placement from the endpoint's merkle proof, given to the writer; null when unconfirmed or not on the node's headers yet. */
  private async place(txid: string): Promise<Found | null> {
    const at = await this.inclusionOf(txid);
    if (!at) return null;
    const ev = await this.writer.call('payloadEvidence', { txid });
    if (!ev) return null;
    return (await this.writer.call('takeEvidence', { txid, evidence: { ...ev, confirmed: at } })) ? { found: 'placed', height: at.height } : null;
  }

  /**
   * Where the endpoint places `txid`: its merkle proof, with the block hash the node's own
   * header chain holds at that height (the writer checks the branch against that header).
   * Null when unconfirmed, or above the node's headers.
   */
  private async inclusionOf(txid: string): Promise<Inclusion | null> {
    let proof: { block_height: number; merkle: string[]; pos: number };
    try {
      proof = await this.chain.merkleProof(txid, { priority: 'deferred' });
    } catch (err) {
      if (err instanceof NodeError && err.code === 'not_found') return null;
      throw err;
    }
    const [header] = await this.writer.call('headers', { from: proof.block_height, count: 1 });
    if (!header) return null;
    return inclusionFromMerkleProof(proof, parseHeaderBytes(header).hash);
  }
}

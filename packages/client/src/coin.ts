/**
 * The coin evidence a client sends with a deploy or call (docs/STATE.md, "Coin
 * evidence"; docs/CLI.md, "Coin evidence"): gathered from the client's own chain-data
 * endpoint, so the node asks its endpoint nothing. For each distinct transaction the
 * anchor's inputs spend: its bytes (GET /tx/:txid/hex) and, when it is confirmed, its
 * merkle proof (GET /tx/:txid/merkle-proof) in the block its status names. Two requests
 * per confirmed input (the wallet's UTXO list already says where each is confirmed; one
 * more, GET /tx/:txid/status, for an input it does not list).
 */
import { Transaction } from 'bitcoinjs-lib';
import { checkCoin, coinJson, type CoinEvidence, type CoinJson, type PrevTx } from '@svc-node/protocol/coin';
import type { Inclusion } from '@svc-node/protocol/evidence';
import { toHex } from '@svc-node/protocol/hash';
import { decodeEnvelope, decodePayload } from '@svc-node/protocol/envelope';
import { ClientError } from './errors.js';
import type { EsploraClient } from './esplora.js';
import type { Utxo } from './anchor.js';

/** Where a UTXO list places a transaction: block height and hash, when it says. */
type Placed = { block_height?: number; block_hash?: string; confirmed: boolean };

/**
 * The coin evidence of `anchorHex`, checked as the node will check it by itself (the
 * same code: packages/protocol/src/coin.ts, checkCoin) before anything is sent or broadcast.
 * `outpoint`: the coin checked (a call's named outpoint; a deploy's: null, the first
 * input). `utxos`: the wallet's UTXO list, whose statuses save a request per input.
 * `cache`: prev txs already read, by txid (a submitter's: a fan-out of 100 coins then
 * costs its two requests once, not per call); what is read is added to it.
 */
export async function gatherCoin(esplora: EsploraClient, anchorHex: string, outpoint: { txid: string; vout: number } | null, utxos: readonly Utxo[] = [], cache?: Map<string, Promise<PrevTx>>): Promise<{ coin: CoinEvidence; json: CoinJson }> {
  const tx = Transaction.fromHex(anchorHex);
  const txids: string[] = [];
  for (const i of tx.ins) {
    const t = toHex(Uint8Array.from(i.hash).reverse());
    if (!txids.includes(t)) txids.push(t);
  }
  const listed = new Map<string, Placed>();
  for (const u of utxos) if (u.status) listed.set(u.txid, u.status as Placed);
  const read = async (txid: string): Promise<PrevTx> => {
    const known = listed.get(txid);
    const [hex, status] = await Promise.all([esplora.txHex(txid), known?.confirmed && known.block_hash && known.block_height !== undefined ? Promise.resolve(known) : esplora.txStatus(txid)]);
    return { tx: new Uint8Array(Buffer.from(hex, 'hex')), at: status.confirmed ? await inclusionOf(esplora, txid, status) : null };
  };
  const prevTxs: PrevTx[] = await Promise.all(
    txids.map((txid) => {
      if (!cache) return read(txid);
      let p = cache.get(txid);
      if (!p) {
        p = read(txid);
        cache.set(txid, p);
        // A failed read is not kept: the next call asks again.
        p.catch(() => cache.delete(txid));
      }
      return p;
    }),
  );
  const coin: CoinEvidence = { prevTxs };
  const r = checkCoin(new Uint8Array(Buffer.from(anchorHex, 'hex')), outpoint, coin);
  if (!r.ok) throw new ClientError('bad_coin', `the node would refuse this anchor's coin (nothing was broadcast): ${r.reason}`);
  return { coin, json: coinJson(coin) };
}

/** The transaction's inclusion from its merkle proof, in the block its status names; null when they disagree (a reorg between the two answers). */
async function inclusionOf(esplora: EsploraClient, txid: string, status: Placed): Promise<Inclusion | null> {
  const proof = await esplora.merkleProof(txid);
  if (proof.block_height !== status.block_height || !status.block_hash) return null;
  return { blockHash: status.block_hash, height: proof.block_height, txIndex: proof.pos, branch: proof.merkle.map((h) => Uint8Array.from(Buffer.from(h, 'hex')).reverse()) };
}

/** The outpoint a call submission's payload (base64 borsh envelope) names; bad_argument when it is not one. */
export function outpointOfPayload(payload: string): { txid: string; vout: number } {
  try {
    const e = decodeEnvelope(decodePayload(payload));
    return { txid: toHex(e.outpointTxid), vout: e.outpointVout };
  } catch (e) {
    throw new ClientError('bad_argument', `the submission's payload is not a call envelope: ${(e as Error).message}`);
  }
}

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
import { inclusionFromMerkleProof, type Inclusion } from '@svc-node/protocol/evidence';
import { toHex } from '@svc-node/protocol/hash';
import { decodeEnvelope, decodePayload } from '@svc-node/protocol/envelope';
import { ClientError } from './errors.js';
import type { EsploraClient } from './esplora.js';
import type { Utxo } from './anchor.js';
import type { WalletPublic } from './wallet.js';
import { displayHex } from '@svc-node/protocol/bytes';

/** Where a UTXO list places a transaction: block height and hash, when it says. */
type Placed = { block_height?: number; block_hash?: string; confirmed: boolean };

/**
 * The coin evidence of `anchorHex`, checked as the node will check it by itself (the
 * same code: packages/protocol/src/coin.ts, checkCoin) before anything is sent or broadcast.
 * `outpoint`: the coin checked (a call's named outpoint; a deploy's: null, the first
 * input). `utxos`: the wallet's UTXO list, whose statuses save a request per input.
 * `cache`: prev txs already read, by txid (a submitter's: a fan-out of 100 coins then
 * costs its two requests once, not per call); what is read is added to it.
 * `signedHere`: the anchor was signed in this process (its signature is not verified
 * again; what it was signed for is checked against the prev txs instead).
 */
export async function gatherCoin(
  esplora: EsploraClient,
  anchorHex: string,
  outpoint: { txid: string; vout: number } | null,
  utxos: readonly Utxo[] = [],
  cache?: Map<string, Promise<PrevTx>>,
  signedHere?: SignedHere,
): Promise<{ coin: CoinEvidence; json: CoinJson }> {
  const tx = Transaction.fromHex(anchorHex);
  const txids: string[] = [];
  for (const i of tx.ins) {
    const t = displayHex(i.hash);
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
  const r = checkCoin(new Uint8Array(Buffer.from(anchorHex, 'hex')), outpoint, coin, { verify: !signedHere });
  if (!r.ok) throw new ClientError('bad_coin', `the node would refuse this anchor's coin (nothing was broadcast): ${r.reason}`);
  if (signedHere) {
    // The signature the node verifies commits to the spent output's script and value: an
    // anchor signed here by the wallet verifies when each output it spends is the wallet's
    // and holds what was signed for, which is read from the prev txs themselves (their
    // bytes hash to the inputs' txids). Checking that costs no curve operation; verifying
    // the signature just made again was ~5% of a submitter's CPU per call.
    for (const [n, i] of tx.ins.entries()) {
      const prev = prevTxs[r.coin.inputs[n]!.prev]!;
      const out = parsedPrevTx(prev).outs[i.index]!;
      const signedFor = signedHere.inputs[n];
      if (!signedFor || out.value !== BigInt(signedFor.value) || !sameBytes(out.script, signedHere.wallet.outputScript)) {
        throw new ClientError('bad_coin', `the node would refuse this anchor's coin (nothing was broadcast): input ${n} spends an output that is not the wallet's ${signedFor?.value ?? '?'} sats it was signed for`);
      }
    }
  }
  return { coin, json: coinJson(coin) };
}

/** An anchor signed in this process: by `wallet`, each input `inputs[n]` signed for its value (AnchorTx.inputs). */
export interface SignedHere {
  wallet: WalletPublic;
  inputs: readonly Utxo[];
}

/** Each prev tx parsed once (a fan-out of 100 coins serves 100 calls). */
const parsedPrevTxs = new WeakMap<PrevTx, Transaction>();
function parsedPrevTx(p: PrevTx): Transaction {
  let t = parsedPrevTxs.get(p);
  if (!t) {
    t = Transaction.fromBuffer(Buffer.from(p.tx));
    parsedPrevTxs.set(p, t);
  }
  return t;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

/** The transaction's inclusion from its merkle proof, in the block its status names; null when they disagree (a reorg between the two answers). */
async function inclusionOf(esplora: EsploraClient, txid: string, status: Placed): Promise<Inclusion | null> {
  const proof = await esplora.merkleProof(txid);
  if (proof.block_height !== status.block_height || !status.block_hash) return null;
  return inclusionFromMerkleProof(proof, status.block_hash);
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

/**
 * Payload sync: page through the peer's contract ids and compare each contract's whole
 * payload set (count and fingerprint, GetContractRanges); for each that differs, find the
 * txids missing here by range-based reconciliation (reconcile.ts), or page through the
 * peer's txid list when this node holds nothing of the contract, and fetch only those
 * (GetPayloads, payload-fetch.ts), with their Bitcoin evidence. What the peer lacks is
 * pushed to it (SubmitPayload), unless it is catching up and pulls it itself.
 */
import PQueue from 'p-queue';
import { submitBatches, toProtoPayload } from '../wire.js';
import { unpackPayload } from '../../packed-payload.js';
import { reconcile } from '../reconcile.js';
import { DeliveredThrough, interleave } from '../delivered.js';
import { GET_PAYLOADS_MAX, MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES, PAYLOADS_PER_CORE_CALL, SYNC_LISTED_TXIDS_MAX } from '../limits.js';
import type { Peer } from '../peers.js';
import type { ContractSets } from './contract-sets.js';
import type { SyncDeps } from './deps.js';
import { SYNC_CHUNK, type Missing, type PayloadFetch } from './payload-fetch.js';
import type { Retries } from './retries.js';

/**
 * A peer advertising a processed height more than this many blocks below this node's is
 * catching up, and payload sets are not compared with it (PayloadSync.catchingUp): the
 * journal's undo window, far more than two nodes following the same chain ever differ
 * by, far less than a catch-up.
 */
const CATCHING_UP_BLOCKS = 144;

/** What a payload sync with one peer did. */
export interface PayloadSyncResult {
  differing: number;
  fetched: number;
  applied: number;
  /** Payloads the peer lacked, sent to it and accepted there. */
  pushed: number;
}

export class PayloadSync {
  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
    private readonly contracts: ContractSets,
    private readonly fetch: PayloadFetch,
  ) {}

  /**
   * Whether the peer is catching up: its advertised processed height is more than
   * CATCHING_UP_BLOCKS below this node's. Its payload sets are not compared with this
   * node's then, either way. It pulls what it lacks itself, in its chain order (a fresh
   * node holds block application back while its first sync delivers, at height 0), so a
   * push would send it again what it is fetching (13,186 of 100,000 payloads in a fresh
   * node's catch-up); and what it holds that this node lacks is a part of what it is
   * fetching, or reaches this node by gossip's forwarding and the first round after it
   * caught up. A comparison meanwhile cost both nodes a range descent over a set that
   * grows under it (a 30,000-payload catch-up: 4 s of the serving peer's sync, 0.7 s of
   * the fresh node's writer). Unknown heights compare.
   */
  private catchingUp(peer: Peer): boolean {
    const mine = this.d.localHeight?.() ?? null;
    return peer.height !== null && mine !== null && peer.height + CATCHING_UP_BLOCKS < mine;
  }

  /** Compares the peer's payload sets with this node's, fetches what is missing here, pushes what the peer lacks. */
  async sync(peer: Peer): Promise<PayloadSyncResult> {
    const core = this.d.core();
    const c = this.d.counters;
    if (this.catchingUp(peer)) {
      this.d.log.debug('peer is catching up: payload sets not compared', { peer: peer.url, peer_height: peer.height });
      return { differing: 0, fetched: 0, applied: 0, pushed: 0 };
    }
    const { differing, localSets, remoteCounts } = await this.contracts.diff(peer);
    c.sync_contracts_differing += differing.length;
    const missing: Missing[] = [];
    /** Per contract held nothing of: the peer's list in its chain order (fetched interleaved, after `missing`). */
    const listed: Missing[][] = [];
    const theyLack: string[] = [];
    /** Txids still to be listed from this peer this sync (SYNC_LISTED_TXIDS_MAX); the rest next round. */
    let listRoom = SYNC_LISTED_TXIDS_MAX;
    for (const id of differing) {
      const mine = localSets[id]?.count ?? 0;
      if (mine > 0) {
        // One descent finds both sides' differences.
        const r = await reconcile((ranges) => core.call('peerRanges', { contract_id: id, ranges }), this.contracts.remoteRanges(peer, id), this.d.concurrency);
        for (const txid of r.missing) if (this.retries.worthFetching(txid, peer)) missing.push({ txid, contract_id: id });
        // A peer holding under half of this node's set is catching up: it pulls them itself,
        // in chain order (fewer replays), rather than receiving the same payloads twice.
        if ((remoteCounts.get(id) ?? 0) * 2 >= mine) theyLack.push(...r.theyLack);
      } else {
        // Nothing held here: the peer's list in its chain order, as far as the bound lets.
        if (listRoom === 0) continue;
        const txids = await this.contracts.listedTxids(peer, id, remoteCounts.get(id) ?? 0, listRoom);
        listRoom -= txids.length;
        if (listRoom === 0) this.d.log.info('sync listing bound reached: the rest is listed next round', { peer: peer.url, listed: SYNC_LISTED_TXIDS_MAX });
        listed.push(txids.filter((txid) => this.retries.worthFetching(txid, peer)).map((txid) => ({ txid, contract_id: id })));
      }
    }
    // One by one: up to SYNC_LISTED_TXIDS_MAX entries are more arguments than a call takes.
    for (const m of interleave(listed, GET_PAYLOADS_MAX)) missing.push(m);
    // What the core's progress line counts the payloads taken against (a first sync can take minutes).
    if (missing.length > 0) core.call('peerSyncListed', { payloads: missing.length }).catch((e: unknown) => this.d.log.debug('could not tell the core what the sync will fetch', { error: (e as Error).message }));
    // Contracts this node holds nothing of: their calls wait for the deploy (below).
    const unheld = new Set(differing.filter((id) => (localSets[id]?.count ?? 0) === 0));
    const { fetched, applied } = await this.fetch.fetchAndApply(peer, missing, unheld, new DeliveredThrough(missing, unheld));
    let pushed = 0;
    for (let i = 0; i < theyLack.length; i += SYNC_CHUNK) pushed += await this.push(peer, theyLack.slice(i, i + SYNC_CHUNK));
    return { differing: differing.length, fetched, applied, pushed };
  }

  /**
   * Sends the peer payloads it lacks (SubmitPayload batches, as gossip does): the peer's
   * intake checks them as any other. Answers how many the peer accepted.
   */
  private async push(peer: Peer, txids: string[]): Promise<number> {
    const core = this.d.core();
    // Read as GetPayloads answers: PAYLOADS_PER_CORE_CALL a round trip, journal reads shared.
    const pages: string[][] = [];
    for (let i = 0; i < txids.length; i += PAYLOADS_PER_CORE_CALL) pages.push(txids.slice(i, i + PAYLOADS_PER_CORE_CALL));
    const held = (await Promise.all(pages.map((page) => core.call('peerPayloads', { txids: page })))).flat().filter((p) => p !== null);
    let accepted = 0;
    const q = new PQueue({ concurrency: this.d.concurrency });
    await Promise.all(
      // The forwarder's bound: one message's framing below the peer's receive limit.
      submitBatches(held.map((p) => unpackPayload(p.payload)), MAX_BATCH_PAYLOADS, MAX_GRPC_MESSAGE_BYTES - 512).map((batch) =>
        q.add(async () => {
          const r = await peer.client.call('SubmitPayload', { payloads: batch.map(toProtoPayload) });
          accepted += r.results.filter((x) => x.accepted).length;
        }),
      ),
    );
    return accepted;
  }
}

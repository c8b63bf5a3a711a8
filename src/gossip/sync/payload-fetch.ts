/**
 * Fetching a peer's payloads and handing them to the core's intake. Every fetched payload
 * goes through the core's intake, the REST checks, with the evidence checked locally
 * against the node's header chain (no endpoint request when the peer sent the anchor);
 * payloads are taken as their answers arrive, concurrently, a contract's deploy before
 * its calls (a call to an unknown contract is refused). Order does not matter otherwise:
 * the evidence places each payload in the chain; but a peer's lists come in chain order,
 * so after each chunk the core hears the height through which every listed payload is
 * taken (delivered.ts), and a light node's first sync applies blocks up to there while it
 * fetches the rest. Evidence that does not hold (`bad_evidence`) is counted against the
 * peer, and the payload is taken from another.
 */
import PQueue from 'p-queue';
import { fromWire, NodeError, type WireError } from '@svc-node/protocol/errors';
import { fromProtoPayload } from '../wire.js';
import { packPayload } from '../../packed-payload.js';
import type { DeliveredThrough } from '../delivered.js';
import { GET_PAYLOADS_MAX, LIST_CONCURRENCY, SYNC_APPLY_CONCURRENCY, SYNC_SUBMIT_BATCH } from '../limits.js';
import type { Peer } from '../peers.js';
import type { WirePayload } from '../../messages/gossip.js';
import type { GetPayloadsResponse } from '../wire-types.js';
import type { SyncDeps } from './deps.js';
import type { Retries } from './retries.js';

/**
 * Payloads fetched and applied per step: bounds what a sync holds in memory (payloads are
 * at most 64 KiB, typically a few hundred bytes, with evidence under 1 KiB more).
 */
export const SYNC_CHUNK = 4096;

/** A payload to fetch: its txid and the contract it was listed under. */
export interface Missing {
  txid: string;
  contract_id: string;
}

/** A fetched payload and the entry of the missing list it answers. */
interface Fetched {
  p: WirePayload;
  m: Missing;
}

export class PayloadFetch {
  constructor(
    private readonly d: SyncDeps,
    private readonly retries: Retries,
  ) {}

  /**
   * Payloads by txid from the peer (GetPayloads, GET_PAYLOADS_MAX a request, re-asking
   * what an answer did not cover, `concurrency` requests at once), each answer's payloads
   * handed to `take` as it arrives.
   */
  private async fetchEach(peer: Peer, missing: Missing[], take: (page: Fetched[]) => void): Promise<void> {
    const want = new Map(missing.map((m) => [m.txid, m]));
    // No more at once than the peer answers at once (its LIST_CONCURRENCY): the rest would
    // only wait in its queue, their deadlines running (a 100,000-payload catch-up's 16
    // requests at once all passed their 10 s deadline there).
    const q = new PQueue({ concurrency: Math.min(this.d.concurrency, LIST_CONCURRENCY) });
    const askFrom = async (list: Missing[]): Promise<void> => {
      for (let rest = list; rest.length > 0; ) {
        let r: GetPayloadsResponse;
        try {
          r = await this.retries.ask(peer, 'GetPayloads', { txids: rest.map((m) => Buffer.from(m.txid, 'hex')) });
        } catch (e) {
          // A malformed answer, or a failure asked about FETCH_ATTEMPTS times.
          this.d.log.warn('sync fetch failed; these payloads wait for the next round', { peer: peer.url, payloads: rest.length, error: (e as Error).message });
          return;
        }
        // An answer that covers nothing would loop forever: the rest waits for the next round.
        if (r.answered === 0) return;
        const answered = r.answered;
        const covered = new Set(rest.slice(0, answered).map((m) => m.txid));
        const page: Fetched[] = [];
        for (const f of r.payloads) {
          try {
            const p = fromProtoPayload(f.payload);
            const m = want.get(p.txid);
            if (!m || !covered.has(p.txid) || (p.kind === 'call' && p.contract_id !== m.contract_id)) throw new NodeError('bad_request', `peer answered a payload not asked for: ${p.txid}`);
            covered.delete(p.txid);
            this.d.counters.sync_payloads_fetched++;
            page.push({ p, m });
          } catch (e) {
            this.d.log.debug('sync fetch failed', { peer: peer.url, error: (e as Error).message });
          }
        }
        if (page.length > 0) take(page);
        rest = rest.slice(answered);
      }
    };
    const chunks: Missing[][] = [];
    for (let i = 0; i < missing.length; i += GET_PAYLOADS_MAX) chunks.push(missing.slice(i, i + GET_PAYLOADS_MAX));
    await Promise.all(chunks.map((ch) => q.add(() => askFrom(ch))));
  }

  /**
   * Fetches payloads with their evidence and hands them to the core's intake as they
   * arrive, SYNC_SUBMIT_BATCH a round trip and SYNC_APPLY_CONCURRENCY in flight: fetching
   * and intake overlap, and intake's group commits fill. The missing list is fetched
   * SYNC_CHUNK at a time, the next chunk's fetches overlapping the last chunk's intake, so
   * at most two chunks are held. Order does not matter (each payload's evidence places
   * it; one that arrives after its block replays from it), except that a call to a
   * contract this node holds nothing of (`unheld`) waits for that contract's deploy, or
   * for the fetches to end when the peer did not answer the deploy (the call is then
   * refused, retryably).
   */
  async fetchAndApply(peer: Peer, missing: Missing[], unheld: ReadonlySet<string>, delivered: DeliveredThrough): Promise<{ fetched: number; applied: number }> {
    const core = this.d.core();
    const c = this.d.counters;
    let fetched = 0;
    let applied = 0;
    /** Taken payloads: a call's confirmed height (as its evidence claims; intake checked it), else null. */
    const takenAt = new Map<string, number | null>();
    let deliveredTold = -1;
    /** The chunk missing[from, to) is handled: the core hears how far the sync has delivered when that moved. */
    const chunkDone = (from: number, to: number): void => {
      const through = delivered.settle(from, to, (txid) => takenAt.get(txid));
      if (through <= deliveredTold) return;
      deliveredTold = through;
      core.call('peerSyncDelivered', { height: through === Infinity ? null : through }).catch((e: unknown) => this.d.log.debug('could not tell the core how far the sync delivered', { error: (e as Error).message }));
    };
    const refused = (p: WirePayload, e: NodeError): void => {
      if (e.code === 'coin_missing') {
        // The peer holds it paid by a confirmation this node cannot see yet (or from before
        // coin evidence): another peer's copy, or this one once it confirms, is taken.
        this.retries.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
        return;
      }
      if (e.code === 'bad_evidence' || e.code === 'bad_coin') {
        // The peer's evidence, not the payload: another peer's copy is taken.
        this.retries.noteRefused(`${peer.url} ${p.txid}`, e.code);
        this.retries.falseAnswer(peer, `evidence of ${p.txid}`, e);
        return;
      }
      this.retries.noteRefused(p.txid, e.code);
      this.d.log.debug('synced payload refused', { peer: peer.url, txid: p.txid, code: e.code, reason: e.message });
    };
    const taken = (p: WirePayload, created: boolean): void => {
      const h = p.kind === 'call' ? p.evidence?.confirmed?.height : undefined;
      takenAt.set(p.txid, typeof h === 'number' ? h : null);
      this.retries.taken(p.txid);
      this.d.stored(p);
      if (created) {
        applied++;
        c.sync_payloads_applied++;
      }
    };
    const apply = async (batch: WirePayload[]): Promise<void> => {
      let results: ({ ok: true; created: boolean } | { ok: false; error: WireError })[];
      try {
        results = (await core.call('peerSubmitMany', { payloads: batch.map(packPayload) })).results;
      } catch (e) {
        // The core did not answer (restarting, overloaded): the batch waits for the next round.
        const err = e instanceof NodeError ? e : new NodeError('internal', (e as Error).message);
        for (const p of batch) refused(p, err);
        return;
      }
      batch.forEach((p, i) => {
        const r = results[i];
        if (r?.ok) taken(p, r.created);
        else refused(p, r ? fromWire(r.error) : new NodeError('internal', 'the core answered no result'));
      });
    };
    // Per unheld contract: settles once its deploy was taken (or refused), across chunks.
    const deployed = new Map<string, { done: Promise<void>; settle: () => void }>();
    for (const id of unheld) {
      let settle!: () => void;
      const done = new Promise<void>((r) => (settle = r));
      deployed.set(id, { done, settle });
    }
    const applyQ = new PQueue({ concurrency: Math.max(1, Math.floor(SYNC_APPLY_CONCURRENCY / SYNC_SUBMIT_BATCH)) });
    const applying: Promise<void>[] = [];
    /** Unheld contracts whose deploy the peer answered (its gate settles when it is taken). */
    const deployFetched = new Set<string>();
    /** Unheld contracts with fetched calls waiting on their gate. */
    const waiting = new Set<string>();
    const take = (page: Fetched[]): void => {
      // Calls by the gate they wait on (none: held contracts), in batches of SYNC_SUBMIT_BATCH.
      const byGate = new Map<string, WirePayload[]>();
      for (const { p, m } of page) {
        fetched++;
        this.retries.fetched(p.txid);
        if (p.kind === 'deploy') {
          deployFetched.add(m.contract_id);
          applying.push(applyQ.add(() => apply([p])).finally(() => deployed.get(m.contract_id)?.settle()));
          continue;
        }
        const gate = deployed.has(m.contract_id) ? m.contract_id : '';
        if (gate) waiting.add(gate);
        const list = byGate.get(gate);
        if (list) list.push(p);
        else byGate.set(gate, [p]);
      }
      for (const [gate, calls] of byGate) {
        const ready = deployed.get(gate)?.done ?? Promise.resolve();
        for (let i = 0; i < calls.length; i += SYNC_SUBMIT_BATCH) {
          const batch = calls.slice(i, i + SYNC_SUBMIT_BATCH);
          applying.push(ready.then(() => applyQ.add(() => apply(batch))));
        }
      }
    };
    let lastChunk: Promise<void> = Promise.resolve();
    for (let i = 0; i < missing.length; i += SYNC_CHUNK) {
      const from = applying.length;
      await this.fetchEach(peer, missing.slice(i, i + SYNC_CHUNK), take);
      // A contract's deploy comes before its calls in the peer's list: one not answered by
      // now will not be, and its calls go on (refused, retryably) rather than wait.
      for (const id of waiting) if (!deployFetched.has(id)) deployed.get(id)?.settle();
      // Fetched: this chunk's intake goes on while the next one is fetched, once the
      // chunk before has been taken in (two chunks held at most).
      await lastChunk;
      const [at, end] = [i, Math.min(missing.length, i + SYNC_CHUNK)];
      lastChunk = Promise.all(applying.slice(from)).then(() => chunkDone(at, end));
    }
    await Promise.all(applying);
    await lastChunk;
    return { fetched, applied };
  }
}

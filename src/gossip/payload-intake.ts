/**
 * Peer payloads in (SubmitPayload, PreparePayload): each payload decoded and checked on its
 * own, handed to the core's intake at most once while the seen set remembers it, what is
 * new forwarded, and a payload that shows no coin paying for its wait charged to its
 * sender's inbound budget. Nothing a peer says is trusted for a result: the core's intake
 * runs the REST checks.
 */
import { createHash } from 'node:crypto';
import { NodeError } from '@svc-node/protocol/errors';
import { refusalIsRetryable } from '@svc-node/protocol/rules';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import { MAX_BATCH_PAYLOADS, UNPAID_PAYLOAD_COST } from './limits.js';
import { BoundedMap } from '../bounded.js';
import { fromProtoPayload, hex } from './wire.js';
import { packPayload } from '../packed-payload.js';
import type { PeerLimiter } from './peer-limiter.js';
import type { Forwarder } from './forwarder.js';
import type { SubmitPayloadRequest, SubmitPayloadResponse, WireInit } from './wire-types.js';
import type { RpcClient } from '../ipc/rpc.js';
import type { CoreApi } from '../messages/core.js';
import type { GossipCounters, WirePayload } from '../messages/gossip.js';
import type { Logger } from '../log.js';

/**
 * Refusals of a payload that shows no coin paying for its wait (docs/STATE.md, "Coin
 * evidence"): none sent, one that does not hold, or one not provable here (a made-up
 * transaction, or one placed at or below this node's journal anchor). An honest peer sends
 * the last two only when this node lacks a header or a parent payload the peer holds, or
 * the peer is anchored lower: rare, and costing it one request's worth each.
 */
const UNPAID: ReadonlySet<string> = new Set(['coin_missing', 'bad_coin', 'coin_unproven', 'coin_before_anchor']);

export interface PayloadVerdict {
  txid: string;
  accepted: boolean;
  error_code: string;
  error_message: string;
}

/** Seen-set key: the txid and a hash of everything the payload carries. */
export function seenKey(p: WirePayload): string {
  return `${p.txid}:${createHash('sha256').update(p.kind).update(p.contract_id).update(p.body).digest('hex')}`;
}

export interface PayloadIntakeDeps {
  core: () => RpcClient<CoreApi>;
  forwarder: Forwarder;
  counters: GossipCounters;
  log: Logger;
  /** The inbound budget a payload that shows no coin is charged to. */
  limiter: PeerLimiter;
  seenCapacity: number;
}

export class PayloadIntake {
  /** txid + body hash to the verdict, or the intake still running (a copy waits for it). */
  readonly seen: BoundedMap<string, Promise<PayloadVerdict>>;

  constructor(private readonly d: PayloadIntakeDeps) {
    this.seen = new BoundedMap(d.seenCapacity);
  }

  /** Marks a payload this node stored by another path (REST, sync) as seen and accepted. */
  markAccepted(p: WirePayload): void {
    this.seen.set(seenKey(p), Promise.resolve({ txid: p.txid, accepted: true, error_code: '', error_message: '' }));
  }

  /** A proto Payload as the node's WirePayload; throws NodeError. */
  payloadOf(p: unknown): WirePayload {
    // The body limit first, exactly as REST intake refuses a body over 64 KiB.
    const body = (p as { body?: unknown } | null)?.body;
    if (body instanceof Uint8Array && body.length > MAX_PAYLOAD_BYTES) throw new NodeError('payload_too_large', `payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
    return fromProtoPayload(p);
  }

  /** SubmitPayload: a verdict per payload, in the order sent. */
  async submit(req: SubmitPayloadRequest, fromKey: string): Promise<WireInit<SubmitPayloadResponse>> {
    const list = req.payloads;
    if (list.length > MAX_BATCH_PAYLOADS) throw new NodeError('bad_request', `at most ${MAX_BATCH_PAYLOADS} payloads per request`);
    const results: PayloadVerdict[] = new Array(list.length);
    const parsed = list.map((raw) => {
      try {
        return { ok: true as const, p: this.payloadOf(raw) };
      } catch (e) {
        return { ok: false as const, e: e instanceof NodeError ? e : new NodeError('bad_request', 'malformed payload') };
      }
    });
    const run = async (x: (typeof parsed)[number], i: number): Promise<void> => {
      this.d.counters.payloads_received++;
      if (!x.ok) {
        this.d.counters.payloads_refused++;
        const raw = list[i];
        results[i] = { txid: raw?.txid instanceof Uint8Array ? hex(raw.txid) : '', accepted: false, error_code: x.e.code, error_message: x.e.message };
        return;
      }
      results[i] = await this.intakeOnce(x.p, fromKey);
    };
    const isDeploy = (x: (typeof parsed)[number]): boolean => x.ok && x.p.kind === 'deploy';
    // Deploys first and one at a time (a call to an unknown contract is refused), then calls.
    for (const [i, x] of parsed.entries()) if (isDeploy(x)) await run(x, i);
    await Promise.all(parsed.map((x, i) => (isDeploy(x) ? undefined : run(x, i))));
    return { results: results.map((r) => ({ ...r, txid: r.txid ? Buffer.from(r.txid, 'hex') : Buffer.alloc(0) })) };
  }

  /** Intake of one peer payload, at most once while it is remembered; forwards what is new. */
  private intakeOnce(p: WirePayload, fromKey: string): Promise<PayloadVerdict> {
    const c = this.d.counters;
    const k = seenKey(p);
    const prior = this.seen.get(k);
    if (prior) {
      c.payloads_duplicate++;
      return prior;
    }
    const verdict = (async (): Promise<PayloadVerdict> => {
      try {
        const r = await this.d.core().call('peerSubmit', { payload: packPayload(p), from: fromKey });
        if (r.created) {
          c.payloads_accepted++;
          this.d.forwarder.forward(p, fromKey);
        } else c.payloads_duplicate++;
        return { txid: p.txid, accepted: true, error_code: '', error_message: '' };
      } catch (e) {
        c.payloads_refused++;
        const n = e instanceof NodeError ? e : new NodeError('internal', 'internal error');
        // A retryable refusal (packages/protocol/src/rules.ts: the anchor not visible yet, the
        // deploy not here yet, the node busy) is forgotten, so a later copy is checked again.
        // So is false evidence: the seen key covers the payload, not the evidence it came
        // with, and another sender's copy may carry the true one.
        if (refusalIsRetryable(n.code) || n.code === 'bad_evidence' || n.code === 'bad_coin' || n.code === 'coin_missing') this.seen.delete(k);
        // A payload that shows no coin paying for its wait costs its sender inbound budget,
        // as much as a request, so a peer that keeps sending them is slowed as a flood is.
        if (UNPAID.has(n.code)) {
          c.payloads_unpaid++;
          this.d.limiter.charge(fromKey, UNPAID_PAYLOAD_COST);
        }
        this.d.log.debug('peer payload refused', { txid: p.txid, kind: p.kind, code: n.code, reason: n.message });
        return { txid: p.txid, accepted: false, error_code: n.code, error_message: n.message };
      }
    })();
    this.seen.set(k, verdict);
    return verdict;
  }
}

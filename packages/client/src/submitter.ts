/**
 * Submitting at volume: a Submitter keeps at most `maxInFlight` calls between build and
 * broadcast, each on its own coin of the wallet (its change comes back as the next coin,
 * a chain of held anchors as docs/STATE.md, "Coin evidence", allows), and reports each
 * call's fate: `accepted` (the node took it and its anchor is broadcast), `refused` (with
 * the node's or the SDK's code; nothing was broadcast), `unclear` (the anchor may be out:
 * look it up before paying again), then, when following, `confirmed` (executed, failed
 * or invalid at a block) or `dropped`, and `pending` again after a rollback.
 *
 * Never a broadcast the node would refuse: every check `svc call` makes (SvcClient.call:
 * node not halted and contract known, asked once per contract; arguments against the
 * ABI; envelope and body size; the fee; the coin's evidence gathered and checked as the
 * node will; the node holding the coin's block) runs first, the body is posted, and only
 * once the node accepted is the anchor broadcast. A 429 or 503 is waited out (its
 * Retry-After, else a doubling backoff) and the same body posted again, as is a post with
 * no answer: the node answers a body it already holds 200 with the same answer, so a
 * re-post never makes a second call.
 */
import { ClientError } from './errors.js';
import { buildCall, buildCallAnchor, callSubmission, DEFAULT_FEE_RATE, SvcClient, type BuiltCall } from './sdk.js';
import type { AnchorTx, Payment, Utxo } from './anchor.js';
import type { Wallet } from './wallet.js';
import type { CallAnswer, CallBody } from './node.js';
import type { HttpOptions } from './http.js';
import { gatherCoin } from './coin.js';
import { checkFee, checkFeeRate } from './fees.js';
import { stream } from './stream.js';
import type { FeedCall } from '@svc-node/protocol/feed';
import type { PrevTx } from '@svc-node/protocol/coin';
import type { Value } from '@svc-node/protocol/value';
import { refusalIsRetryable } from '@svc-node/protocol/rules';

/** Calls between build and broadcast at once by default: enough to keep a node's pool busy over loopback or a WAN's round trip. */
const DEFAULT_MAX_IN_FLIGHT = 16;
/** Posts (and broadcasts) of one call before it is given up: with the doubling backoff, a minute of a node answering 503. */
const DEFAULT_MAX_ATTEMPTS = 8;
/** First wait after a 429/503 without Retry-After, or a post without an answer; doubles per attempt up to MAX_BACKOFF_MS. */
const DEFAULT_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;
/** Bitcoin Core's ancestor limit, which the node's chain of held anchors follows (docs/STATE.md, "Coin evidence"): a change coin deeper is not reused. */
const MAX_CHAIN_DEPTH = 25;
/** The SDK's own refusals (src/client/errors.ts): what a retry later may pass, and what it never will; the node's codes are classed by src/protocol/rules.ts. */
const SDK_RETRYABLE = new Set(['unreachable', 'chain_error', 'chain_unavailable', 'timeout', 'node_error', 'internal']);
const SDK_FINAL = new Set(['bad_argument', 'bad_key', 'unknown_function', 'insufficient_funds', 'fee_too_high', 'bad_proof', 'compile_error']);
/** Codes whose refusal leaves the coin free for the next call (nothing holds it): all but those saying a held payload uses it. */
const COIN_HELD = new Set(['coin_in_use', 'bad_coin', 'conflict']);

export interface SubmitterOptions {
  nodeUrl: string;
  esploraUrl: string;
  wallet: Wallet;
  /** Caller secret for envelopes; default the wallet's. */
  callerSecret?: Uint8Array;
  /** Calls between build and broadcast at once (default 16). */
  maxInFlight?: number;
  feeRate?: number;
  allowHighFee?: boolean;
  /** Posts of one call (and broadcasts of its anchor) before it is given up; default 8. */
  maxAttempts?: number;
  /** First backoff (ms) when an answer carries no Retry-After; doubles per attempt up to 10 s. Default 250. */
  backoffMs?: number;
  /** Follow each accepted call on the live feed and report `confirmed`, `dropped` and `pending` (after a rollback). Default false. */
  follow?: boolean;
  /** Told every fate of every call as it happens. */
  onFate?: (f: CallFate) => void;
  http?: HttpOptions;
}

export interface CallRequest {
  contractId: string;
  function: string;
  args: readonly Value[] | readonly string[];
  /** The contract's ABI; default the one the node serves (asked once per contract). */
  abi?: readonly unknown[];
  callId?: bigint;
  /** Extra outputs of the anchor (vouts 1..n). */
  pay?: readonly Payment[];
  /** The caller's own name for this call, carried in each of its fates. */
  ref?: string;
}

/** What happened to a call; `ref` is the request's (default its submission number). */
export type CallFate =
  | { fate: 'accepted'; ref: string; txid: string; answer: CallAnswer; posts: number }
  | { fate: 'refused'; ref: string; txid: string | null; code: string; status?: number; message: string; retryable: boolean }
  | { fate: 'unclear'; ref: string; txid: string; code: string; message: string; body: CallBody }
  | { fate: 'confirmed'; ref: string; txid: string; call: FeedCall }
  | { fate: 'dropped'; ref: string; txid: string; call: FeedCall }
  | { fate: 'pending'; ref: string; txid: string; reason: 'rollback' };

/** A wallet coin the submitter may spend, with how deep it sits in a chain of unconfirmed anchors. */
interface PoolCoin extends Utxo {
  depth: number;
}

export class Submitter {
  readonly client: SvcClient;
  private readonly o: Required<Pick<SubmitterOptions, 'maxInFlight' | 'maxAttempts' | 'backoffMs' | 'feeRate'>> & SubmitterOptions;
  private coins: PoolCoin[] | null = null;
  private loading: Promise<void> | null = null;
  private readonly prevTxs = new Map<string, Promise<PrevTx>>();
  private readonly contracts = new Map<string, Promise<readonly unknown[]>>();
  private feeChecked: Promise<void> | null = null;
  /** The highest block the node was seen to hold (coins placed at or below it need no wait). */
  private heldHeight = -1;
  private seq = 0;
  private running = 0;
  private readonly slotWaiters: (() => void)[] = [];
  /** Calls waiting for a coin: woken by a coin put back or a call leaving (which may leave the pool to be read again). */
  private readonly coinWaiters: (() => void)[] = [];
  private readonly idle: (() => void)[] = [];
  /** The peak of calls in flight at once (never above maxInFlight). */
  peakInFlight = 0;
  /** Accepted calls still followed, by txid, with their ref; and followed ones already final. */
  private readonly followed = new Map<string, string>();
  private readonly finalRefs = new Map<string, string>();
  private readonly feeds = new Map<string, AbortController>();
  private readonly finalWaiters: (() => void)[] = [];

  constructor(o: SubmitterOptions) {
    this.o = { maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxAttempts: DEFAULT_MAX_ATTEMPTS, backoffMs: DEFAULT_BACKOFF_MS, feeRate: DEFAULT_FEE_RATE, ...o };
    if (!Number.isInteger(this.o.maxInFlight) || this.o.maxInFlight < 1) throw new ClientError('bad_argument', `maxInFlight must be a positive integer, got ${String(o.maxInFlight)}`);
    this.client = new SvcClient({ nodeUrl: o.nodeUrl, esploraUrl: o.esploraUrl, wallet: o.wallet, callerSecret: o.callerSecret, feeRate: this.o.feeRate, allowHighFee: o.allowHighFee, http: o.http });
  }

  /** Calls between build and broadcast now. */
  get inFlight(): number {
    return this.running;
  }

  /** Builds, checks, posts and broadcasts one call; resolves with its first fate (accepted, refused or unclear). Waits for a free slot first. */
  async submit(req: CallRequest): Promise<CallFate> {
    const ref = req.ref ?? String(this.seq++);
    await this.acquire();
    try {
      return await this.submitOne(req, ref);
    } finally {
      this.release();
    }
  }

  /**
   * Submits a call built and anchored elsewhere (an external signer's anchor:
   * src/client/psbt.ts), with the same checks, posts and broadcast as `submit`; `utxos`:
   * where the anchor's inputs are confirmed, when known (saves requests).
   */
  async submitAnchored(call: BuiltCall, anchor: Pick<AnchorTx, 'hex' | 'txid'>, o: { utxos?: readonly Utxo[]; ref?: string } = {}): Promise<CallFate> {
    const ref = o.ref ?? String(this.seq++);
    await this.acquire();
    try {
      const e = call.envelope;
      const outpoint = { txid: Buffer.from(e.outpointTxid).toString('hex'), vout: e.outpointVout };
      return await this.checkAndSend(ref, call, { hex: anchor.hex, txid: anchor.txid } as AnchorTx, outpoint, o.utxos ?? [], null);
    } catch (err) {
      return this.refused(ref, null, err);
    } finally {
      this.release();
    }
  }

  /** Submits every request, at most maxInFlight at once, taking the next only as a slot frees; yields each first fate as it comes. */
  async *submitMany(reqs: Iterable<CallRequest> | AsyncIterable<CallRequest>): AsyncGenerator<CallFate, void, undefined> {
    const done: CallFate[] = [];
    let wake: (() => void) | null = null;
    let running = 0;
    const it = (reqs as AsyncIterable<CallRequest>)[Symbol.asyncIterator]?.() ?? (reqs as Iterable<CallRequest>)[Symbol.iterator]();
    let exhausted = false;
    for (;;) {
      while (!exhausted && running < this.o.maxInFlight) {
        const n = await it.next();
        if (n.done) {
          exhausted = true;
          break;
        }
        running++;
        void this.submit(n.value).then((f) => {
          running--;
          done.push(f);
          wake?.();
        });
      }
      while (done.length > 0) yield done.shift()!;
      if (exhausted && running === 0) return;
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
  }

  /** Resolves once no call is in flight. */
  drain(): Promise<void> {
    return this.running === 0 && this.slotWaiters.length === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }

  /** Resolves once every followed call is final (confirmed or dropped). */
  settled(): Promise<void> {
    return this.followed.size === 0 ? Promise.resolve() : new Promise((r) => this.finalWaiters.push(r));
  }

  /** Stops following (closes the feed connections). */
  close(): void {
    for (const c of this.feeds.values()) c.abort();
    this.feeds.clear();
  }

  // ------------------------------------------------------------------ one call

  private async submitOne(req: CallRequest, ref: string): Promise<CallFate> {
    let coin: PoolCoin | null = null;
    try {
      const abi = await this.contractReady(req.contractId, req.abi);
      await this.feeRateChecked();
      coin = await this.takeCoin();
      const call = buildCall({ contractId: req.contractId, function: req.function, args: req.args, abi, callerSecret: this.o.callerSecret ?? this.o.wallet.secret, outpoint: coin, callId: req.callId });
      const anchor = buildCallAnchor(this.o.wallet, [coin], call, this.o.feeRate, req.pay ?? []);
      checkFee(anchor, this.o.feeRate, this.o.allowHighFee);
      const taken = coin;
      coin = null;
      return await this.checkAndSend(ref, call, anchor, taken, [taken], taken);
    } catch (e) {
      // Nothing was posted: the coin is free again.
      if (coin) this.putCoin(coin);
      return this.refused(ref, null, e);
    }
  }

  /** Coin evidence, body, the node's block, then post and broadcast; `coin`: the pool coin the anchor spends (null: not the pool's). */
  private async checkAndSend(ref: string, call: BuiltCall, anchor: AnchorTx, outpoint: { txid: string; vout: number }, utxos: readonly Utxo[], coin: PoolCoin | null): Promise<CallFate> {
    let body: CallBody;
    try {
      const gathered = await gatherCoin(this.client.esplora, anchor.hex, outpoint, utxos, this.prevTxs);
      body = callSubmission(call, anchor, gathered.json);
      const need = Math.max(-1, ...gathered.coin.prevTxs.map((p) => p.at?.height ?? -1));
      if (need > this.heldHeight) {
        await this.client.awaitCoinBlocks('call', gathered.coin);
        this.heldHeight = Math.max(this.heldHeight, need);
      }
    } catch (e) {
      if (coin) this.putCoin(coin);
      return this.refused(ref, anchor.txid, e);
    }
    const posted = await this.post(body);
    if (!posted.ok) {
      // Refused: nothing went out. The coin is free unless a payload the node holds uses it,
      // or the post's fate is unknown (no answer: the node may hold it until it evicts it).
      if (coin && posted.coinFree) this.putCoin(coin);
      return this.emit(this.refused(ref, anchor.txid, posted.error));
    }
    const sent = await this.broadcast(anchor.hex, anchor.txid);
    if (sent !== true) {
      if (sent.refused) return this.emit({ fate: 'refused', ref, txid: anchor.txid, code: sent.error.code, status: sent.error.status, message: `${sent.error.message} (the node took the call, nothing was broadcast: it drops it, its anchor never appearing)`, retryable: true });
      return this.emit({ fate: 'unclear', ref, txid: anchor.txid, code: sent.error.code, message: `${sent.error.message} (anchoring transaction ${anchor.txid} may have been broadcast: look it up before paying again; posting the body again pays nothing)`, body });
    }
    // The change is the wallet's next coin: its transaction is the anchor just built (no request to read it).
    if (coin && anchor.changeVout !== null && anchor.changeVout !== undefined && coin.depth + 1 < MAX_CHAIN_DEPTH) {
      this.prevTxs.set(anchor.txid, Promise.resolve({ tx: new Uint8Array(Buffer.from(anchor.hex, 'hex')), at: null }));
      this.putCoin({ txid: anchor.txid, vout: anchor.changeVout, value: anchor.change, status: { confirmed: false }, depth: coin.depth + 1 });
    }
    if (this.o.follow) this.followCall(call, anchor.txid, ref);
    return this.emit({ fate: 'accepted', ref, txid: anchor.txid, answer: posted.answer, posts: posted.posts });
  }

  /** POST /contract_call until an answer that is not a 429/503 or a failure to answer; the same body each time. */
  private async post(body: CallBody): Promise<{ ok: true; answer: CallAnswer; posts: number } | { ok: false; error: unknown; coinFree: boolean }> {
    let last: unknown;
    let unanswered = false;
    for (let attempt = 0; attempt < this.o.maxAttempts; attempt++) {
      try {
        return { ok: true, answer: await this.client.node.submitCall(body), posts: attempt + 1 };
      } catch (e) {
        last = e;
        if (!(e instanceof ClientError)) return { ok: false, error: e, coinFree: false };
        const again = e.code === 'unreachable' || e.status === 429 || e.status === 503 || (e.status !== undefined && e.status >= 500);
        if (!again) return { ok: false, error: e, coinFree: !COIN_HELD.has(e.code) };
        unanswered = e.code === 'unreachable' || (e.status !== 429 && e.status !== 503);
        if (attempt + 1 < this.o.maxAttempts) await sleep(e.retryAfterMs ?? this.backoff(attempt));
      }
    }
    return { ok: false, error: last, coinFree: !unanswered };
  }

  /** POST /tx, again on no answer or a 5xx; a "already" answer (in the mempool or a block) is the transaction out. */
  private async broadcast(hex: string, txid: string): Promise<true | { refused: boolean; error: ClientError }> {
    let last: ClientError | null = null;
    for (let attempt = 0; attempt < this.o.maxAttempts; attempt++) {
      try {
        const answered = await this.client.esplora.broadcast(hex);
        if (answered === txid) return true;
        return { refused: false, error: new ClientError('chain_error', `chain-data endpoint answered txid ${answered}, expected ${txid}`) };
      } catch (e) {
        const err = e instanceof ClientError ? e : new ClientError('internal', String((e as Error)?.message ?? e));
        if (err.status !== undefined && err.status >= 400 && err.status < 500) {
          if (/already/i.test(err.message)) return true;
          return { refused: true, error: err };
        }
        last = err;
        if (attempt + 1 < this.o.maxAttempts) await sleep(this.backoff(attempt));
      }
    }
    return { refused: false, error: last! };
  }

  private backoff(attempt: number): number {
    return Math.min(this.o.backoffMs * 2 ** attempt, MAX_BACKOFF_MS);
  }

  private refused(ref: string, txid: string | null, e: unknown): CallFate {
    const err = e instanceof ClientError ? e : new ClientError('internal', String((e as Error)?.message ?? e));
    const f: CallFate = { fate: 'refused', ref, txid, code: err.code, message: err.message, retryable: SDK_RETRYABLE.has(err.code) || (!SDK_FINAL.has(err.code) && refusalIsRetryable(err.code)) };
    if (err.status !== undefined) f.status = err.status;
    return f;
  }

  private emit(f: CallFate): CallFate {
    this.o.onFate?.(f);
    return f;
  }

  // ------------------------------------------------------------------ what is asked once

  /** The node's own refusals asked once per contract (halted, unknown contract), with the ABI the arguments are checked against. */
  private contractReady(contractId: string, abi: readonly unknown[] | undefined): Promise<readonly unknown[]> {
    const id = contractId.toLowerCase();
    let p = this.contracts.get(id);
    if (!p) {
      p = this.client.checkNodeAccepts('call', id).then(() => this.client.abiFor(id));
      this.contracts.set(id, p);
      p.catch(() => this.contracts.delete(id));
    }
    return abi ? p.then(() => abi) : p;
  }

  private feeRateChecked(): Promise<void> {
    if (!this.feeChecked) {
      this.feeChecked = this.client.feeEstimates().then((est) => checkFeeRate(this.o.feeRate, est, this.o.allowHighFee));
      this.feeChecked.catch(() => (this.feeChecked = null));
    }
    return this.feeChecked;
  }

  /**
   * A coin for the next call: from the wallet's UTXO list (read once, and again when the
   * pool runs dry with no call in flight to return change), else the change of a call in
   * flight once it is broadcast.
   */
  private async takeCoin(): Promise<PoolCoin> {
    for (;;) {
      if (this.coins === null || (this.coins.length === 0 && this.running <= 1)) {
        if (!this.loading) {
          this.loading = this.client.esplora.utxos(this.o.wallet.address).then((us) => {
            const busy = new Set((this.coins ?? []).map((c) => `${c.txid}:${c.vout}`));
            this.coins = us.filter((u) => !busy.has(`${u.txid}:${u.vout}`)).map((u) => ({ ...u, depth: u.status?.confirmed === false ? 1 : 0 }));
          });
          this.loading.finally(() => (this.loading = null)).catch(() => undefined);
        }
        await this.loading;
        if (this.coins!.length === 0) throw new ClientError('insufficient_funds', `insufficient funds: wallet ${this.o.wallet.address} has no coin free for another call`);
      }
      const c = this.coins!.shift();
      if (c) return c;
      await new Promise<void>((r) => this.coinWaiters.push(r));
    }
  }

  private putCoin(c: PoolCoin): void {
    this.coins!.push(c);
    this.coinWaiters.shift()?.();
  }

  // ------------------------------------------------------------------ in-flight bound

  private async acquire(): Promise<void> {
    while (this.running >= this.o.maxInFlight) await new Promise<void>((r) => this.slotWaiters.push(r));
    this.running++;
    this.peakInFlight = Math.max(this.peakInFlight, this.running);
  }

  private release(): void {
    this.running--;
    this.wakeSlot();
    this.coinWaiters.shift()?.();
    if (this.running === 0 && this.slotWaiters.length === 0) for (const r of this.idle.splice(0)) r();
  }

  private wakeSlot(): void {
    this.slotWaiters.shift()?.();
  }

  // ------------------------------------------------------------------ following

  /** Follows the call on its contract's `calls` feed (one connection per contract, from the node's height when it opened). */
  private followCall(call: BuiltCall, txid: string, ref: string): void {
    this.followed.set(txid, ref);
    const contractId = Buffer.from(call.envelope.contractId).toString('hex');
    if (this.feeds.has(contractId)) return;
    const ctl = new AbortController();
    this.feeds.set(contractId, ctl);
    void (async () => {
      // From the block the node holds now, inclusive: the call was accepted before this
      // asks, so its deciding block is at least the next; one block more read is harmless.
      const s = await this.client.node.nodeStatus();
      const from = Math.max(0, s.processed_height ?? 0);
      for await (const m of stream(this.o.nodeUrl, { subscriptions: [{ kind: 'calls', id: 'submitter', contractId, fromHeight: from }], signal: ctl.signal })) {
        if (m.type === 'call') {
          const r = this.followed.get(m.txid);
          if (r === undefined || m.status === 'pending') continue;
          this.followed.delete(m.txid);
          this.finalRefs.set(m.txid, r);
          const { type: _t, sub: _s, cursor: _c, ...fields } = m;
          this.emit(m.status === 'dropped' ? { fate: 'dropped', ref: r, txid: m.txid, call: fields } : { fate: 'confirmed', ref: r, txid: m.txid, call: fields });
          if (this.followed.size === 0) for (const w of this.finalWaiters.splice(0)) w();
        } else if (m.type === 'rollback' && 'txids' in m) {
          for (const t of m.txids) {
            const r = this.finalRefs.get(t);
            if (r === undefined) continue;
            this.finalRefs.delete(t);
            this.followed.set(t, r);
            this.emit({ fate: 'pending', ref: r, txid: t, reason: 'rollback' });
          }
        }
      }
    })().catch(() => this.feeds.delete(contractId));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

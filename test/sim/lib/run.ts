/**
 * One seeded run of the convergence simulation: several nodes (real Writers on RocksDB)
 * receive the same payloads in different orders and through different paths (clients,
 * gossip from peers, a late joiner's sync), while the chain grows, reorganises (depths
 * up to 150) and nodes crash and restart. Each node is of a kind drawn from the seed:
 * `blocks` follows the chain with the node's BlockWatcher (every block raw); `light`
 * with the node's HeaderFollower (headers, raw blocks only within a tip window drawn
 * from the seed, 0 meaning never outside a reorganisation) and learns where payloads
 * confirm or are dropped from the Bitcoin evidence that comes with them (clients, peers)
 * or later (deferred checks, Writer.takeEvidence), before, during or after their blocks.
 * Lying peers send forged evidence and header runs; each must be refused as the node's
 * intake refuses it and change nothing (lies.ts). At the end every node must hold the
 * same payloads and agree with every other node and with the reference model (model.ts)
 * on the state root at every height, every call's status and every event, and serve the
 * evidence of every decided payload as the chain has it. Everything random comes from
 * the seed, and each step is awaited before the next, so a seed replays exactly.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlockWatcher } from '../../../src/chain/watcher.js';
import { blockInputOf } from '../../../src/chain/connected-block.js';
import { HeaderFollower } from '../../../src/chain/header-follower.js';
import { writerFollowerSink } from '../../helpers/follower-sink.js';
import { REGTEST_POW } from '@svc-node/protocol/activation';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import type { EsploraClient } from '../../../src/chain/esplora-client.js';
import { ChainFollower } from '../../../src/core/chain-follower.js';
import type { RpcClient } from '../../../src/ipc/rpc.js';
import type { WriterApi } from '../../../src/messages.js';
import { checkEvidence, type Evidence, type Inclusion } from '@svc-node/protocol/evidence';
import { checkCoin, type CheckedCoin, type CoinEvidence } from '@svc-node/protocol/coin';
import { Writer } from '../../../src/writer/writer.js';
import { NodeError } from '@svc-node/protocol/errors';
import { logger } from '../../../src/log.js';
import { bindingError, checkCallBinding, checkDeployBinding } from '@svc-node/protocol/binding';
import { encodeEnvelope, envelopeHash } from '@svc-node/protocol/envelope';
import { toHex } from '@svc-node/protocol/hash';
import { journalAnchorHeight } from '@svc-node/protocol/activation';
import { refusalIsRetryable, repeatOrConflict } from '@svc-node/protocol/rules';
import type { OutpointCheck } from '../../../src/messages.js';
import { runModel } from './model.js';
import { statusBody } from '../../../src/records.js';
import { Rng, World, type Artifact, type Payload } from '../../helpers/sim-world.js';
import { forgeEvidence, forgeHeaders } from './lies.js';

export interface SimOptions {
  /** Steps of the random schedule (each: broadcast, mine, reorg, deliver, gossip, chain sync or crash). */
  steps: number;
  /** One run in `deepEvery` (by seed) also builds 150 blocks and reorganises 145-150 deep (re-derivation). */
  deepEvery: number;
}

type Receipt = 'accepted' | 'repeat' | 'retry' | 'refused';
/** What intake answered: the receipt, and the error code of a refusal. */
interface Outcome {
  receipt: Receipt;
  code?: string;
}
/** How a payload reaches intake: REST with or without `anchor_tx`, or a peer's payload with its evidence. */
interface Sent {
  anchorTx?: Uint8Array;
  evidence?: Evidence;
  /** A client's coin evidence (REST `coin`), gathered from the best chain. */
  coin?: CoinEvidence;
}
export type NodeKind = 'blocks' | 'light';

const log = logger('sim');
/** n2's max_pending_calls: below the calls a seed makes, so its pending set differs from the others'. */
const SMALL_PENDING = 3;
/** SIM_TRACE=1 prints every step of a run (to replay a failing seed with its story). */
const trace = process.env['SIM_TRACE'] ? (m: string): void => void process.stderr.write(`sim: ${m}\n`) : (): void => undefined;

/** A node as the simulation drives it: its writer, and its follower of the simulated endpoint. */
class SimNode {
  writer!: Writer;
  private watcher: BlockWatcher | null = null;
  private follower: HeaderFollower | null = null;
  /** The core's chain follower, for peers' header runs (submitHeaders): not started, it only verifies and stores runs. */
  private headerIntake: ChainFollower | null = null;
  readonly dir: string;

  constructor(
    readonly name: string,
    readonly kind: NodeKind,
    /** A light node reads raw blocks within this many of the header tip while payloads wait (HeaderFollower rawTipWindow). */
    readonly rawTipWindow: number,
    /** Header-only blocks a light node applies per event (HeaderFollower maxHeaderBlocksPerEvent): small ones take several, each read ahead while the one before is applied. */
    readonly eventBlocks: number,
    private readonly world: World,
    base: string,
    /** Config max_pending_calls: small on one node, so nodes hold different pending sets (docs/STATE.md, "Coin evidence"). */
    readonly maxPendingCalls = Number.POSITIVE_INFINITY,
  ) {
    this.dir = join(base, name);
  }

  async start(): Promise<void> {
    this.writer = await Writer.open(join(this.dir, 'db'), this.name, log, { maxPendingCalls: this.maxPendingCalls });
    if (this.writer.status().processedHeight === null) {
      // Default settings: the journal is anchored just below the network's activation.
      const h = journalAnchorHeight(await this.world.source().blockHashAt(0), null);
      await this.writer.initAnchor({ height: h, hash: this.world.chain[h]!.hash });
    }
    const st = this.writer.status();
    if (this.kind === 'blocks') {
      this.watcher = new BlockWatcher({
        source: this.world.source(),
        anchor: { height: st.processedHeight!, hash: st.processedHash! },
        knownHash: (h) => this.writer.ledger.knownHash(h),
        pollIntervalSeconds: 3600,
        // As the core's chain follower hands them over: the event ends at the best chain's tip it saw.
        onEvent: async (ev) => void (await this.writer.applyChainUpdate({ fork_height: ev.fork_height, disconnected: ev.disconnected, connected: ev.connected.map(blockInputOf), endsChain: true })),
      });
      return;
    }
    // The sink the core's chain follower gives the header follower, straight onto this writer (traced).
    const w = this.writer;
    this.follower = new HeaderFollower({
      pow: REGTEST_POW,
      source: this.world.headerSource(),
      rawTipWindow: this.rawTipWindow,
      maxHeaderBlocksPerEvent: this.eventBlocks,
      sink: {
        ...writerFollowerSink(w),
        apply: (u) => {
          trace(`${this.name} applies from ${u.fork_height}: ${u.connected.map((b) => (b.headerOnly ? 'h' : 'F')).join('')}`);
          return w.applyChainUpdate(u);
        },
      },
    });
    const endpoint = { blockHashAt: (h: number) => this.world.source().blockHashAt(h) } as unknown as EsploraClient;
    const writerPort = {
      call: async (method: string, p: { from: number; headers: Uint8Array[]; truncate: boolean; count: number }) => {
        // Stored headers are read to check a run against the one below it.
        if (method === 'headers') return w.ledger.headers(p.from, p.count);
        if (method !== 'putHeaders') throw new Error(`sim: the header intake asked the writer for ${method}`);
        return w.putHeaders(p.from, p.headers, p.truncate);
      },
    } as unknown as RpcClient<WriterApi>;
    this.headerIntake = new ChainFollower(endpoint, writerPort, { pollIntervalS: 3600, startHeight: null, mode: 'light', hasPeers: true, onStatus: () => undefined, pow: REGTEST_POW });
  }

  /** Follows the endpoint to its tip, and lets queued replays finish. */
  async syncChain(): Promise<void> {
    const l = this.writer.ledger;
    trace(`${this.name} polls from ${l.tip?.height}; known below: ${[1, 2, 3].map((d) => l.knownHash((l.tip?.height ?? 0) - d)?.slice(0, 8)).join(' ')}`);
    if (this.watcher) await this.watcher.pollNow();
    else await this.follower!.poll();
    await this.settle();
    trace(`${this.name} at ${this.writer.ledger.tip?.height}:${this.writer.ledger.tip?.hash.slice(0, 8)} root ${this.writer.ledger.stateRoot?.slice(0, 8)}`);
  }

  async settle(): Promise<void> {
    // Every job queued, and the replay a late payload's acceptance queued behind them.
    await this.writer.settled();
  }

  async restart(): Promise<void> {
    trace(`${this.name} restarts`);
    await this.writer.close();
    await this.start();
  }

  async held(txid: string): Promise<boolean> {
    return (await this.writer.ledger.payloadAt(txid)) !== null;
  }

  /** A peer's run of headers from `from` (light nodes): src/core/chain-follower.ts submitHeaders. */
  async submitHeaders(from: number, run: Uint8Array[]): Promise<Outcome> {
    try {
      await this.headerIntake!.submitHeaders(from, run);
      return { receipt: 'accepted' };
    } catch (e) {
      if (e instanceof NodeError) return { receipt: refusalIsRetryable(e.code) ? 'retry' : 'refused', code: e.code };
      throw e;
    }
  }

  /**
   * Deferred checks as src/core/deferred-checks.ts makes them, with the simulated
   * endpoint's answers: for each pending payload, where its anchor confirmed (a merkle
   * proof, named by the node's own header at that height) or what other transaction
   * spent a call's outpoint, handed to the writer as evidence (Writer.takeEvidence).
   * Returns how many the writer took.
   */
  async deferredChecks(): Promise<number> {
    const w = this.writer;
    let taken = 0;
    for (const pp of await w.ledger.pendingPayloads('', Number.MAX_SAFE_INTEGER)) {
      const p = this.world.payloads.find((x) => x.txid === pp.txid)!;
      const spender = p.kind === 'call' ? this.world.spenderOf(p) : null;
      const inc = spender?.at ?? this.world.inclusionOf(p.txid);
      if (!inc) continue;
      const [header] = await w.ledger.headers(inc.height, 1);
      if (!header) continue;
      const at = { ...inc, blockHash: parseHeaderBytes(header).hash };
      const ev = await w.payloadEvidence(p.txid);
      if (!ev) continue;
      if (await w.takeEvidence(p.txid, spender ? { ...ev, spentBy: { ...spender, at } } : { ...ev, confirmed: at })) taken++;
    }
    await this.settle();
    return taken;
  }

  /**
   * Intake as src/core/intake.ts decides it: the repeat rule (a repeat that brings a
   * confirmation or a spend goes on), the contract's deploy payload held (else
   * retryable), the evidence (what was sent, else the anchor fetched from the endpoint:
   * retryable when not visible) checked by checkEvidence, the binding read from the
   * anchor's bytes, then the writer with the outpoint check intake gives it (the writer's
   * memory of recent blocks) and the evidence. `between` runs before the store, where a
   * real node may apply blocks meanwhile; `mayStop` lets a stop come right after it.
   */
  async receive(p: Payload, between: () => Promise<void>, sent: Sent = {}, mayStop = true): Promise<Outcome> {
    const l = this.writer.ledger;
    if (l.halted) return { receipt: 'retry', code: 'halted' };
    try {
      const held = await l.payloadAt(p.txid);
      const places = p.kind === 'call' ? !!(sent.evidence?.confirmed || sent.evidence?.spentBy) : !!sent.evidence?.confirmed;
      if (repeatOrConflict(held, p.txid, p.kind, p.kind === 'call' ? bodyHashOf(p) : p.record.body_hash) === 'repeat' && !places) return { receipt: 'repeat' };
      if (p.kind === 'call' && l.contract(p.record.contract_id) === null) return { receipt: 'retry', code: 'unknown_contract' };
      let evidence = sent.evidence;
      if (!evidence) {
        const anchor = sent.anchorTx ?? this.world.visible.get(p.txid)?.toBuffer();
        if (!anchor) return { receipt: 'retry', code: 'anchor_not_found' };
        evidence = { anchorTx: anchor, confirmed: null, spentBy: null, ...(sent.coin ? { coin: sent.coin } : {}) };
      }
      const outpoint = p.kind === 'call' ? { txid: toHex(p.envelope.outpointTxid), vout: p.envelope.outpointVout } : null;
      const checked = checkEvidence(p.txid, outpoint, evidence);
      if (!checked.ok) { trace(`check: ${checked.reason}`); return { receipt: 'refused', code: sent.evidence || !sent.anchorTx ? checked.code : 'bad_request' }; }
      // As intake: what proves nothing (a 64-byte spender alone) is left out.
      evidence = checked.proven;
      // The coin behind a payload its evidence does not place (intake's coinOf, in the pool there).
      let coin: CheckedCoin | null = null;
      if (!evidence.confirmed && evidence.coin) {
        const c = checkCoin(evidence.anchorTx, outpoint, evidence.coin);
        if (!c.ok) return { receipt: 'refused', code: 'bad_coin' };
        coin = c.coin;
      }
      if (p.kind === 'deploy') {
        const b = checkDeployBinding(checked.anchor, Buffer.from(p.record.code_hash, 'hex'));
        if (!b.ok) return { receipt: 'refused', code: bindingError(b.reason).code };
        await between();
        await this.writer.acceptDeploy(p.record, evidence, undefined, coin);
        return { receipt: held ? 'repeat' : 'accepted' };
      }
      const b = checkCallBinding(checked.anchor, p.envelope, envelopeHash(p.envelope));
      if (!b.ok) return { receipt: 'refused', code: bindingError(b.reason).code };
      const lookedUpAt = l.tip ? { height: l.tip.height, epoch: l.chainEpoch } : null;
      await between();
      const check: OutpointCheck = { lookedUpAt, spentBy: null, memoryOnly: true };
      if (mayStop && !held && this.world.rng.chance(8)) {
        // A stop right after the durable accept, before the replay a late payload owes:
        // the reopened writer must find and run it (Ledger.owedReplayHeight).
        await this.settle();
        await this.writer.acceptCall(p.record, check, evidence, undefined, coin);
        trace(`${this.name} stops right after accepting ${p.txid.slice(0, 8)}`);
        await this.restart();
        await this.settle();
        return { receipt: 'accepted' };
      }
      await this.writer.acceptCall(p.record, check, evidence, undefined, coin);
      trace(`${this.name} accepted call ${p.txid.slice(0, 8)} at tip ${l.tip?.height} with evidence ${evidence.confirmed ? `confirmed ${evidence.confirmed.height}:${evidence.confirmed.blockHash.slice(0, 8)}` : ''}${evidence.spentBy ? ` spent ${evidence.spentBy.at.height}` : ''}`);
      return { receipt: held ? 'repeat' : 'accepted' };
    } catch (e) {
      trace(`${this.name} refused ${p.kind} ${p.txid.slice(0, 8)}: ${(e as Error).message}`);
      if (e instanceof NodeError) return { receipt: refusalIsRetryable(e.code) ? 'retry' : 'refused', code: e.code };
      throw e;
    }
  }

  /** What a lie must not change: whether the node holds `txid`, its record, the tips and the state root. */
  async snapshot(txid: string): Promise<string> {
    await this.settle();
    const l = this.writer.ledger;
    const rec = await l.call(txid);
    const held = await l.payloadAt(txid);
    const contract = held?.kind === 'deploy' ? l.contract(held.contract_id) : null;
    return JSON.stringify({ held: held !== null, rec: rec && statusBody(rec, null), contract: contract && [contract.status, contract.block_height, contract.tx_index], tip: l.tip, header: l.headerTip, root: l.stateRoot, halted: l.haltReason });
  }
}

/** The writer's body hash of a call (src/core/intake.ts): SHA-256 of contract id and base64 payload. */
function bodyHashOf(p: Payload & { kind: 'call' }): string {
  return createHash('sha256').update(p.record.contract_id).update(p.record.payload!).digest('hex');
}

/** Where the simulation's databases go: memory-backed when the machine has /dev/shm. */
function simBase(): string {
  return mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'svc-sim-'));
}

/**
 * Runs one seed; resolves with a list of disagreements (empty: every node agrees with
 * every other and with the model).
 */
export async function runSeed(seed: number, artifact: Artifact, opts: SimOptions): Promise<string[]> {
  const rng = new Rng(seed);
  const world = new World(rng, seed);
  const base = simBase();
  const nodes: SimNode[] = [];
  /** What lying peers got away with (lies.ts): any entry fails the seed. */
  const lied: string[] = [];
  try {
    // ---- the users' payloads: two contracts, calls with duplicate pairs, doomed outpoints,
    // calls that reach a contract before its deploy confirms, and forged bindings.
    const deploys = [world.deploy(artifact), world.deploy(artifact)];
    const callers = [0, 1, 2].map((i) => Buffer.from(`${'ab'.repeat(31)}${i.toString(16).padStart(2, '0')}`, 'hex'));
    const nCalls = 10 + rng.int(10);
    for (let i = 0; i < nCalls; i++) {
      const d = rng.pick(deploys);
      const caller = rng.pick(callers);
      // Call ids from a small range: duplicate (caller, call_id) pairs are frequent.
      const callId = BigInt(1 + rng.int(6));
      const fn = rng.chance(80) ? 'bump' : 'boom';
      const n = BigInt(rng.chance(90) ? 1 + rng.int(9) : 0); // bump(0) fails
      world.call(d.record.contract_id, fn, [{ type: 'u64', value: n }], caller, callId, rng.chance(20));
    }
    // A forged call: its anchor spends another outpoint than the envelope names.
    const forged = world.call(deploys[0]!.record.contract_id, 'bump', [{ type: 'u64', value: 1n }], callers[0]!, 99n, false);
    forged.envelope.outpointVout = 1;
    forged.record.payload = Buffer.from(encodeAgain(forged)).toString('base64');
    // The coins the payloads spend are made now: each is provable once its funding confirms.
    for (const p of world.payloads) world.broadcast(p.fund);

    // ---- the nodes: three from the start, of both kinds; a late joiner of either.
    const kinds: NodeKind[] = [0, 1, 2].map(() => (rng.chance(50) ? 'light' : 'blocks'));
    if (kinds.every((k) => k === kinds[0])) kinds[rng.int(3)] = kinds[0] === 'light' ? 'blocks' : 'light';
    // A light node's raw-block window: 0 (evidence alone, raw blocks only in reorganisations) is the hardest case.
    const window = (): number => rng.pick([0, 0, 2, 6]);
    // Its events: the default 1,000 (a whole simulated chain at once) or a few blocks each.
    const eventBlocks = (): number => rng.pick([1_000, 1_000, 2, 5]);
    for (const [i, name] of ['n0', 'n1', 'n2'].entries()) {
      // n2 holds at most SMALL_PENDING calls waiting on their coins: it refuses or evicts by fee rate what the others hold.
      const node = new SimNode(name, kinds[i]!, window(), eventBlocks(), world, base, name === 'n2' ? SMALL_PENDING : Number.POSITIVE_INFINITY);
      await node.start();
      nodes.push(node);
    }
    const lateKind: NodeKind = rng.chance(50) ? 'light' : 'blocks';
    const lateWindow = window();
    const lateEvents = eventBlocks();
    trace(`kinds: ${nodes.map((n) => `${n.name} ${n.kind}${n.kind === 'light' ? `/${n.rawTipWindow}/${n.eventBlocks}` : ''}`).join(', ')}, late ${lateKind}`);
    const joinAt = Math.floor(opts.steps * (0.4 + rng.int(40) / 100));
    const deep = seed % opts.deepEvery === 0;

    // How a client sends a payload over REST: with its anchor's bytes, or without (the node fetches them).
    const byClient = (p: Payload): Sent => (rng.chance(50) ? { anchorTx: p.tx.toBuffer(), coin: world.coinOf(p) } : { coin: world.coinOf(p) });
    // How a peer sends a payload it holds: with the evidence it holds (what gossip and sync carry).
    const byPeer = async (from: SimNode, p: Payload): Promise<Sent> => ({ evidence: (await from.writer.payloadEvidence(p.txid)) ?? undefined });
    const none = (): Promise<void> => Promise.resolve();

    /** A lying peer: forged evidence for a payload, or a forged header run for a light node; each refused and without effect. */
    const lie = async (): Promise<void> => {
      const victim = rng.pick(nodes);
      const l = victim.writer.ledger;
      if (victim.kind === 'light' && rng.chance(30)) {
        const st = victim.writer.status();
        const top = st.headerHeight !== null && st.headerHeight >= st.processedHeight! ? { height: st.headerHeight, hash: st.headerHash! } : { height: st.processedHeight!, hash: st.processedHash! };
        const forgedRun = forgeHeaders(world, top, rng);
        if (!forgedRun) return;
        const before = await victim.snapshot(forged.txid);
        const o = await victim.submitHeaders(forgedRun.from, forgedRun.run);
        const after = await victim.snapshot(forged.txid);
        trace(`liar sends ${victim.name} headers (${forgedRun.label}): ${o.receipt} ${o.code ?? ''}`);
        if (o.receipt !== 'refused' || o.code !== 'bad_evidence') lied.push(`${victim.name} answered ${o.receipt} ${o.code ?? ''} to ${forgedRun.label} (headers ${forgedRun.from}..${forgedRun.from + forgedRun.run.length - 1}), not bad_evidence`);
        if (before !== after) lied.push(`${victim.name} changed on ${forgedRun.label}: ${before} -> ${after}`);
        return;
      }
      // A payload the node can vet (its contract's deploy held), one that confirmed when there is one: the lie then reaches the evidence checks.
      const vettable = world.payloads.filter((q) => q.kind === 'deploy' || l.contract(q.record.contract_id) !== null);
      const confirmed = vettable.filter((q) => world.confirmedAt(q.txid) !== null);
      const p = rng.pick(confirmed.length > 0 && rng.chance(60) ? confirmed : vettable);
      const forgery = forgeEvidence(world, p, rng);
      const before = await victim.snapshot(p.txid);
      const wasHeld = await victim.held(p.txid);
      const tip = l.tip!.height;
      // Evidence for a payload already held also comes from the node's own deferred checks (Writer.takeEvidence).
      const direct = wasHeld && rng.chance(30);
      let o: Outcome;
      if (direct) {
        try {
          o = { receipt: (await victim.writer.takeEvidence(p.txid, forgery.evidence)) ? 'repeat' : 'retry' };
        } catch (e) {
          if (!(e instanceof NodeError)) throw e;
          o = { receipt: 'refused', code: e.code };
        }
      } else o = await victim.receive(p, none, { evidence: forgery.evidence }, false);
      const after = await victim.snapshot(p.txid);
      trace(`liar sends ${victim.name} ${p.kind} ${p.txid.slice(0, 8)} with ${forgery.label}${direct ? ' (takeEvidence)' : ''}: ${o.receipt} ${o.code ?? ''}`);
      const say = (m: string): void => void lied.push(`${victim.name} (${victim.kind}, tip ${tip}) on ${p.kind} ${p.txid} with ${forgery.label}${direct ? ' through takeEvidence' : ''}: ${m}`);
      if (o.receipt === 'accepted') {
        // Stored as a new pending payload: only a chain claim on a block not reached yet may be (it waits for the block).
        if (forgery.kind === 'stateless') say('accepted');
        else if (forgery.kind === 'chain' && forgery.namesHeight! <= tip) say(`accepted though it names block ${forgery.namesHeight}, which the node has processed`);
        return;
      }
      // A lie that brings no coin for a payload the node does not hold may be refused for that first (coin_missing).
      const unpaid = !wasHeld && !forgery.evidence.coin && o.code === 'coin_missing';
      if (forgery.kind === 'unproven') {
        if (o.receipt === 'refused' && o.code === 'bad_evidence') say('refused as false, though its bytes prove nothing either way');
      } else if (o.receipt === 'refused' && o.code !== 'bad_evidence' && !unpaid && !(p === forged && o.code === 'anchor_mismatch')) say(`refused with ${o.code}, not bad_evidence`);
      if (direct && forgery.kind === 'stateless' && o.receipt !== 'refused') say('taken by the writer');
      if (before !== after) say(`changed the node: ${before} -> ${after}`);
    };

    // ---- the schedule
    const unbroadcast = rng.shuffle(world.payloads.flatMap((p) => (p.kind === 'call' && p.conflict ? [p.tx, p.conflict] : [p.tx])));
    const mineAndMaybeSync = async (node: SimNode): Promise<void> => {
      world.mine();
      if (rng.chance(70)) await node.syncChain();
    };
    for (let step = 0; step < opts.steps; step++) {
      if (step === joinAt) {
        const late = new SimNode('late', lateKind, lateWindow, lateEvents, world, base);
        await late.start();
        nodes.push(late);
      }
      const r = rng.int(100);
      if (r < 20 && unbroadcast.length > 0) world.broadcast(unbroadcast.shift()!);
      else if (r < 34) world.mine(1 + rng.int(6));
      else if (r < 40 && world.tip.height > 0) world.reorg(1 + rng.int(Math.min(6, world.tip.height)), 1 + rng.int(3));
      else if (r < 58) {
        // A client sends a payload to n0 or n1 (never to n2 or the late joiner).
        const node = nodes[rng.int(2)]!;
        const p = rng.pick(world.payloads);
        await node.receive(p, () => (rng.chance(15) ? mineAndMaybeSync(node) : Promise.resolve()), byClient(p));
      } else if (r < 74) {
        // Gossip: a node passes one payload it holds, with its evidence, to another node;
        // or a peer that read the best chain (outside the simulation) sends its evidence.
        const from = rng.pick(nodes);
        const to = rng.pick(nodes.filter((n) => n !== from));
        const p = rng.pick(world.payloads);
        if (rng.chance(25)) await to.receive(p, none, { evidence: world.evidenceOf(p) });
        else if (await from.held(p.txid)) await to.receive(p, none, await byPeer(from, p));
        if (to.kind === 'light' && rng.chance(25)) {
          // With the headers the peer holds above this node's: taken when the endpoint names their last block.
          const have = to.writer.status().headerHeight ?? to.writer.status().processedHeight!;
          const run = await from.writer.ledger.headers(have + 1, 2_000);
          if (run.length > 0) {
            const before = await to.snapshot(p.txid);
            const o = await to.submitHeaders(have + 1, run);
            if (o.receipt !== 'accepted' && before !== (await to.snapshot(p.txid))) lied.push(`${to.name} changed on refusing ${from.name}'s headers (${o.code})`);
          }
        }
      } else if (r < 78) await rng.pick(nodes).deferredChecks();
      else if (r < 82) await lie();
      else if (r < 93) await rng.pick(nodes).syncChain();
      else await rng.pick(nodes).restart();
    }
    // Every transaction reaches the chain's mempool in the end, and most confirm.
    for (const tx of unbroadcast.splice(0)) world.broadcast(tx);
    for (let i = rng.int(3); i > 0; i--) world.mine(8);
    if (deep) {
      for (let i = 0; i < 150; i++) world.mine(1);
      for (const n of nodes) await n.syncChain();
      world.reorg(145 + rng.int(6), 151);
    }

    // ---- the end: every node follows the chain; clients send their payloads to n0 and
    // n1 again (until taken or refused for good), sync brings every payload any node
    // holds to every other with the evidence the holder has, each in its own order, and
    // deferred checks find where what is still pending confirmed, until nothing changes.
    for (const n of nodes) await n.syncChain();
    for (let round = 0; round < 8; round++) {
      let changed = 0;
      for (const n of nodes) {
        const client = n.name === 'n0' || n.name === 'n1';
        for (const p of rng.shuffle(world.payloads)) {
          if (await n.held(p.txid)) continue;
          const holders: SimNode[] = [];
          for (const m of nodes) if (m !== n && (await m.held(p.txid))) holders.push(m);
          // The client sends first half the time; sync then asks every peer that lists the
          // payload, each with the evidence it holds, until one copy is taken: one copy may not
          // prove what another does (a confirmation, a coin this node cannot place yet).
          if (client && (holders.length === 0 || rng.chance(50)) && (await n.receive(p, none, byClient(p))).receipt === 'accepted') {
            changed++;
            continue;
          }
          for (const h of rng.shuffle(holders)) {
            if ((await n.receive(p, none, await byPeer(h, p))).receipt === 'accepted') {
              changed++;
              break;
            }
          }
        }
        await n.settle();
        const pendingBefore = (await n.writer.ledger.pendingPayloads('', Number.MAX_SAFE_INTEGER)).length;
        await n.deferredChecks();
        changed += pendingBefore - (await n.writer.ledger.pendingPayloads('', Number.MAX_SAFE_INTEGER)).length;
      }
      if (changed === 0) break;
    }
    // Lying peers again, now that every node holds most blocks the lies name.
    for (let i = 0; i < 2 * nodes.length; i++) await lie();
    for (const n of nodes) await n.syncChain();

    return [...lied.slice(0, 10), ...(await compare(world, nodes))];
  } finally {
    for (const n of nodes) await n.writer?.close().catch(() => undefined);
    rmSync(base, { recursive: true, force: true });
  }
}

function encodeAgain(p: Payload & { kind: 'call' }): Uint8Array {
  return encodeEnvelope(p.envelope);
}

async function compare(world: World, nodes: SimNode[]): Promise<string[]> {
  const problems: string[] = [];
  const say = (s: string): void => void (problems.length < 20 && problems.push(s));
  for (const n of nodes) if (n.writer.ledger.halted) say(`${n.name} halted: ${n.writer.ledger.haltReason}`);
  // Every node holds the same payloads, but for calls and deploys still waiting at the
  // end: admission is node policy (its bound, one coin for one waiting payload, a coin it
  // can place), so pending sets may differ; what the chain decided, every node holds and
  // answers alike.
  // Nor for dropped calls: a dropped call's anchor never confirmed, so no root commits to
  // it and nothing paid for its wait; a node holds one only when shown the drop (a spender
  // it can place) or a coin it can place (docs/STATE.md, "Coin evidence"), so nodes may
  // differ in holding one, never in what they answer for it.
  const heldBy = await Promise.all(nodes.map(async (n) => (await Promise.all(world.payloads.map((p) => n.held(p.txid)))).map((h, i) => (h ? world.payloads[i]!.txid : null)).filter((t): t is string => t !== null)));
  const droppedSomewhere = new Set<string>();
  // Invalid calls too: committed by no root either, and a node takes one only when its intake
  // took the payload (a call to a contract whose deploy it held waiting is taken; one to a
  // contract it never saw is refused).
  for (const n of nodes) for (const p of world.payloads) if (p.kind === 'call' && ['dropped', 'invalid'].includes((await n.writer.ledger.call(p.txid))?.status ?? '')) droppedSomewhere.add(p.txid);
  // What any node holds (a node with a small max_pending_calls may hold fewer waiting calls, whichever node it is).
  const heldSet = new Set([...heldBy.flat(), ...droppedSomewhere]);
  const model = runModel(world.chain, world.payloads.filter((p) => heldSet.has(p.txid)));
  const waiting = (txid: string): boolean => model.calls.get(txid)?.status === 'pending';
  // Any node may lack a call still waiting (one coin backs one waiting call, first seen at an
  // equal fee; a coin it cannot place yet; its bound), never one the chain decided.
  const deployWaiting = new Set(world.payloads.flatMap((p) => (p.kind === 'deploy' && !model.active.has(p.record.contract_id) ? [p.txid] : [])));
  const mayLack = (_n: SimNode, txid: string): boolean => waiting(txid) || deployWaiting.has(txid) || droppedSomewhere.has(txid);
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    const own = new Set(heldBy[i]);
    const differ = [...heldSet].filter((t) => !own.has(t) && !mayLack(n, t)).length + heldBy[i]!.filter((t) => !heldSet.has(t)).length;
    if (differ > 0) say(`${n.name} holds ${heldBy[i]!.length} payloads, ${heldSet.size} are held somewhere`);
  }

  for (const n of nodes) {
    const l = n.writer.ledger;
    if (l.tip?.hash !== world.tip.hash) say(`${n.name} tip ${l.tip?.height}:${l.tip?.hash} is not the chain's ${world.tip.height}:${world.tip.hash}`);
    for (let h = 0; h <= world.tip.height; h++) {
      const r = await l.stateRootAt(h);
      if (r?.block_hash !== world.chain[h]!.hash || r.state_root !== model.roots[h]) say(`${n.name} root at ${h}: ${r?.state_root} (block ${r?.block_hash}), model ${model.roots[h]} (block ${world.chain[h]!.hash})`);
    }
  }
  // Statuses: the model's, and byte for byte the same record on every node.
  for (const p of world.payloads) {
    if (p.kind !== 'call') continue;
    // As GET /contract_call/{txid}/status answers them (statusBody: a fixed key order).
    const recs = await Promise.all(nodes.map(async (n) => {
      const r = await n.writer.ledger.call(p.txid);
      return r && statusBody(r, n.writer.ledger.tip?.height ?? null);
    }));
    const want = model.calls.get(p.txid);
    // The record to agree with: the first holder's.
    const refAt = Math.max(0, recs.findIndex((r) => r));
    for (let i = 0; i < nodes.length; i++) {
      const r = recs[i] ?? null;
      if (!r && mayLack(nodes[i]!, p.txid)) continue;
      if (JSON.stringify(r) !== JSON.stringify(recs[refAt] ?? null)) say(`${nodes[i]!.name} answers ${JSON.stringify(r)} for ${p.txid}, ${nodes[refAt]!.name} ${JSON.stringify(recs[refAt])}`);
      if (!want) {
        if (r) say(`${nodes[i]!.name} holds ${p.txid}, which no node should hold`);
        continue;
      }
      if (!r || r.status !== want.status || r.block_height !== want.block_height || r.tx_index !== want.tx_index || (r.error?.code ?? null) !== want.error) {
        say(`${nodes[i]!.name} call ${p.txid} (${p.record.function} caller ..${p.record.caller.slice(-2)} id ${p.record.call_id}): ${JSON.stringify(r && { s: r.status, h: r.block_height, i: r.tx_index, e: r.error?.code })}, model ${JSON.stringify(want)}`);
      }
    }
  }
  // The evidence each node serves for a decided payload (gossip, call proofs): where the best chain placed it.
  const incJson = (i: Inclusion | null | undefined): string => JSON.stringify(i && { ...i, branch: i.branch.map((h) => Buffer.from(h).toString('hex')) });
  for (const n of nodes) {
    for (const p of world.payloads) {
      if (!heldSet.has(p.txid)) continue;
      if (mayLack(n, p.txid) && !(await n.held(p.txid))) continue;
      const want = p.kind === 'call' ? model.calls.get(p.txid) : null;
      const active = p.kind === 'deploy' && model.active.has(p.record.contract_id);
      const ev = await n.writer.payloadEvidence(p.txid);
      if (!ev) {
        say(`${n.name} serves no evidence for ${p.kind} ${p.txid}`);
        continue;
      }
      if (Buffer.compare(Buffer.from(ev.anchorTx), p.tx.toBuffer()) !== 0) say(`${n.name} serves another anchor for ${p.txid}`);
      if (active || (want && want.block_height !== null)) {
        if (incJson(ev.confirmed) !== incJson(world.inclusionOf(p.txid))) say(`${n.name} places ${p.kind} ${p.txid} at ${incJson(ev.confirmed)}, the chain at ${incJson(world.inclusionOf(p.txid))}`);
      }
      if (want?.status === 'dropped' && ev.spentBy && p.kind === 'call') {
        const s = world.spenderOf(p);
        if (!s || Buffer.compare(Buffer.from(ev.spentBy.tx), s.tx) !== 0 || ev.spentBy.vin !== s.vin || incJson(ev.spentBy.at) !== incJson(s.at)) say(`${n.name} serves a spender of ${p.txid} that is not the chain's`);
      }
    }
  }
  // Events of every contract.
  for (const cid of new Set(world.payloads.filter((p) => p.kind === 'deploy').map((p) => p.record.contract_id))) {
    const want = model.events.filter((e) => e.contract_id === cid).map((e) => `${e.block_height}/${e.tx_index}/${e.log_index}/${e.txid}/${e.name}`);
    const got = await Promise.all(nodes.map((n) => n.writer.ledger.events(cid, 0, 0xffffffff, null, 100_000, null)));
    for (let i = 0; i < nodes.length; i++) {
      const mine = got[i]!.map((e) => `${e.block_height}/${e.tx_index}/${e.log_index}/${e.txid}/${e.name}`);
      if (mine.join() !== want.join()) say(`${nodes[i]!.name} events of ${cid.slice(0, 8)}: ${mine.length}, model ${want.length}`);
      if (JSON.stringify(got[i]) !== JSON.stringify(got[0])) say(`${nodes[i]!.name} event records differ from ${nodes[0]!.name}'s`);
    }
  }
  return problems;
}

/**
 * One seeded run of the convergence simulation: several nodes (real Writers on RocksDB,
 * each following the simulated chain with the node's own BlockWatcher) receive the same
 * payloads in different orders and through different paths (clients, gossip from peers,
 * a late joiner's sync), while the chain grows, reorganises (depths up to 150) and
 * nodes crash and restart. At the end every node must hold the same payloads and agree
 * with every other node and with the reference model (model.ts) on the state root at
 * every height, every call's status and every event. Everything random comes from the
 * seed, and each step is awaited before the next, so a seed replays exactly.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlockWatcher } from '../../../src/chain/watcher.js';
import { blockInputOf } from '../../../src/chain/connected-block.js';
import { Writer } from '../../../src/writer/writer.js';
import { NodeError } from '../../../src/errors.js';
import { logger } from '../../../src/log.js';
import { checkCallBinding, checkDeployBinding } from '../../../src/protocol/binding.js';
import { encodeEnvelope, envelopeHash } from '../../../src/protocol/envelope.js';
import { journalAnchorHeight } from '../../../src/protocol/activation.js';
import { refusalIsRetryable, repeatOrConflict } from '../../../src/protocol/rules.js';
import type { OutpointCheck } from '../../../src/messages.js';
import { runModel } from './model.js';
import { statusBody } from '../../../src/writer/records.js';
import { REGTEST_GENESIS, Rng, World, type Artifact, type Payload } from './world.js';

export interface SimOptions {
  /** Steps of the random schedule (each: broadcast, mine, reorg, deliver, gossip, chain sync or crash). */
  steps: number;
  /** One run in `deepEvery` (by seed) also builds 150 blocks and reorganises 145-150 deep (re-derivation). */
  deepEvery: number;
}

type Receipt = 'accepted' | 'repeat' | 'retry' | 'refused';

const log = logger('sim');
/** SIM_TRACE=1 prints every step of a run (to replay a failing seed with its story). */
const trace = process.env['SIM_TRACE'] ? (m: string): void => void process.stderr.write(`sim: ${m}\n`) : (): void => undefined;

/** A node as the simulation drives it: its writer, and a block watcher over the simulated endpoint. */
class SimNode {
  writer!: Writer;
  watcher!: BlockWatcher;
  readonly dir: string;

  constructor(
    readonly name: string,
    private readonly world: World,
    base: string,
  ) {
    this.dir = join(base, name);
  }

  async start(): Promise<void> {
    this.writer = await Writer.open(join(this.dir, 'db'), this.name, log);
    if (this.writer.status().processedHeight === null) {
      // Default settings: the journal is anchored just below the network's activation.
      const h = journalAnchorHeight(await this.world.source().blockHashAt(0), null);
      await this.writer.initAnchor({ height: h, hash: this.world.chain[h]!.hash });
    }
    const st = this.writer.status();
    this.watcher = new BlockWatcher({
      source: this.world.source(),
      anchor: { height: st.processedHeight!, hash: st.processedHash! },
      knownHash: (h) => this.writer.ledger.knownHash(h),
      pollIntervalSeconds: 3600,
      onEvent: async (ev) => {
        await this.writer.applyChainUpdate({ fork_height: ev.fork_height, disconnected: ev.disconnected, connected: ev.connected.map(blockInputOf) });
      },
    });
  }

  /** Follows the endpoint to its tip, and lets queued replays finish. */
  async syncChain(): Promise<void> {
    const l = this.writer.ledger;
    trace(`${this.name} polls from ${l.tip?.height}; known below: ${[1, 2, 3].map((d) => l.knownHash((l.tip?.height ?? 0) - d)?.slice(0, 8)).join(' ')}`);
    await this.watcher.pollNow();
    await this.settle();
    trace(`${this.name} at ${this.writer.ledger.tip?.height}:${this.writer.ledger.tip?.hash.slice(0, 8)} root ${this.writer.ledger.stateRoot?.slice(0, 8)}`);
  }

  async settle(): Promise<void> {
    // A replay is queued by the job that accepted a late payload: two turns cover it.
    await this.writer.serial(() => undefined);
    await this.writer.serial(() => undefined);
  }

  async restart(): Promise<void> {
    trace(`${this.name} restarts`);
    await this.writer.close();
    await this.start();
  }

  async held(txid: string): Promise<boolean> {
    return (await this.writer.ledger.payloadAt(txid)) !== null;
  }

  /**
   * Intake as src/core/intake.ts decides it, with the chain answers of the simulated
   * endpoint: the repeat rule, the contract's deploy payload held (else retryable), the
   * anchor visible (else retryable), the binding (intrinsic), and for a call the outpoint
   * check. `between` runs after the look-up and before the store, where a real node may
   * apply blocks meanwhile.
   */
  async receive(p: Payload, between: () => Promise<void>): Promise<Receipt> {
    const l = this.writer.ledger;
    if (l.halted) return 'retry';
    try {
      const held = await l.payloadAt(p.txid);
      if (repeatOrConflict(held, p.txid, p.kind, p.kind === 'call' ? bodyHashOf(p) : p.record.body_hash) === 'repeat') return 'repeat';
      if (p.kind === 'call' && l.contract(p.record.contract_id) === null) return 'retry';
      const anchor = this.world.visible.get(p.txid);
      if (!anchor) return 'retry';
      if (p.kind === 'deploy') {
        if (!checkDeployBinding(anchor, Buffer.from(p.record.code_hash, 'hex')).ok) return 'refused';
        await this.writer.acceptDeploy(p.record);
        return 'accepted';
      }
      if (!checkCallBinding(anchor, p.envelope, envelopeHash(p.envelope)).ok) return 'refused';
      const lookedUpAt = l.tip ? { height: l.tip.height, epoch: l.chainEpoch } : null;
      await between();
      const spend = this.world.outspend(p.outpoint);
      const check: OutpointCheck = { lookedUpAt, spentBy: spend && spend.confirmed && spend.txid !== p.txid ? { txid: spend.txid, height: spend.confirmed.height, blockHash: spend.confirmed.hash } : null };
      await between();
      if (this.world.rng.chance(8)) {
        // A stop right after the durable accept, before the replay a late payload owes:
        // the reopened writer must find and run it (Ledger.owedReplayHeight).
        await this.settle();
        await this.writer.ledger.acceptCall(p.record, check);
        trace(`${this.name} stops right after accepting ${p.txid.slice(0, 8)}`);
        await this.restart();
        await this.settle();
        return 'accepted';
      }
      await this.writer.acceptCall(p.record, check);
      trace(`${this.name} accepted call ${p.txid.slice(0, 8)} at tip ${l.tip?.height} (looked up at ${JSON.stringify(lookedUpAt)}, spent by ${JSON.stringify(check.spentBy)})`);
      return 'accepted';
    } catch (e) {
      trace(`${this.name} refused ${p.kind} ${p.txid.slice(0, 8)}: ${(e as Error).message}`);
      if (e instanceof NodeError) return refusalIsRetryable(e.code) ? 'retry' : 'refused';
      throw e;
    }
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

    for (const name of ['n0', 'n1', 'n2']) {
      const node = new SimNode(name, world, base);
      await node.start();
      nodes.push(node);
    }
    const joinAt = Math.floor(opts.steps * (0.4 + rng.int(40) / 100));
    const deep = seed % opts.deepEvery === 0;

    // ---- the schedule
    const unbroadcast = rng.shuffle(world.payloads.flatMap((p) => (p.kind === 'call' && p.conflict ? [p.tx, p.conflict] : [p.tx])));
    const mineAndMaybeSync = async (node: SimNode): Promise<void> => {
      world.mine();
      if (rng.chance(70)) await node.syncChain();
    };
    for (let step = 0; step < opts.steps; step++) {
      if (step === joinAt) {
        const late = new SimNode('late', world, base);
        await late.start();
        nodes.push(late);
      }
      const r = rng.int(100);
      if (r < 20 && unbroadcast.length > 0) world.broadcast(unbroadcast.shift()!);
      else if (r < 34) world.mine(1 + rng.int(6));
      else if (r < 40 && world.tip.height > 0) world.reorg(1 + rng.int(Math.min(6, world.tip.height)), 1 + rng.int(3));
      else if (r < 64) {
        // A client sends a payload to n0 or n1 (never to n2 or the late joiner).
        const node = nodes[rng.int(2)]!;
        await node.receive(rng.pick(world.payloads), () => (rng.chance(15) ? mineAndMaybeSync(node) : Promise.resolve()));
      } else if (r < 82) {
        // Gossip: a node passes one payload it holds to another node.
        const from = rng.pick(nodes);
        const to = rng.pick(nodes.filter((n) => n !== from));
        const p = rng.pick(world.payloads);
        if (await from.held(p.txid)) await to.receive(p, () => Promise.resolve());
      } else if (r < 94) await rng.pick(nodes).syncChain();
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
    // n1 again (until taken or refused for good), and sync brings every payload any node
    // holds to every other, each in its own order, until nothing more is taken.
    for (const n of nodes) await n.syncChain();
    for (let round = 0; round < 6; round++) {
      let taken = 0;
      for (const n of nodes) {
        const client = n.name === 'n0' || n.name === 'n1';
        for (const p of rng.shuffle(world.payloads)) {
          if (await n.held(p.txid)) continue;
          if (!client && !(await Promise.all(nodes.map((m) => m.held(p.txid)))).some(Boolean)) continue;
          if ((await n.receive(p, () => Promise.resolve())) === 'accepted') taken++;
        }
        await n.settle();
      }
      if (taken === 0) break;
    }
    for (const n of nodes) await n.syncChain();

    return await compare(world, nodes);
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
  // Every node holds the same payloads.
  const heldBy = await Promise.all(nodes.map(async (n) => (await Promise.all(world.payloads.map((p) => n.held(p.txid)))).map((h, i) => (h ? world.payloads[i]!.txid : null)).filter((t): t is string => t !== null)));
  for (let i = 1; i < nodes.length; i++) if (heldBy[i]!.join() !== heldBy[0]!.join()) say(`${nodes[i]!.name} holds ${heldBy[i]!.length} payloads, ${nodes[0]!.name} ${heldBy[0]!.length}`);
  const heldSet = new Set(heldBy[0]);
  const model = runModel(world.chain, world.payloads.filter((p) => heldSet.has(p.txid)));

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
    for (let i = 0; i < nodes.length; i++) {
      const r = recs[i] ?? null;
      if (JSON.stringify(r) !== JSON.stringify(recs[0] ?? null)) say(`${nodes[i]!.name} answers ${JSON.stringify(r)} for ${p.txid}, ${nodes[0]!.name} ${JSON.stringify(recs[0])}`);
      if (!want) {
        if (r) say(`${nodes[i]!.name} holds ${p.txid}, which no node should hold`);
        continue;
      }
      if (!r || r.status !== want.status || r.block_height !== want.block_height || r.tx_index !== want.tx_index || (r.error?.code ?? null) !== want.error) {
        say(`${nodes[i]!.name} call ${p.txid} (${p.record.function} caller ..${p.record.caller.slice(-2)} id ${p.record.call_id}): ${JSON.stringify(r && { s: r.status, h: r.block_height, i: r.tx_index, e: r.error?.code })}, model ${JSON.stringify(want)}`);
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

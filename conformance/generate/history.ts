/**
 * Ordering and status: scripted histories (raw blocks, reorganisations, payload arrivals)
 * -> every payload's status and every block's state root, as svc-node's writer decides them
 * (svc-node-history.ts). Real regtest blocks mined by the project's devnet chain, real
 * signed anchors (P2WPKH, the tests' builder) and envelopes; deterministic: fixed keys,
 * seeds and the devnet chain's fixed times.
 */
import { Transaction } from 'bitcoinjs-lib';
import { DevnetChain } from '../../src/devnet/chain.js';
import { callStampScript, deployStampScript } from '@svc-node/protocol/stamp';
import { codeHash, contractIdHex, type ArtifactCore } from '@svc-node/protocol/contract';
import { encodeEnvelope, envelopeHash } from '@svc-node/protocol/envelope';
import type { Value } from '@svc-node/protocol/value';
import { spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type Area, type CaseInput } from './kit.js';
import { envelope } from './keys.js';
import { fixtureArtifact } from './codec.js';

export type Step = Record<string, unknown>;

/** A payload as a step: its kind and what a node is sent (the anchor's bytes beside it, as REST's `anchor_tx`). */
export interface Payload {
  txid: string;
  step: Step;
  /** The anchoring transaction, to mine. */
  hex: string;
  /** The outpoint the anchor spends (a call's named outpoint). */
  coin: Utxo;
}

/** A step asking for the tip and every payload's status at that point of the history. */
export const CHECK: Step = { kind: 'check' };
/** A step stopping the node and starting it again on its store. */
export const RESTART: Step = { kind: 'restart' };

const payer = wallet('conformance history payer');
const FEE = 1_000n;
const COIN = 100_000n;

/** A devnet chain past coinbase maturity with `coins` funded outputs; the history starts at its tip. */
export class Script {
  readonly chain = new DevnetChain();
  private readonly coins: Utxo[] = [];
  readonly anchor: { height: number; hash: string };
  private nextCallId = 1n;

  /** `below`: blocks mined before the coins are funded (at least 101: coinbase maturity). */
  constructor(coins: number, below = 101) {
    this.chain.mine(below);
    for (let i = 0; i < coins; i++) {
      const c = this.chain.faucet(payer.address, COIN);
      this.coins.push({ ...c, value: COIN });
    }
    this.chain.mine(1);
    const tip = this.chain.blockAt(this.chain.height)!;
    this.anchor = { height: tip.height, hash: tip.hash };
  }

  private coin(): Utxo {
    const c = this.coins.shift();
    if (!c) throw new Error('history: out of funded coins');
    return c;
  }

  deploy(artifact: Record<string, unknown>): Payload & { contractId: string } {
    const { metadata: _m, ...core } = artifact;
    const coin = this.coin();
    const ch = codeHash(core as unknown as ArtifactCore);
    const tx = spend(payer, [coin], [{ script: deployStampScript(ch), value: 0n }, { script: payer.script, value: coin.value - FEE }]);
    const txid = tx.getId();
    return { txid, hex: tx.toHex(), coin, contractId: contractIdHex(Buffer.from(txid, 'hex'), ch), step: { kind: 'deploy', txid, anchor_tx: tx.toHex(), artifact: core } };
  }

  /** A signed call of `fn(args)` by the kit's caller naming a fresh coin; `callId` defaults to the next unused one. */
  call(contractId: string, fn: string, args: Value[], callId: bigint = this.nextCallId++): Payload {
    const coin = this.coin();
    const e = envelope({ contractId: Buffer.from(contractId, 'hex'), function: fn, args, callId, outpointTxid: Buffer.from(coin.txid, 'hex'), outpointVout: coin.vout });
    const bytes = encodeEnvelope(e);
    const tx = spend(payer, [coin], [{ script: payer.script, value: coin.value - FEE }, { script: callStampScript(e.contractId, envelopeHash(bytes)), value: 0n }]);
    const txid = tx.getId();
    return { txid, hex: tx.toHex(), coin, step: { kind: 'call', txid, anchor_tx: tx.toHex(), payload: hex(bytes) } };
  }

  /** A transaction spending a fresh coin to `outputs` and its change: what a block may hold that no payload anchors. */
  transaction(outputs: { script: Uint8Array; value: bigint }[]): string {
    const coin = this.coin();
    return spend(payer, [coin], [...outputs, { script: payer.script, value: coin.value - FEE }]).toHex();
  }

  /** Another transaction spending the outpoint `p` names (its anchor can then never confirm). */
  conflict(p: Payload): string {
    return spend(payer, [p.coin], [{ script: payer.script, value: p.coin.value - 2n * FEE }]).toHex();
  }

  private raw(hashes: string[]): string[] {
    return hashes.map((h) => hex(this.chain.blockByHash(h)!.raw));
  }

  /** One block holding exactly these transactions (submitted to the devnet's mempool first). */
  mine(txs: (Payload | string)[]): Step {
    const ids = txs.map((t) => {
      const raw = typeof t === 'string' ? t : t.hex;
      const id = Transaction.fromHex(raw).getId();
      // An anchor a reorganisation returned to the mempool is there already.
      return this.chain.inMempool(id) ? id : this.chain.submitTx(raw);
    });
    return { kind: 'blocks', blocks: this.raw(this.chain.mine(1, ids).hashes) };
  }

  /** `n` blocks holding nothing but their coinbase. */
  empty(n: number): Step {
    return { kind: 'blocks', blocks: this.raw(this.chain.mine(n, []).hashes) };
  }

  /** Replaces the top `depth` blocks with `blocks` new ones; `drop` leaves those anchors (or raw transactions) out, `txs` go in the first new block. */
  reorg(depth: number, blocks: number, opts: { drop?: (Payload | string)[]; txs?: string[]; first?: Payload[] } = {}): Step {
    const drop = opts.drop?.map((p) => (typeof p === 'string' ? Transaction.fromHex(p).getId() : p.txid));
    const r = this.chain.reorg({ depth, blocks, drop, txs: opts.txs, txids: opts.first?.map((p) => p.txid) });
    return { kind: 'reorg', depth, blocks: this.raw(r.hashes) };
  }
}

export const artifact = (): Record<string, unknown> => fixtureArtifact('counter.svc');
export const u64 = (n: bigint): Value => ({ type: 'u64', value: n });

/**
 * One chain holding every outcome, played with the payloads before, with and after their
 * blocks: the final answer is the same (only the arrivals' answers differ).
 */
function outcomes(): CaseInput[] {
  const s = new Script(12);
  const d = s.deploy(artifact());
  const cid = d.contractId;
  // The same artifact deployed again: another contract (its id hashes its deploy txid).
  const later = s.deploy(artifact());
  const c1 = s.call(cid, 'bump', [u64(5n)]);
  const c2 = s.call(cid, 'bump', [u64(7n)]);
  const boom = s.call(cid, 'boom', [u64(4n)]);
  const zero = s.call(cid, 'bump', [u64(0n)]);
  const reused = s.call(cid, 'bump', [u64(1n)], 1n);
  const early = s.call(later.contractId, 'bump', [u64(3n)]);
  const dropped = s.call(cid, 'bump', [u64(2n)]);
  const afterLater = s.call(later.contractId, 'bump', [u64(9n)]);
  // Block by block: what each block holds, and the payloads whose anchors it holds.
  const blocks: { step: Step; payloads: Payload[] }[] = [
    { step: s.mine([d]), payloads: [d] },
    { step: s.mine([c1, c2]), payloads: [c1, c2] },
    { step: s.mine([boom, zero, reused, early]), payloads: [boom, zero, reused, early] },
    { step: s.empty(1), payloads: [] },
    { step: s.mine([s.conflict(dropped), later]), payloads: [dropped, later] },
    { step: s.mine([afterLater]), payloads: [afterLater] },
  ];
  // A call can be taken only once its contract's deploy is held (intake: unknown_contract).
  // With a check after every block: what each block decided, as it was applied.
  const before: Step[] = [d.step, later.step, ...blocks.flatMap((b) => b.payloads.filter((p) => p !== d && p !== later).map((p) => p.step)), ...blocks.flatMap((b) => [b.step, CHECK])];
  const withBlocks: Step[] = [later.step, ...blocks.flatMap((b) => [...b.payloads.filter((p) => p !== later).map((p) => p.step), b.step])];
  const deploys = [d.step, later.step];
  const calls = blocks.flatMap((b) => b.payloads.filter((p) => p.step.kind === 'call').map((p) => p.step));
  const after: Step[] = [...blocks.map((b) => b.step), ...deploys, ...calls];
  const afterReversed: Step[] = [...blocks.map((b) => b.step), ...[...deploys].reverse(), ...[...calls].reverse()];
  const input = (steps: Step[]) => ({ anchor: s.anchor, steps });
  const all = 'executed (two in one block, in tx_index order), failed (revert; require), invalid (duplicate_call_id; unknown_contract: its deploy confirmed later), dropped (outpoint spent by another tx), the later contract active';
  return [
    { id: 'outcomes-payloads-before-blocks', pins: `every payload held before its block, checked after each block: ${all}`, input: input(before) },
    { id: 'outcomes-payloads-with-blocks', pins: 'each payload arrives just before the block holding its anchor: the same statuses and roots as before-blocks', input: input(withBlocks) },
    { id: 'outcomes-payloads-after-blocks', pins: 'every payload after all the blocks, the deploys first (late: replayed from its block; a dropped call stored dropped at the spending block): the same statuses and roots', input: input(after) },
    { id: 'outcomes-payloads-after-reversed', pins: 'late payloads arriving newest first (the deploys before the calls, each newest first): the same statuses and roots', input: input(afterReversed) },
    {
      id: 'call-before-deploy-payload',
      pins: 'a call whose contract no held deploy names is refused unknown_contract at arrival (retryable); sent again after the deploy, it is taken and decided at its block',
      input: input([c1.step, d.step, c1.step, blocks[0]!.step, blocks[1]!.step]),
    },
  ];
}

/**
 * A reorganisation `depth` deep: the deploy and a first call below the fork, a second
 * call in the first replaced block; a third call dropped below the fork, its payload
 * arriving after everything (dropped at that block whatever the node re-derived). Variants: the new branch leaves the call out and a
 * later block mines it (pending, then executed at its new height); the new branch holds
 * another spend of its outpoint (dropped); for the shallow depths, the payload arriving
 * after the reorg.
 */
function reorgCases(depth: number, variants: ('remined' | 'dropped' | 'late')[]): CaseInput[] {
  const out: CaseInput[] = [];
  for (const v of variants) {
    const s = new Script(5);
    const d = s.deploy(artifact());
    const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
    const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
    // Dropped below the fork; its payload arrives last, after the reorganisation.
    const c3 = s.call(d.contractId, 'bump', [u64(11n)]);
    const chain: Step[] = [s.mine([d]), s.mine([c1, s.conflict(c3)]), s.mine([c2])];
    if (depth > 1) chain.push(s.empty(depth - 1));
    const window = depth > 144 ? 'deeper than the 144-block undo window: the node re-derives from the journal' : 'within the 144-block undo window: rolled back through the undo logs';
    if (v === 'dropped') {
      const reorg = s.reorg(depth, depth + 1, { drop: [c2], txs: [s.conflict(c2)] });
      out.push({ id: `reorg-${depth}-dropped`, pins: `a reorganisation ${depth} deep (${window}) whose new branch spends the call's outpoint otherwise: the call is dropped, its effect undone, every root of the new branch`, input: { anchor: s.anchor, steps: [d.step, c1.step, c2.step, ...chain, CHECK, reorg, c3.step] } });
      continue;
    }
    const reorg = s.reorg(depth, depth + 1, { drop: [c2] });
    const remine = s.mine([c2]);
    if (v === 'remined') {
      out.push({
        id: `reorg-${depth}-remined`,
        pins: `a reorganisation ${depth} deep (${window}) leaving the call out (checked: pending again, no position, its effect undone), then a block mining it: executed at its new height, the roots as if the old branch never was; a call dropped below the fork, its payload last: dropped`,
        input: { anchor: s.anchor, steps: [d.step, c1.step, c2.step, ...chain, CHECK, reorg, CHECK, remine, c3.step] },
      });
    } else {
      out.push({ id: `reorg-${depth}-payload-after`, pins: `the call's payload arrives after the reorganisation ${depth} deep and the block mining it again: the same answer as reorg-${depth}-remined`, input: { anchor: s.anchor, steps: [d.step, c1.step, ...chain, reorg, remine, c2.step, c3.step] } });
    }
  }
  return out;
}

/** A late payload deeper than the reorg window (150 blocks above its block, within the 1,008 blocks of undo logs kept for replays). */
function deepLate(): CaseInput[] {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const steps = [d.step, s.mine([d]), s.mine([c1]), s.empty(150), c1.step];
  return [{ id: 'late-payload-150-deep', pins: 'a call whose payload arrives 150 blocks after its anchor: executed at its block, every root above it rewritten as if held from the start', input: { anchor: s.anchor, steps } }];
}

/** Deploys and calls in one block, and a reorganisation that moves a deploy above the call to it. */
function orderCases(): CaseInput[] {
  const s = new Script(4);
  const d = s.deploy(artifact());
  const before = s.call(d.contractId, 'bump', [u64(5n)]);
  const after = s.call(d.contractId, 'bump', [u64(7n)]);
  const sameBlock: CaseInput = {
    id: 'deploy-and-calls-in-one-block',
    pins: 'in one block a call placed before its contract\'s deploy is invalid (unknown_contract), one placed after it executes: the order is tx_index, not arrival',
    input: { anchor: s.anchor, steps: [d.step, after.step, before.step, s.mine([before, d, after])] },
  };
  const m = new Script(3);
  const md = m.deploy(artifact());
  const mc = m.call(md.contractId, 'bump', [u64(5n)]);
  const steps = [md.step, mc.step, m.mine([md]), m.mine([mc]), CHECK, m.reorg(2, 1, { first: [mc] }), CHECK, m.mine([md])];
  const moved: CaseInput = {
    id: 'reorg-moves-deploy-above-call',
    pins: 'a reorganisation 2 deep whose new branch mines the call first and its deploy a block later: the call, executed on the old branch, is invalid (unknown_contract) on the new one; the contract active at its new height',
    input: { anchor: m.anchor, steps },
  };
  return [sameBlock, moved];
}

/** Blocks of several steps as one `blocks` step. */
function joined(...steps: Step[]): Step {
  return { kind: 'blocks', blocks: steps.flatMap((x) => x.blocks as string[]) };
}

/**
 * A reorganisation there and back (two devnet chains built alike share every block up to
 * the fork): on branch B another call claims call_id 1 first, so the call of branch A is
 * invalid there; back on A it executes again, and every answer is what branch A alone gives.
 * Then restarts: memory reloaded from the store, a late payload and a reorganisation after one.
 */
function flipFlopAndRestart(): CaseInput[] {
  const build = () => {
    const s = new Script(4);
    const d = s.deploy(artifact());
    const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
    const dup = s.call(d.contractId, 'bump', [u64(2n)], 1n);
    return { s, d, c1, dup, prefix: s.mine([d]) };
  };
  const a = build();
  const b = build();
  const branchA = [a.s.mine([a.c1]), a.s.empty(3)];
  const branchB = [b.s.mine([b.dup, b.c1]), b.s.empty(1)];
  if (JSON.stringify(a.prefix) !== JSON.stringify(b.prefix)) throw new Error('history: the two chains differ below their fork');
  const payloads = [a.d.step, a.c1.step, a.dup.step];
  const cases: CaseInput[] = [
    {
      id: 'flip-flop-reference',
      pins: 'branch A alone: the call executed, the other claim of call_id 1 (never mined on A) pending',
      input: { anchor: a.s.anchor, steps: [...payloads, a.prefix, joined(...branchA)] },
    },
    {
      id: 'flip-flop',
      pins: 'A, then a reorganisation to B (another call claims call_id 1 first: the call of A is invalid there), then back to A: every answer is flip-flop-reference\'s',
      input: { anchor: a.s.anchor, steps: [...payloads, a.prefix, branchA[0]!, CHECK, { kind: 'reorg', depth: 1, blocks: joined(...branchB).blocks }, CHECK, { kind: 'reorg', depth: 2, blocks: joined(...branchA).blocks }] },
    },
  ];
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const before = [d.step, c1.step, s.mine([d]), s.mine([c1]), s.mine([c2]), s.empty(3), CHECK, RESTART];
  cases.push({
    id: 'restart',
    pins: 'a restart keeps every answer; after it a reorganisation 4 deep through the stored undo logs, a late payload whose block the reorganisation replaced, another restart: the answers of a node never stopped',
    input: { anchor: s.anchor, steps: [...before, CHECK, s.reorg(4, 5), c2.step, CHECK, RESTART, s.empty(1)] },
  });
  return cases;
}

/**
 * Two calls claiming one call_id in consecutive blocks: held from the start, the first
 * executes and the second is invalid; when the first's payload arrives only after both
 * blocks, the second executed meanwhile, and the late payload's replay must end where
 * the node holding both from the start is. And a late payload whose block a
 * reorganisation then removes: pending again, then executed where mined anew.
 */
function lateCases(): CaseInput[] {
  const s = new Script(4);
  const d = s.deploy(artifact());
  const first = s.call(d.contractId, 'bump', [u64(5n)], 1n);
  const second = s.call(d.contractId, 'bump', [u64(7n)], 1n);
  const blocks = [s.mine([d]), s.mine([first]), s.mine([second])];
  const r = new Script(3);
  const rd = r.deploy(artifact());
  const rc = r.call(rd.contractId, 'bump', [u64(5n)]);
  const rsteps = [rd.step, r.mine([rd]), r.mine([rc]), rc.step, CHECK, r.reorg(1, 2, { drop: [rc] }), CHECK, r.mine([rc])];
  return [
    { id: 'claims-held-from-start', pins: 'two calls claiming one call_id in consecutive blocks, both held before: the first executes, the second is invalid (duplicate_call_id)', input: { anchor: s.anchor, steps: [d.step, first.step, second.step, ...blocks] } },
    { id: 'claims-first-arrives-late', pins: 'the same with the first call\'s payload arriving after both blocks: the second, executed meanwhile (checked), is invalid once the first is replayed at its block: the answers of claims-held-from-start', input: { anchor: s.anchor, steps: [d.step, second.step, ...blocks, CHECK, first.step] } },
    { id: 'late-payload-then-reorg', pins: 'a late payload replayed at its block, then a reorganisation removing that block: pending again, its effect undone; executed where mined anew', input: { anchor: r.anchor, steps: rsteps } },
  ];
}

/** What intake answers for payloads that are repeats, conflicts or bound to another anchor, and that none of them changes a root. */
function arrivalCases(): CaseInput[] {
  const s = new Script(5);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const other = s.call(d.contractId, 'bump', [u64(6n)]);
  const step = (p: Payload, over: Step): Step => ({ ...p.step, ...over });
  // The same anchor txid with another envelope (the second call's): a conflict.
  const conflicting = step(c1, { payload: other.step.payload });
  // The second call's envelope sent under the first call's anchor (bytes and txid): its stamp names another envelope hash.
  const rebound = step(other, { txid: c1.txid, anchor_tx: c1.hex });
  // An anchor_tx that is not the transaction the txid names (a txid the node does not hold: a repeat is answered before its anchor is read).
  const wrongAnchor = step(other, { anchor_tx: c1.hex });
  // Another contract's artifact under a counter deploy's anchor: its stamp names another code hash.
  const { metadata: _m, ...emitter } = fixtureArtifact('emitter.svc');
  const deployElsewhere = step(s.deploy(artifact()), { artifact: emitter });
  const deployBlock = s.mine([d]);
  return [
    {
      id: 'arrivals-repeat-conflict-binding',
      pins: 'intake: a repeat is taken (no change, before and after its block), another payload under a held txid is a conflict, an anchor_tx that is not the txid\'s transaction is bad_request, a deploy whose stamp names another code hash is code_hash_mismatch; only the first call is decided',
      input: { anchor: s.anchor, steps: [d.step, d.step, c1.step, c1.step, conflicting, wrongAnchor, deployBlock, s.mine([c1]), c1.step, deployElsewhere] },
    },
    {
      id: 'arrivals-anchor-mismatch',
      pins: 'a call whose anchor carries another envelope\'s stamp is refused anchor_mismatch and never held, whatever its block holds',
      input: { anchor: s.anchor, steps: [d.step, rebound, deployBlock] },
    },
  ];
}

/** The light-node twins of some cases: blocks applied as their header alone; the answers must be the full node's. */
const LIGHT = ['outcomes-payloads-before-blocks', 'outcomes-payloads-after-blocks', 'call-before-deploy-payload', 'deploy-and-calls-in-one-block', 'reorg-1-remined', 'reorg-6-dropped', 'reorg-6-payload-after', 'reorg-moves-deploy-above-call', 'flip-flop', 'restart', 'reorg-150-remined', 'claims-first-arrives-late', 'late-payload-then-reorg', 'outcomes-payloads-with-blocks', 'reorg-1-dropped', 'reorg-1-payload-after', 'reorg-144-remined', 'late-payload-150-deep', 'claims-held-from-start', 'arrivals-repeat-conflict-binding'];

function lightTwins(cases: CaseInput[]): CaseInput[] {
  return LIGHT.map((id) => {
    const c = cases.find((x) => x.id === id);
    if (!c) throw new Error(`history: no case ${id} to run as a light node`);
    return { id: `light-${id}`, pins: `a light node (blocks as their header alone; a payload brings its anchor's inclusion once confirmed; the deferred checks place the rest): the same statuses and roots as ${id}`, input: { ...c.input, node: 'light' } };
  });
}

export function historyArea(): Area {
  const cases = allCases();
  return { 'history.run': [...cases, ...lightTwins(cases), ...blocksOnlyTwins(cases)] };
}

/**
 * The full-node cases whose every decision a node reading blocks in full makes from the
 * blocks themselves (stamps, spends of named outpoints, its memory of recent blocks' spends):
 * without the deferred checks (which place and drop from the chain endpoint, and would
 * repair a block's wrong decision afterwards) the answers must be the same. Left out:
 * reorg-150-remined, whose call dropped below the fork sends its payload after the
 * re-derivation (the node's memory of recent spends does not reach that block: only a
 * deferred check drops it, docs/STATE.md), and the light-node cases.
 */
const BLOCKS_ONLY = ['outcomes-payloads-before-blocks', 'outcomes-payloads-with-blocks', 'outcomes-payloads-after-blocks', 'outcomes-payloads-after-reversed', 'call-before-deploy-payload', 'deploy-and-calls-in-one-block', 'reorg-moves-deploy-above-call', 'reorg-1-remined', 'reorg-1-dropped', 'reorg-1-payload-after', 'reorg-6-remined', 'reorg-6-dropped', 'reorg-6-payload-after', 'reorg-144-remined', 'late-payload-150-deep', 'flip-flop-reference', 'flip-flop', 'restart', 'claims-held-from-start', 'claims-first-arrives-late', 'late-payload-then-reorg', 'arrivals-repeat-conflict-binding', 'arrivals-anchor-mismatch'];

function blocksOnlyTwins(cases: CaseInput[]): CaseInput[] {
  return BLOCKS_ONLY.map((id) => {
    const c = cases.find((x) => x.id === id);
    if (!c) throw new Error(`history: no case ${id} to run without deferred checks`);
    return { id: `blocks-only-${id}`, pins: `a full node deciding from the blocks it reads alone (no deferred checks: each block's own decisions, drops and late payloads' placements): the same statuses and roots as ${id}`, input: { ...c.input, deferred: false } };
  });
}

function allCases(): CaseInput[] {
  return [...outcomes(), ...orderCases(), ...reorgCases(1, ['remined', 'dropped', 'late']), ...reorgCases(6, ['remined', 'dropped', 'late']), ...reorgCases(144, ['remined']), ...reorgCases(150, ['remined']), ...deepLate(), ...flipFlopAndRestart(), ...lateCases(), ...arrivalCases()];
}

/**
 * Histories added because the mutation run (conformance/README.md, "The mutation run")
 * found rules of the ledger's header chain, evidence blocks and journal amendments
 * (src/writer/ledger/evidence.ts) that no other history pinned: a drop recorded in a
 * block's journal entry after the block (a late payload whose outpoint the block spent)
 * and then undone by a reorganisation; a light node connecting part of a longer announced
 * run of headers, with evidence filed under a block above the first of the blocks it
 * connects at once; late payloads of two blocks taken in one acceptance batch. Each has a full-node twin (and a twin without deferred checks), so
 * the test's twin checks pin that the way a node learns a block changes nothing.
 */
import { Transaction } from 'bitcoinjs-lib';
import { CHECK, RESTART, Script, artifact, u64, type Payload, type Step } from './history.js';
import { headersOf } from './history-headers.js';
import { inclusion, withEvidence } from './ledger-claims-kills.js';
import type { Area, CaseInput } from './kit.js';

/** Blocks of several `blocks` steps as one `blocks` step. */
function joined(...steps: Step[]): Step {
  return { kind: 'blocks', blocks: steps.flatMap((x) => x.blocks as string[]) };
}

/**
 * A call whose named outpoint another transaction spends in block 2, its payload arriving
 * after that block (dropped there: recorded in block 2's journal entry and undo log as the
 * acceptance's amendment), a restart, then a reorganisation 1 deep whose new block 2 leaves
 * the spend out: the drop is undone with the block (pending again, in memory and on disk:
 * a restart follows), and a block 2 mining the call's anchor (one more reorganisation) executes it.
 */
function lateDropThenReorg(): CaseInput[] {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  const spend = s.conflict(c);
  const b1 = s.mine([d]);
  const b2 = s.mine([spend]);
  // The new branch leaves the other spend out (it no longer confirms); another block 2 then
  // mines the call's anchor (the spend, back in the devnet's mempool, conflicts with it there).
  const spendTx = { txid: Transaction.fromHex(spend).getId() } as Payload;
  const reorg = s.reorg(1, 1, { drop: [spendTx] });
  const mined = s.reorg(1, 1, { txs: [c.hex] });
  const input = { anchor: s.anchor, steps: [d.step, b1, b2, c.step, CHECK, RESTART, CHECK, reorg, CHECK, RESTART, mined] };
  const id = 'late-drop-then-reorg';
  return [
    {
      id,
      pins: 'a call whose payload arrives after the block spending its outpoint otherwise is dropped at that block (across a restart); a reorganisation removing the block makes it pending again (across a restart), and the block mining its anchor executes it',
      input,
    },
    { id: `light-${id}`, pins: `a light node, dropped by the spend's evidence (a deferred check) after the block, the drop undone by the reorganisation: the answers of ${id}`, input: { ...input, node: 'light' } },
    { id: `blocks-only-${id}`, pins: `a full node without deferred checks (the drop found in its memory of the block's spends): the answers of ${id}`, input: { ...input, deferred: false } },
  ];
}

/**
 * The endpoint announces 20 blocks (the deploy's, the call's, 18 empty) before the node
 * connects any; the deploy's and the call's payloads arrive with their inclusions while
 * the blocks are only headers, and the node connects the first 17 in one update, then the
 * rest. Without deferred checks, a light node decides each block from the evidence filed
 * under it: the call's, filed under the second block of the update, executes there. The
 * 17 headers a light node reads back are more than it reads one by one.
 */
function partOfLongerRun(): CaseInput[] {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  const b1 = s.mine([d]);
  const b2 = s.mine([c]);
  const rest = s.empty(18);
  const empties = rest.blocks as string[];
  const first = joined(b1, b2, { kind: 'blocks', blocks: empties.slice(0, 15) });
  const last = { kind: 'blocks', blocks: empties.slice(15) };
  const input = { anchor: s.anchor, deferred: false, steps: [headersOf(b1, b2, rest), d.step, c.step, CHECK, first, CHECK, last] };
  const id = 'headers-ahead-run-alone';
  return [
    {
      id,
      pins: 'a deploy and a call sent while the endpoint shows their blocks above the node\'s tip, then 17 of the 20 announced blocks connected at once, then the rest, with no deferred check: the deploy active and the call executed at their blocks',
      input,
    },
    {
      id: `light-${id}`,
      pins: `a light node holding the 20 headers: it connects 17 of them read back from its store (no more), each block decided from the evidence filed under it (the call's under the update's second block); the answers of ${id}`,
      input: { ...input, node: 'light' },
    },
  ];
}

/**
 * Three calls whose payloads arrive together after their blocks (a `payloads` step: one
 * acceptance batch, as a peer's GetPayloads answer brings them), two of them anchored in
 * one block (the later one first) and one in the next; no deferred check. Each is placed
 * at its block in that one batch (a light node by the inclusion it comes with, a full
 * node by the stamp it saw) and replayed there.
 */
function latePayloadsTogether(): CaseInput[] {
  const s = new Script(4);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const c3 = s.call(d.contractId, 'bump', [u64(11n)]);
  const blocks = [s.mine([d]), s.mine([c1, c2]), s.mine([c3])];
  const input = { anchor: s.anchor, deferred: false, steps: [...blocks, d.step, CHECK, { kind: 'payloads', payloads: [c2.step, c1.step, c3.step] }] };
  const id = 'late-payloads-together-alone';
  return [
    {
      id,
      pins: 'three late calls taken in one acceptance batch (two anchored in one block, the later first, one in the next), no deferred check: each executed at its block in tx_index order, every root as if held from the start',
      input,
    },
    { id: `light-${id}`, pins: `a light node, the three placed by their inclusions in one batch (two in one block's journal entry, one in the next's): the answers of ${id}`, input: { ...input, node: 'light' } },
  ];
}

/**
 * A late call whose node stops as soon as it is taken, before the replay from its block
 * runs, and starts again on its store (a `call` step with stop_before_replay): the node
 * resumes the replay it owes (a light node knows it owes one from the stamp its placement
 * stored); no deferred check places the call afresh.
 */
function stopBeforeReplay(): CaseInput[] {
  const s = new Script(2);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(5n)]);
  const input = { anchor: s.anchor, deferred: false, steps: [s.mine([d]), s.mine([c]), s.empty(1), d.step, { ...c.step, stop_before_replay: true }, CHECK] };
  const id = 'late-payload-stop-before-replay-alone';
  return [
    { id, pins: 'a late call taken, the node stopping before its replay runs: started again, it replays from the call\'s block, the call executed there and every root above it rewritten', input },
    { id: `light-${id}`, pins: `a light node, the call placed by its inclusion: the stamp its placement stored tells the started node the replay it owes; the answers of ${id}`, input: { ...input, node: 'light' } },
  ];
}

/**
 * A call dropped by block 3 after the block (its payload late), then a late call of
 * block 2, whose replay rewinds block 3 and applies it again from its journal entry: the
 * drop recorded there drops the call again. No deferred check, which would drop it anew.
 */
function lateDropThenReplay(): CaseInput[] {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const dropped = s.call(d.contractId, 'bump', [u64(5n)]);
  const late = s.call(d.contractId, 'bump', [u64(7n)]);
  const steps = [d.step, s.mine([d]), s.mine([late]), s.mine([s.conflict(dropped)]), dropped.step, CHECK, late.step];
  return [{ id: 'late-drop-then-replay-alone', pins: 'a call dropped at its block after the block (its payload late), then a replay through that block for an earlier late call, with no deferred check: still dropped (the drop is in the block\'s journal entry), the late call executed', input: { anchor: s.anchor, deferred: false, steps } }];
}

/**
 * A light node whose header chain gets shorter: the endpoint announces three blocks, then
 * its best chain goes another way with one block in their place, which the node connects
 * (its header follower stores that block's header with truncate: the three announced
 * headers above it go), and restarts (its header tip read back from the highest header it
 * stores). A call's payload is then sent again with its confirmation in the
 * new branch's second block, not announced yet: no header is held at that height, so the
 * claim is filed under the block and places the call when the block comes. (The payload
 * is a repeat, which skips the check of a claim against a stored header, so a header of
 * the abandoned branch left at that height would not change this answer:
 * ledger-truncate-kills.ts plays the chain that pins the truncation.)
 */
function shorterHeaderChain(): CaseInput[] {
  const s = new Script(2);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(9n)]);
  const b1 = s.mine([d]);
  const abandoned = s.empty(3);
  const replaced = s.reorg(3, 1);
  const b2Step = s.mine([c]);
  const b2 = s.chain.tip;
  const steps: Step[] = [
    b1,
    d.step,
    c.step,
    { kind: 'headers', blocks: abandoned.blocks },
    { kind: 'blocks', blocks: replaced.blocks },
    // Started again, the node takes its header tip from the highest header it stores.
    RESTART,
    withEvidence(c, { confirmed: inclusion(b2, b2.txids.indexOf(c.txid)) }),
    b2Step,
    CHECK,
  ];
  return [{
    id: 'header-chain-shorter-restart-light',
    pins: 'a light node whose announced header chain is replaced by a shorter one keeps no header of the abandoned branch above it, across a restart: a confirmation naming the new branch\'s next block, sent before that block is announced, is filed under it and places the call there (executed)',
    input: { anchor: s.anchor, node: 'light', deferred: false, steps },
  }];
}

export function ledgerHeadersKillArea(): Area {
  return { 'history.run': [...lateDropThenReorg(), ...partOfLongerRun(), ...latePayloadsTogether(), ...stopBeforeReplay(), ...lateDropThenReplay(), ...shorterHeaderChain()] };
}

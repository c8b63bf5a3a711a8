/**
 * Histories in which the chain endpoint is ahead of the node (`headers` steps,
 * conformance/README.md "Histories"): a light node holds the headers of blocks it has not
 * connected yet (its header sync), and evidence naming those blocks, a payload's
 * inclusion or a spend of a call's named outpoint, is filed under its block and decided
 * when the node connects it (docs/STATE.md, "Bitcoin evidence": evidence naming a block
 * above the processed tip waits for it; evidence whose block is not the node's at that
 * height is left out). Each case has a full-node twin: the answers are the same, so the
 * test's twin check pins that a light node's way of learning the block changes nothing.
 */
import { CHECK, RESTART, Script, artifact, u64, type Step } from './history.js';
import type { Area, CaseInput } from './kit.js';

/** A step playing the node's deferred checks now: with `deferred: false`, the only time they run. */
export const DEFERRED: Step = { kind: 'deferred' };

/** The blocks of several `blocks` steps as the `headers` step announcing them. */
function headersOf(...steps: Step[]): Step {
  return { kind: 'headers', blocks: steps.flatMap((x) => x.blocks as string[]) };
}

/**
 * The endpoint announces three blocks before the node connects any: the deploy's, one
 * holding a call and another spend of a second call's outpoint, and one holding a third
 * call. Evidence for the first two arrives while they are only headers (the deploy and the
 * second call held before: the deferred checks; the first call sent after the headers,
 * with its inclusion); a restart in between; then the blocks, the third call's payload
 * last (late).
 */
function ahead(): CaseInput[] {
  const s = new Script(5);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const spent = s.call(d.contractId, 'bump', [u64(11n)]);
  const b1 = s.mine([d]);
  const b2 = s.mine([c1, s.conflict(spent)]);
  const b3 = s.mine([c2]);
  const steps: Step[] = [d.step, spent.step, headersOf(b1, b2, b3), c1.step, CHECK, RESTART, b1, CHECK, { kind: 'blocks', blocks: [...(b2.blocks as string[]), ...(b3.blocks as string[])] }, CHECK, c2.step];
  const input = { anchor: s.anchor, steps };
  return [
    {
      id: 'headers-ahead',
      pins: 'evidence for blocks the endpoint shows above the node\'s tip (a deploy\'s and a call\'s anchors, another spend of a call\'s outpoint) waits for those blocks (all pending until then, across a restart): the deploy active and the call executed at their blocks, the spent call dropped there, a late payload replayed',
      input,
    },
    { id: 'light-headers-ahead', pins: 'a light node holding those blocks\' headers before it connects them: the evidence filed under each block is checked against its header and placed when the block is connected; the answers of headers-ahead', input: { ...input, node: 'light' } },
  ];
}

/**
 * The endpoint announces a block holding a call, the call's payload arrives with its
 * inclusion there, then the endpoint's chain goes another way at that height before the
 * node connected the block (two blocks without the call), and a later block mines the call.
 */
function replacedScript(): { anchor: Script['anchor']; steps: Step[] } {
  const s = new Script(3);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const b1 = s.mine([d]);
  const gone = s.mine([c1]);
  const other = s.reorg(1, 2, { drop: [c1] });
  return { anchor: s.anchor, steps: [d.step, b1, headersOf(gone), c1.step, CHECK, { kind: 'blocks', blocks: other.blocks }, CHECK, s.mine([c1])] };
}

function aheadReplaced(): CaseInput[] {
  const input = replacedScript();
  return [
    {
      id: 'headers-ahead-replaced',
      pins: 'a call whose anchor\'s block the endpoint announced, then replaced before the node read it (the node never connected it): pending on the new blocks, executed where mined anew',
      input,
    },
    {
      id: 'light-headers-ahead-replaced',
      pins: 'a light node whose header chain held the announced block: the inclusion filed under it belongs to no block of the new chain (left alone, the call pending), then executed where mined anew; the answers of headers-ahead-replaced',
      input: { ...input, node: 'light' },
    },
  ];
}

/**
 * The deferred checks played once, right after the endpoint announces three blocks (they
 * file the evidence for them), and never again: what the node then decides at each block
 * comes from the evidence filed under it (a light node) or from the block itself (a full
 * node), with nothing to repair it afterwards. Two anchors and two spends of named
 * outpoints in one block; a late payload sent with its inclusion.
 */
function aheadAlone(): CaseInput[] {
  const s = new Script(7);
  const d = s.deploy(artifact());
  const c1 = s.call(d.contractId, 'bump', [u64(5n)]);
  const c4 = s.call(d.contractId, 'bump', [u64(3n)]);
  const c2 = s.call(d.contractId, 'bump', [u64(7n)]);
  const spentA = s.call(d.contractId, 'bump', [u64(11n)]);
  const spentB = s.call(d.contractId, 'bump', [u64(13n)]);
  const b1 = s.mine([d]);
  const b2 = s.mine([c4, s.conflict(spentB), c1, s.conflict(spentA)]);
  const b3 = s.mine([c2]);
  const steps: Step[] = [d.step, spentA.step, spentB.step, headersOf(b1, b2, b3), DEFERRED, c1.step, c4.step, CHECK, RESTART, b1, CHECK, { kind: 'blocks', blocks: [...(b2.blocks as string[]), ...(b3.blocks as string[])] }, CHECK, c2.step];
  const input = { anchor: s.anchor, deferred: false, steps };
  return [
    {
      id: 'headers-ahead-alone',
      pins: 'evidence for announced blocks filed once (one deferred check) and nothing after: the deploy active, two calls of one block executed in tx_index order, two calls whose outpoints that block spends dropped, a late payload replayed; each block decides from what it holds',
      input,
    },
    { id: 'light-headers-ahead-alone', pins: 'a light node, the same: each block read as its header alone is decided from the evidence filed under it (two anchors, two spends), checked against its header; the answers of headers-ahead-alone', input: { ...input, node: 'light' } },
  ];
}

/** aheadReplaced's history with the deferred checks played only at its end: the inclusion filed under the replaced block must place nothing on the new chain. */
function aheadReplacedAlone(): CaseInput[] {
  const { anchor, steps } = replacedScript();
  const input = { anchor, deferred: false, steps: [...steps, CHECK, DEFERRED] };
  return [
    { id: 'headers-ahead-replaced-alone', pins: 'headers-ahead-replaced with one deferred check, at the end: pending until the block mining the call anew (a full node executes it there at once)', input },
    { id: 'headers-ahead-replaced-alone-light', pins: 'a light node, the same: the inclusion filed under the replaced block places nothing on the new chain; the call pending until the deferred check places it at its new block; the answers of headers-ahead-replaced-alone at the end', input: { ...input, node: 'light' } },
  ];
}

export function historyHeadersArea(): Area {
  const cases = [...ahead(), ...aheadReplaced()];
  // A full node reading those blocks in full decides them from the blocks alone: without the deferred checks, the same answers.
  const blocksOnly = cases
    .filter((c) => !c.id.startsWith('light-'))
    .map((c) => ({ id: `blocks-only-${c.id}`, pins: `a full node deciding from the blocks it reads alone (no deferred checks: the evidence the endpoint would give is never asked for): the same statuses and roots as ${c.id}`, input: { ...c.input, deferred: false } }));
  return { 'history.run': [...cases, ...blocksOnly, ...aheadAlone(), ...aheadReplacedAlone()] };
}

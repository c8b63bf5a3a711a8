/**
 * A history added because the mutation run (conformance/README.md, "The mutation run")
 * found that no history read what a light node's header chain keeps above a run that
 * replaces it (src/writer/ledger/evidence.ts, putHeaders with truncate): the endpoint's
 * best chain gets shorter, the node restarts, and the chain it left comes back. A light
 * node's header follower starts from the header tip it reads back from its store; headers
 * of the left branch kept above the shorter chain would be that tip, which its header sync
 * then takes for the endpoint's (the same block) and its blocks are read back from a
 * stored chain that does not link. With its full-node twin, so the test's twin check pins
 * that the light node ends as the full one.
 */
import { CHECK, RESTART, Script, artifact, u64, type Step } from './history.js';
import { headersOf } from './history-headers.js';
import type { Area, CaseInput } from './kit.js';

/**
 * The deploy in block 1; the endpoint announces three blocks above it (the second holding
 * a call's anchor), then its best chain goes another way with one block in their place
 * (the call pending again), which the node connects; it restarts, and the endpoint's best
 * chain is the three announced blocks again, which the node connects in a reorganisation
 * one deep: the call executed in the second. The deferred checks place the call for the
 * light node (its inclusion, filed under the announced block and again under the same
 * block when it comes back).
 */
function shorterThenBack(): CaseInput[] {
  const s = new Script(2);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(3n)]);
  const b1 = s.mine([d]);
  const left: Step = { kind: 'blocks', blocks: [s.empty(1), s.mine([c]), s.empty(1)].flatMap((x) => x.blocks as string[]) };
  const shorter = s.reorg(3, 1, { drop: [c] });
  const steps: Step[] = [
    d.step,
    c.step,
    b1,
    headersOf(left),
    CHECK,
    { kind: 'blocks', blocks: shorter.blocks },
    CHECK,
    // Started again, a light node takes its header tip from the highest header it stores.
    RESTART,
    { kind: 'reorg', depth: 1, blocks: left.blocks },
    CHECK,
  ];
  const id = 'header-chain-shorter-then-back';
  const input = { anchor: s.anchor, steps };
  return [
    {
      id,
      pins: 'the endpoint announces three blocks (a call anchored in the second), then its best chain goes another way with one block in their place (the call pending), the node restarts, and the three come back (a reorganisation one deep): the call executed in the second of them',
      input,
    },
    {
      id: `light-${id}`,
      pins: `a light node: its header chain, shortened to the one block, keeps no header of the left branch above it, so after the restart its header tip is that block and its header sync stores the left branch again from the fork (a header tip read back at the left branch's top would be taken for the endpoint's, and the blocks read back from a stored chain that does not link); the answers of ${id}`,
      input: { ...input, node: 'light' },
    },
  ];
}

export function ledgerTruncateKillArea(): Area {
  return { 'history.run': shorterThenBack() };
}

/**
 * Cases added because the mutation run found rules of the VM, its verifier and the state
 * trees that no other case pinned (conformance/README.md, "The mutation run"); each list
 * names the rules it pins and goes to the end of its operation's file.
 */
import type { Area } from './kit.js';
import { verifierFlowCases } from './verifier-flow.js';
import { executionVmCases } from './execution-vm.js';
import { executionValueEdgeCases } from './execution-values-vm.js';
import { contractsCollisionCases, storageCollisionCases, summaryOrderCases, trieProofCraftedCases, decisionLeafCases } from './roots-vm.js';

export function vmKillArea(): Area {
  return {
    'verifier.artifact': verifierFlowCases(),
    'execution.call': [...executionVmCases(), ...executionValueEdgeCases()],
    'roots.storage-writes': storageCollisionCases(),
    'roots.contracts': contractsCollisionCases(),
    'roots.summary': summaryOrderCases(),
    'roots.trie-proof': trieProofCraftedCases(),
    'decision.leaf-decode': decisionLeafCases(),
  };
}

/**
 * Cases added because the mutation run (conformance/README.md, "The mutation run") found a changed
 * rule no other case noticed: each list names the rule it pins; they go to the end of
 * their operation's file, after the area's own cases.
 */
import type { Area } from './kit.js';
import { executionValueCases } from './execution-values.js';
import { networkCases, networkNextWorkCases } from './networks.js';
import { envelopePrefixCases, leafPrefixCases } from './truncations.js';
import { stampEdgeCases } from './stamp-edges.js';
import { stringEdgeCases } from './value-edges.js';
import { verifierEdgeCases } from './verifier-edges.js';
import { storageWriteCases } from './storage-writes.js';

export function mutationKillArea(): Area {
  return {
    'execution.call': executionValueCases(),
    'headers.network': networkCases(), 'headers.next-work': networkNextWorkCases(),
    'codec.envelope-decode': envelopePrefixCases(),
    'decision.leaf-decode': leafPrefixCases(),
    'binding.stamp': stampEdgeCases(),
    'codec.value-binary': stringEdgeCases(),
    'verifier.artifact': verifierEdgeCases(),
    'roots.storage-writes': storageWriteCases(),
  };
}

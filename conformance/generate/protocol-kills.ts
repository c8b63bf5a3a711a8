/**
 * Cases the mutation run over the protocol package's codecs and Bitcoin rules (outside
 * its vm/ and state/ folders) showed missing: each list pins the rule its file names, and
 * goes to the end of its operation's file, after the other areas' cases.
 */
import type { Area } from './kit.js';
import { leafValueCases } from './leaf-values.js';
import { blockEdgeCases } from './block-edges.js';
import { headerNetworkCases } from './header-networks.js';
import { branchFoldEdgeCases, coinbaseDepthEdgeCases, coinbaseFirstEdgeCases, evidenceCheckEdgeCases, headerMatchEdgeCases, provenTxEdgeCases } from './evidence-edges.js';
import { bindingCallEdgeCases, stampPushEdgeCases } from './binding-edges.js';
import { nameEdgeCases } from './name-edges.js';
import { compactEdgeCases, nextWorkEdgeCases, powEdgeRunCases } from './compact-edges.js';
import { artifactEdgeCases, envelopeDecodeEdgeCases, envelopeEncodeEdgeCases, valueBinaryEdgeCases } from './envelope-edges.js';

export function protocolKillArea(): Area {
  return {
    'decision.leaf-decode': leafValueCases(),
    'blocks.parse': blockEdgeCases(),
    'headers.run': [...headerNetworkCases(), ...powEdgeRunCases()],
    'headers.compact': compactEdgeCases(),
    'headers.next-work': nextWorkEdgeCases(),
    'evidence.check': evidenceCheckEdgeCases(),
    'evidence.proven-tx': provenTxEdgeCases(),
    'codec.envelope-decode': envelopeDecodeEdgeCases(),
    'codec.envelope-encode': envelopeEncodeEdgeCases(),
    'codec.value-binary': valueBinaryEdgeCases(),
    'verifier.artifact': nameEdgeCases(),
    'evidence.branch-fold': branchFoldEdgeCases(),
    'evidence.header-match': headerMatchEdgeCases(),
    'evidence.coinbase-depth': [...coinbaseDepthEdgeCases(), ...coinbaseFirstEdgeCases()],
    'binding.call': bindingCallEdgeCases(),
    'binding.stamp': stampPushEdgeCases(),
    'codec.artifact': artifactEdgeCases(),
  };
}

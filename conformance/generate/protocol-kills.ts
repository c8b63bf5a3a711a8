/**
 * Cases the mutation run over the protocol package's codecs and Bitcoin rules (outside
 * its vm/ and state/ folders) showed missing: each list pins the rule its file names, and
 * goes to the end of its operation's file, after the other areas' cases.
 */
import type { Area } from './kit.js';
import { leafValueCases } from './leaf-values.js';
import { blockEdgeCases } from './block-edges.js';
import { headerNetworkCases } from './header-networks.js';
import { branchFoldEdgeCases, coinbaseDepthEdgeCases, coinbaseFirstEdgeCases, evidenceCheckEdgeCases, headerMatchEdgeCases, provenTxEdgeCases, witnessSizeEdgeCases } from './evidence-edges.js';
import { bindingCallEdgeCases, stampPushEdgeCases } from './binding-edges.js';
import { nameEdgeCases } from './name-edges.js';
import { intakeRefusalHistoryCases, invalidBytecodeHistoryCases } from './history-intake.js';
import { rangeEdgeCases } from './range-edges.js';
import { compactEdgeCases, nextWorkEdgeCases, powEdgeRunCases, signetClampRunCases } from './compact-edges.js';
import { artifactEdgeCases, envelopeDecodeEdgeCases, envelopeEncodeEdgeCases, signatureEdgeCases, surrogateEdgeCases, valueBinaryEdgeCases } from './envelope-edges.js';

export function protocolKillArea(): Area {
  const witnessSize = witnessSizeEdgeCases();
  return {
    'decision.leaf-decode': leafValueCases(),
    'blocks.parse': blockEdgeCases(),
    'headers.run': [...headerNetworkCases(), ...powEdgeRunCases(), ...signetClampRunCases()],
    'headers.compact': compactEdgeCases(),
    'headers.next-work': nextWorkEdgeCases(),
    'evidence.check': [...evidenceCheckEdgeCases(), ...witnessSize.check],
    'evidence.proven-tx': [...provenTxEdgeCases(), ...witnessSize.proven],
    'codec.envelope-decode': [...envelopeDecodeEdgeCases(), ...signatureEdgeCases()],
    'codec.envelope-encode': envelopeEncodeEdgeCases(),
    'codec.value-binary': [...valueBinaryEdgeCases(), ...surrogateEdgeCases()],
    'verifier.artifact': nameEdgeCases(),
    'evidence.branch-fold': branchFoldEdgeCases(),
    'evidence.header-match': headerMatchEdgeCases(),
    'evidence.coinbase-depth': [...coinbaseDepthEdgeCases(), ...coinbaseFirstEdgeCases()],
    'binding.call': bindingCallEdgeCases(),
    'binding.stamp': stampPushEdgeCases(),
    'codec.artifact': artifactEdgeCases(),
    'history.run': [...intakeRefusalHistoryCases(), ...invalidBytecodeHistoryCases()],
    'execution.call': rangeEdgeCases(),
  };
}

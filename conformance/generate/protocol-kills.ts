/**
 * Cases the mutation run over the protocol package's codecs and Bitcoin rules (outside
 * its vm/ and state/ folders) showed missing: each list pins the rule its file names, and
 * goes to the end of its operation's file, after the other areas' cases.
 */
import type { Area } from './kit.js';
import { leafValueCases } from './leaf-values.js';
import { blockEdgeCases } from './block-edges.js';
import { headerNetworkCases } from './header-networks.js';
import { evidenceCheckEdgeCases, provenTxEdgeCases } from './evidence-edges.js';
import { nameEdgeCases } from './name-edges.js';
import { envelopeDecodeEdgeCases, envelopeEncodeEdgeCases, valueBinaryEdgeCases } from './envelope-edges.js';

export function protocolKillArea(): Area {
  return {
    'decision.leaf-decode': leafValueCases(),
    'blocks.parse': blockEdgeCases(),
    'headers.run': headerNetworkCases(),
    'evidence.check': evidenceCheckEdgeCases(),
    'evidence.proven-tx': provenTxEdgeCases(),
    'codec.envelope-decode': envelopeDecodeEdgeCases(),
    'codec.envelope-encode': envelopeEncodeEdgeCases(),
    'codec.value-binary': valueBinaryEdgeCases(),
    'verifier.artifact': nameEdgeCases(),
  };
}

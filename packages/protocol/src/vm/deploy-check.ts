/**
 * The registration check of a deploy: artifact shape, bytecode verification and code hash.
 * One implementation for the node (a pool task, src/pool/tasks.ts) and the SDK (checked
 * before a deploy is built or broadcast, packages/client/src/sdk.ts), so a client refuses exactly
 * what the node would.
 */
import { NodeError } from '../errors.js';
import { extractCore, codeHash, type ArtifactCore } from '../contract.js';
import { toHex } from '../hash.js';
import { verifyArtifact } from './verifier.js';

export interface CheckedDeploy {
  codeHash: string;
  core: ArtifactCore;
}

/** Throws NodeError (bad_request for the shape, invalid_bytecode with the offset) for an artifact the node refuses. */
export function checkDeploy(body: Record<string, unknown>): CheckedDeploy {
  const core = extractCore(body);
  const v = verifyArtifact(core);
  if (!v.ok) throw new NodeError('invalid_bytecode', `bytecode rejected at offset ${v.offset}: ${v.reason}`, { offset: v.offset, reason: v.reason });
  return { codeHash: toHex(codeHash(core)), core };
}

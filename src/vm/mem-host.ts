/**
 * An in-memory Host: programs and committed storage in maps, a call's writes applied on
 * success. For running contracts without a node: `svc test` (src/cli/contract-test.ts)
 * and the VM's own tests.
 */
import type { ArtifactCore } from '@svc-node/protocol/contract';
import type { ExecResult, Host, Program } from '@svc-node/protocol/vm/types';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The verified program of an artifact; throws when the verifier refuses it. */
export function load(a: ArtifactCore): Program {
  const v = verifyArtifact(a);
  if (!v.ok) throw new Error(`verify failed at ${v.offset}: ${v.reason}`);
  return v.program;
}

export class MemHost implements Host {
  programs = new Map<string, Program>();
  store = new Map<string, Map<string, Uint8Array>>();
  deploy(cid: Uint8Array, a: ArtifactCore | Program): Uint8Array {
    this.programs.set(hex(cid), 'ops' in a ? a : load(a));
    return cid;
  }
  program(c: Uint8Array): Program | undefined {
    return this.programs.get(hex(c));
  }
  storageGet(c: Uint8Array, k: Uint8Array): Uint8Array | undefined {
    return this.store.get(hex(c))?.get(hex(k));
  }
  storageSize(c: Uint8Array): number {
    let n = 0;
    for (const [k, v] of this.store.get(hex(c)) ?? []) n += k.length / 2 + v.length;
    return n;
  }
  apply(r: ExecResult): void {
    if (r.status !== 'executed') return;
    for (const w of r.writes) {
      let m = this.store.get(hex(w.contractId));
      if (!m) this.store.set(hex(w.contractId), (m = new Map()));
      if (w.value === null) m.delete(hex(w.key));
      else m.set(hex(w.key), w.value);
    }
  }
}

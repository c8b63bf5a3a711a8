/**
 * `npm run conformance:generate`: rewrites conformance/vectors/ from the node's code.
 * Every file is OPERATION.json, a list of cases {id, pins, input, expected[, note]} whose
 * `expected` is svc-node's answer (svc-node-answers.ts). Deterministic: fixed keys and
 * seeds, no clock, sorted keys, so a second run writes identical bytes and a changed rule
 * shows as a diff of the vectors.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initEcc } from '@svc-node/protocol/bitcoin';
import { canonicalJson, fill, type Area, type CaseInput } from './kit.js';
import { codecArea } from './codec.js';
import { bindingArea } from './binding.js';
import { verifierArea } from './verifier.js';
import { proofArea, rootsArea, summaryArea } from './roots.js';
import { evidenceArea } from './evidence.js';
import { executionArea } from './execution.js';
import { headersArea } from './headers.js';
import { peersArea } from './peers.js';
import { decisionsArea } from './decisions.js';
import { blocksArea } from './blocks.js';
import { mutationKillArea } from './mutation-kills.js';
import { protocolKillArea } from './protocol-kills.js';
import { protocolKillArea2 } from './protocol-kills-2.js';
import { historyArea } from './history.js';
import { vmKillArea } from './vm-kills.js';
import { ledgerApplyKillArea } from './ledger-apply-kills.js';
import { historyHeadersArea } from './history-headers.js';
import { ledgerClaimsKillArea } from './ledger-claims-kills.js';
import { ledgerHeadersKillArea } from './ledger-headers-kills.js';
import { ledgerRewindKillArea } from './ledger-rewind-kills.js';
import { headerTimewarpArea } from './header-timewarp.js';
import { ledgerDeepKillArea } from './ledger-deep-kills.js';
import { ledgerTruncateKillArea } from './ledger-truncate-kills.js';
import { executeCase } from '../adapters/svc-node-answers.js';
import { OPINFO } from '@svc-node/protocol/vm/isa';

/** conformance/vectors, found from the compiled location dist/conformance/generate/main.js. */
export const vectorsDir = fileURLToPath(new URL('../../../conformance/vectors/', import.meta.url));

/** Every vector file's name and text. */
export async function generateVectors(): Promise<Map<string, string>> {
  initEcc();
  const areas: Area[] = [codecArea(), bindingArea(), verifierArea(), rootsArea(), proofArea(), summaryArea(), decisionsArea(), evidenceArea(), blocksArea(), headersArea(), peersArea(), executionArea(), historyArea(), historyHeadersArea(), mutationKillArea(), protocolKillArea(), vmKillArea(), ledgerClaimsKillArea(), ledgerHeadersKillArea(), ledgerApplyKillArea(), protocolKillArea2(), ledgerRewindKillArea(), headerTimewarpArea(), ledgerDeepKillArea(), ledgerTruncateKillArea()];
  // Areas may add cases to the same operation: its file lists them in the areas' order.
  const byOp = new Map<string, CaseInput[]>();
  for (const area of areas) {
    for (const [op, cases] of Object.entries(area)) byOp.set(op, [...(byOp.get(op) ?? []), ...cases]);
  }
  const files = new Map<string, string>();
  for (const [op, cases] of byOp) files.set(`${op}.json`, canonicalJson(await fill(op, cases)));
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Which opcodes the execution vectors run (traced), and which of the instruction set they never do. */
export function opcodeCensus(cases: { input: Record<string, unknown> }[]): { executed: number; never: string[] } {
  const seen = new Set<string>();
  for (const c of cases) executeCase(c.input, (step) => seen.add(step.op));
  const all = Object.values(OPINFO).filter((i): i is NonNullable<typeof i> => i !== undefined).map((i) => i.name);
  return { executed: all.filter((n) => seen.has(n)).length, never: all.filter((n) => !seen.has(n)).sort() };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await generateVectors();
  mkdirSync(vectorsDir, { recursive: true });
  for (const old of readdirSync(vectorsDir)) if (old.endsWith('.json') && !files.has(old)) rmSync(join(vectorsDir, old));
  let cases = 0;
  for (const [name, text] of files) {
    writeFileSync(join(vectorsDir, name), text);
    const n = (JSON.parse(text) as unknown[]).length;
    cases += n;
    console.log(`${name}: ${n} cases`);
  }
  console.log(`${files.size} files, ${cases} cases in ${vectorsDir}`);
  const { executed, never } = opcodeCensus(JSON.parse(files.get('execution.call.json')!) as { input: Record<string, unknown> }[]);
  console.log(`opcodes executed by execution.call: ${executed} of ${executed + never.length}${never.length ? `; never: ${never.join(' ')}` : ''}`);
}

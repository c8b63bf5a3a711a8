/**
 * The conformance kit (conformance/README.md) stays true to the code: the vectors
 * regenerated in memory are byte for byte the committed ones (a changed consensus rule
 * fails here until `npm run conformance:generate` shows it as a diff of the vectors), and
 * the runner passes every vector through svc-node's adapter and fails a vector that
 * disagrees with it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateVectors, opcodeCensus, vectorsDir } from '../conformance/generate/main.js';
import { answer } from '../conformance/adapters/svc-node-answers.js';
import { repoRoot } from './helpers/paths.js';

const runner = join(repoRoot, 'conformance', 'run.mjs');

/** The vectors regenerated once for every test here (the histories take seconds: they write RocksDB stores). */
let regenerated: Promise<Map<string, string>> | null = null;
const generated = (): Promise<Map<string, string>> => (regenerated ??= generateVectors());

function run(args: string[]): { status: number | null; stdout: string } {
  // Above the runner's own two minutes for a run (the histories write RocksDB stores with synced batches: ~12 s here, more on a loaded machine).
  const r = spawnSync(process.execPath, [runner, ...args], { encoding: 'utf8', timeout: 150_000 });
  return { status: r.status, stdout: r.stdout };
}

test('regenerated vectors are identical to the committed ones', async () => {
  const files = await generated();
  const committed = readdirSync(vectorsDir).filter((f) => f.endsWith('.json')).sort();
  assert.deepEqual(committed, [...files.keys()], 'the vector files are the ones the generator writes (run npm run conformance:generate)');
  for (const [name, text] of files) {
    assert.ok(readFileSync(join(vectorsDir, name), 'utf8') === text, `${name} differs from what the code generates: a rule changed (review, then npm run conformance:generate)`);
  }
});

test('the execution vectors run every opcode of the instruction set at least once', () => {
  const cases = JSON.parse(readFileSync(join(vectorsDir, 'execution.call.json'), 'utf8')) as { input: Record<string, unknown> }[];
  assert.deepEqual(opcodeCensus(cases).never, []);
});

test('histories whose payloads arrive before, with or after their blocks, on a full or a light node, end in the same statuses and roots', () => {
  const cases = JSON.parse(readFileSync(join(vectorsDir, 'history.run.json'), 'utf8')) as { id: string; expected: { blocks: unknown; deploys: unknown; calls: unknown } }[];
  const final = (id: string) => {
    const e = cases.find((c) => c.id === id)!.expected;
    return { blocks: e.blocks, deploys: e.deploys, calls: e.calls };
  };
  for (const id of ['outcomes-payloads-with-blocks', 'outcomes-payloads-after-blocks', 'outcomes-payloads-after-reversed']) assert.deepEqual(final(id), final('outcomes-payloads-before-blocks'), id);
  for (const depth of [1, 6]) assert.deepEqual(final(`reorg-${depth}-payload-after`), final(`reorg-${depth}-remined`), `reorg of ${depth}`);
  assert.deepEqual(final('flip-flop'), final('flip-flop-reference'), 'a reorganisation there and back ends as the branch alone');
  assert.deepEqual(final('claims-first-arrives-late'), final('claims-held-from-start'), 'a late claim of a call_id ends as when held from the start');
  assert.deepEqual(final('headers-ahead-replaced-alone-light'), final('headers-ahead-replaced-alone'), 'a light node whose header chain went another way ends as a full node');
  // A light node (blocks as their header alone) answers as a full node at every check and at the end.
  const twins = cases.filter((c) => c.id.startsWith('light-'));
  assert.ok(twins.length >= 10);
  for (const t of twins) {
    const full = cases.find((c) => c.id === t.id.slice('light-'.length))!.expected as Record<string, unknown>;
    const light = t.expected as Record<string, unknown>;
    for (const k of ['blocks', 'deploys', 'calls', 'checks']) assert.deepEqual(light[k], full[k], `${t.id}: ${k}`);
  }
  // A full node deciding from its blocks alone (no deferred checks, which would repair a block's wrong decision) answers the same.
  const blocksOnly = cases.filter((c) => c.id.startsWith('blocks-only-'));
  assert.ok(blocksOnly.length >= 20);
  for (const t of blocksOnly) {
    const full = cases.find((c) => c.id === t.id.slice('blocks-only-'.length))!.expected as Record<string, unknown>;
    const alone = t.expected as Record<string, unknown>;
    for (const k of ['blocks', 'deploys', 'calls', 'checks']) assert.deepEqual(alone[k], full[k], `${t.id}: ${k}`);
  }
});

test('a state changed in place has, after every step, the root of the same state built from nothing', () => {
  interface Contract { contract_id: string; code_hash: string; storage: [string, string][] }
  interface Step { contract_id?: string; key?: string; value?: string | null; remove_contract?: string; add_contract?: string; code_hash?: string }
  const cases = JSON.parse(readFileSync(join(vectorsDir, 'roots.storage-writes.json'), 'utf8')) as { id: string; input: { contracts: Contract[]; steps: Step[] }; expected: { contracts_roots: string[] } }[];
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    const state = new Map(c.input.contracts.map((x) => [x.contract_id, { code: x.code_hash, storage: new Map(x.storage) }]));
    const rootFromNothing = () => (answer('roots.contracts', { contracts: [...state].map(([id, x]) => ({ contract_id: id, code_hash: x.code, storage: [...x.storage] })) }).output as { contracts_root: string }).contracts_root;
    const roots = [rootFromNothing()];
    for (const s of c.input.steps) {
      if (s.remove_contract !== undefined) state.delete(s.remove_contract);
      else if (s.add_contract !== undefined) state.set(s.add_contract, { code: s.code_hash!, storage: new Map() });
      else if (s.value === null) state.get(s.contract_id!)!.storage.delete(s.key!);
      else state.get(s.contract_id!)!.storage.set(s.key!, s.value!);
      roots.push(rootFromNothing());
    }
    assert.deepEqual(c.expected.contracts_roots, roots, c.id);
  }
});

test('the runner passes every vector through svc-node\'s adapter', async () => {
  const cases = [...(await generated()).values()].reduce((n, text) => n + (JSON.parse(text) as unknown[]).length, 0);
  const r = run([]);
  assert.equal(r.status, 0, r.stdout.split('\n').filter((l) => l.startsWith('not ok')).slice(0, 5).join('\n'));
  const summary = r.stdout.trimEnd().split('\n').at(-1)!;
  assert.match(summary, new RegExp(`^# conformance: ${cases} passed, 0 failed, 0 skipped of ${cases} cases`));
});

test('the runner, copied out alone, fails a case whose expected answer is not the implementation\'s', () => {
  // The runner needs nothing beside itself: a copy in an empty folder, with svc-node's adapter named by path.
  const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    copyFileSync(runner, join(dir, 'run.mjs'));
    mkdirSync(join(dir, 'vectors'));
    const cases = JSON.parse(readFileSync(join(vectorsDir, 'roots.decisions.json'), 'utf8')) as { id: string; expected: { state_root: string } }[];
    const changed = cases.find((c) => c.id === 'none')!;
    changed.expected.state_root = '00'.repeat(32); // what a root of version 1 over no contracts would be
    writeFileSync(join(dir, 'vectors', 'roots.decisions.json'), JSON.stringify(cases));
    const adapter = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, 'conformance', 'adapters', 'svc-node.mjs'))}`;
    const r = spawnSync(process.execPath, [join(dir, 'run.mjs'), '--adapter', adapter], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^not ok \d+ roots\.decisions none - /m);
    assert.match(r.stdout, new RegExp(`# conformance: ${cases.length - 1} passed, 1 failed, 0 skipped`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Typed contracts: an ABI given `as const` and the module `svc codegen` writes both type
 * an indexer's calls, simulations and field reads, so a wrong argument type or count, a
 * function or field the contract lacks, or a result read as the wrong type is a compile
 * error (tsc over a small project: every `@ts-expect-error` line must be an error, and a
 * file with one wrong call and no directive must fail on that line alone); and a typed
 * call, read and simulation work against a devnet node.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { SvcReader, typedContract, type CallResult } from '@svc-node/client';
import { run } from '../../src/cli/run.js';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';

const artifact = compileFixture('counter.svc');
const sdk = join(repoRoot, 'packages/client/dist/index.js');

test('a wrong argument, a missing function or field, a result of the wrong type: compile errors, through `as const` inference and through the generated module', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-typed-'));
  writeFileSync(join(dir, 'counter.json'), JSON.stringify(artifact));
  const out = await run(['codegen', join(dir, 'counter.json'), '--out', join(dir, 'generated.ts'), '--import', sdk], {}, { write: () => undefined, signal: new AbortController().signal });
  assert.deepEqual(out.json, { out: join(dir, 'generated.ts'), bytes: readFileSync(join(dir, 'generated.ts')).length });
  const id = `'${'00'.repeat(32)}'`;
  writeFileSync(
    join(dir, 'inferred.ts'),
    `import { typedContract } from ${JSON.stringify(sdk)};
const abi = ${JSON.stringify(artifact.abi)} as const;
const c = typedContract(abi, { contractId: ${id} });
export async function uses(): Promise<void> {
  await c.write.bump(5n);
  const n: bigint = await c.read.count();
  const mine: bigint = await c.read.by_caller('ab'.repeat(32));
  const r: bigint | null = (await c.simulate.get()).result;
  void [n, mine, r];
  // @ts-expect-error a number is not a u64 (bigint)
  await c.write.bump(5);
  // @ts-expect-error a string is not a u64
  await c.write.bump('5');
  // @ts-expect-error too many arguments
  await c.write.bump(5n, 6n);
  // @ts-expect-error no such function
  await c.write.mint(5n);
  // @ts-expect-error count is not a map
  await c.read.count('x');
  // @ts-expect-error a map entry needs its key
  await c.read.by_caller();
  // @ts-expect-error a key is hex or bytes, not a number
  await c.read.by_caller(7);
  // @ts-expect-error a u64 is read as a bigint
  const s: string = await c.read.count();
  void s;
}
`,
  );
  writeFileSync(
    join(dir, 'generated-uses.ts'),
    `import { counter } from './generated.js';
const c = counter({ contractId: ${id} });
export async function uses(): Promise<void> {
  await c.write.boom(1n);
  // @ts-expect-error a boolean is not a u64
  await c.write.boom(true);
}
`,
  );
  writeFileSync(join(dir, 'wrong.ts'), `import { counter } from './generated.js';\nconst c = counter({ contractId: ${id} });\nexport const p = c.write.bump(5);\n`);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, typeRoots: [join(repoRoot, 'node_modules/@types')] }, files: ['inferred.ts', 'generated.ts', 'generated-uses.ts', 'wrong.ts'] }),
  );
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
  const errors = r.stdout.split('\n').filter((l) => / error TS\d+:/.test(l));
  assert.equal(r.status, 2, r.stdout);
  assert.equal(errors.length, 1, `only the wrong call fails; tsc said:\n${r.stdout}`);
  assert.match(errors[0]!, /(^|\/)wrong\.ts\(3,31\): error TS2345: Argument of type 'number' is not assignable to parameter of type 'bigint'/);
});

test('svc codegen refuses an artifact whose ABI is not the compiler\'s, in one line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-typed-'));
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ abi: [{ type: 'function', name: 'f', inputs: [{ name: 'x', type: 'u256' }], outputs: [] }] }));
  await assert.rejects(run(['codegen', join(dir, 'bad.json')], {}, { write: () => undefined, signal: new AbortController().signal }), (e: Error & { code?: string }) => e.code === 'bad_argument' && /abi entry 0: inputs of f are malformed/.test(e.message));
});

let devnet: DevnetChainHandle;
let node: NodeProcess;

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

test('a typed call, read and simulation against a devnet node', async () => {
  const wallet = testWallet(51);
  await fund(devnet, wallet, 3);
  await waitSynced(node, devnet);
  const svc = client(node, devnet, wallet);
  const { contractId } = await svc.deploy(artifact);
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  const abi = artifact.abi as unknown as readonly [{ type: 'function'; name: 'bump'; inputs: readonly [{ name: 'n'; type: 'u64' }]; outputs: readonly [{ type: 'u64' }] }, { type: 'field'; name: 'count'; key: null; value: 'u64' }, { type: 'function'; name: 'get'; inputs: readonly []; outputs: readonly [{ type: 'u64' }] }];
  const c = typedContract(abi, { contractId, client: svc, reader: new SvcReader({ nodeUrl: node.restUrl, network: 'regtest' }) });
  const r = (await c.write.bump(7n)) as CallResult;
  assert.equal(r.answer.status, 'pending');
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  assert.equal(await c.read.count(), 7n);
  const sim = await c.simulate.get();
  assert.deepEqual([sim.status, sim.result], ['executed', 7n]);
});

/** `svc test`: a contract's tests run in the VM without a chain; failures name the test file's line. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { run, errorOf } from '../../src/cli/run.js';
import { repoRoot } from '../helpers/paths.js';

const tokenSvc = join(repoRoot, 'examples', 'token.svc');

async function runError(args: string[]): Promise<{ code: string; message: string; exit: number }> {
  try {
    await run(args, {});
  } catch (e) {
    return errorOf(e);
  }
  assert.fail(`svc ${args.join(' ')} succeeded`);
}

test('the token example passes its tests (examples/token.tests, found next to the contract)', async () => {
  const r = await run(['test', tokenSvc], {});
  assert.equal(r.exit, 0, r.text.join('\n'));
  assert.equal(r.text.at(-1), '3 tests, 0 failed');
  assert.ok(r.text.includes("ok   transfer to another owner's output, the rest as change (5 calls)"), r.text.join('\n'));
});

test('failures: each with the line, what was expected and what happened; exit 3; tests are independent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const tests = join(dir, 'wrong.tests');
  writeFileSync(tests, [
    'test wrong expectations',
    '  outputs 0 1000',
    '  call init u128:10 u64:1 -> fail revert',
    '  call supply -> 11',
    '  call supply -> u64:10',
    '  call transfer u64:1 u128:5 u64:1 -> fail revert "another message"',
    '  call nosuch',
    '  inputs #9:1',
    '  call supply',
    'test starts from empty storage',
    '  call supply -> 0',
    '  caller 1111111111111111111111111111111111111111111111111111111111111111',
    '  height 7',
    '  call init u128:1 u64:0 -> fail revert "output index out of range"',
  ].join('\n'));
  const r = await run(['test', tokenSvc, tests], {});
  assert.equal(r.exit, 3);
  assert.deepEqual(r.text, [
    'FAIL wrong expectations (6 calls)',
    `  ${tests}:3: call init: expected to fail with revert, but it executed (result nothing)`,
    `  ${tests}:4: call supply: expected u128:11, got u128:10`,
    `  ${tests}:5: call supply: expected value given as u64, supply returns u128`,
    `  ${tests}:6: call transfer: expected to fail with revert: another message, got revert: no tokens on the spent outpoints`,
    `  ${tests}:7: call nosuch: unknown function "nosuch" (the contract has: init, transfer, balance_of, balance_at, supply)`,
    `  ${tests}:9: call supply: inputs name #9, but this is call 6`,
    'ok   starts from empty storage (2 calls)',
    '2 tests, 1 failed',
  ]);
  const j = (await run(['test', tokenSvc, tests, '--json'], {})).json as { failed: number; tests: { failures: { line: number }[] }[] };
  assert.equal(j.failed, 1);
  assert.deepEqual(j.tests[0]!.failures.map((f) => f.line), [3, 4, 5, 6, 7, 9]);
});

test('a malformed test file, a contract that does not compile and a missing file: one clear error each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const bad = join(dir, 'bad.tests');
  writeFileSync(bad, 'call supply\ntest t\n  outputs lots\n  frobnicate\n  call x -> a b\n');
  const e = await runError(['test', tokenSvc, bad]);
  assert.equal(e.code, 'bad_argument');
  assert.equal(e.exit, 2);
  assert.equal(e.message, [
    `${bad}:1: 'call' before the first 'test NAME' line`,
    `${bad}:3: outputs: "lots" is not SATS or SATS@SCRIPTHEX`,
    `${bad}:4: unknown directive 'frobnicate' (deploy, test, caller, height, inputs, outputs, call, emits)`,
    `${bad}:5: -> takes one VALUE or fail CODE [MESSAGE]`,
  ].join('; '));
  const broken = join(dir, 'broken.svc');
  writeFileSync(broken, 'contract B { pub fn f() -> u64 { return x; } }');
  copyFileSync(join(repoRoot, 'examples', 'token.tests'), join(dir, 'broken.tests'));
  const c = await runError(['test', broken]);
  assert.equal(c.code, 'compile_error');
  assert.equal(c.message, `${broken}:1:41: unknown name 'x'`);
  const missing = await runError(['test', join(dir, 'none.svc')]);
  assert.match(missing.message, /cannot read contract .*none\.svc: ENOENT/);
});

test('a test file deploys several contracts and asserts their events: the market example passes', async () => {
  const r = await run(['test', join(repoRoot, 'examples', 'market.svc')], {});
  assert.equal(r.exit, 0, r.text.join('\n'));
  assert.equal(r.text.at(-1), '2 tests, 0 failed');
});

test('events: each difference named at its emits line; references and deploys checked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  for (const f of ['token.svc', 'nft.svc', 'market.svc']) copyFileSync(join(repoRoot, 'examples', f), join(dir, f));
  writeFileSync(join(dir, 'broken.svc'), 'contract B { pub fn f() -> u64 { return x; } }');
  const tests = join(dir, 'market.tests');
  writeFileSync(tests, [
    'deploy token token.svc', // 1
    'deploy nft nft.svc',
    'test events',
    '  call nft.init string:X',
    '  call nft.mint ~alice string:u -> 1', // 5
    '  emits nft.Mint u64:2 ~alice',
    '  call nft.approve u64:1 @market',
    '  emits nft.Approval u64:1 @market',
    '  call nft.approve u64:1 @market',
    '  emits nft.Approval u64:1 @market', // 10
    '  emits nft.Approval u64:1 @market',
    '  call nft.approve u64:1 @token',
    '  call nft.approve u64:1 @market',
    '  emits nothing',
    '  call nft.mint ~alice string:v -> fail revert', // 15
    '  emits nothing',
    '  call token.balance_at #9 u64:1 -> 0',
    '  call token.frob',
  ].join('\n'));
  const r = await run(['test', join(dir, 'market.svc'), tests], {});
  assert.equal(r.exit, 3);
  assert.deepEqual(r.text, [
    'FAIL events (9 calls)',
    `  ${tests}:6: call nft.mint: expected event 1 nft.Mint(u64:2, key:${sha('alice')}), got nft.Mint(u64:1, key:${sha('alice')})`,
    `  ${tests}:11: call nft.approve: expected event 2 nft.Approval(u64:1, @market), the call emitted 1`,
    `  ${tests}:14: call nft.approve: the call emitted 1 event(s), the test lists 0; the next is nft.Approval(u64:1, @market)`,
    `  ${tests}:15: call nft.mint: expected to fail with revert, but it executed (result u64:2)`,
    `  ${tests}:16: call nft.mint: the call emitted 1 event(s), the test lists 0; the next is nft.Mint(u64:2, key:${sha('alice')})`,
    `  ${tests}:17: call token.balance_at: #9 names call 9, but this is call 8`,
    `  ${tests}:18: call token.frob: unknown function "frob" (the contract has: init, transfer, balance_of, balance_at, supply)`,
    '1 test, 1 failed',
  ]);

  // Names the file never declares: a malformed file (exit 2), found before any test runs,
  // not a test that fails (no run of the contract could make it pass).
  const badNames = join(dir, 'names.tests');
  writeFileSync(badNames, [
    'deploy nft nft.svc',
    'test t',
    '  call nft.init string:X',
    '  emits market.Approval u64:1 @market', // the contract under test declares no Approval
    '  call nft.approve u64:1 @nobody', // 5
    '  caller @ghost',
    '  call ghost.f',
    '  call nft.mint ~alice string:u -> 1',
    '  emits nft.Minted u64:1 @nobody',
    'test later', // 10
    '  deploy token token.svc',
    '  call token.supply -> 0',
    'test earlier',
    '  call token.supply -> 0',
  ].join('\n'));
  const n = await runError(['test', join(dir, 'market.svc'), badNames]);
  assert.equal(n.exit, 2);
  assert.equal(n.message, [
    `${badNames}:4: emits market.Approval: market declares no event Approval`,
    `${badNames}:5: unknown contract @nobody (deploy it first: deploy nobody FILE.svc)`,
    `${badNames}:6: caller @ghost: unknown contract (deploy it first: deploy ghost FILE.svc)`,
    `${badNames}:7: call ghost.f: unknown contract ghost (deploy it first: deploy ghost FILE.svc)`,
    `${badNames}:9: emits nft.Minted: nft declares no event Minted`,
    `${badNames}:9: unknown contract @nobody (deploy it first: deploy nobody FILE.svc)`,
    `${badNames}:14: call token.supply: unknown contract token (deploy it first: deploy token FILE.svc)`,
  ].join('; '));

  const badDeploys = join(dir, 'bad.tests');
  writeFileSync(badDeploys, ['deploy market token.svc', 'deploy b broken.svc', 'deploy m missing.svc', 'test t', '  emits nothing', '  call f', '  emits x y', '  emits nothing'].join('\n'));
  const e = await runError(['test', join(dir, 'market.svc'), badDeploys]);
  assert.equal(e.exit, 2);
  assert.equal(e.message, [
    `${badDeploys}:5: 'emits' must follow a call (its events, one line each)`,
    `${badDeploys}:8: 'emits nothing' after events listed for the same call`,
  ].join('; '));
  writeFileSync(badDeploys, ['deploy market token.svc', 'deploy b broken.svc', 'deploy m missing.svc', 'test t', '  call init @token @nft'].join('\n'));
  const d = await runError(['test', join(dir, 'market.svc'), badDeploys]);
  assert.equal(d.exit, 2);
  assert.equal(d.message, [
    `${badDeploys}:1: deploy market: that name is the contract under test's`,
    `${badDeploys}:2: deploy b: ${join(dir, 'broken.svc')}:1:41: unknown name 'x'`,
    `${badDeploys}:3: deploy m: cannot read contract ${join(dir, 'missing.svc')}: ENOENT`,
  ].join('; '));
});

function sha(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}

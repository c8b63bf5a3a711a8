/**
 * The workspace's packages as an indexer gets them: `npm pack` of each, the tarballs
 * installed into an empty project that holds nothing else (their dependencies come from
 * the npm registry, through npm's cache when it has them: --prefer-offline), then each
 * README's quick start run exactly as written: the protocol's alone, the client's against
 * a devnet chain and a node. The quick start is also type-checked against the installed
 * declarations. Reports each package's installed size and dependency count
 * (docs/PERFORMANCE.md, "Packages") and fails on a native module.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import { compileSource } from '../../src/compiler/index.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { repoRoot } from '../helpers/paths.js';
import { toHex } from '@svc-node/protocol/hash';

const run = promisify(execFile);
/**
 * Packages installed with the client, its own two included: 23 today (bitcoinjs-lib and
 * its tree, about half of them, @noble's two, tiny-secp256k1, ecpair, borsh,
 * canonicalize, ws). A change that nearly doubles it is a decision to make in the open,
 * not an accident.
 */
const MAX_CLIENT_PACKAGES = 40;
/** Packages of the node that an installed client must never pull in (native, or server-side). */
const NODE_ONLY = ['@nxtedition/rocksdb', 'rocksdb', 'uWebSockets.js', '@grpc/grpc-js', 'piscina', 'pg', 'protobufjs'];

/** npm as a user runs it: none of the npm_* settings `npm test` hands its children. */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env: npmEnv, timeout: 180_000, maxBuffer: 16 << 20 });

let work: string;
const tarballs = new Map<string, { file: string; files: string[] }>();

/** The first fenced block of `lang` in a README's "Quick start" section. */
function quickStart(pkg: string, lang: string): string {
  const readme = readFileSync(join(repoRoot, 'packages', pkg, 'README.md'), 'utf8');
  const section = readme.split('\n## Quick start\n')[1]?.split('\n## ')[0] ?? '';
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  assert.ok(m, `packages/${pkg}/README.md has a ${lang} block in its Quick start`);
  return m[1]! + '\n';
}

/** An empty project with the given tarballs installed; what is installed, measured. */
async function install(name: string, pkgs: string[]): Promise<{ dir: string; bytes: number; packages: string[]; names: Set<string>; own: number; natives: string[] }> {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...pkgs.map((p) => tarballs.get(p)!.file)], dir);
  const lock = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const packages = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/')).map((k) => k.slice('node_modules/'.length));
  // A nested copy (bitcoinjs-lib/node_modules/@noble/hashes) is a second version of a name.
  const names = new Set(packages.map((p) => p.split('node_modules/').pop()!));
  const natives = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([k]) => `${k} (install script)`);
  let bytes = 0;
  let own = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const s = lstatSync(p);
      if (s.isDirectory()) walk(p);
      else if (s.isFile()) {
        bytes += s.size;
        if (p.includes('/node_modules/@svc-node/')) own += s.size;
        if (e.endsWith('.node') || e === 'binding.gyp') natives.push(p.slice(dir.length + 1));
      }
    }
  };
  walk(join(dir, 'node_modules'));
  return { dir, bytes, packages, names, own, natives };
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-packages-'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work, '-w', 'packages/protocol', '-w', 'packages/client'], repoRoot);
  for (const p of JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[]) {
    tarballs.set(p.name, { file: join(work, p.filename), files: p.files.map((f) => f.path).sort() });
  }
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('each tarball holds its licence, README, package.json and compiled ESM with declarations for every entry point, nothing else', () => {
  assert.deepEqual([...tarballs.keys()].sort(), ['@svc-node/client', '@svc-node/protocol']);
  for (const [name, t] of tarballs) {
    const strays = t.files.filter((f) => !['LICENSE', 'README.md', 'package.json'].includes(f) && !/^dist\/.+\.(js|d\.ts)$/.test(f));
    assert.deepEqual(strays, [], `${name}: only the licence, README and dist's .js and .d.ts`);
    const js = t.files.filter((f) => f.endsWith('.js'));
    assert.ok(js.includes('dist/index.js'), `${name} has its index`);
    assert.deepEqual(js.filter((f) => !t.files.includes(f.replace(/\.js$/, '.d.ts'))), [], `${name}: every module has its declarations`);
  }
});

test("@svc-node/protocol from its tarball alone: its README's quick start runs; pure JavaScript", async (t) => {
  const p = await install('protocol-only', ['@svc-node/protocol']);
  t.diagnostic(`@svc-node/protocol installed: ${(p.bytes / 1e6).toFixed(2)} MB (its own ${(p.own / 1e3).toFixed(0)} kB) in ${p.packages.length} packages (itself and ${p.packages.length - 1} dependencies of ${p.names.size - 1} names): ${p.packages.join(' ')}`);
  assert.deepEqual(p.natives, [], 'no native module');
  writeFileSync(join(p.dir, 'quickstart.mjs'), quickStart('protocol', 'js'));
  const { stdout } = await run(process.execPath, ['quickstart.mjs'], { cwd: p.dir, timeout: 30_000 });
  const out = JSON.parse(stdout) as { signed: boolean; payload: string; stamp: string };
  assert.equal(out.signed, true);
  // OP_RETURN, a 68-byte push: "SVC", kind 2 (call), the contract id (32 x 07), the envelope hash.
  assert.match(out.stamp, /^6a4453564302(07){32}[0-9a-f]{64}$/);
  assert.ok(Buffer.from(out.payload, 'base64').length >= 181, 'the payload is a whole envelope');
});

test("@svc-node/client from its tarballs: its README's quick start deploys, calls, verifies and follows a devnet node; typed; pure JavaScript", async (t) => {
  const c = await install('client', ['@svc-node/protocol', '@svc-node/client']);
  t.diagnostic(`@svc-node/client installed (with @svc-node/protocol): ${(c.bytes / 1e6).toFixed(2)} MB (the two's own ${(c.own / 1e3).toFixed(0)} kB) in ${c.packages.length} packages (the two and ${c.packages.length - 2} dependencies of ${c.names.size - 2} names): ${c.packages.join(' ')}`);
  assert.deepEqual(c.natives, [], 'no native module');
  assert.deepEqual(c.packages.filter((p) => NODE_ONLY.includes(p)), [], 'nothing of the node is installed');
  assert.ok(c.packages.length <= MAX_CLIENT_PACKAGES, `${c.packages.length} packages installed`);

  // Every module of both is an entry point that loads from the installed packages alone.
  const entries = [...tarballs].flatMap(([name, t]) => t.files.filter((f) => f.endsWith('.js')).map((f) => `${name}/${f.slice('dist/'.length, -'.js'.length)}`));
  const loaded = await run(process.execPath, ['--input-type=module', '-e', `for (const e of ${JSON.stringify(entries)}) await import(e); console.log('loaded')`], { cwd: c.dir, timeout: 30_000 });
  assert.equal(loaded.stdout.trim(), 'loaded');

  const script = quickStart('client', 'js');
  writeFileSync(join(c.dir, 'quickstart.mjs'), script);
  // The quick start as a TypeScript user's editor sees it: checked against the installed
  // declarations, with skipLibCheck as `tsc --init` sets it (ecpair's own declarations do
  // not check under nodenext).
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '--noEmit', '--allowJs', '--checkJs', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--typeRoots', join(repoRoot, 'node_modules', '@types'), '--types', 'node', '--skipLibCheck', 'quickstart.mjs'], { cwd: c.dir, timeout: 60_000 }).catch((e: { stdout?: string }) => assert.fail(`the quick start does not type-check: ${e.stdout}`));

  const compiled = compileSource(quickStart('client', 'svc'), 'counter.svc');
  assert.ok(compiled.ok, JSON.stringify(compiled.ok ? null : compiled.errors));
  writeFileSync(join(c.dir, 'counter.json'), JSON.stringify(compiled.artifact));

  let devnet: DevnetChainHandle | undefined;
  let node: NodeProcess | undefined;
  try {
    devnet = await startDevnet();
    node = await startDevnetNode(devnet);
    const wallet = testWallet(48);
    await fund(devnet, wallet, 2);
    await waitSynced(node, devnet);
    const child = spawn(process.execPath, ['quickstart.mjs'], {
      cwd: c.dir,
      env: { PATH: process.env.PATH, SVC_NODE_URL: node.restUrl, SVC_ESPLORA_URL: devnet.url, SVC_WALLET_KEY: toHex(wallet.secret) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    // The chain's miner: each transaction the quick start broadcasts is mined into the next block.
    const deadline = Date.now() + 120_000;
    while (!done) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        assert.fail(`the quick start did not finish in 120 s: ${stderr}`);
      }
      if (devnet.chain.mempoolTxids().length > 0) devnet.chain.mine(1);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20))]);
    }
    assert.equal(await exited, 0, stderr);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    assert.match(String(out['contractId']), /^[0-9a-f]{64}$/);
    assert.deepEqual({ ...out, contractId: null }, { contractId: null, status: 'executed', proven: 'executed', result: '5', count: '5', event: 'Bumped' });
  } finally {
    await node?.stop();
    await devnet?.close();
  }
});

/**
 * The black-box node runner (conformance/node/run.mjs, conformance/README.md "The node
 * runner") passes every check against the built node, says so in TAP and in JUnit XML;
 * a node command that never answers is a bail-out (exit 2), never a pass. The two
 * longest scenarios (the reorgs of 144 and 150 blocks, and the node dialling lying header
 * peers) are left to CI's copy-out run (scripts/conformance-copy-out.sh): this one takes
 * about 35 s of wall time on this machine (the devnet chain and three node processes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers/paths.js';

const runner = join(repoRoot, 'conformance', 'node', 'run.mjs');
const LEFT_TO_CI = ['depth 144', 'depth 150', 'serving headers'];

function run(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [runner, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    p.stdout.on('data', (d: Buffer) => (stdout += String(d)));
    p.stderr.resume();
    // SIGTERM: the runner stops the processes it started before it exits.
    const t = setTimeout(() => p.kill('SIGTERM'), timeoutMs);
    p.once('exit', (status) => {
      clearTimeout(t);
      resolve({ status, stdout });
    });
  });
}

test('the node runner passes every scenario against the built node, in TAP and JUnit XML', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-node-test-'));
  try {
    const junit = join(dir, 'junit.xml');
    const r = await run([...LEFT_TO_CI.flatMap((s) => ['--skip', s]), '--junit', junit], 300_000);
    const failed = r.stdout.split('\n').filter((l) => l.startsWith('not ok') || l.startsWith('Bail out!') || l.startsWith('  '));
    assert.deepEqual(failed, [], r.stdout.slice(-4000));
    assert.equal(r.status, 0);
    const played = ['deploy then call', 'reorg of depth 1', 'reorg of depth 6', 'failed and refused calls', 'drop', 'late joiner', 'hostile peer', 'payloads with and after their blocks', 'restart'];
    for (const s of played) assert.ok(r.stdout.includes(`# ${s}\n`), `scenario ${s} played`);
    for (const s of ['reorg of depth 144', 'reorg of depth 150', 'hostile peer serving headers']) assert.ok(!r.stdout.includes(`# ${s}\n`), `scenario ${s} left to CI`);
    const summary = /^# conformance:node: (\d+) passed, 0 failed of (\d+) checks in (\d+) scenarios/m.exec(r.stdout);
    assert.ok(summary && summary[1] === summary[2] && Number(summary[1]) >= 152 && Number(summary[3]) === played.length, r.stdout.slice(-1500));
    // The readable summary names every scenario played with its count of checks.
    for (const s of played) assert.match(r.stdout, new RegExp(`^# ${s} +\\d+ +0 +[\\d.]+$`, 'm'));
    // JUnit XML: one testcase per TAP line, in a testsuite per scenario, none failed.
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, new RegExp(`^<testsuites name="conformance:node" tests="${summary![2]}" failures="0" errors="0"`, 'm'));
    assert.equal(xml.match(/<testcase /g)?.length, Number(summary![2]));
    assert.equal(xml.match(/<testsuite /g)?.length, played.length);
    assert.ok(!xml.includes('<failure'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a node command that never answers is a bail-out, not a pass, and an error in JUnit XML', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-node-test-'));
  try {
    const junit = join(dir, 'junit.xml');
    const r = await run(['--node-cmd', 'exit 3', '--junit', junit], 120_000);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stdout, /^Bail out! cannot start: node-A exited/m);
    assert.match(r.stdout, /^# conformance:node: 0 passed, 0 failed of 0 checks in 0 scenarios/m);
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, /errors="1"/);
    assert.match(xml, /<error message="cannot start: node-A exited/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the kit\'s copy of the peer protocol is proto/svc.proto, byte for byte', () => {
  assert.equal(readFileSync(join(repoRoot, 'conformance', 'node', 'svc.proto'), 'utf8'), readFileSync(join(repoRoot, 'proto', 'svc.proto'), 'utf8'), 'proto/svc.proto changed: copy it to conformance/node/svc.proto');
});

test('the kit declares every package its runners import, pinned in its own package-lock.json', () => {
  // What a copy of conformance/ alone needs from npm (CI installs it: scripts/conformance-copy-out.sh);
  // svc-node's adapter is left out: it answers from this repository's dist/.
  const kit = join(repoRoot, 'conformance');
  const files = ['run.mjs', ...readdirSync(join(kit, 'node')).filter((f) => f.endsWith('.mjs')).map((f) => join('node', f))];
  const imported = new Set<string>();
  for (const f of files) {
    for (const m of readFileSync(join(kit, f), 'utf8').matchAll(/^import .*? from '([^'.][^']*)'/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('node:')) continue;
      imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  const pkg = JSON.parse(readFileSync(join(kit, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.deepEqual([...imported].sort(), Object.keys(pkg.dependencies).sort());
  const lock = JSON.parse(readFileSync(join(kit, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };
  assert.deepEqual(lock.packages['']?.dependencies, pkg.dependencies, 'conformance/package-lock.json is out of date: npm install --package-lock-only in conformance/');
  for (const [name, version] of Object.entries(pkg.dependencies)) assert.equal(lock.packages[`node_modules/${name}`]?.version, version, name);
});

test('the vector runner writes JUnit XML with --junit: a testsuite per operation, a testcase per case, failures and skips as such', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-junit-'));
  try {
    // An adapter that implements verifier.artifact wrongly (accepts everything) and not codec.artifact.
    const adapter = join(dir, 'adapter.mjs');
    writeFileSync(adapter, `import { createInterface } from 'node:readline';
for await (const l of createInterface({ input: process.stdin })) {
  const c = JSON.parse(l);
  console.log(JSON.stringify(c.op === 'codec.artifact' ? { id: c.id, unsupported: true } : { id: c.id, output: { accepted: true } }));
}
`);
    const junit = join(dir, 'vectors.xml');
    const out = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
      const p = spawn(process.execPath, [join(repoRoot, 'conformance', 'run.mjs'), '--only', 'artifact', '--adapter', `${JSON.stringify(process.execPath)} ${JSON.stringify(adapter)}`, '--junit', junit], { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      p.stdout.on('data', (d: Buffer) => (stdout += String(d)));
      p.once('exit', (status) => resolve({ status, stdout }));
    });
    assert.equal(out.status, 1, out.stdout.slice(-500));
    const m = /^# conformance: (\d+) passed, (\d+) failed, (\d+) skipped of (\d+) cases in 2 files/m.exec(out.stdout);
    assert.ok(m, out.stdout.slice(-500));
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, new RegExp(`^<testsuites name="conformance" tests="${m[4]}" failures="${m[2]}" errors="0"`, 'm'));
    assert.equal(xml.match(/<testcase /g)?.length, Number(m[4]));
    assert.equal(xml.match(/<failure /g)?.length, Number(m[2]));
    assert.equal(xml.match(/<skipped /g)?.length, Number(m[3]));
    assert.deepEqual([...xml.matchAll(/<testsuite name="([^"]+)"/g)].map((x) => x[1]), ['codec.artifact', 'verifier.artifact']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * The `svc` CLI. Spawned (the compiled dist/src/cli/svc.js): exit codes, one-line stderr,
 * --json, and each workflow once. In-process (run() from src/cli/run.ts, same code minus
 * printing): the full table of argument errors, which would cost ~0.3-0.6 s per spawn.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, fixturesDir } from '../helpers/paths.js';
import { startFake, deadUrl, type Fake } from '../helpers/fake-endpoints.js';
import { walletFromSecret, networkOf, DEFAULT_FEE_RATE, checkBodySize, CHAIN_DOWN_POLLS, NOT_FOUND_POLLS, ClientError } from '@svc-node/client';
import { MAX_BODY_BYTES, postedBytes } from '@svc-node/protocol/limits';
import { decodePayload, decodeEnvelope, checkCallBinding, toHex } from '@svc-node/protocol';
import { run, errorOf } from '../../src/cli/run.js';
import { Transaction } from 'bitcoinjs-lib';
import { compileSource } from '../../src/compiler/index.js';

const svcJs = join(repoRoot, 'dist', 'src', 'cli', 'svc.js');
const contract = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'contract.json'), 'utf8'));
const walletHex = '55'.repeat(32);
const wallet = walletFromSecret(new Uint8Array(32).fill(0x55), 'p2wpkh', networkOf('regtest'));
const CID = contract.contract_id as string;

let dir: string;
let artifactPath: string;
/** A compiled example: the vectors' artifact carries an ABI but is not code the node accepts. */
let deployPath: string;
const token = compileSource(readFileSync(join(repoRoot, 'examples', 'token.svc'), 'utf8'), 'token.svc');
if (!token.ok) throw new Error('examples/token.svc does not compile');
let fake: Fake;
/** An ABI with one function taking a string, for arguments of any size. */
let notePath: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  artifactPath = join(dir, 'artifact.json');
  writeFileSync(artifactPath, JSON.stringify(contract.artifact));
  deployPath = join(dir, 'token.json');
  writeFileSync(deployPath, JSON.stringify(token.artifact));
  writeFileSync(join(dir, 'broken.json'), '{');
  copyFileSync(join(repoRoot, 'examples', 'token.svc'), join(dir, 'token.svc'));
  notePath = join(dir, 'note.json');
  writeFileSync(notePath, JSON.stringify({ abi: [{ type: 'function', name: 'note', inputs: [{ name: 'text', type: 'string' }], outputs: [], readonly: false }] }));
  fake = await startFake({ payTo: wallet.outputScript, utxos: [{ txid: '77'.repeat(32), vout: 2, value: 40_000, status: { confirmed: true } }], abi: null });
});

after(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function svc(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [svcJs, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000, cwd },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const endpoints = () => ({ SVC_NODE_URL: fake.nodeUrl, SVC_ESPLORA_URL: fake.esploraUrl, SVC_WALLET_KEY: walletHex });

function oneLineError(r: Run, code: string, exit: number, pattern?: RegExp): void {
  assert.equal(r.code, exit, `exit code; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${r.stderr}`);
  assert.ok(lines[0]!.startsWith(`svc: ${code}: `), lines[0]);
  if (pattern) assert.match(lines[0]!, pattern);
}

test('keygen prints a usable key; --json', async () => {
  const [r, h] = await Promise.all([svc(['keygen', '--json']), svc(['--help'])]);
  assert.equal(r.code, 0);
  const j = JSON.parse(r.stdout);
  assert.match(j.secret_key, /^[0-9a-f]{64}$/);
  assert.match(j.caller_key, /^[0-9a-f]{64}$/);
  assert.match(j.p2wpkh_address, /^bcrt1q/);
  assert.match(j.p2tr_address, /^bcrt1p/);
  assert.equal(h.code, 0);
  assert.match(h.stdout, /usage: svc/);
  assert.match(h.stdout, new RegExp(`SVC_FEE_RATE, default ${DEFAULT_FEE_RATE}\\)`));
});

/** In-process: the error run() throws, as the entry would print it. */
async function runError(args: string[], env: Record<string, string> = {}): Promise<{ code: string; message: string; exit: number }> {
  try {
    await run(args, env);
  } catch (e) {
    return errorOf(e);
  }
  assert.fail(`svc ${args.join(' ')} succeeded`);
}

test('usage errors, spawned: one line on stderr, exit 2', async () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [[], {}, /no command/],
    [['keygen', '--bogus'], {}, /^svc: bad_argument: unknown option --bogus \(svc --help lists the options; a positional argument starting with "-" goes after "--"\)$/],
    [['status', '-x'], {}, /^svc: bad_argument: unknown option -x \(svc --help/],
    [['events', CID, '--limit'], {}, /^svc: bad_argument: --limit needs a value$/],
    [['keygen', '--json=yes'], {}, /^svc: bad_argument: --json takes no value$/],
    [['frobnicate'], {}, /^svc: bad_argument: unknown command "frobnicate" \(keygen, deploy, call, submit, simulate, status, contract, read, events, devnet, codegen, test, sink; svc --help\)$/],
    // a usage error, found before the node is asked: named with the command's options
    [['events', CID, '--from', '10', '--to', '5'], endpoints(), /^svc: bad_argument: --from 10 is above --to 5: no height lies between them$/],
    [['deploy', join(dir, 'missing.json')], endpoints(), /cannot read artifact .*ENOENT/],
  ];
  const runs = await Promise.all(cases.map(([args, env]) => svc(args, env)));
  runs.forEach((r, i) => oneLineError(r, 'bad_argument', 2, cases[i]![2]));
  // every command of the usage is in the list an unknown command prints
  const listed = /\(([^;]*); svc --help\)/.exec(runs[5]!.stderr)![1]!.split(', ');
  const usage = (await svc(['--help'])).stdout;
  const commands = [...usage.slice(usage.indexOf('commands:'), usage.indexOf('options:')).matchAll(/^ {2}(\w+)/gm)].map((m) => m[1]!);
  assert.deepEqual([...new Set(commands)].sort(), [...listed].sort());
});

test('usage errors, in-process: every message names what is wrong', async () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['frobnicate'], {}, /unknown command "frobnicate"/],
    [['status'], {}, /status takes TXID/],
    [['status', 'xyz'], {}, /txid must be 64 hex/],
    [['call', 'abc', 'f'], {}, /contract id must be 64 hex/],
    [['call', CID], {}, /call takes CONTRACT FUNCTION/],
    [['deploy', join(dir, 'broken.json')], endpoints(), /not valid JSON/],
    [['events', CID, '--from', 'x'], endpoints(), /--from must be a whole number/],
    [['events', CID, '--limit', '0'], endpoints(), /--limit must be a whole number >= 1/],
    [['deploy', artifactPath], { SVC_WALLET_KEY: walletHex }, /no chain-data URL/],
    [['deploy', artifactPath], { ...endpoints(), SVC_NODE_URL: 'ftp://x' }, /node URL is not an http\(s\) URL/],
    [['keygen', '--network', 'moon'], {}, /unknown network/],
    [['deploy', artifactPath, '--fee-rate', '0'], endpoints(), /--fee-rate must be a number > 0, got "0"/],
    [['deploy', artifactPath], { ...endpoints(), SVC_FEE_RATE: 'abc' }, /^SVC_FEE_RATE must be a number > 0, got "abc"$/],
    [['call', CID, 'transfer', '--call-id', '-1', '--abi', artifactPath], endpoints(), /--call-id must be a u64, got "-1"/],
    [['events', CID, '--limit', '-5'], endpoints(), /--limit must be a whole number >= 1, got "-5"/],
    [['events', CID, '--from', '-1'], endpoints(), /--from must be a whole number >= 0, got "-1"/],
    [['deploy', join(dir, 'token.svc')], endpoints(), /artifact .*token\.svc is contract source, not a compiled artifact: compile it first \(compile .*token\.svc -o token\.json\) and pass token\.json/],
    [['read', CID, 'balances', '--abi', artifactPath], endpoints(), new RegExp(`field "balances" is a map<key, u64>: give the key, svc read ${CID} balances KEY \\(KEY a key\\)`)],
    [['submit', artifactPath], endpoints(), /artifact\.json is not a call submission as svc call saves it: no "txid"/],
    [['call', CID, 'transfer', '--call-id=-1', '--abi', artifactPath], endpoints(), /--call-id must be a u64, got "-1"/],
    [['call', CID, 'transfer', '--call-id', '18446744073709551616', '--abi', artifactPath], endpoints(), /--call-id must be a u64/],
    [['call', CID, 'transfer', '--abi', join(dir, 'broken.json')], endpoints(), /ABI file .* not valid JSON/],
    [['call', CID, 'transfer', '--pay', 'bcrt1qnoamount', '--abi', artifactPath], endpoints(), /--pay must be ADDRESS:SATS with SATS a whole number > 0, got "bcrt1qnoamount"/],
    [['call', CID, 'transfer', '--pay', 'bcrt1qx:0', '--abi', artifactPath], endpoints(), /--pay must be ADDRESS:SATS/],
    [['call', CID, 'transfer', '--outpoint', 'ab:1', '--abi', artifactPath], endpoints(), /--outpoint must be TXID:VOUT, got "ab:1"/],
    [['simulate', CID], {}, /simulate takes CONTRACT FUNCTION/],
    [['simulate', CID, 'transfer', '--input', `${'a'.repeat(64)}:x`, '--abi', artifactPath], {}, /--input must be TXID:VOUT/],
    [['deploy', artifactPath, '--txid', 'zz'], endpoints(), /--txid must be 64 hex characters/],
    [['devnet', 'frob'], endpoints(), /devnet takes fund \[ADDRESS\] \[SATS\] or mine \[N\]/],
    [['devnet', 'fund', 'addr', '5.5'], endpoints(), /SATS must be a whole number >= 1, got "5.5"/],
    [['contract'], {}, /contract takes CONTRACT/],
  ];
  for (const [args, env, re] of cases) {
    const e = await runError(args, env);
    assert.equal(e.code, 'bad_argument', `${args.join(' ')}: ${e.message}`);
    assert.equal(e.exit, 2);
    assert.match(e.message, re);
  }
});

test('bad keys: exit 2 with bad_key (one spawned, the rest in-process)', async () => {
  oneLineError(await svc(['deploy', artifactPath], { ...endpoints(), SVC_WALLET_KEY: 'zz' }), 'bad_key', 2, /wallet key must be 64 hex characters or a WIF/);
  for (const [env, re] of [
    [{ ...endpoints(), SVC_WALLET_KEY: '' }, /no wallet key/],
    [{ ...endpoints(), SVC_WALLET_KEY: 'p2sh:' + walletHex }, /prefix must be p2wpkh: or p2tr:/],
    [{ ...endpoints(), SVC_WALLET_KEY: 'ff'.repeat(32) }, /not a valid secp256k1 secret key/],
    [{ ...endpoints(), SVC_CALLER_KEY: '00'.repeat(32) }, /caller key is not a valid/],
  ] as const) {
    const e = await runError(['call', CID, 'transfer', '--abi', artifactPath], env);
    assert.equal(e.code, 'bad_key', e.message);
    assert.equal(e.exit, 2);
    assert.match(e.message, re);
    assert.ok(!e.message.includes(walletHex) && !e.message.includes('ff'.repeat(32)), 'no key material in messages');
  }
});

test('call argument errors are checked against the ABI before anything is broadcast', async () => {
  const before = fake.requests.filter((q) => q.path === '/esplora/tx').length;
  const key = 'key:' + 'ab'.repeat(32);
  oneLineError(await svc(['call', CID, 'mint', '--abi', artifactPath], endpoints()), 'unknown_function', 2, /unknown function "mint" \(the contract has: transfer\)/);
  for (const [args, re] of [
    [['transfer', key], /takes 2 argument\(s\), got 1/],
    [['transfer', key, 'u64:-1'], /argument 2 \(amount: u64\)/],
    [['transfer', key, 'u64:1.5'], /argument 2 \(amount: u64\)/],
    [['transfer', 'string:x', 'u64:1'], /given as string, the ABI says key/],
    [['transfer', 'key:abcd', 'u64:1'], /key must be 32 bytes/],
  ] as const) {
    const e = await runError(['call', CID, ...args, '--abi', artifactPath], endpoints());
    assert.equal(e.code, 'bad_argument', e.message);
    assert.match(e.message, re);
  }
  const noAbi = await runError(['call', CID, 'transfer', key, 'u64:1'], endpoints());
  assert.match(noAbi.message, /does not serve the ABI .* --abi/);
  assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, before);
});

test('runtime errors: insufficient funds and unreachable endpoints exit 1', async () => {
  const empty = await startFake({ payTo: wallet.outputScript, utxos: [] });
  try {
    oneLineError(
      await svc(['deploy', deployPath], { SVC_NODE_URL: empty.nodeUrl, SVC_ESPLORA_URL: empty.esploraUrl, SVC_WALLET_KEY: walletHex }),
      'insufficient_funds',
      1,
      /insufficient funds: wallet bcrt1q\w+ has 0 sats/,
    );
  } finally {
    await empty.close();
  }
  const dead = await deadUrl();
  oneLineError(await svc(['status', 'a'.repeat(64), '--node', dead]), 'unreachable', 1, /node unreachable at http:\/\/127\.0\.0\.1:\d+/);
  oneLineError(await svc(['deploy', deployPath], { ...endpoints(), SVC_ESPLORA_URL: dead }), 'unreachable', 1, /chain-data endpoint unreachable/);
  const j = await svc(['status', 'a'.repeat(64), '--node', dead, '--json']);
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.stderr).error.code, 'unreachable');
});

test('deploy --json: anchors, registers, prints the contract id', async () => {
  const r = await svc(['deploy', deployPath, '--json', '--fee-rate', '3'], endpoints());
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.code_hash, token.ok && token.artifact.metadata.code_hash);
  assert.match(j.txid, /^[0-9a-f]{64}$/);
  const reg = fake.requests.filter((q) => q.path === '/node/deploy_contract').at(-1)!;
  assert.equal(JSON.parse(reg.body).txid, j.txid);
  // the anchoring transaction goes along, as broadcast (PROTOCOL section 6 anchor_tx)
  assert.equal(JSON.parse(reg.body).anchor_tx, fake.requests.filter((q) => q.path === '/esplora/tx').at(-1)!.body);
});

test('call --wait: signs with the caller key, spends a wallet UTXO, submits, polls to a final status', async () => {
  const callerHex = '66'.repeat(32);
  const r = await svc(
    ['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:5', '--abi', artifactPath, '--call-id', '9', '--wait', '--interval', '0.05', '--json'],
    { ...endpoints(), SVC_CALLER_KEY: callerHex },
  );
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.status, 'executed');
  assert.equal(j.call_id, '9');
  assert.equal(j.outpoint, `${fake.utxos[0]!.txid}:2`);
  const submit = JSON.parse(fake.requests.filter((q) => q.path === '/node/contract_call').at(-1)!.body);
  const posted = fake.requests.filter((q) => q.path === '/esplora/tx').at(-1)!.body;
  const e = decodeEnvelope(decodePayload(submit.payload));
  assert.equal(toHex(e.contractId), CID);
  assert.equal(e.callId, 9n);
  assert.deepEqual(checkCallBinding(posted, e), { ok: true, stampVout: 0 });
  assert.equal(submit.txid, j.txid);
  assert.notEqual(toHex(e.caller), toHex(wallet.xOnly));
});

test('call --pay: payments at vouts 1..n in order, change last, printed; bad addresses and dust refused before broadcast', async () => {
  const them = walletFromSecret(new Uint8Array(32).fill(0x21), 'p2tr', networkOf('regtest'));
  const args = ['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath];
  const r = await run([...args, '--pay', `${them.address}:1000`, '--pay', `${wallet.address}:700`], endpoints());
  const posted = Transaction.fromHex(fake.requests.filter((q) => q.path === '/esplora/tx').at(-1)!.body);
  assert.deepEqual(posted.outs.slice(1).map((o) => [toHex(o.script), Number(o.value)]), [
    [toHex(them.outputScript), 1000],
    [toHex(wallet.outputScript), 700],
    [toHex(wallet.outputScript), Number(posted.outs[3]!.value)],
  ]);
  assert.deepEqual((r.json as { payments: unknown }).payments, [
    { vout: 1, address: them.address, sats: 1000 },
    { vout: 2, address: wallet.address, sats: 700 },
  ]);
  assert.ok(r.text.includes(`pay: vout 1 -> ${them.address} 1000 sats`) && r.text.includes('change: vout 3'), r.text.join('\n'));
  const sent = fake.requests.filter((q) => q.path === '/esplora/tx').length;
  const mainnet = walletFromSecret(new Uint8Array(32).fill(0x21), 'p2wpkh', networkOf('bitcoin')).address;
  assert.match((await runError([...args, '--pay', `${mainnet}:1000`], endpoints())).message, /payment 1: "bc1\w+" is not an address of the network \(bcrt\)/);
  assert.match((await runError([...args, '--pay', `${them.address}:329`], endpoints())).message, /payment 1 to bcrt1p\w+: 329 sats is below the dust threshold of 330 sats/);
  assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, sent, 'nothing broadcast');
});

test('call without --pay prints its change output too (vout 1), as docs/CLI.md shows', async () => {
  const r = await run(['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath], endpoints());
  assert.ok(r.text.includes('change: vout 1'), r.text.join('\n'));
  assert.equal((r.json as { change_vout: number }).change_vout, 1);
});

test('call of a readonly function is refused before anything is built, pointing to simulate; --force anchors it', async () => {
  const sent = fake.requests.filter((q) => q.path === '/esplora/tx').length;
  const e = await runError(['call', CID, 'supply', '--abi', deployPath], endpoints());
  assert.equal(e.code, 'bad_argument');
  assert.equal(e.message, `supply is readonly: read it for free with svc simulate ${CID} supply (--force anchors it anyway)`);
  assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, sent);
  const r = await run(['call', CID, 'supply', '--abi', deployPath, '--force'], endpoints());
  assert.match((r.json as { txid: string }).txid, /^[0-9a-f]{64}$/);
  assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, sent + 1);
});

test('the node takes the call before its anchor is broadcast: a broadcast then refused says nothing is paid; one with no clear answer (a 502) names the txid to look up', async () => {
  const utxos = [{ txid: '78'.repeat(32), vout: 1, value: 400_000, status: { confirmed: true } }];
  const args = ['call', CID, 'note', 'string:hi', '--abi', notePath];
  const refusing = await startFake({ payTo: wallet.outputScript, utxos, override: { 'POST /esplora/tx': [400, 'sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met"}'] } });
  const unsure = await startFake({ payTo: wallet.outputScript, utxos, override: { 'POST /esplora/tx': [502, 'Bad Gateway'] } });
  try {
    const work = mkdtempSync(join(tmpdir(), 'svc-cwd-'));
    const refused = await svc(args, { SVC_NODE_URL: refusing.nodeUrl, SVC_ESPLORA_URL: refusing.esploraUrl, SVC_WALLET_KEY: walletHex }, work);
    oneLineError(refused, 'chain_error', 1, /answered 400: .*min relay fee not met.* \(nothing was broadcast, nothing is paid: the node took the call and drops it, its anchor [0-9a-f]{64} never appearing\)$/);
    const order = (f: Fake) => f.requests.map((q) => q.path).filter((q) => q === '/node/contract_call' || q === '/esplora/tx');
    assert.deepEqual(order(refusing), ['/node/contract_call', '/esplora/tx'], 'submitted, then broadcast');
    const r = await svc(args, { SVC_NODE_URL: unsure.nodeUrl, SVC_ESPLORA_URL: unsure.esploraUrl, SVC_WALLET_KEY: walletHex }, work);
    const txid = Transaction.fromHex(unsure.requests.find((q) => q.path === '/esplora/tx')!.body).getId();
    oneLineError(r, 'chain_error', 1);
    assert.equal(
      r.stderr,
      `svc: chain_error: chain-data endpoint POST /tx answered 502: Bad Gateway (anchoring transaction ${txid} may have been broadcast: look it up, GET /tx/${txid}, before paying again; the node holds the call: if the transaction is there, follow it with: svc status ${txid} --wait; if not, nothing is paid and the node drops the call)\n`,
    );
    assert.deepEqual(order(unsure), ['/node/contract_call', '/esplora/tx']);
  } finally {
    await refusing.close();
    await unsure.close();
  }
});

test('Ctrl-C while the node has the call but before the broadcast: "interrupted: nothing was broadcast", exit 130, nothing posted to /tx', async () => {
  const hung = await startFake({ payTo: wallet.outputScript, utxos: [{ txid: '79'.repeat(32), vout: 0, value: 400_000, status: { confirmed: true } }], hang: 'POST /node/contract_call' });
  try {
    const child = spawn(process.execPath, [svcJs, 'call', CID, 'note', 'string:hi', '--abi', notePath], {
      env: { PATH: process.env.PATH ?? '', SVC_NODE_URL: hung.nodeUrl, SVC_ESPLORA_URL: hung.esploraUrl, SVC_WALLET_KEY: walletHex },
      cwd: mkdtempSync(join(tmpdir(), 'svc-cwd-')),
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    const code = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    // Poll the fake's record until svc waits on the node (its request, no fixed sleep).
    while (!hung.requests.some((q) => q.path === '/node/contract_call')) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGINT');
    assert.equal(await code, 130);
    assert.equal(stdout, 'interrupted: nothing was broadcast\n');
    assert.equal(hung.requests.filter((q) => q.path === '/esplora/tx').length, 0);
  } finally {
    await hung.close();
  }
});

test('the node refusing the submission is heard before the broadcast: its code once, (nothing was broadcast), no payload in the line; svc submit sends a saved submission as it is', async () => {
  const failing = await startFake({
    payTo: wallet.outputScript,
    utxos: [{ txid: '77'.repeat(32), vout: 2, value: 400_000, status: { confirmed: true } }],
    override: { '/node/contract_call': [409, { error: { code: 'conflict', message: 'txid already known with a different payload' } }] },
  });
  try {
    const env = { SVC_NODE_URL: failing.nodeUrl, SVC_ESPLORA_URL: failing.esploraUrl, SVC_WALLET_KEY: walletHex };
    const work = mkdtempSync(join(tmpdir(), 'svc-cwd-'));
    const args = ['call', CID, 'note', `string:${'x'.repeat(30_000)}`, '--abi', notePath];
    const text = await svc(args, env, work);
    oneLineError(text, 'conflict', 1);
    assert.equal(text.stderr, 'svc: conflict: txid already known with a different payload (nothing was broadcast)\n');
    assert.equal(failing.requests.filter((q) => q.path === '/esplora/tx').length, 0, 'the node refused before the broadcast');
    const saved = JSON.parse(failing.requests.find((q) => q.path === '/node/contract_call')!.body) as Record<string, string>;
    const txid = saved['txid']!;
    assert.equal(Transaction.fromHex(saved['anchor_tx']!).getId(), txid);
    const file = `svc-call-${txid}.json`;
    writeFileSync(join(work, file), JSON.stringify(saved));
    const j = await svc([...args, '--json'], env, work);
    const e = JSON.parse(j.stderr).error;
    assert.equal(e.code, 'conflict');
    assert.equal(e.txid, undefined, 'nothing paid, no txid to follow');
    assert.ok(j.stderr.length < 600, `short: ${j.stderr.length} bytes`);
    // svc submit posts a saved body as it is, broadcasting nothing
    const sent = fake.requests.filter((q) => q.path === '/esplora/tx').length;
    const again = await svc(['submit', file], endpoints(), work);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`^txid: ${txid}\nenvelope hash: e{64}\nstatus: pending\n$`));
    assert.deepEqual(JSON.parse(fake.requests.filter((q) => q.path === '/node/contract_call').at(-1)!.body), saved);
    assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, sent);
    // A submission saved without its coin's evidence (written by hand, or by another tool):
    // svc submit gathers it from its chain endpoint, checks it, and sends it along.
    const { coin, ...bare } = saved as Record<string, unknown>;
    assert.ok(coin, 'svc call posted the coin evidence');
    writeFileSync(join(work, 'bare.json'), JSON.stringify(bare));
    const gathered = await svc(['submit', 'bare.json'], { SVC_NODE_URL: fake.nodeUrl, SVC_ESPLORA_URL: failing.esploraUrl }, work);
    assert.equal(gathered.code, 0, gathered.stderr);
    assert.deepEqual(JSON.parse(fake.requests.filter((q) => q.path === '/node/contract_call').at(-1)!.body).coin, coin);
    assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, sent, 'still nothing broadcast');
  } finally {
    await failing.close();
  }
});

test('a call the node would refuse costs nothing: the body as posted over 64 KiB, the envelope over 65,536 bytes, an unknown contract, a halted or unreachable node', async () => {
  const broadcasts = (f: Fake) => f.requests.filter((q) => q.path === '/esplora/tx').length;
  const note = (n: number) => ['call', CID, 'note', `string:${'x'.repeat(n)}`, '--abi', notePath];
  const before = broadcasts(fake);
  const body = await runError(note(49_000), endpoints());
  assert.equal(body.code, 'payload_too_large');
  assert.match(body.message, /^the node would refuse this call \(nothing was broadcast\): its submission body would be 6\d{4} bytes, the node reads at most 65536 \(the 49\d{3}-byte envelope takes 6\d{4} of them as base64, the anchoring transaction's hex \d{3}\): shorten the arguments$/);
  const envelope = await runError(note(70_000), endpoints());
  assert.equal(envelope.code, 'payload_too_large');
  assert.match(envelope.message, /^the node would refuse this call \(nothing was broadcast\): envelope is 70\d{3} bytes, more than 65536 \(PROTOCOL section 3\): shorten the arguments$/);
  assert.equal(broadcasts(fake), before, 'nothing broadcast');
  // well under the bound it goes: the posted body carries anchor_tx and is what was checked
  await run(note(40_000), endpoints());
  const posted = fake.requests.filter((q) => q.path === '/node/contract_call').at(-1)!.body;
  assert.equal(JSON.parse(posted).anchor_tx, fake.requests.filter((q) => q.path === '/esplora/tx').at(-1)!.body);
  assert.equal(Buffer.byteLength(posted), postedBytes(JSON.parse(posted)));

  for (const [override, code, re] of [
    [{ '/node/contracts/': [404, { error: { code: 'not_found', message: 'no such contract' } }] }, 'unknown_contract', /the node does not know contract [0-9a-f]{64} \(not deployed, or its deploy has not reached this node yet\)/],
    [{ '/node/node_status': [200, { halted: true, halt_reason: 'state divergence at 812' }] }, 'halted', /the node is halted \(state divergence at 812\) and refuses submissions until its operator clears the halt/],
  ] as const) {
    const f = await startFake({ payTo: wallet.outputScript, utxos: [{ txid: '77'.repeat(32), vout: 2, value: 40_000, status: { confirmed: true } }], override: override as unknown as Record<string, [number, unknown]> });
    try {
      const e = await runError(['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath], { SVC_NODE_URL: f.nodeUrl, SVC_ESPLORA_URL: f.esploraUrl, SVC_WALLET_KEY: walletHex });
      assert.equal(e.code, code);
      assert.ok(e.message.startsWith('the node would refuse this call (nothing was broadcast): '), e.message);
      assert.match(e.message, re);
      assert.equal(broadcasts(f), 0);
    } finally {
      await f.close();
    }
  }
  const dead = await deadUrl();
  const gone = await runError(['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath], { ...endpoints(), SVC_NODE_URL: dead });
  assert.equal(gone.code, 'unreachable');
  assert.equal(broadcasts(fake), before + 1, 'nothing more broadcast');
});

test('the body check is exact: 65,536 bytes as posted pass, 65,537 are refused', () => {
  const base = { txid: 'a'.repeat(64), contract_id: 'b'.repeat(64), payload: '', anchor_tx: 'cd'.repeat(200) };
  const fill = MAX_BODY_BYTES - postedBytes(base);
  checkBodySize({ ...base, payload: 'A'.repeat(fill) });
  assert.throws(() => checkBodySize({ ...base, payload: 'A'.repeat(fill + 1) }), (e: ClientError) => e.code === 'payload_too_large' && /would be 65537 bytes/.test(e.message));
});

test('fees: a rate above the bound (no estimates: 200 sat/vB) or a fee above 100,000 sats is refused before the broadcast; --allow-high-fee pays it', async () => {
  const rich = await startFake({ payTo: wallet.outputScript, utxos: [{ txid: '78'.repeat(32), vout: 0, value: 50_000_000, status: { confirmed: true } }] });
  const withEstimates = await startFake({ payTo: wallet.outputScript, utxos: [{ txid: '78'.repeat(32), vout: 0, value: 50_000_000, status: { confirmed: true } }], override: { '/esplora/fee-estimates': [200, { '1': 600.5, '6': 300, '144': 20 }] } });
  try {
    const envOf = (f: Fake) => ({ SVC_NODE_URL: f.nodeUrl, SVC_ESPLORA_URL: f.esploraUrl, SVC_WALLET_KEY: walletHex });
    const callArgs = ['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath];
    const high = await svc([...callArgs, '--fee-rate', '201'], envOf(rich));
    oneLineError(high, 'fee_too_high', 2, /^svc: fee_too_high: fee rate 201 sat\/vB is above 200 sat\/vB \(the endpoint offers no fee estimates\); nothing was broadcast; to pay it anyway, allow high fees \(svc: --allow-high-fee\)$/);
    const dep = await runError(['deploy', deployPath], { ...envOf(rich), SVC_FEE_RATE: '20000' });
    assert.equal(dep.code, 'fee_too_high');
    assert.equal(rich.requests.filter((q) => q.path === '/esplora/tx').length, 0);
    await run([...callArgs, '--fee-rate', '200'], envOf(rich));
    await run([...callArgs, '--fee-rate', '201', '--allow-high-fee'], envOf(rich));
    assert.equal(rich.requests.filter((q) => q.path === '/esplora/tx').length, 2);
    // with estimates: up to 3x the fastest (601.5 -> 1802); whatever the rate, at most 100,000 sats
    const fee = await runError([...callArgs, '--fee-rate', '1000'], envOf(withEstimates));
    assert.equal(fee.code, 'fee_too_high');
    assert.match(fee.message, /^this anchor would pay \d{6} sats \(\d+ vB at 1000 sat\/vB\), above 100000 sats; nothing was broadcast/);
    const rate = await runError([...callArgs, '--fee-rate', '1803'], envOf(withEstimates));
    assert.match(rate.message, /^fee rate 1803 sat\/vB is above 1802 sat\/vB \(3x the endpoint's next-block estimate of 600\.5 sat\/vB, at least 25\)/);
    await run([...callArgs, '--fee-rate', '500'], envOf(withEstimates));
    assert.equal(withEstimates.requests.filter((q) => q.path === '/esplora/tx').length, 1);
  } finally {
    await rich.close();
    await withEstimates.close();
  }
});

test('call --wait gives up, in one line, once the node reports its chain-data endpoint failing poll after poll', async () => {
  const stuck = await startFake({
    payTo: wallet.outputScript,
    utxos: [{ txid: '77'.repeat(32), vout: 2, value: 40_000, status: { confirmed: true } }],
    statuses: ['pending'],
    override: { '/node/node_status': [200, { halted: false, chain: { endpoint: 'http://chain.invalid', endpoint_ok: false, last_error: 'ECONNREFUSED' } }] },
  });
  try {
    const r = await svc(['call', CID, 'transfer', 'key:' + 'ab'.repeat(32), 'u64:1', '--abi', artifactPath, '--wait', '--interval', '0.01'], { SVC_NODE_URL: stuck.nodeUrl, SVC_ESPLORA_URL: stuck.esploraUrl, SVC_WALLET_KEY: walletHex });
    const txid = Transaction.fromHex(stuck.requests.find((q) => q.path === '/esplora/tx')!.body).getId();
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('... '));
    assert.deepEqual(lines, [
      `svc: chain_unavailable: call ${txid} not final: gave up waiting, the node's chain-data endpoint failed ${CHAIN_DOWN_POLLS} polls in a row (http://chain.invalid: ECONNREFUSED) and nothing confirms without it (anchoring transaction ${txid} is broadcast; the node accepted the call; follow it with: svc status ${txid} --wait)`,
    ]);
    assert.equal(stuck.requests.filter((q) => q.path.startsWith('/node/') && q.path.endsWith('/status')).length, CHAIN_DOWN_POLLS);
  } finally {
    await stuck.close();
  }
});

test('status --wait of a txid the node keeps not knowing gives up in one line instead of polling for 30 minutes', async () => {
  const unknown = await startFake({ override: { '/node/contract_call/': [404, { error: { code: 'not_found', message: `no call with txid ${'c'.repeat(64)}` } }] } });
  try {
    const r = await svc(['status', 'c'.repeat(64), '--wait', '--interval', '0.01'], { SVC_NODE_URL: unknown.nodeUrl });
    oneLineError(r, 'not_found', 1);
    assert.equal(r.stderr, `svc: not_found: no call with txid ${'c'.repeat(64)} (still, after ${NOT_FOUND_POLLS} polls: gave up waiting) (for a deploy, use svc contract CONTRACT_ID or svc deploy --wait)\n`);
    assert.equal(unknown.requests.filter((q) => q.path.startsWith('/node/contract_call/')).length, NOT_FOUND_POLLS);
  } finally {
    await unknown.close();
  }
});

test('status (spawned), read and events (in-process) use the node answers and paths', async () => {
  const s = await svc(['status', 'b'.repeat(64), '--json'], endpoints());
  assert.equal(s.code, 0, s.stderr);
  assert.equal(JSON.parse(s.stdout).txid, 'b'.repeat(64));
  const rd = await run(['read', CID, 'balances', 'AB'.repeat(32), '--abi', artifactPath], endpoints());
  assert.equal(fake.requests.at(-1)!.path, `/node/v2/${CID}/balances/${'ab'.repeat(32)}`);
  assert.match(rd.text[0]!, /^balances\[/);
  await run(['read', CID, 'name', 'string:a b'], endpoints());
  assert.equal(fake.requests.at(-1)!.path, `/node/v2/${CID}/name/a%20b`);
  const scalar = await runError(['read', CID, 'symbol', 'x', '--abi', artifactPath], endpoints());
  assert.match(scalar.message, /scalar/);
  const ev = await run(['events', CID, '--name', 'Transfer', '--from', '5', '--to', '7'], endpoints());
  assert.equal(fake.requests.at(-1)!.path, `/node/events/${CID}?event_name=Transfer&from_block=5&to_block=7`);
  assert.match(ev.text.join('\n'), /Transfer/);
});

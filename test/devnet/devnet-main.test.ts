/**
 * `npm run devnet` itself (dist/src/devnet/main.js), spawned as a user runs it: bad
 * settings are one `config error:` line; devnets on other ports run side by side, each
 * with its own data directory; a busy port names its holder's PID; the node and its
 * children do not outlive a devnet killed with SIGKILL; a node that dies mid-scenario ends
 * the devnet with one line, never with advice to register a deploy again; a closed stdout
 * stops it quietly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import { freePort } from '../helpers/gossip.js';
import { listenersOn } from '../../src/devnet/instances.js';
import { probeListen } from '../../src/supervisor/address.js';
import { CLOSED_OUTPUT_EXIT } from '../../src/closed-output.js';
import { withClosedStdout } from '../helpers/closed-stdout.js';

const mainJs = join(repoRoot, 'dist', 'src', 'devnet', 'main.js');
const dataRoot = join(repoRoot, 'data', 'devnet');
/** A devnet's node may take this long to answer on a loaded 2-core machine. */
const START_MS = 120_000;

interface Devnet {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  /** Resolves with stdout once `re` matches it (checked at each chunk). */
  waitOut: (re: RegExp, what: string) => Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startDevnet(env: Record<string, string>): Devnet {
  const proc = spawn(process.execPath, [mainJs], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  proc.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
    for (const w of [...waiters]) w();
  });
  proc.stderr!.on('data', (c: Buffer) => void (err += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  const waitOut = (re: RegExp, what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stdout:\n${out}\nstderr:\n${err}`)), START_MS);
      const check = (): void => {
        if (!re.test(out)) return;
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(check), 1);
        resolve(out);
      };
      waiters.push(check);
      void exited.then(() => {
        if (waiters.includes(check)) {
          clearTimeout(timer);
          reject(new Error(`the devnet exited before ${what}; stdout:\n${out}\nstderr:\n${err}`));
        }
      });
      check();
    });
  return { proc, out: () => out, err: () => err, waitOut, exited };
}

async function ports(): Promise<{ chain: number; rest: number; grpc: number; env: Record<string, string> }> {
  const [chain, rest, grpc] = [await freePort(), await freePort(), await freePort()];
  return { chain, rest, grpc, env: { SVC_DEVNET_PORT: String(chain), SVC_REST_ADDRESS: `127.0.0.1:${rest}`, SVC_BIND_ADDRESS: `127.0.0.1:${grpc}` } };
}

/** A live (not zombie) process: re-parented children of a killed process are reaped by nobody here. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((p) => {
      try {
        return parentOf(p) === pid;
      } catch {
        return false;
      }
    });
}

/** The node a devnet started (its supervisor, the parent of the process serving REST) and the supervisor's children. */
function nodeProcesses(restPort: number): number[] {
  const rest = listenersOn(restPort).map((l) => l.pid);
  assert.equal(rest.length, 1, `one process listens on ${restPort}`);
  const supervisor = parentOf(rest[0]!);
  return [supervisor, ...childrenOf(supervisor)];
}

/** Waits (re-checking at each turn of a short timer, with a deadline) until none of `pids` is alive. */
async function waitGone(pids: number[], what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (pids.some(alive)) {
    if (Date.now() > deadline) throw new Error(`${what}: still running: ${pids.filter(alive).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('bad devnet settings: one config error line each, as the node prints, exit 2, nothing started or written', async () => {
  const p = await freePort();
  const cases: [Record<string, string>, string][] = [
    [{ SVC_DEVNET_PORT: 'abc' }, 'config error: devnet chain port from SVC_DEVNET_PORT: expected an integer from 0 to 65535, got "abc"'],
    [{ SVC_DEVNET_PORT: '99999' }, 'config error: devnet chain port from SVC_DEVNET_PORT: expected an integer from 0 to 65535, got "99999"'],
    [{ SVC_REST_ADDRESS: 'bogus' }, 'config error: rest_address from SVC_REST_ADDRESS: expected HOST:PORT with a port from 0 to 65535 (e.g. 0.0.0.0:8080 or [::1]:8080), got "bogus"'],
    [
      { SVC_DEVNET_PORT: String(p + 1), SVC_REST_ADDRESS: `127.0.0.1:${p}`, SVC_BIND_ADDRESS: `127.0.0.1:${p}` },
      `config error: rest_address from SVC_REST_ADDRESS (127.0.0.1:${p}) and bind_address from SVC_BIND_ADDRESS (127.0.0.1:${p}) are the same address: REST and gRPC each need their own port`,
    ],
    [
      { SVC_DEVNET_PORT: String(p), SVC_REST_ADDRESS: `0.0.0.0:${p}`, SVC_BIND_ADDRESS: `127.0.0.1:${p + 1}` },
      `config error: devnet chain port from SVC_DEVNET_PORT (${p}) is also rest_address from SVC_REST_ADDRESS (0.0.0.0:${p}): each needs its own port`,
    ],
    [{ SVC_REST_ADDRESS: '127.0.0.1:0' }, 'config error: rest_address from SVC_REST_ADDRESS: the devnet needs a fixed port (it prints the address to use), got 127.0.0.1:0'],
    // the node's budget is the node's setting: checked as the node checks it, never replaced
    [{ SVC_ESPLORA_REQUESTS_PER_HOUR: 'abc' }, 'config error: esplora_requests_per_hour from SVC_ESPLORA_REQUESTS_PER_HOUR: expected an integer from 1 to 1000000000, got "abc"'],
    [{ SVC_ESPLORA_BURST: '1' }, 'config error: esplora_burst from SVC_ESPLORA_BURST: expected an integer from 2 to 1000000, got "1"'],
  ];
  const runs = cases.map(([env]) => startDevnet(env));
  for (let i = 0; i < cases.length; i++) {
    const d = runs[i]!;
    const { code } = await d.exited;
    assert.equal(code, 2, d.err());
    assert.equal(d.out(), '');
    assert.equal(d.err(), cases[i]![1] + '\n');
    assert.equal(existsSync(join(dataRoot, String(d.proc.pid))), false);
  }
});

test('a busy port is named with its holder: a process of another kind by its PID and command', async () => {
  const held = createServer();
  const p = await ports();
  await new Promise<void>((r) => held.listen(p.rest, '127.0.0.1', r));
  try {
    const d = startDevnet(p.env);
    const { code } = await d.exited;
    assert.equal(code, 1);
    assert.equal(d.out(), '');
    assert.equal(
      d.err(),
      `devnet not started: cannot listen on SVC_REST_ADDRESS 127.0.0.1:${p.rest}: address already in use (another process listens there) (EADDRINUSE); it is held by PID ${process.pid} (${readFileSync('/proc/self/cmdline', 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120)}): stop it with kill ${process.pid}. Or choose other ports (SVC_DEVNET_PORT, SVC_REST_ADDRESS, SVC_BIND_ADDRESS). Nothing was changed.\n`,
    );
  } finally {
    held.close();
  }
});

test('devnets side by side: each its own data, a second on the same ports refused with the first one\'s PID, none outliving its parent', async () => {
  const pa = await ports();
  const a = startDevnet(pa.env);
  try {
    await a.waitOut(/^node: /m, 'devnet A node');
    const dirA = join(dataRoot, String(a.proc.pid));
    const info = JSON.parse(readFileSync(join(dirA, 'devnet.json'), 'utf8')) as { pid: number; rest: string };
    assert.deepEqual([info.pid, info.rest], [a.proc.pid, `127.0.0.1:${pa.rest}`]);

    // the same ports: refused at once, the holder named, nothing touched
    const same = startDevnet(pa.env);
    assert.equal((await same.exited).code, 1);
    assert.equal(same.out(), '');
    assert.match(
      same.err(),
      new RegExp(`^devnet not started: cannot listen on SVC_DEVNET_PORT 127\\.0\\.0\\.1:${pa.chain}: address already in use \\(another process listens there\\) \\(EADDRINUSE\\); it is held by the devnet with PID ${a.proc.pid} \\(started [^;]+; chain http://127\\.0\\.0\\.1:${pa.chain}, REST 127\\.0\\.0\\.1:${pa.rest}, gRPC 127\\.0\\.0\\.1:${pa.grpc}\\): stop it with Ctrl-C in its terminal or kill ${a.proc.pid}\\. Or choose other ports \\(SVC_DEVNET_PORT, SVC_REST_ADDRESS, SVC_BIND_ADDRESS\\)\\. Nothing was changed\\.\\n$`),
    );

    // other ports: B runs beside A in a directory of its own; SIGKILL of B takes its node with it
    const pb = await ports();
    const b = startDevnet(pb.env);
    await b.waitOut(/^node: /m, 'devnet B node');
    const dirB = join(dataRoot, String(b.proc.pid));
    assert.ok(existsSync(join(dirB, 'db')) && existsSync(join(dirA, 'db')), 'both data directories');
    const nodeB = nodeProcesses(pb.rest);
    assert.equal(nodeB.length, 4, `supervisor and three children: ${nodeB.join(', ')}`);
    b.proc.kill('SIGKILL');
    await b.exited;
    await waitGone(nodeB, 'devnet B node after SIGKILL of the devnet');
    for (const port of [pb.chain, pb.rest, pb.grpc]) assert.equal(await probeListen('127.0.0.1', port), null, `port ${port} free again`);

    // C's node dies mid-scenario: C says so in one line and stops, no advice to register again
    const pc = await ports();
    const c = startDevnet(pc.env);
    await c.waitOut(/^node: /m, 'devnet C node');
    assert.equal(existsSync(dirB), false, 'C removed the data of B, which is gone');
    const nodeC = nodeProcesses(pc.rest);
    process.kill(nodeC[0]!, 'SIGKILL');
    const ended = await c.exited;
    assert.equal(ended.code, 1);
    assert.match(c.err(), /^the node was killed \(SIGKILL\); stopping the devnet$/m);
    assert.doesNotMatch(c.out() + c.err(), /register it|--txid|svc deploy|svc submit|send it again|scenario failed/);
    await waitGone(nodeC, 'devnet C node children');
    assert.equal(existsSync(join(dataRoot, String(c.proc.pid))), false, 'C removed its data');

    // A never noticed: its scenario completes on its own data; Ctrl-C stops it and removes it
    await a.waitOut(/^Scenario done\./m, 'devnet A scenario');
    assert.ok(existsSync(join(dirA, 'db')));
    const nodeA = nodeProcesses(pa.rest);
    a.proc.kill('SIGINT');
    assert.equal((await a.exited).code, 0, a.err());
    await waitGone(nodeA, 'devnet A node after Ctrl-C');
    assert.equal(existsSync(dirA), false);
  } finally {
    if (a.proc.exitCode === null) a.proc.kill('SIGINT');
    await a.exited;
  }
});

test('the devnet with its stdout closed stops its chain and node and ends quietly with 141', async () => {
  const [chain, rest, grpc] = [await freePort(), await freePort(), await freePort()];
  const r = await withClosedStdout([mainJs], {
    SVC_DEVNET_PORT: String(chain),
    SVC_REST_ADDRESS: `127.0.0.1:${rest}`,
    SVC_BIND_ADDRESS: `127.0.0.1:${grpc}`,
  });
  assert.equal(r.code, CLOSED_OUTPUT_EXIT);
  assert.doesNotMatch(r.stderr, /EPIPE|Error|at /);
  for (const port of [chain, rest, grpc]) assert.equal(await probeListen('127.0.0.1', port), null, `port ${port} free`);
  assert.equal(existsSync(join(repoRoot, 'data', 'devnet', String(r.pid))), false);
});

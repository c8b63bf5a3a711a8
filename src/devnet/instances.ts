/**
 * The devnets of one checkout. Each `npm run devnet` keeps its node's data in a directory
 * of its own, `data/devnet/<pid>`, with a `devnet.json` saying what it serves, so two
 * devnets on different ports never touch each other's data; the directory of a devnet that
 * is gone (its chain lived in memory, so its data is useless) is removed by the next start.
 * When an address is taken, `holderOf` names who holds it: a devnet of this checkout by its
 * PID and addresses, else any listening process by its PID and command (Linux /proc).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DevnetInstance {
  pid: number;
  started_at: string;
  chain: string;
  rest: string;
  grpc: string;
  /** Its data directory. */
  dir: string;
}

const INFO_FILE = 'devnet.json';

/** Whether `pid` is a live devnet process (its command line names the devnet's entry; without /proc: merely alive). */
function isLiveDevnet(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('devnet');
  } catch {
    return !existsSync('/proc/self');
  }
}

export class DevnetInstances {
  constructor(readonly root: string) {}

  private read(name: string): DevnetInstance | null {
    if (!/^[1-9][0-9]*$/.test(name)) return null;
    try {
      const j = JSON.parse(readFileSync(join(this.root, name, INFO_FILE), 'utf8')) as DevnetInstance;
      return j.pid === Number(name) ? { ...j, dir: join(this.root, name) } : null;
    } catch {
      return { pid: Number(name), started_at: '?', chain: '?', rest: '?', grpc: '?', dir: join(this.root, name) };
    }
  }

  private entries(): DevnetInstance[] {
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return [];
    }
    return names.map((n) => this.read(n)).filter((i): i is DevnetInstance => i !== null);
  }

  /** The devnets of this checkout that are running now. */
  running(): DevnetInstance[] {
    return this.entries().filter((i) => i.pid !== process.pid && isLiveDevnet(i.pid));
  }

  /**
   * Removes the directories of devnets that are gone, then creates this process's own and
   * records what it serves; answers the directory. Never touches a running devnet's data.
   */
  claim(info: Omit<DevnetInstance, 'pid' | 'dir' | 'started_at'>): string {
    for (const i of this.entries()) if (i.pid !== process.pid && !isLiveDevnet(i.pid)) rmSync(i.dir, { recursive: true, force: true });
    const dir = join(this.root, String(process.pid));
    rmSync(dir, { recursive: true, force: true }); // a former process of the same PID
    mkdirSync(dir, { recursive: true });
    const record: Omit<DevnetInstance, 'dir'> = { pid: process.pid, started_at: new Date().toISOString(), ...info };
    writeFileSync(join(dir, INFO_FILE), JSON.stringify(record, null, 2) + '\n');
    return dir;
  }

  /** Removes this process's directory (on a clean stop). */
  release(): void {
    rmSync(join(this.root, String(process.pid)), { recursive: true, force: true });
  }

  /** Who listens on `port`: a running devnet of this checkout, else listening processes; null when unknown. */
  holderOf(port: number): string | null {
    const ends = (a: string): boolean => a.endsWith(`:${port}`);
    const d = this.running().find((i) => ends(i.chain) || ends(i.rest) || ends(i.grpc));
    if (d) return `the devnet with PID ${d.pid} (started ${d.started_at}; chain ${d.chain}, REST ${d.rest}, gRPC ${d.grpc}): stop it with Ctrl-C in its terminal or kill ${d.pid}`;
    const l = listenersOn(port);
    if (l.length) return `${l.map((x) => `PID ${x.pid} (${x.command})`).join(', ')}: stop it with kill ${l.map((x) => x.pid).join(' ')}`;
    return null;
  }
}

/**
 * Processes listening on TCP `port` (any address), from /proc/net/tcp{,6} and the socket
 * inodes of /proc/<pid>/fd. Empty where /proc is absent or the holder is another user's.
 */
export function listenersOn(port: number): { pid: number; command: string }[] {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the inode
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':').pop()!, 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return [];
  const out: { pid: number; command: string }[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^[0-9]+$/.test(n));
  } catch {
    return [];
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        return m !== null && inodes.has(m[1]!);
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let command = '?';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120);
    } catch {
      /* gone meanwhile */
    }
    out.push({ pid: Number(pid), command });
  }
  return out;
}

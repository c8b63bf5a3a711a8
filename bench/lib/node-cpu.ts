/**
 * CPU seconds a running node has spent, read from /proc: its supervisor and the children
 * it forked (core, REST, gossip), by role, the core's main thread apart from its other
 * threads (pool workers with the verifies, the writer, the disk thread, RocksDB's, V8's
 * compiler and GC helpers). Figures made from it hold up when other processes share the
 * cores, unlike rates. Linux only, like the benches' machines.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Kernel clock ticks a second in /proc's stat files (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** utime + stime of a /proc stat file, in ticks. */
function ticksOf(path: string): number {
  const st = readFileSync(path, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

function roleOf(pid: number): string {
  const m = /dist\/src\/(\w+)\/main\.js/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  return m ? m[1]! : 'supervisor';
}

/** The node's processes: its supervisor and the children it forked (core, REST, gossip). */
export function nodeProcessIds(supervisorPid: number): number[] {
  const pids = [supervisorPid];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === supervisorPid) pids.push(Number(d));
    } catch {
      /* exited */
    }
  }
  return pids;
}

/**
 * Seconds of CPU by place for the node whose supervisor is `supervisorPid`: `total`,
 * `supervisor`, `core main thread`, `core other threads`, `rest`, `gossip`.
 */
export function nodeCpuSeconds(supervisorPid: number): Record<string, number> {
  const pids = nodeProcessIds(supervisorPid);
  const out: Record<string, number> = { total: 0 };
  for (const pid of pids) {
    const role = roleOf(pid);
    const all = ticksOf(`/proc/${pid}/stat`);
    out['total']! += all;
    if (role === 'core') {
      const main = ticksOf(`/proc/${pid}/task/${pid}/stat`);
      out['core main thread'] = main;
      out['core other threads'] = all - main;
    } else out[role] = (out[role] ?? 0) + all;
  }
  for (const k of Object.keys(out)) out[k]! /= TICKS_PER_S;
  return out;
}

/** Microseconds per unit of work by place, between two readings of `nodeCpuSeconds`. */
export function cpuPerUnitUs(before: Record<string, number>, after: Record<string, number>, units: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(after)) out[k] = ((after[k]! - (before[k] ?? 0)) * 1e6) / units;
  return out;
}

/** "place N us, ..." of a per-unit split, `total` left out. */
export function splitText(split: Record<string, number>): string {
  return Object.keys(split)
    .filter((k) => k !== 'total')
    .map((k) => `${k} ${Math.round(split[k]!)} us`)
    .join(', ');
}

/**
 * The processed state version (height, state root, block hash) as the writer last
 * announced it: the writer sends a `state` event on every change of its processed tip,
 * so the core answers from memory, in the order the writer's messages arrive (a writer
 * answer sent after a change never overtakes the change's event). The REST read cache
 * follows it by a long poll (waitState); the gossip process reads the height it
 * advertises in heartbeats (peerAdvert).
 */
import type { RpcClient } from '../ipc/rpc.js';
import type { StateVersion } from '../messages/rest.js';
import type { WriterApi, WriterEvents } from '../messages/writer.js';

function sameVersion(a: StateVersion | null, b: StateVersion): boolean {
  return a !== null && a.height === b.height && a.state_root === b.state_root && a.block_hash === b.block_hash;
}

export class StateVersions {
  private latest: StateVersion | null = null;
  private waiters: (() => void)[] = [];

  constructor(private readonly writer: RpcClient<WriterApi, WriterEvents>) {
    writer.on('state', (d) => {
      this.latest = d;
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    });
  }

  /** The processed height the writer last announced; null before its first event. */
  get knownHeight(): number | null {
    return this.latest?.height ?? null;
  }

  /** The latest version: from the writer's events, or asked once (before the first event). */
  async current(): Promise<StateVersion> {
    if (this.latest === null) {
      const v = await this.writer.call('stateVersion', {});
      if (this.latest === null) this.latest = v;
    }
    return this.latest;
  }

  /** The latest version once it differs from `known`, or after `ms` whatever it is. */
  async changedFrom(known: StateVersion | null, ms: number): Promise<StateVersion> {
    if (!sameVersion(known, await this.current())) return this.latest!;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
    return this.latest!;
  }
}

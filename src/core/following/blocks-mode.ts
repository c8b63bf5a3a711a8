/**
 * chain_mode "blocks": the block watcher (src/chain/watcher.ts) reads every block raw and
 * hands the writer each update in order, with the spender evidence of the calls its
 * blocks dropped.
 */
import { BlockWatcher, type ChainEvent } from '../../chain/watcher.js';
import { blockInputOf, spentByIn } from '../../chain/connected-block.js';
import { TIP, type FollowingHost } from './host.js';

export class BlocksMode {
  private readonly watcher: BlockWatcher;

  /** `anchor`: the writer's processed block, where watching starts. */
  constructor(
    private readonly host: FollowingHost,
    anchor: { height: number; hash: string },
    pollIntervalS: number,
  ) {
    const { chain, writer } = host;
    const source = {
      tipHeight: async () => {
        const h = await chain.tipHeight(TIP);
        host.setTip(h);
        host.endpointAnswered();
        return h;
      },
      tipHash: () => chain.tipHash(TIP),
      blockHashAt: (h: number) => chain.blockHashAt(h, TIP),
      rawBlock: (hash: string) => chain.rawBlock(hash, TIP),
    };
    this.watcher = new BlockWatcher({
      source,
      anchor,
      knownHash: (height) => writer.call('knownHash', { height }),
      pollIntervalSeconds: pollIntervalS,
      onEvent: (ev) => this.apply(ev),
      onError: (e) => host.pollFailed(e),
    });
  }

  start(): void {
    this.watcher.start();
  }

  pollNow(): Promise<void> {
    return this.watcher.pollNow();
  }

  /** Ends after the update the writer is applying, if any (watcher.ts). */
  stop(): Promise<void> {
    return this.watcher.stop();
  }

  private async apply(ev: ChainEvent): Promise<void> {
    const writer = this.host.writer;
    const status = await writer.call('applyChainUpdate', {
      fork_height: ev.fork_height,
      disconnected: ev.disconnected,
      connected: ev.connected.map(blockInputOf),
      // The watcher's event ends at the best chain's block it saw: headers above are a gone branch's.
      endsChain: true,
    });
    // The spender evidence of the calls these blocks dropped, kept for proofs and peers (as the light follower does).
    const items = status.drops.flatMap((d) => {
      const b = ev.connected.find((c) => c.height === d.height);
      const spentBy = b ? spentByIn({ hash: b.hash, height: b.height, txids: b.txs.map((t) => t.txid), txAt: (i) => b.txs[i]!.tx }, d.outpoint, d.spender) : null;
      return spentBy ? [{ txid: d.txid, spentBy }] : [];
    });
    if (items.length > 0) await writer.call('storeSpentBy', { items });
    const last = ev.connected[ev.connected.length - 1];
    if (last && this.host.tipHeight() === last.height) this.host.setTip(last.height, last.hash);
    this.host.noteApplied(status, ev.disconnected.length);
  }
}
